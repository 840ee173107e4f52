"""Compare two runs of the same suite (e.g. `-n 0` and `-n 2`): the same records, the same verdicts, and the timings.

    python tools/compare_runs.py RUN_DIR_A RUN_DIR_B [--md OUT.md] [--label-a "-n 0"] [--label-b "-n 2"]

Prints (and writes with --md) a Markdown summary: records in each run (case, toolchain, branch, size), the ones in
only one of them, every verdict that differs (correct, skipped, error kind, ISA verdict, champion), each timed
record's median in both runs with their ratio, and whether any two timings on one lock overlapped in time (from
each timing's `device_lock` hold: acquired_at/released_at). Exit status 1 when records or verdicts differ or holds
overlap, so a script can gate on it.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

Key = tuple[str, str, str, str]  # case, toolchain, branch, size ("" for the default dims)


def load(run_dir: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((run_dir / "state.json").read_text())
    return state


def records(state: dict[str, Any]) -> Iterator[tuple[Key, dict[str, Any], dict[str, Any]]]:
    """(key, the size's entry or the record, the branch record) for the default dims and every size."""
    for case, by_case in state["cases"].items():
        for toolchain, by_toolchain in by_case["toolchains"].items():
            for branch, record in by_toolchain["branches"].items():
                yield (case, toolchain, branch, ""), record, record
                for size, entry in (record.get("sizes") or {}).items():
                    yield (case, toolchain, branch, size), entry, record


def verdicts(entry: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    isa = record.get("isa")
    return {"correct": record.get("correct"), "skipped": bool(entry.get("skipped")),
            "error": (entry.get("error") or {}).get("kind"),
            "isa": isa.get("outcome") if isinstance(isa, dict) else isa,
            "champion": bool(entry.get("champion")), "timed": entry.get("timing") is not None}


def overlapping_holds(state: dict[str, Any]) -> list[str]:
    holds: dict[str, list[tuple[float, float, str]]] = {}
    for key, entry, _ in records(state):
        lock = (entry.get("timing") or {}).get("device_lock") or {}
        if lock.get("held") and lock.get("acquired_at") and lock.get("released_at"):
            holds.setdefault(lock["name"], []).append((lock["acquired_at"], lock["released_at"], "/".join(key)))
    found = []
    for name, spans in holds.items():
        spans.sort()
        latest_end, latest = spans[0][1], spans[0][2]
        for start, end, label in spans[1:]:
            if start < latest_end:
                found.append(f"{name}: {latest} and {label} overlap by {latest_end - start:.3f} s")
            if end > latest_end:
                latest_end, latest = end, label
    return found


def compare(a: dict[str, Any], b: dict[str, Any], label_a: str, label_b: str) -> tuple[list[str], bool]:
    left = {key: (entry, record) for key, entry, record in records(a)}
    right = {key: (entry, record) for key, entry, record in records(b)}
    lines = [f"records: {label_a} {len(left)}, {label_b} {len(right)} (a branch at its default dims and at each size)"]
    only = [f"only in {label_a}: {'/'.join(k)}" for k in sorted(set(left) - set(right))]
    only += [f"only in {label_b}: {'/'.join(k)}" for k in sorted(set(right) - set(left))]
    differ = []
    ratios = []
    table = [f"| record | {label_a} median ms | {label_b} median ms | ratio |", "|---|---|---|---|"]
    for key in sorted(set(left) & set(right)):
        va, vb = verdicts(*left[key]), verdicts(*right[key])
        changed = {field: (va[field], vb[field]) for field in va if va[field] != vb[field]}
        if changed:
            differ.append(f"{'/'.join(key)}: " + ", ".join(f"{f} {x} -> {y}" for f, (x, y) in changed.items()))
        ta, tb = left[key][0].get("timing"), right[key][0].get("timing")
        if ta and tb:
            ratio = tb["median_ms"] / ta["median_ms"]
            ratios.append(ratio)
            table.append(f"| {'/'.join(k for k in key if k)} | {ta['median_ms']:.5g} | {tb['median_ms']:.5g} | "
                         f"{ratio:.3f} |")
    overlaps = {label_a: overlapping_holds(a), label_b: overlapping_holds(b)}
    lines += only or ["the same records in both"]
    lines += differ or ["the same verdicts in both (correct, skipped, error kind, ISA verdict, champion, timed)"]
    for label, found in overlaps.items():
        lines.append(f"{label}: " + ("; ".join(found) if found else "no two timings on one lock overlapped"))
    if ratios:
        lines.append(f"timed in both: {len(ratios)}; median ratio {label_b}/{label_a} {statistics.median(ratios):.3f}, "
                     f"range {min(ratios):.3f}-{max(ratios):.3f}")
    lines += ["", *table]
    same = not only and not differ and not any(overlaps.values())
    return lines, same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--label-a", default="A")
    parser.add_argument("--label-b", default="B")
    parser.add_argument("--md", type=Path)
    args = parser.parse_args(argv)
    lines, same = compare(load(args.run_a), load(args.run_b), args.label_a, args.label_b)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.md:
        args.md.write_text(text)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
