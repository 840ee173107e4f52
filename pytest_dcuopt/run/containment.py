"""Containing a kernel's worker as far as an unprivileged Linux process can (docs/security.md).

In the worker, before any kernel code is loaded (`contain_worker`):
- PR_SET_NO_NEW_PRIVS: nothing it execs gains privileges (setuid programs run without them);
- a seccomp filter that answers EPERM to ptrace, process_vm_readv, process_vm_writev and pidfd_getfd, on every
  thread of the worker and every process it starts (built by hand as classic BPF: no libseccomp needed). It is
  applied only where the architecture is known here (x86_64, aarch64); elsewhere the record says it was not.
In the pytest process (`protect_harness`): PR_SET_DUMPABLE 0, so no process of the same user may ptrace it, read or
write its memory through /proc/<pid>/mem or take its file descriptors: the worker cannot reach the process that
judges it even through a path the seccomp filter does not cover.

Freezing (`frozen`): while one branch is timed, every other worker of this pytest process, and whatever each one
started, is stopped (SIGSTOP, then SIGCONT after), so a thread or process a kernel left spinning cannot slow the
branch being timed.
"""
from __future__ import annotations

import ctypes
import os
import platform
import signal
import struct
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_PR_GET_NO_NEW_PRIVS = 39
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_EPERM = 1

# BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000
_NR_OFFSET, _ARCH_OFFSET = 0, 4  # struct seccomp_data: int nr; __u32 arch; ...

_X86_64, _I386, _AARCH64 = 0xC000003E, 0x40000003, 0xC00000B7
_X32_BIT = 0x40000000  # x86_64 syscalls of the x32 ABI carry this bit: nobody here uses them
# The calls denied, per audit architecture: ptrace, process_vm_readv, process_vm_writev, pidfd_getfd.
DENIED_NAMES = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd")
DENIED: dict[int, tuple[int, ...]] = {
    _X86_64: (101, 310, 311, 438),
    _I386: (26, 347, 348, 438),  # a 64-bit process can still make 32-bit calls (int 0x80)
    _AARCH64: (117, 270, 271, 438),
}
_SECCOMP_SYSCALL = {"x86_64": 317, "aarch64": 277}
_NATIVE_ARCH = {"x86_64": _X86_64, "aarch64": _AARCH64}


def _instruction(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def seccomp_program(native: int) -> list[bytes]:
    """The filter for a process whose native audit architecture is `native`: EPERM for the denied calls of every
    architecture the process can call in (x86_64 also takes i386 calls), and for x32 calls; all else is allowed.
    A call of an architecture this filter does not know kills the process (it cannot be judged)."""
    arches = [native, _I386] if native == _X86_64 else [native]
    # Assembled in two passes: each entry is (code, k, label the jump goes to when true or None); a false test
    # falls through to the next instruction.
    code: list[tuple[int, int, str | None]] = [(_LD_W_ABS, _ARCH_OFFSET, None)]
    code += [(_JEQ_K, arch, f"arch{index}") for index, arch in enumerate(arches)]
    code.append((_RET_K, _RET_KILL_PROCESS, None))
    labels: dict[str, int] = {}
    for index, arch in enumerate(arches):
        labels[f"arch{index}"] = len(code)
        code.append((_LD_W_ABS, _NR_OFFSET, None))
        if arch == _X86_64:
            code.append((_JGE_K, _X32_BIT, "deny"))
        code += [(_JEQ_K, number, "deny") for number in DENIED[arch]]
        code.append((_RET_K, _RET_ALLOW, None))
    labels["deny"] = len(code)
    code.append((_RET_K, _RET_ERRNO | _EPERM, None))
    return [_instruction(op, k, labels[target] - at - 1 if target else 0) for at, (op, k, target) in enumerate(code)]


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int, arg3: Any = 0) -> int:
    return int(_libc().prctl(option, value, arg3, 0, 0))


def _install_filter(program: list[bytes]) -> str | None:
    """Install the filter on every thread of this process; None, or why it was not installed."""
    raw = b"".join(program)
    buffer = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(len(program), ctypes.cast(buffer, ctypes.c_void_p))
    libc = _libc()
    number = _SECCOMP_SYSCALL.get(platform.machine())
    if number is not None:
        libc.syscall.restype = ctypes.c_long
        if int(libc.syscall(ctypes.c_long(number), ctypes.c_uint(_SECCOMP_SET_MODE_FILTER),
                            ctypes.c_uint(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(prog))) == 0:
            return None
    error = ctypes.get_errno()
    return f"seccomp(SECCOMP_SET_MODE_FILTER, TSYNC) failed: {os.strerror(error) if error else 'unknown error'}"


def contain_worker() -> dict[str, Any]:
    """Contain this process (the worker, before it loads a kernel); what was applied, for the record. Every part
    that could not be applied says why (degraded, never silent)."""
    if not sys.platform.startswith("linux"):
        reason = f"not applied: {sys.platform} is not Linux"
        return {"no_new_privs": reason, "seccomp": reason}
    found: dict[str, Any] = {}
    try:
        ok = _prctl(_PR_SET_NO_NEW_PRIVS, 1) == 0
    except (OSError, AttributeError) as exc:
        ok, found["no_new_privs"] = False, f"not applied: prctl unavailable ({exc})"
    if ok:
        found["no_new_privs"] = "applied"
    elif "no_new_privs" not in found:
        found["no_new_privs"] = f"not applied: prctl(PR_SET_NO_NEW_PRIVS) failed ({os.strerror(ctypes.get_errno())})"
    native = _NATIVE_ARCH.get(platform.machine())
    if native is None:
        found["seccomp"] = f"not applied: no filter for the {platform.machine()} architecture"
    elif not ok:
        found["seccomp"] = "not applied: it needs no_new_privs"
    else:
        failed = _install_filter(seccomp_program(native))
        found["seccomp"] = f"applied: {', '.join(DENIED_NAMES)} answer EPERM" if failed is None else \
            f"not applied: {failed}"
    return found


def protect_harness() -> str:
    """Make the pytest process non-dumpable: no process of its user (a kernel's worker) may ptrace it or open its
    memory. What was done, for the record."""
    if not sys.platform.startswith("linux"):
        return f"not applied: {sys.platform} is not Linux"
    try:
        if _prctl(_PR_SET_DUMPABLE, 0) != 0:
            return f"not applied: prctl(PR_SET_DUMPABLE) failed ({os.strerror(ctypes.get_errno())})"
    except (OSError, AttributeError) as exc:
        return f"not applied: prctl unavailable ({exc})"
    return "applied: the pytest process is not dumpable"


def _signal_all(groups: Iterable[int], pids: Iterable[int], number: int) -> None:
    for group in groups:
        try:
            os.killpg(group, number)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in pids:
        try:
            os.kill(pid, number)
        except (ProcessLookupError, PermissionError):
            pass


@contextmanager
def frozen(groups: Iterable[int], pids: Iterable[int]) -> Iterator[None]:
    """Stop the process groups and processes for the block (SIGSTOP), then let them go on (SIGCONT), also when the
    block raises."""
    groups, pids = list(groups), list(pids)
    _signal_all(groups, pids, signal.SIGSTOP)
    try:
        yield
    finally:
        _signal_all(groups, pids, signal.SIGCONT)
