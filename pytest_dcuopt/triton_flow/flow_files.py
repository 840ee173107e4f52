"""Small shared pieces of the workflow: JSON files, and the list of what could not be gathered."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import DcuOptError
from ..files import write_atomic


class FlowError(DcuOptError):
    """A workflow step cannot go on (a missing input, an unreadable file); the message names the fix."""


def write_json(path: Path, data: Any) -> Path:
    return write_atomic(path, json.dumps(data, indent=2, default=str) + "\n")


def read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise FlowError(f"{what} {path} does not exist; make it first (see `dcuopt triton --help`)") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise FlowError(f"{what} {path} cannot be read as JSON ({exc}); make it again") from None


