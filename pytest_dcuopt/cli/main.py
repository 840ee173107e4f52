"""The `dcuopt` console script: one subcommand per loop step (docs/loop.md)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import close_iter, compare_timers, env, finalize, ingest, open_iter, pack, probe, setup_run, triton
from .layout import LoopError

COMMANDS = (env, setup_run, open_iter, close_iter, finalize, pack, ingest, triton, probe, compare_timers)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="dcuopt", description="The kernel optimization loop: env, setup, open-iter, "
                                                             "close-iter, finalize; pack and ingest (a run on "
                                                             "another machine); probe (does a builtin call shape "
                                                             "compile?). Each step can be run again.")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except LoopError as exc:
        print(f"dcuopt {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
