"""Naming a worker's end: from its exit status or signal and its log, the likely cause and the fix
(`crash_hint`), and the part of the log that shows it (`log_excerpt`)."""
from __future__ import annotations

import re
import signal

from ..case.buffers import memory_bytes
from .supervisor import END_NOTE
from .worker import CHANNEL_BROKEN_STATUS, FATAL_STATUS

_SIGNAL_HINTS = {
    "SIGSEGV": "a crash here usually means an out-of-bounds access or a null pointer",
    "SIGBUS": "a crash here usually means a misaligned or out-of-bounds access",
    "SIGFPE": "an arithmetic fault: most often an integer division by zero (or of INT_MIN by -1) in the kernel",
    "SIGILL": "an illegal instruction: code built for instructions this CPU lacks (-march), or __builtin_trap()",
    "SIGTERM": "someone outside the harness ended it (the kernel itself, or a process that signalled it)",
}



def crash_hint(code: int, log: str) -> str:
    """The likely cause of a worker's end with `code` (negative: a signal) and the fix, read with its log."""
    if code >= 0:
        return _EXIT_HINTS.get(code, f"the kernel (or a library it calls) called exit({code}) during the call, or the "
                                     "worker failed outside a call (see its log). A kernel must return from solve()")
    name = signal_name(-code)
    if name == "SIGKILL":
        return _killed_hint(log)
    if name == "SIGABRT":
        return _abort_hint(log)
    return _SIGNAL_HINTS.get(name, f"the kernel raised {name} or was sent it")


_EXIT_HINTS = {
    0: "it exited normally in the middle of the call: the kernel (or a library it calls) called exit(0). A kernel "
       "must return from solve(), never end the process",
    CHANNEL_BROKEN_STATUS: "its reply could not be written: the kernel closed (or reused) file descriptors it did not "
                           "open, the harness's reply pipe and log among them, so the log may be empty. Close only "
                           "the descriptors the kernel opened itself",
    FATAL_STATUS: "it reported a fatal error (a sticky GPU fault) and ended, as it must",
}
_HEAP_WORDS = ("free(): ", "double free", "corrupted", "malloc(): ", "munmap_chunk", "realloc(): ", "stack smashing")


def _abort_hint(log: str) -> str:
    if "terminate called after throwing" in log or "terminate called without an active exception" in log:
        return ("a C++ exception left solve(): an extern \"C\" function cannot pass it to the harness, so "
                "std::terminate aborted (its what() line is in the log below). Catch exceptions inside solve()")
    if any(word in log for word in _HEAP_WORDS):
        return ("the C library found its heap corrupted (its message is in the log below): most likely a write "
                "before or past a buffer (y[-1], y[N]) overwrote its bookkeeping. Check the kernel's indices at the "
                "buffers' ends")
    return ("abort() was called: an assert in the kernel, a runtime error it could not recover from, or heap "
            "corruption found by the C library (a write before or past a buffer, e.g. y[-1])")


def _killed_hint(log: str) -> str:
    found = re.findall(rf"{re.escape(END_NOTE)} .*peak memory \(max RSS\) was (\d+) MiB", log)
    if not found:  # the supervisor notes every abnormal end of its worker: it was killed itself
        return ("the worker's supervisor was killed too (it left no note): most likely a kernel that signalled its "
                "parent (a kernel's getppid() is the supervisor), else the out-of-memory killer or someone outside "
                "the harness")
    total = memory_bytes()
    machine = f" of this machine's {total / 2**30:.1f} GiB" if total else ""
    return (f"SIGKILL comes from the out-of-memory killer (the worker had used up to {found[-1]} MiB{machine} at its "
            "peak: if that is near the memory this machine or its container allows, lower the sizes in dims.json and "
            "`dim_ranges`, or the workspace the kernel allocates), from a kernel that signalled itself, or from "
            "someone outside the harness")


def log_excerpt(log: str, lines: int = 15) -> str:
    """The end of a worker's log; when faulthandler dumped the stacks (a fatal signal), the lines just before the
    dump (the kernel's or the C library's last words: an exception's what(), a heap error) and the dump's head."""
    text = log.splitlines()
    start = next((i for i, line in enumerate(text) if line.startswith("Fatal Python error")), None)
    if start is None:
        return "\n".join(text[-lines:])
    notes = [line for line in text[start:] if line.startswith(END_NOTE)]
    dump = text[start:start + lines - 5]
    cut = ["  ..."] if len(text) - len(notes) > start + len(dump) else []
    return "\n".join(text[max(0, start - 5):start] + dump + cut + notes)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
