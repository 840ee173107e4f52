"""The device lock is fair to a waiter: a process that times back to back (release, then at once ask again) lets a
waiting process in after its current hold, instead of taking the lock straight back until it is done.

Before the turnstile, two pytest sessions on one GPU whose measurements came back to back (a fast harness, small
kernels) timed one after the other: the second waited for the first's whole sweep, polling a lock that was free
for microseconds at a time.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from pytest_dcuopt.run.devices import device_lock

WAITER = """
import sys, time
from pathlib import Path
from pytest_dcuopt.run.devices import device_lock
print("ready", flush=True)
with device_lock("gpu-fair", directory=Path(sys.argv[1]), timeout_s=60) as hold:
    print(hold.acquired_at, flush=True)
"""


def test_a_waiter_gets_the_lock_between_back_to_back_holds(tmp_path: Path) -> None:
    with device_lock("gpu-fair", directory=tmp_path, timeout_s=60):
        waiter = subprocess.Popen([sys.executable, "-c", WAITER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        assert waiter.stdout is not None and waiter.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # it asks for the lock right after saying so
    releases = []
    for _ in range(150):  # back to back, 20 ms each: 3 s of holds with microsecond gaps
        with device_lock("gpu-fair", directory=tmp_path, timeout_s=60):
            time.sleep(0.02)
        releases.append(time.time())
    output, _ = waiter.communicate(timeout=60)
    acquired = float(output.strip().splitlines()[-1])
    assert acquired < releases[5], f"the waiter got the lock after {sum(r < acquired for r in releases)} more holds"
