"""Summary of tools/device/reliability_check.sh: what the other_stream and device_oom runs left in state.json.

    python3 tools/device/reliability_check.py summary --other-stream RUN/state.json --oom RUN/state.json \
        --out summary.json --md summary.md

Each state file may be missing (a step that did not finish): the summary says so instead of failing.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pytest_dcuopt.report.state import find_case  # cases are keyed by their path relative to the rootdir

TOOLCHAIN = "cuda"


def read_state(path: Path | None) -> dict[str, Any] | None:
    if path is None or not path.is_file():
        return None
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def branches_of(state: dict[str, Any] | None, case: str) -> tuple[dict[str, Any], str | None]:
    """(branch name -> record, champion) of one case's cuda toolchain; ({}, None) when absent."""
    entry = ((find_case(state or {}, case) or {}).get("toolchains", {}).get(TOOLCHAIN)) or {}
    return dict(entry.get("branches") or {}), entry.get("champion")


def first_line(text: Any, limit: int = 300) -> str | None:
    if not text:
        return None
    line = str(text).strip().splitlines()[0]
    return line if len(line) <= limit else line[: limit - 3] + "..."


def describe_branch(record: dict[str, Any]) -> dict[str, Any]:
    timing = record.get("timing") or {}
    error = record.get("error") or {}
    failure = record.get("failure") or {}
    after = timing.get("after_end_event") or error.get("after_end_event") or {}
    return {"correct": record.get("correct"), "champion": record.get("champion"),
            "median_ms": timing.get("median_ms"), "method": timing.get("method"),
            "after_end_event": after.get("verdict"), "waits_us": after.get("waits_us"), "idle_us": after.get("idle_us"),
            "error_kind": error.get("kind"), "message": first_line(error.get("message") or failure.get("message"))}


def summarize(other_stream: dict[str, Any] | None, oom: dict[str, Any] | None) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, state, case in (("other_stream", other_stream, "other_stream"), ("device_oom", oom, "device_oom")):
        branches, champion = branches_of(state, case)
        if not branches:
            found[name] = {"ran": False, "why": "no state.json, or no cuda records in it (see the step's log)"}
            continue
        found[name] = {"ran": True, "champion": champion,
                       "interrupted": (state or {}).get("interrupted"),
                       "branches": {branch: describe_branch(record) for branch, record in sorted(branches.items())}}
    found["expected"] = {
        "other_stream": "nonblocking_stream: after_end_event 'work left running', error_kind 'work left running', "
                        "never champion; baseline and blocking_stream: 'idle'",
        "device_oom": "huge_workspace: correct false, message naming cudaErrorMemoryAllocation; baseline correct"}
    return found


def markdown(summary: dict[str, Any]) -> str:
    lines = ["# reliability_check", ""]
    for name in ("other_stream", "device_oom"):
        entry = summary[name]
        lines.append(f"## {name}")
        if not entry["ran"]:
            lines += [f"not run: {entry['why']}", ""]
            continue
        lines += [f"champion: {entry['champion']}", "",
                  "| branch | correct | median ms | after end event | waits us | idle us | error | message |",
                  "|---|---|---|---|---|---|---|---|"]
        for branch, row in entry["branches"].items():
            cells = [branch, row["correct"], row["median_ms"], row["after_end_event"], row["waits_us"], row["idle_us"],
                     row["error_kind"], row["message"]]
            lines.append("| " + " | ".join("-" if c is None else str(c).replace("|", "\\|") for c in cells) + " |")
        lines += ["", f"expected: {summary['expected'][name]}", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("summary")
    command.add_argument("--other-stream", type=Path)
    command.add_argument("--oom", type=Path)
    command.add_argument("--out", type=Path, required=True)
    command.add_argument("--md", type=Path, required=True)
    args = parser.parse_args(argv)
    summary = summarize(read_state(args.other_stream), read_state(args.oom))
    args.out.write_text(json.dumps(summary, indent=1))
    args.md.write_text(markdown(summary))
    print(markdown(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
