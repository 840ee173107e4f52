"""How a worker's end is named (`crash_hint`, `log_excerpt`), decided from fixed exit codes and log texts."""
from __future__ import annotations

import signal

from pytest_dcuopt.run.crash_diagnosis import crash_hint, log_excerpt
from pytest_dcuopt.run.supervisor import END_NOTE
from pytest_dcuopt.run.worker import CHANNEL_BROKEN_STATUS

DUMP = ["Fatal Python error: Aborted", "", "Current thread 0x1 (most recent call first):"] + \
       [f'  File "x.py", line {n} in f' for n in range(40)]


def test_each_end_gets_its_own_cause() -> None:
    hints = {
        "SIGSEGV": crash_hint(-signal.SIGSEGV, ""),
        "SIGKILL": crash_hint(-signal.SIGKILL, f"{END_NOTE} (pid 7) with signal SIGKILL; its peak memory (max RSS) "
                                               "was 3071 MiB\n"),
        "C++": crash_hint(-signal.SIGABRT, "terminate called after throwing an instance of 'std::runtime_error'\n"),
        "heap": crash_hint(-signal.SIGABRT, "free(): invalid next size (normal)\n"),
        "abort": crash_hint(-signal.SIGABRT, ""),
        "exit 0": crash_hint(0, ""),
        "closed fds": crash_hint(CHANNEL_BROKEN_STATUS, ""),
        "exit 2": crash_hint(2, ""),
    }
    assert "out-of-bounds access or a null pointer" in hints["SIGSEGV"]
    assert "out-of-memory killer (the worker had used up to 3071 MiB" in hints["SIGKILL"]
    assert "a C++ exception left solve()" in hints["C++"]
    assert "heap corrupted" in hints["heap"] and "write before or past a buffer" in hints["heap"]
    assert "heap corruption" in hints["abort"]
    assert "called exit(0)" in hints["exit 0"]
    assert "closed (or reused) file descriptors" in hints["closed fds"]
    assert "called exit(2)" in hints["exit 2"]
    assert len(set(hints.values())) == len(hints)
    assert sum("null pointer" in hint for hint in hints.values()) == 1


def test_a_sigkill_without_the_supervisors_note_names_a_kernel_that_signalled_its_parent() -> None:
    assert "a kernel that signalled its parent" in crash_hint(-signal.SIGKILL, "")


def test_the_excerpt_keeps_the_lines_before_the_dump_and_the_supervisors_note() -> None:
    what = ["terminate called after throwing an instance of 'std::runtime_error'", "  what():  kernel gave up"]
    note = f"{END_NOTE} (pid 7) with signal SIGABRT; its peak memory (max RSS) was 40 MiB"
    excerpt = log_excerpt("\n".join(["earlier output"] * 30 + what + DUMP + [note]))
    lines = excerpt.splitlines()
    assert lines[lines.index(what[0]):lines.index(what[0]) + 3] == [*what, DUMP[0]]
    assert lines[-1] == note and "  ..." in lines
    assert len(lines) < 25


def test_without_a_dump_the_excerpt_is_the_logs_end() -> None:
    text = "\n".join(f"line {n}" for n in range(40))
    assert log_excerpt(text).splitlines() == [f"line {n}" for n in range(25, 40)]
