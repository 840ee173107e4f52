"""Digests of what runs rely on, kept in the pytest process's memory where no worker can write.

A kernel runs as the user who runs pytest, so it can rewrite any file that user can: its case's ref.py (found
through `__FILE__`), another branch's source, another build's library in the cache, an earlier run's state.json.
The pytest process takes each file's SHA-256 when it first reads it, before any kernel of the case runs (a case's
files at collection, an earlier run's state.json at the session's start, a built library before its first worker
loads it), and checks it again before every later worker load and at the session's end. A file that changed fails
the run, naming the file (`changed`); a library that changed is refused before a worker loads it (`check_library`).
After every reply of a worker, the pytest process also looks at each watched file's status (`tampered_since`): its
inode, size and change time (ctime, which no unprivileged process can set back), and the digest again only where
they moved; a file that changed is blamed on the worker that just answered, whose branch fails with the reason.
What this does not stop: a file changed before the pytest process first read it (in an earlier run whose end check
never ran, e.g. killed), and a change undone before the check. docs/security.md.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

# How many files of one case directory are watched at most (a case is a handful of small files).
MAX_CASE_FILES = 500
MAX_STATES = 200  # the newest earlier runs' states watched (run folders are named by their start time)
_SKIPPED_DIRS = ("__pycache__", ".pytest_cache")


def digest(path: Path) -> str | None:
    """The file's SHA-256 (hex); None when it cannot be read (gone, a folder)."""
    found = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                found.update(chunk)
    except OSError:
        return None
    return found.hexdigest()


def _status(path: Path) -> tuple[int, ...] | None:
    """What changes with a file's content: its inode, size, modification and change times (None: gone)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns


class Digests:
    """Files and the digest each had when first seen."""

    def __init__(self) -> None:
        self.seen: dict[Path, str | None] = {}
        self.why: dict[Path, str] = {}  # what the file is, for the message
        self.status: dict[Path, tuple[int, ...] | None] = {}  # as last looked at by `tampered_since`
        self.blamed: set[Path] = set()  # changes already blamed on a worker: each is blamed once

    def reset(self) -> None:
        """Forget every file: a new session starts (pytester may run several in one process)."""
        self.seen.clear()
        self.why.clear()
        self.status.clear()
        self.blamed.clear()

    def watch(self, path: Path, what: str) -> None:
        path = path.absolute()
        if path not in self.seen:
            self.status[path] = _status(path)
            self.seen[path] = digest(path)
            self.why[path] = what

    def tampered_since(self) -> list[str]:
        """Files whose content changed since they were first seen and that no earlier call of this has named, one line
        each. Cheap when nothing changed: one stat() per file; the digest only of a file whose status moved."""
        found = []
        for path, before in self.status.items():
            now = _status(path)
            if now == before or path in self.blamed:
                continue
            self.status[path] = now
            if digest(path) != self.seen.get(path):
                self.blamed.add(path)
                found.extend(self.changed([path]))
        return found

    def watch_case(self, root: Path) -> None:
        """Every file of a case directory (ref.py, the dims, every branch's source) as it is now."""
        files = [p for p in sorted(root.rglob("*")) if p.is_file() and not any(d in p.parts for d in _SKIPPED_DIRS)]
        for path in files[:MAX_CASE_FILES]:
            self.watch(path, f"a file of the case {root.name}")

    def watch_states(self, run_root: Path, own: Path) -> None:
        """Every earlier run's state.json under the runs' folder (not this run's own)."""
        if run_root.is_dir():
            for path in sorted(run_root.glob("*/state.json"))[-MAX_STATES:]:
                # Not this run's own, nor a link to a run (`latest` moves when another run ends).
                if path.parent.absolute() != own.absolute() and not path.parent.is_symlink():
                    self.watch(path, "an earlier run's state.json")

    def changed(self, paths: Iterable[Path] | None = None) -> list[str]:
        """What changed since first seen, one line per file (empty: nothing)."""
        found = []
        for path in (self.seen if paths is None else [p.absolute() for p in paths]):
            before = self.seen.get(path)
            now = digest(path)
            if path in self.seen and now != before:
                state = "was removed" if now is None else "was rewritten"
                found.append(f"{path} ({self.why[path]}) {state} during this run (sha256 {before} -> {now})")
        return found

    def check_library(self, path: Path, label: str) -> str | None:
        """Before a worker loads a built library: watch it at first sight, then refuse it if it changed."""
        self.watch(path, "a built library in the build cache")
        changed = self.changed([path])
        if not changed:
            return None
        return (f"{label}: refusing to load {changed[0]}: a kernel of this run rewrote another build's library. "
                "Remove that cache entry (or run with a fresh --dcuopt-cache-dir) and look for a kernel that writes "
                "outside its outputs.")


# One per pytest process: the workers' supervisors (run/isolation.py) and the session share it.
DIGESTS = Digests()
