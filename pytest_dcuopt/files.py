"""Writing result files: atomically (readers never see half a file) and with the user's umask."""
from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

from .errors import ReportError


class NotWritable(OSError, ReportError):
    """A result file cannot be written where it was asked to go (an OSError, so callers that catch those still do)."""


class LatestLinkWarning(UserWarning):
    """`<runs>/latest` could not be pointed at the newest run (it is a real folder or file, or the link failed)."""


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_atomic(path: Path, data: str | bytes) -> Path:
    """Write through a temporary file in the same directory, then rename over `path`.

    mkstemp creates files with mode 0600; results are meant to be read by others (CI artifacts,
    teammates), so the final file gets the mode a plain `open()` would give: 0666 minus the umask.
    A folder that cannot be created or written raises NotWritable, naming the folder and the fix.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise NotWritable(f"cannot write {path}: the folder {path.parent} cannot be created or written "
                          f"({type(exc).__name__}: {exc.strerror or exc}). Nothing was written there; choose a "
                          "writable folder (for a pytest run: --dcuopt-run-dir=<folder>).") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def point_latest(run_dir: Path) -> str | None:
    """Point `<parent>/latest` at the newest run; best effort, never at the cost of anything the user has.

    A missing `latest`, or one that is a symlink (dangling or not), is replaced atomically (a new link renamed over
    it). A real folder or file named `latest` is left exactly as it is: it may hold results nobody wants lost.
    Returns None when `latest` now points at `run_dir`, else what happened instead, which is also issued as a
    LatestLinkWarning so that it is seen.
    """
    latest = run_dir.parent / "latest"
    if latest.exists() and not latest.is_symlink():
        kind = "folder" if latest.is_dir() else "file"
        return _say(f"{latest} is a real {kind}, not a link, so it was left as it is and does not point at this run "
                    f"({run_dir.name}). Move or remove it to get the `latest` link back.")
    temporary = latest.with_name(f".latest.{os.getpid()}")
    try:
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(run_dir.name)
        os.replace(temporary, latest)
    except OSError as exc:
        if temporary.is_symlink():
            temporary.unlink()
        return _say(f"{latest} could not be pointed at this run ({type(exc).__name__}: {exc}); the results are in "
                    f"{run_dir}.")
    return None


def _say(note: str) -> str:
    warnings.warn(LatestLinkWarning(note), stacklevel=3)
    return note


class RunDirInUse(ReportError):
    """Another live session writes its results into the same run directory."""


class RunDirLock:
    """An exclusive flock on the run directory itself (a directory descriptor, so no lock file is left in it), held
    by the session that writes the results there: a second session given the same directory would overwrite the
    first one's state.json with its own. Folders made here and still empty at release are removed again, so a run
    that wrote nothing leaves nothing. The kernel drops the lock when its holder exits or is killed."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.created: list[Path] = []  # the folders this lock made, deepest first
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        missing = [self.run_dir, *self.run_dir.parents]
        missing = missing[:next(i for i, folder in enumerate(missing) if folder.exists())]
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.run_dir, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            # Not lockable because not writable: the end of the run says so when it writes (NotWritable, with the fix).
            return
        self.created = missing
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunDirInUse(f"{self.run_dir} is the run directory of another pytest session that is still running: "
                              "both would write state.json and summary.md there, and one session's results would be "
                              "lost. Give each session its own --dcuopt-run-dir (or leave the option out for a new "
                              "run_<timestamp>_<pid> each time), or wait for the other session to end.") from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        for folder in self.created:
            try:
                folder.rmdir()  # only when empty: nothing was written
            except OSError:
                break
        os.close(self._fd)  # closing the last descriptor drops the flock
        self._fd = None
