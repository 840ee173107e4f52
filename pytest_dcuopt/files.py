"""Writing result files: atomically (readers never see half a file) and with the user's umask."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_atomic(path: Path, data: str | bytes) -> Path:
    """Write through a temporary file in the same directory, then rename over `path`.

    mkstemp creates files with mode 0600; results are meant to be read by others (CI artifacts,
    teammates), so the final file gets the mode a plain `open()` would give: 0666 minus the umask.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def point_latest(run_dir: Path) -> None:
    """Keep `<parent>/latest` pointing at the newest run (best effort: a symlink)."""
    latest = run_dir.parent / "latest"
    try:
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(run_dir.name)
    except OSError:
        pass
