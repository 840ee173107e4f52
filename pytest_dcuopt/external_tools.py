"""The one place that runs external tools (compilers, disassemblers, profilers).

Every call has a timeout and returns a ToolResult that keeps the exact command line
and its output, so reports can show what ran.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class ToolResult:
    """What one external command did."""

    command: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    cwd: str | None = None
    env_overrides: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def command_line(self) -> str:
        prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env_overrides.items())
        line = shlex.join(self.command)
        return f"{prefix} {line}" if prefix else line

    def to_json(self) -> dict[str, object]:
        return {
            "command": self.command_line,
            "returncode": self.returncode,
            "seconds": round(self.seconds, 4),
            "timed_out": self.timed_out,
            "stderr": self.stderr[-4000:],
        }


def which(name: str, env_var: str | None = None) -> str | None:
    """Find an executable: an explicit override in `env_var` first, then PATH."""
    if env_var and os.environ.get(env_var):
        candidate = os.environ[env_var]
        return candidate if shutil.which(candidate) else None
    return shutil.which(name)


def run_tool(
    command: Sequence[str | os.PathLike[str]],
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
) -> ToolResult:
    """Run `command` (an argv list, never a shell string) and capture its output.

    `env` holds overrides on top of the current environment. A command that runs past
    `timeout` is killed and reported with `timed_out=True` and returncode 124.
    A missing executable is reported as returncode 127, like a shell would.
    """
    argv = tuple(str(part) for part in command)
    overrides = dict(env or {})
    full_env = {**os.environ, **overrides} if overrides else None
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=full_env,
            input=input_text,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return ToolResult(
            argv, 124, _text(exc.stdout), _text(exc.stderr) + f"\n[timed out after {timeout:g} s]",
            time.perf_counter() - start, True, _str_or_none(cwd), overrides,
        )
    except FileNotFoundError as exc:
        return ToolResult(argv, 127, "", f"{exc}", time.perf_counter() - start, False, _str_or_none(cwd), overrides)
    elapsed = time.perf_counter() - start
    return ToolResult(argv, proc.returncode, proc.stdout, proc.stderr, elapsed, False, _str_or_none(cwd), overrides)


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def _str_or_none(path: str | os.PathLike[str] | None) -> str | None:
    return None if path is None else str(Path(path))
