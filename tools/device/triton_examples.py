"""Summarize the example suite's Triton branches from a run's state.json (tools/device/triton_examples.sh).

    python3 tools/device/triton_examples.py STATE_JSON --out OUT_DIR

Writes OUT_DIR/triton_examples.json and OUT_DIR/triton_examples.md: per case and branch (variants included), the
verdict, the median, the harness's speedup over the case's baseline, the speedup over the bare branch a variant
comes from (`triton_dot@hinted` against `triton_dot`, from the two medians), how the variant was probed, and the
compiled kernels' metadata (num_warps, num_stages, shared, registers, spills) when the worker recorded them.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def branch_rows(state: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for case, entry in sorted(state.get("cases", {}).items()):
        branches = entry.get("toolchains", {}).get("triton", {}).get("branches", {})
        for name, record in sorted(branches.items()):
            rows.append(_row(case, name, record, branches))
    return rows


def _row(case: str, name: str, record: dict[str, Any], branches: dict[str, Any]) -> dict[str, Any]:
    timing = record.get("timing") or {}
    details = (record.get("build") or {}).get("details") or {}
    bare = name.split("@", 1)[0]
    median, bare_median = timing.get("median_ms"), ((branches.get(bare) or {}).get("timing") or {}).get("median_ms")
    device = record.get("device") or {}
    return {
        "case": case, "branch": name, "correct": record.get("correct"), "skipped": record.get("skipped"),
        "failure": ((record.get("failure") or {}).get("message") or "")[:300] or None,
        "median_ms": median, "rounds": timing.get("rounds"), "mode": device.get("triton_mode"),
        "speedup_vs_baseline": record.get("speedup_vs_baseline"),
        "speedup_vs_bare": round(bare_median / median, 3) if "@" in name and median and bare_median else None,
        "variant": details.get("variant"), "probe": (details.get("probe") or {}).get("outcome"),
        "kernels": device.get("triton_kernels"), "isa": (record.get("isa") or {}).get("outcome"),
    }


def markdown(rows: list[dict[str, Any]], interrupted: str | None = None) -> str:
    head = [f"**The run was cut short ({interrupted})**: branches without a verdict were not reached.", ""]
    columns = ("case", "branch", "correct", "median ms", "speedup vs baseline", "vs bare branch", "probe", "isa",
               "kernels")
    lines = [*(head if interrupted else []), f"| {' | '.join(columns)} |", "|---" * len(columns) + "|"]
    for row in rows:
        verdict = {True: "pass", False: "FAIL", None: "skipped" if row["skipped"] else "-"}[row["correct"]]
        kernels = "; ".join(f"{k.get('kernel')}: w{k.get('num_warps')} s{k.get('num_stages')} shared={k.get('shared')} "
                            f"regs={k.get('n_regs')} spills={k.get('n_spills')}" for k in row["kernels"] or [])
        lines.append(f"| {row['case']} | {row['branch']} | {verdict} | {_num(row['median_ms'])} | "
                     f"{_num(row['speedup_vs_baseline'])} | {_num(row['speedup_vs_bare'])} | {row['probe'] or '-'} | "
                     f"{row['isa'] or '-'} | {kernels or '-'} |")
    skipped = [f"- {r['case']}/{r['branch']}: {r['skipped']}" for r in rows if r["skipped"]]
    failed = [f"- {r['case']}/{r['branch']}: {r['failure']}" for r in rows if r["failure"]]
    return "\n".join([*lines, "", *(["Skipped:", *skipped, ""] if skipped else []),
                      *(["Failed:", *failed, ""] if failed else [])])


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("state", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    options = parser.parse_args()
    state = json.loads(options.state.read_text())
    rows, interrupted = branch_rows(state), state.get("interrupted")
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "triton_examples.json").write_text(json.dumps({"interrupted": interrupted, "branches": rows},
                                                                 indent=1) + "\n")
    (options.out / "triton_examples.md").write_text(markdown(rows, interrupted))
    print(markdown(rows, interrupted))
    return 0 if rows else 1


if __name__ == "__main__":
    raise SystemExit(main())
