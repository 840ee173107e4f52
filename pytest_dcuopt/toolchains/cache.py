"""Content-addressed build cache, safe under concurrent pytest processes (xdist workers), and self-healing.

Each build lives in `<root>/<key>/`, published with one rename from a staging folder. Publishing writes a
manifest (every file's size and SHA-256) into the entry; a lookup verifies the entry against it, so an entry
that is partial, truncated or changed (a zero-byte kernel.so left by a full disk, a file deleted by hand, an
entry from before manifests) is never loaded: it is moved aside and rebuilt. Staging folders left by a killed
build are removed once they are old and no build of their key holds its lock.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..errors import DcuOptError

_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
MANIFEST = ".dcuopt-entry.json"
# A staging folder older than this whose key is not being built is a leftover of a killed build.
STALE_STAGING_S = 300.0


class BuildCacheError(DcuOptError):
    """The build cache directory cannot be created or written."""


class BuildCache:
    """Each build lives in `<root>/<key>/`; a finished build is published with one rename."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._ready = False  # the folder is created (and swept) on first use: a run that builds nothing writes nothing
        self.healed: dict[str, str] = {}  # key -> why its entry was discarded and rebuilt (in this process)

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
        """`<key>/<filename>` when the entry is whole (it matches its manifest and `filename` is not empty);
        a broken entry is moved aside (call under `locked(key)`) and None returned, so the caller rebuilds."""
        entry = self.entry(key)
        if not entry.exists():
            return None
        problem = entry_problem(entry, filename)
        if problem is None:
            return entry / filename
        self.healed[key] = problem
        self._discard(key)
        return None

    @contextlib.contextmanager
    def locked(self, key: str) -> Iterator[None]:
        """Serialise builds of one key across processes, so a build is done once."""
        self._prepare()
        with open(self.root / f".{key}.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def staging(self, key: str) -> Path:
        self._prepare()
        return Path(tempfile.mkdtemp(prefix=f".{key}.", dir=self.root))

    def publish(self, key: str, staging: Path) -> Path:
        """Write the manifest into `staging` and rename it into place (an existing whole entry wins)."""
        final = self.entry(key)
        if final.exists() and entry_problem(final) is None:
            shutil.rmtree(staging, ignore_errors=True)
            return final
        if final.exists():
            self._discard(key)
        write_manifest(staging)
        os.replace(staging, final)
        return final

    def sweep_stale_staging(self, older_than_s: float = STALE_STAGING_S) -> list[Path]:
        """Remove staging and discarded folders left by killed builds: older than `older_than_s` and with no build
        of their key running (its lock is free). Returns what was removed."""
        removed = []
        now = time.time()
        for folder in self.root.glob(".*.*"):
            key = folder.name[1:].split(".", 1)[0]
            if not folder.is_dir() or folder.is_symlink() or now - folder.stat().st_mtime < older_than_s:
                continue
            if self._key_is_idle(key):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
        return removed

    def _prepare(self) -> None:
        if self._ready:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BuildCacheError(f"cannot create the build cache {self.root} ({type(exc).__name__}: {exc}). Builds "
                                  "are kept there between runs: pass --dcuopt-cache-dir=<a writable folder>.") from exc
        self._ready = True
        self.sweep_stale_staging()

    def _key_is_idle(self, key: str) -> bool:
        lock_path = self.root / f".{key}.lock"
        if not lock_path.exists():
            return True
        with open(lock_path, "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            fcntl.flock(handle, fcntl.LOCK_UN)
            return True

    def _discard(self, key: str) -> None:
        """Move a broken entry out of the way in one rename (a process that already loaded its files keeps them),
        then delete it; what cannot be deleted now is swept later as a stale folder."""
        aside = Path(tempfile.mkdtemp(prefix=f".{key}.broken.", dir=self.root))
        os.replace(self.entry(key), aside / "entry")
        shutil.rmtree(aside, ignore_errors=True)


def write_manifest(folder: Path) -> None:
    files = {str(path.relative_to(folder)): _fingerprint(path) for path in sorted(folder.rglob("*"))
             if path.is_file() and path.name != MANIFEST}
    (folder / MANIFEST).write_text(json.dumps({"version": 1, "files": files}, indent=1, sort_keys=True))


def entry_problem(entry: Path, required: str | None = None) -> str | None:
    """Why a published entry cannot be trusted (None: it is whole): no manifest, a file missing, a size or hash that
    differs from the manifest, or an empty `required` file (a build output is never empty)."""
    try:
        manifest = json.loads((entry / MANIFEST).read_text())
        files = manifest["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return "no readable manifest (an entry from a build that did not finish, or from before manifests)"
    if required is not None and required not in files:
        return f"{required} is not part of the entry"
    for name, expected in files.items():
        path = entry / name
        try:
            if _fingerprint(path) != expected:
                return f"{name} differs from what was built"
        except OSError:
            return f"{name} is missing"
    if required is not None and files[required]["size"] == 0:
        return f"{required} is empty"
    return None


def _fingerprint(path: Path) -> dict[str, object]:
    data = path.read_bytes()
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


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
