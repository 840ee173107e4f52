"""Remote xdist workers without rsync (docs/gating.md "Past one host"), on loopback: two execnet socket servers
started by the test, each with the harness installed in its interpreter, serve `--tx socket=...//chdir=<checkout>`
workers. The controller runs in a directory without the case; only the workers' checkout has it. What must hold: the
workers collect and run the case there (their build cache is the checkout's), and the controller's one state.json
has the same records and verdicts as a serial run of that checkout, every timing under the host lock."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CASES, FAST
from tests.plugin.test_xdist_sweep import holds, overlaps, records

SERVER_MODULE = "execnet.script.socketserver"
LISTENING = re.compile(r"Entering Accept loop \('127\.0\.0\.1', (\d+)\)")


class SocketServer:
    """`python -m execnet.script.socketserver 127.0.0.1:0` in `folder`: the stand-in for a remote host's server."""

    def __init__(self, folder: Path, log: Path) -> None:
        self.log = log
        self._output = log.open("w")
        self.process = subprocess.Popen([sys.executable, "-u", "-m", SERVER_MODULE, "127.0.0.1:0"], cwd=folder,
                                        stdout=self._output, stderr=subprocess.STDOUT, text=True)
        self.port = self._wait_for_port()

    def _wait_for_port(self, timeout_s: float = 60.0) -> int:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = LISTENING.search(self.log.read_text())
            if found:
                return int(found.group(1))
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{SERVER_MODULE} did not start listening: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self._output.close()


@pytest.fixture
def checkout(pytester: pytest.Pytester) -> Path:
    """The 'remote' checkout: the case and a pytest.ini making it the workers' rootdir."""
    folder = pytester.path / "remote"
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n")
    shutil.copytree(CASES / "xdist_merge", folder / "xdist_merge")
    return folder


@pytest.fixture
def servers(checkout: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[SocketServer]]:
    monkeypatch.setenv("DCUOPT_LOCK_DIR", str(pytester.path / "locks"))  # the servers' workers inherit it
    started: list[SocketServer] = []
    try:
        for number in range(2):
            started.append(SocketServer(checkout, pytester.path / f"server{number}.log"))
        yield started
    finally:
        for server in started:
            server.stop()


def run_pytest(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_socket_workers_in_a_checkout_merge_into_one_state(
        pytester: pytest.Pytester, checkout: Path, servers: list[SocketServer]) -> None:
    controller = pytester.path / "controller"
    controller.mkdir()
    (controller / "pytest.ini").write_text("[pytest]\n")
    options = ["--dcuopt-toolchain=cpu", "--dcuopt-interleave=0", *FAST]
    tx = [arg for server in servers for arg in ("--tx", f"socket=127.0.0.1:{server.port}//chdir={checkout}")]
    # The case path is the checkout's, relative: the controller never collects, and a path that exists where the
    # controller runs would be rewritten against rsync roots by xdist (docs/gating.md).
    remote = run_pytest(["-d", *tx, "xdist_merge", f"--dcuopt-run-dir={controller / 'run'}", "-rA", "-v", *options],
                        controller)
    serial = run_pytest(["xdist_merge", f"--dcuopt-run-dir={checkout / 'serial'}", "-p", "no:xdist", *options],
                        checkout)
    for result in (remote, serial):
        assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]  # drops_tail is wrong

    for server in servers:  # each socket server ran one worker: the tests did not run in the controller
        assert "got new connection" in server.log.read_text(), server.log.read_text()[-2000:]
    # -v: every result line names its worker (a branch's tests go to one worker: run/schedule.py)
    assert {"[gw0]", "[gw1]"} <= set(re.findall(r"\[gw\d\]", remote.stdout)), remote.stdout[-3000:]
    assert (checkout / ".dcuopt" / "build-cache").is_dir()  # the workers' rootdir is the chdir'd checkout
    assert not (controller / ".dcuopt" / "build-cache").exists()

    states = {name: json.loads(path.read_text()) for name, path in
              (("remote", controller / "run" / "state.json"), ("serial", checkout / "serial" / "state.json"))}
    found = {name: dict(records(state)) for name, state in states.items()}
    assert set(found["remote"]) == set(found["serial"]) == {("xdist_merge", "cpu", "baseline"),
                                                            ("xdist_merge", "cpu", "drops_tail")}
    for key, record in found["serial"].items():
        other = found["remote"][key]
        assert (other["source"], other["correct"], other["champion"], other["timing"] is None) == (
            record["source"], record["correct"], record["champion"], record["timing"] is None), key
    assert found["remote"][("xdist_merge", "cpu", "drops_tail")]["correct"] is False
    timing = found["remote"][("xdist_merge", "cpu", "baseline")]["timing"]
    assert timing["concurrent_workers"] == 2 and timing["device_lock"]["held"], timing
    assert overlaps(holds(states["remote"], "socket workers")) == []
