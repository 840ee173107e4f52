"""hipprof SQTT (thread trace) passes: the seed's command line, and a summary of what a pass wrote.

No real hipprof SQTT output has been recorded for this project, so nothing here assumes its fields: the summary
counts, per file, the events by kind of a Chrome-trace/Perfetto JSON (`traceEvents` entries by `name`, else `cat`,
else `ph`), the entries of any other JSON by their top-level keys, and the rows of a CSV, and says "unverified
format" until a recorded sample backs a parser.
"""
from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The seed's triage pass: --sqtt-type 1 = stat, wave, issue, stat_stall, stat_valu; --output-type 0 = JSON.
SQTT_TYPE = "1"
SQTT_OUTPUT_TYPE = "0"
UNVERIFIED = ("unverified format: no real hipprof SQTT sample has been recorded, so these are counts of what the "
              "files hold (events by kind, JSON keys, CSV rows), not interpreted stall figures")
MAX_KINDS = 20
MAX_FILE_BYTES = 256 << 20  # a trace beyond this is listed, not parsed


def command(hipprof: str, out_dir: Path, target: Sequence[str], kernel: str | None = None) -> list[str]:
    """`hipprof -o <out>/sqtt -d <out>/sqtt_json/ --output-type 0 --sqtt --sqtt-type 1 [--kernel-name K] <target>`
    (the trailing `/` of `-d`: DTK 25.04.4 appends its file names to the folder without one)."""
    line = [hipprof, "-o", f"{out_dir}/sqtt", "-d", f"{out_dir}/sqtt_json/", "--output-type", SQTT_OUTPUT_TYPE,
            "--sqtt", "--sqtt-type", SQTT_TYPE]
    return [*line, *(["--kernel-name", kernel] if kernel else []), *target]


def summarize(folder: Path) -> dict[str, Any]:
    """Per JSON/CSV file under `folder`: what it holds, counted; `format` says it is unverified."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in (".json", ".csv")) \
        if folder.is_dir() else []
    return {"format": UNVERIFIED, "folder": str(folder), "files": [summarize_file(p) for p in files]}


def summarize_file(path: Path) -> dict[str, Any]:
    found: dict[str, Any] = {"file": path.name, "bytes": path.stat().st_size}
    if found["bytes"] > MAX_FILE_BYTES:
        return {**found, "error": f"not parsed: larger than {MAX_FILE_BYTES >> 20} MiB"}
    text = path.read_bytes().decode("utf-8", errors="replace")
    return {**found, **(summarize_csv(text) if path.suffix.lower() == ".csv" else summarize_json(text))}


def summarize_json(text: str) -> dict[str, Any]:
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return {"error": f"not JSON: {str(exc)[:200]}"}
    events = document.get("traceEvents") if isinstance(document, dict) else document
    if isinstance(events, list):
        kinds = Counter(_kind(e) for e in events)
        return {"events": len(events), "events_by_kind": dict(kinds.most_common(MAX_KINDS))}
    if isinstance(document, dict):
        return {"keys": sorted(str(k) for k in document)[:MAX_KINDS]}
    return {"value_type": type(document).__name__}


def _kind(event: Any) -> str:
    if not isinstance(event, dict):
        return type(event).__name__
    for key in ("name", "cat", "ph"):
        if isinstance(event.get(key), (str, int, float)):
            return f"{key}={event[key]}"
    return "untyped"


def summarize_csv(text: str) -> dict[str, Any]:
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        return {"error": f"not CSV: {str(exc)[:200]}"}
    return {"columns": rows[0][:MAX_KINDS] if rows else [], "rows": max(0, len(rows) - 1)}
