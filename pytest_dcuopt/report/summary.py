"""Human views of state.json: summary.md and the terminal table (pure functions of the state)."""
from __future__ import annotations

import json
from typing import Any, Mapping


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


def _x(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _correct(branch: Mapping[str, Any]) -> str:
    if branch.get("skipped") and branch.get("correct") is None:
        return "skipped"
    return {True: "pass", False: "FAIL", None: "-"}[branch.get("correct")]


def branch_rows(toolchain: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for name, branch in toolchain["branches"].items():
        timing = branch.get("timing") or {}
        tput = branch.get("throughput") or {}
        mark = "*" if branch.get("champion") else ""
        beats = "yes" if branch.get("beats_baseline") else ("" if name == "baseline" else "no")
        rows.append([
            f"{name}{mark}", _correct(branch), _ms(timing.get("median_ms")), _ms(timing.get("iqr_ms")),
            str(timing.get("rounds", "-")), _x(branch.get("speedup_vs_baseline")), beats,
            _ms(tput.get("gbps")), _ms(tput.get("gflops")), _isa(branch),
        ])
    return rows


HEADERS = ["branch", "correct", "median ms", "IQR ms", "rounds", "speedup", "beats noise", "GB/s", "GFLOP/s", "ISA"]


def _isa(branch: Mapping[str, Any]) -> str:
    """The ISA verdict of the branch's isa marks: pass, FAIL, inconclusive, or - (no marks checked)."""
    isa = branch.get("isa") or {}
    outcome = isa.get("outcome")
    return {"pass": "pass", "fail": "FAIL"}.get(outcome, outcome or "-")


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADERS)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(HEADERS, widths)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    return [line, rule, *body]


def render_summary(state: Mapping[str, Any]) -> str:
    """summary.md: one table per case and toolchain, champion marked, failures with their minimal example."""
    out = ["# pytest_dcuopt run summary", "",
           f"- run dir: `{state['run_dir']}`", f"- started: {state['created_at']}, finished: {state['finished_at']}",
           f"- machine: {state['machine'].get('cpu', '?')} ({state['machine'].get('host', '?')})",
           f"- timing: {json.dumps(state['options'].get('timing', {}))}", ""]
    toolchains = state.get("toolchains", {})
    if toolchains:
        out += ["## Toolchains", ""]
        out += [f"- `{name}`: {info.get('capability')}: {info.get('reason')}" for name, info in toolchains.items()]
        out.append("")
    for case, data in state["cases"].items():
        for toolchain, result in data["toolchains"].items():
            champion = result.get("champion")
            out += [f"## {case} ({toolchain})", "",
                    f"Champion: **{champion or 'none'}**" + (f" ({_x(result.get('champion_speedup'))} vs baseline)"
                                                            if champion else " (no correct, timed branch)"), ""]
            out += _table(branch_rows(result))
            out.append("")
            out += _problems(result)
            out += _isa_lines(result)
    if any(b.get("timing") and b["timing"].get("concurrent_workers", 1) > 1
           for d in state["cases"].values() for t in d["toolchains"].values() for b in t["branches"].values()):
        out += ["**Warning:** timings were taken while several xdist workers ran at once; they are fit for a "
                "correctness sweep, not for comparison. Re-run the benchmarks with `-n 0`.", ""]
    out += ["`*` = champion: the fastest correct branch whose median's 95% confidence interval lies wholly below the "
            "baseline's (\"beats noise\"). `speedup` and `beats noise` come from the interleaved A/B rounds against "
            "the baseline when they ran (`timing.interleaved`), else from the two separate measurements; the median "
            "columns are the separate measurements.", ""]
    return "\n".join(out)


def _isa_lines(result: Mapping[str, Any]) -> list[str]:
    """One line per branch with ISA verdicts (isa_check.json has the details): outcome, target, what did not pass."""
    lines: list[str] = []
    for name, branch in result["branches"].items():
        isa = branch.get("isa")
        if not isa:
            continue
        unmet = [c for v in isa["verdicts"] for c in v["checks"] if not c.startswith("pass")]
        lines.append(f"- ISA **{name}**: {isa['outcome']} ({isa['family']}, {isa.get('arch') or 'arch unknown'})")
        lines += [f"  - {c}" for c in unmet[:8]]
    return lines + [""] if lines else []


def _problems(result: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    for name, branch in result["branches"].items():
        failure, error = branch.get("failure"), branch.get("error")
        if failure:
            lines += [f"**{name}** is incorrect. Minimal example: dims `{json.dumps(failure['dims'])}`, "
                      f"seed `{failure['seed']}`.", "", "```", failure["message"].strip(), "```",
                      f"Reproduce: `{failure['reproduce']}`", ""]
        elif error:
            lines += [f"**{name}** {error['kind']}:", "", "```", error["message"].strip()[:3000], "```", ""]
        elif branch.get("skipped"):
            lines += [f"**{name}** skipped: {branch['skipped']}", ""]
    return lines


def terminal_lines(state: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    for case, data in state["cases"].items():
        for toolchain, result in data["toolchains"].items():
            capability = state.get("toolchains", {}).get(toolchain, {}).get("capability", "run")
            note = f"  [{capability}: correctness and timing skipped]" if capability != "run" else ""
            lines.append(f"{case} [{toolchain}]  champion: {result.get('champion') or 'none'}"
                         + (f" ({_x(result.get('champion_speedup'))})" if result.get("champion") else "") + note)
            lines += ["  " + row for row in _table(branch_rows(result))]
    return lines
