"""A worker that ends in the middle of a call is named by how it ended, with its own likely cause and fix.

Black-box: pytest runs in a subprocess on the fixture case tests/data/cases/crashes, whose branches each end their
worker in one way (a SIGKILL, exit(0), a C++ exception, a write before the output, closing every descriptor, a
fork whose child returns into the harness). Each fails alone with its message; the baseline passes.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import CASES, FAST

# branch -> what its failure must say (and the generic out-of-bounds hint must not appear for any but SIGSEGV).
EXPECTED = {
    "kills_itself": r"died with signal SIGKILL while run; SIGKILL comes from the out-of-memory killer \(the worker "
                    r"had used up to \d+ MiB of this machine's [\d.]+ GiB at its peak",
    "exits_zero": r"died with exit status 0 while run; it exited normally in the middle of the call: the kernel "
                  r"\(or a library it calls\) called exit\(0\)",
    "throws": r"died with signal SIGABRT while run; a C\+\+ exception left solve\(\).*what\(\):\s+kernel gave up: "
              r"no plan for this N",
    "writes_before": r"died with signal SIGABRT while run; the C library found its heap corrupted .*a write before or "
                     r"past a buffer",
    "closes_fds": r"died with exit status 86 while run; its reply could not be written: the kernel closed \(or "
                  r"reused\) file descriptors it did not open",
    "forks": r"the kernel forked and the child returned into the harness: both processes came back from solve\(\)",
}


def test_each_way_a_worker_ends_is_named_with_its_cause(pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    shutil.copytree(CASES / "crashes", pytester.path / "crashes")
    result = pytester.runpytest_subprocess("crashes", f"--dcuopt-cache-dir={shared_build_cache}",
                                           f"--dcuopt-run-dir={pytester.path / 'run'}", *FAST, "-k", "correctness",
                                           "--dcuopt-examples=3", "--dcuopt-timeout=30", timeout=300)
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output, output
    result.assert_outcomes(passed=1, failed=len(EXPECTED), deselected=len(EXPECTED) + 1)
    sections = re.split(r"^_{3,} test_correctness_cpu\[(\w+)\] _{3,}$", result.stdout.str(), flags=re.M)
    failures = dict(zip(sections[1::2], sections[2::2], strict=True))
    assert set(failures) == set(EXPECTED), failures.keys()
    for branch, message in EXPECTED.items():
        text = failures[branch]
        assert re.search(message, text, re.S), (branch, text)
        assert "out-of-bounds access or a null pointer" not in text, (branch, text)
        assert "OSError" not in text and "Errno 22" not in text, (branch, text)  # the supervisor's own traceback
