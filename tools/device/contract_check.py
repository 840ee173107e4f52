"""The contract cases on a CUDA GPU (driven by tools/device/contract_check.sh).

The cases tests/data/cases/contract_* reproduce code written elsewhere (positional names, an accumulating
histogram, derived shapes, related dims, a long float32 reduction, an allocating solve). Each kernel.cpp has a CUDA
twin kernel.cu with the same C ABI and the same bug; both must get the verdicts in EXPECTED, which
tests/plugin/test_case_contract.py also checks for the CPU versions.

    python3 tools/device/contract_check.py run --toolchain cuda --work W [--cache DIR] [--timeout S]
    python3 tools/device/contract_check.py summary --state W/run/state.json --toolchain cuda --out OUT/contract.json \
        --md OUT/contract.md

`run` copies the cases to W/cases and runs pytest there (correctness with 10 drawn examples; benchmarks disabled, so
each benchmark test is one checked call), into W/run (state.json) and W/pytest.log. Running from the copy keeps the
repository's own pytest settings (warnings as errors) out of a run that is meant to be a user's. Exit 0 when a
state.json came out (pytest itself exits 1: the wrong branches fail, on purpose).

`summary` writes one row per case and branch: correct (state.json's `correct`), the expected verdict, the observed
one, whether they agree, and a short note (the failing dims and what differed, or the error). Exit 0 when every
branch agrees, 1 when one does not, 2 when there is no state.json to read.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from pytest_dcuopt.report.state import find_case  # cases are keyed by their path relative to the rootdir
from pytest_dcuopt.external_tools import run_tool  # noqa: E402

CASES = REPO / "tests" / "data" / "cases"
EXAMPLES = 10
RUN_TIMEOUT_S = 140.0  # inside the shell step's 150 s, so a run cut short still leaves its log and verdict

# case -> branch -> verdict. correct: passes; wrong: fails its correctness test; refused: solve's signature does not
# fit the reference (a case error before anything runs).
EXPECTED: dict[str, dict[str, str]] = {
    "contract_positional_n": {"baseline": "correct", "stops_one_short": "wrong", "scalar_first": "refused"},
    "contract_rows_cols": {"baseline": "correct", "rows_cols_swapped": "wrong"},
    "contract_hist_zero_init": {"baseline": "correct", "assigns_instead_of_adds": "wrong", "clears_one_past": "wrong"},
    "contract_initial_value": {"baseline": "correct", "resets_to_zero": "wrong"},
    "contract_alloc_temp": {"baseline": "correct", "skips_last_copy": "wrong"},
    "contract_conv1d_valid": {"baseline": "correct", "full_length_output": "wrong", "misses_last_output": "wrong"},
    "contract_window_relation": {"baseline": "correct", "caps_window_at_8": "wrong"},
    "contract_matmul_large_k": {"baseline": "correct", "split_k_partials": "correct", "drops_last_k": "wrong"},
}
NOTE_CHARS = 110


@dataclass(frozen=True)
class Row:
    case: str
    branch: str
    correct: bool | None  # state.json's value; None when the branch never ran (or is missing)
    expected: str
    observed: str
    note: str

    @property
    def agrees(self) -> bool:
        return self.observed == self.expected


def pytest_command(toolchain: str, run_dir: Path, cache_dir: Path, cases: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", *cases, "--dcuopt-toolchain", toolchain, "--dcuopt-examples",
            str(EXAMPLES), "-q", "-rs", "-p", "no:cacheprovider", "--dcuopt-run-dir", str(run_dir),
            "--dcuopt-cache-dir", str(cache_dir), "--benchmark-disable"]


def cmd_run(args: argparse.Namespace) -> int:
    work = Path(args.work).resolve()
    copies = work / "cases"
    shutil.rmtree(copies, ignore_errors=True)
    copies.mkdir(parents=True)
    for case in sorted(EXPECTED):
        shutil.copytree(CASES / case, copies / case)
    run_dir, cache = work / "run", Path(args.cache).resolve() if args.cache else work / "cache"
    shutil.rmtree(run_dir, ignore_errors=True)
    result = run_tool(pytest_command(args.toolchain, run_dir, cache, sorted(EXPECTED)), timeout=args.timeout,
                      cwd=copies)
    (work / "pytest.log").write_text(f"$ {result.command_line}\n{result.stdout}\n{result.stderr}")
    tail = (result.stdout + result.stderr).strip().splitlines()[-3:]
    print(f"pytest exit {result.returncode} after {result.seconds:.1f} s"
          f"{' (timed out)' if result.timed_out else ''}: " + " | ".join(tail))
    if not (run_dir / "state.json").is_file():
        print(f"no state.json in {run_dir}: see {work / 'pytest.log'}", file=sys.stderr)
        return 1
    return 0


def observed_verdict(record: dict[str, Any] | None) -> str:
    """What the run said about one branch, in EXPECTED's words (anything else names what happened instead)."""
    if record is None:
        return "missing"
    if record.get("correct") is True:
        return "correct"
    if record.get("correct") is False:
        return "wrong"
    error = record.get("error") or {}
    if error.get("kind") == "case error":
        return "refused"
    if error:
        return f"error ({error.get('kind', '?')})"
    return "skipped" if record.get("skipped") else "not run"


def note_of(record: dict[str, Any] | None) -> str:
    """One short line: where a wrong branch failed and how, or what stopped a branch from running."""
    if record is None:
        return "not in state.json"
    if record.get("correct") is True:
        return ""
    failure, error = record.get("failure") or {}, record.get("error") or {}
    if failure:
        lines = [line.strip() for line in str(failure.get("message", "")).splitlines()[1:] if line.strip()]
        text = f"dims {json.dumps(failure.get('dims'), separators=(',', ':'))}: {lines[0] if lines else '?'}"
    elif error:
        lines = str(error.get("message", "")).splitlines()
        text = f"{error.get('kind', '?')}: {lines[0].split(': ', 1)[-1] if lines else '?'}"
    else:
        text = str(record.get("skipped") or "")
    text = text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS - 3] + "..."
    return text.replace("|", "\\|")  # a literal | in a Markdown table cell


def summarize(state: dict[str, Any], toolchain: str) -> list[Row]:
    rows = []
    for case, branches in EXPECTED.items():
        found = ((find_case(state, case) or {}).get("toolchains", {}).get(toolchain) or {}).get("branches")
        for branch, expected in branches.items():
            record = (found or {}).get(branch)
            rows.append(Row(case, branch, None if record is None else record.get("correct"), expected,
                            observed_verdict(record), note_of(record)))
    return rows


def markdown(rows: list[Row], toolchain: str) -> str:
    agreeing = sum(row.agrees for row in rows)
    lines = [f"# Contract cases on the {toolchain} toolchain: {agreeing} of {len(rows)} branches as expected", "",
             "| case | branch | correct | expected | observed | agree | note |",
             "|------|--------|---------|----------|----------|-------|------|"]
    for row in rows:
        correct = {True: "yes", False: "no", None: "-"}[row.correct]
        lines.append(f"| {row.case} | {row.branch} | {correct} | {row.expected} | {row.observed} | "
                     f"{'yes' if row.agrees else 'NO'} | {row.note} |")
    lines += ["", "correct: state.json's `correct` (- when the branch did not run). expected: the verdict of the CPU "
              "version (tests/plugin/test_case_contract.py). refused: solve's signature does not fit the reference."]
    return "\n".join(lines) + "\n"


def cmd_summary(args: argparse.Namespace) -> int:
    state_path = Path(args.state)
    if not state_path.is_file():
        print(f"no state.json at {state_path}: the pytest run did not finish (see its log)", file=sys.stderr)
        return 2
    rows = summarize(json.loads(state_path.read_text()), args.toolchain)
    all_agree = all(row.agrees for row in rows)
    Path(args.out).write_text(json.dumps({"toolchain": args.toolchain, "all_agree": all_agree,
                                          "rows": [{**asdict(row), "agrees": row.agrees} for row in rows]},
                                         indent=1) + "\n")
    Path(args.md).write_text(markdown(rows, args.toolchain))
    print(markdown(rows, args.toolchain))
    return 0 if all_agree else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="copy the contract cases and run pytest on them")
    run.add_argument("--toolchain", required=True)
    run.add_argument("--work", required=True, help="folder for the copies, the run dir and the log")
    run.add_argument("--cache", default=None, help="build cache folder (default: WORK/cache)")
    run.add_argument("--timeout", type=float, default=RUN_TIMEOUT_S)
    summary = commands.add_parser("summary", help="expected against observed verdicts, as JSON and Markdown")
    summary.add_argument("--state", required=True)
    summary.add_argument("--toolchain", required=True)
    summary.add_argument("--out", required=True)
    summary.add_argument("--md", required=True)
    args = parser.parse_args(argv)
    return cmd_run(args) if args.command == "run" else cmd_summary(args)


if __name__ == "__main__":
    sys.exit(main())
