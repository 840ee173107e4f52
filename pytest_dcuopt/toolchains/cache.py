"""Content-addressed build cache, safe under concurrent pytest processes (xdist workers)."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


class BuildCache:
    """Each build lives in `<root>/<key>/`; a finished build is published with one rename."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    def key(self, source: Path, toolchain: str, identity: str, arch: str | None, flags: Sequence[str]) -> str:
        digest = hashlib.sha256()
        for part in (toolchain, identity, arch or "", "\0".join(flags)):
            digest.update(part.encode())
            digest.update(b"\0")
        for path in sorted(_local_sources(source)):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
        return digest.hexdigest()[:24]

    def entry(self, key: str) -> Path:
        return self.root / key

    def lookup(self, key: str, filename: str) -> Path | None:
        candidate = self.entry(key) / filename
        return candidate if candidate.exists() else None

    @contextlib.contextmanager
    def locked(self, key: str) -> Iterator[None]:
        """Serialise builds of one key across processes, so a build is done once."""
        lock_path = self.root / f".{key}.lock"
        with open(lock_path, "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def staging(self, key: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f".{key}.", dir=self.root))

    def publish(self, key: str, staging: Path) -> Path:
        final = self.entry(key)
        if final.exists():
            shutil.rmtree(staging, ignore_errors=True)
            return final
        os.replace(staging, final)
        return final


def _local_sources(source: Path, seen: set[Path] | None = None) -> set[Path]:
    """The source plus the local headers it includes with quotes (transitively)."""
    seen = set() if seen is None else seen
    source = source.resolve()
    if source in seen or not source.is_file():
        return seen
    seen.add(source)
    text = source.read_text(errors="replace")
    for name in _INCLUDE_RE.findall(text):
        _local_sources(source.parent / name, seen)
    return seen
