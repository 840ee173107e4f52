"""The worker's containment (run/containment.py), applied in a forked child as the worker applies it."""
from __future__ import annotations

import ctypes
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_dcuopt.run.containment import frozen, seccomp_program

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux prctl and seccomp")


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def _read_own_memory() -> int:
    """process_vm_readv of this process's own memory: 0 when allowed, else the errno."""
    libc = ctypes.CDLL(None, use_errno=True)
    source, target = ctypes.create_string_buffer(b"x" * 8), ctypes.create_string_buffer(8)
    local, remote = _IoVec(ctypes.addressof(target), 8), _IoVec(ctypes.addressof(source), 8)
    read = libc.process_vm_readv(os.getpid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    return 0 if read == 8 else ctypes.get_errno()


def _in_child(body: str) -> subprocess.CompletedProcess[str]:
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + body
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)


def test_reading_another_process_memory_is_refused_after_containment() -> None:
    assert _read_own_memory() == 0  # allowed without the filter: the test below can fail
    result = _in_child(
        "from tests.unit.run.test_containment import _read_own_memory\n"
        "from pytest_dcuopt.run.containment import contain_worker\n"
        "print(contain_worker())\n"
        "print('errno', _read_own_memory())\n"
        "import subprocess\n"
        "print(subprocess.run(['grep', '-E', 'NoNewPrivs|Seccomp:', '/proc/self/status'], capture_output=True,"
        " text=True).stdout)\n")
    assert result.returncode == 0, result.stderr
    if platform.machine() not in ("x86_64", "aarch64"):
        assert "not applied" in result.stdout
        return
    assert "'seccomp': 'applied" in result.stdout
    assert f"errno {1}" in result.stdout  # EPERM
    # Inherited by every process the worker starts, with no_new_privs.
    assert "NoNewPrivs:\t1" in result.stdout and "Seccomp:\t2" in result.stdout


def test_the_filter_is_classic_bpf_of_a_few_instructions() -> None:
    program = seccomp_program(0xC000003E)
    assert len(program) < 30 and all(len(instruction) == 8 for instruction in program)


def test_frozen_stops_a_spinning_process_and_lets_it_go_on() -> None:
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
    try:
        time.sleep(0.2)
        with frozen([spinner.pid], []):
            time.sleep(0.05)
            state = Path(f"/proc/{spinner.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            assert state == "T"
        time.sleep(0.05)
        state = Path(f"/proc/{spinner.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state in ("R", "S")
    finally:
        os.kill(spinner.pid, signal.SIGKILL)
        spinner.wait()


def test_contain_worker_says_what_it_did_not_apply() -> None:
    result = _in_child("import platform; platform.machine = lambda: 'riscv64'\n"
                       "from pytest_dcuopt.run.containment import contain_worker; print(contain_worker())")
    assert "not applied: no filter for the riscv64 architecture" in result.stdout, result.stderr
