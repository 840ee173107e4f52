"""Facts about the machine and the clock that go into every state.json."""
from __future__ import annotations

import datetime as _dt
import os
import platform
import socket
from typing import Any

from ..toolchains.host_runtime import cpu_model


def machine_info() -> dict[str, Any]:
    return {"host": socket.gethostname(), "cpu": cpu_model(), "cores": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform()}


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
