"""`dcuopt triton ...`: the Triton investigation workflow (docs/triton.md, "The investigation workflow").

Each subcommand is one step; each writes JSON (and Markdown where a person reads it) and prints what it found
and the next command to run. The work is done in pytest_dcuopt/triton_flow/; this module only parses arguments.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..external_tools import run_tool
from ..files import write_atomic
from ..triton_flow import artifacts, environment, hints, report, scan, summarize, to_case
from ..triton_flow.capture import CAPTURE_ENV
from ..triton_flow.flow_files import FlowError, read_json, write_json

CAPTURE_LOG = "inductor.log"
CAPTURE_CACHE = "inductor-cache"
PYTHON_NAMES = ("python", "python3")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("triton", help="the Triton investigation workflow (env, capture, summarize, "
                                                "collect, inspect, scan, run, report, to-case)")
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")
    env = steps.add_parser("env", help="torch/triton/runtime/arch/tools to JSON")
    env.add_argument("--json", type=Path, default=Path("triton_env.json"))
    env.set_defaults(run=run_env)

    capture = steps.add_parser("capture", help="run a torch.compile script with autotune capture and Inductor logs")
    capture.add_argument("--out", type=Path, required=True, help="capture folder (made if missing)")
    capture.add_argument("--timeout", type=float, default=1800.0, help="seconds before the script is stopped")
    capture.add_argument("script", nargs=argparse.REMAINDER, help="-- python model.py [args]")
    capture.set_defaults(run=run_capture)

    summary = steps.add_parser("summarize", help="autotune records / Inductor log to JSON and Markdown")
    summary.add_argument("sources", nargs="+", type=Path, help="capture folders and/or Inductor log files")
    summary.add_argument("--json", type=Path, default=Path("autotune_summary.json"))
    summary.add_argument("--markdown", type=Path, default=Path("autotune_summary.md"))
    summary.set_defaults(run=run_summarize)

    collect = steps.add_parser("collect", help="Inductor's files for one kernel (.ttir/.ttgir/.ptx/.amdgcn/...)")
    collect.add_argument("--cache", type=Path, required=True, help="the TORCHINDUCTOR_CACHE_DIR of the run")
    collect.add_argument("--kernel", required=True)
    collect.add_argument("--log", type=Path, default=None, help="the Inductor log (for the output code's path)")
    collect.add_argument("--out", type=Path, required=True)
    collect.set_defaults(run=run_collect)

    inspect = steps.add_parser("inspect", help="signature, pointer args, hints, tl.assume/multiple_of/atomics")
    inspect.add_argument("file", type=Path, help="a Triton .py, or a .ttir/.ttgir")
    inspect.add_argument("--json", type=Path, default=Path("triton_meta.json"))
    inspect.set_defaults(run=run_inspect)

    scanner = steps.add_parser("scan", help="load/store families and widths, atomics, matrix ops, waits")
    scanner.add_argument("paths", nargs="+", type=Path, help=".amdgcn/.s/.sass/.cubin files or folders")
    scanner.add_argument("--kernel", default=None, help="only functions with this name (or glob)")
    scanner.add_argument("--json", type=Path, default=Path("isa_scan.json"))
    scanner.set_defaults(run=run_scan)

    runner = steps.add_parser("run", help="re-run a captured kernel, timed by the harness's device timing (GPU)")
    runner.add_argument("capture", type=Path, help="a kernel's capture folder (DIR/<kernel>_<n>)")
    runner.add_argument("--config", type=int, default=None, help="index into capture.json's configs (default: best)")
    runner.add_argument("--max-time", type=float, default=2.0, help="sampling time cap in seconds")
    runner.set_defaults(run=run_replay)

    rep = steps.add_parser("report", help="the investigation report (output contract, decision)")
    rep.add_argument("--kernel", required=True)
    rep.add_argument("--summary", type=Path)
    rep.add_argument("--inspect", type=Path, dest="hints")
    rep.add_argument("--scan", type=Path)
    rep.add_argument("--run", type=Path, dest="replay")
    rep.add_argument("--fallback", type=Path, help="MODEL.py with build(): time it compiled vs region eager (GPU)")
    rep.add_argument("--fallback-json", type=Path, help="an earlier fallback measurement (fallback.json)")
    rep.add_argument("--attempts", type=Path, help='JSON list of {"change", "ms", "note"} you measured')
    rep.add_argument("--out", type=Path, default=Path("triton_investigation.md"))
    rep.set_defaults(run=run_report)

    case = steps.add_parser("to-case", help="a captured kernel as a harness case folder")
    case.add_argument("capture", type=Path)
    case.add_argument("--out", type=Path, required=True, help="the case folder to write")
    case.add_argument("--reference", default=None, help="FILE.py:FUNCTION, the eager computation (the oracle)")
    case.set_defaults(run=run_to_case)


def _print(lines: Sequence[str]) -> None:
    for line in lines:
        print(line)


def _command(*parts: Any) -> str:
    return shlex.join(["dcuopt", "triton", *(str(p) for p in parts)])


def _fail(step: str, exc: Exception) -> int:
    print(f"dcuopt triton {step}: {exc}", file=sys.stderr)
    return 2


def run_env(args: argparse.Namespace) -> int:
    found = environment.probe()
    write_json(args.json, found)
    _print([*environment.describe(found), f"env: {args.json}"])
    return 0


def script_argv(words: Sequence[str]) -> list[str]:
    """`-- python model.py a b` or `model.py a b` -> ["model.py", "a", "b"]."""
    words = list(words[1:] if words and words[0] == "--" else words)
    if words and Path(words[0]).name.startswith(PYTHON_NAMES) and not words[0].endswith(".py"):
        words = words[1:]
    if not words or not words[0].endswith(".py"):
        raise FlowError(f"capture needs the script to run after `--`, e.g. `dcuopt triton capture --out cap -- "
                        f"python model.py`; got {shlex.join(words) or 'nothing'}")
    return words


def run_capture(args: argparse.Namespace) -> int:
    try:
        argv = script_argv(args.script)
    except FlowError as exc:
        return _fail("capture", exc)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = {CAPTURE_ENV: str(out), "TORCH_LOGS": os.environ.get("TORCH_LOGS", "+inductor"),
           "TORCHINDUCTOR_TRACE": os.environ.get("TORCHINDUCTOR_TRACE", "1"),
           "TORCHINDUCTOR_CACHE_DIR": os.environ.get("TORCHINDUCTOR_CACHE_DIR", str(out / CAPTURE_CACHE)),
           "TORCH_COMPILE_DEBUG_DIR": os.environ.get("TORCH_COMPILE_DEBUG_DIR", str(out / "debug"))}
    result = run_tool([sys.executable, "-m", "pytest_dcuopt.triton_flow.capture", str(out), *argv],
                      timeout=args.timeout, env=env)
    write_atomic(out / CAPTURE_LOG, result.stderr)
    write_atomic(out / "stdout.log", result.stdout)
    write_json(out / "capture-run.json", {**result.to_json(), "env": env})
    records_file = out / summarize.RECORDS_NAME
    records = records_file.read_text().splitlines() if records_file.is_file() else []
    print(f"capture: {len(records)} tuned kernel(s) recorded in {out} (exit {result.returncode}); Inductor's log: "
          f"{out / CAPTURE_LOG}; cache: {env['TORCHINDUCTOR_CACHE_DIR']}")
    if not records:
        generated = summarize.generated_kernels(out / CAPTURE_LOG)
        write_json(out / "capture-run.json", {**result.to_json(), "env": env, "generated": generated})
        print(f"capture: {summarize.nothing_tuned_reason(generated)}")
    if (out / "capture-errors.log").is_file():
        print(f"capture: some kernels could not be recorded; see {out / 'capture-errors.log'}")
    if not result.ok:
        print(f"capture: the script failed:\n{result.stderr.strip()[-2000:]}", file=sys.stderr)
        return 1
    print("next: " + _command("summarize", out, out / CAPTURE_LOG, "--json", out / "autotune_summary.json",
                              "--markdown", out / "autotune_summary.md"))
    return 0


def run_summarize(args: argparse.Namespace) -> int:
    try:
        found = summarize.summarize(args.sources)
        write_json(args.json, found)
        write_atomic(args.markdown, summarize.markdown(found))
    except FlowError as exc:
        return _fail("summarize", exc)
    for entry in found["kernels"]:
        best, tuned = entry.get("best"), entry.get("coordesc_best")
        head = (f"{len(entry['configs'])} configs, best {best['config']} at {best['ms']:.4f} ms" if best else
                "no config benchmark (a single config)")
        tail = f"; coordinate descent: {tuned['config']} at {tuned['ms']:.4f} ms" if tuned else ""
        print(f"{entry['kernel']} ({entry['origin']}): {head}{tail}")
    print(f"{len(found['templates'])} template autotuning table(s); summary: {args.json}, {args.markdown}")
    return 0


def run_collect(args: argparse.Namespace) -> int:
    try:
        logged = summarize.summarize([args.log])["files"].get("output_code", []) if args.log else []
        manifest = artifacts.collect(args.cache, args.kernel, args.out, logged)
    except FlowError as exc:
        return _fail("collect", exc)
    target = args.out / artifacts.BEST if manifest["copied"]["best"] else args.out
    _print([*artifacts.describe(manifest), f"manifest: {args.out / artifacts.MANIFEST}",
            f"next: {_command('scan', target, '--kernel', args.kernel, '--json', args.out / 'isa_scan.json')}"])
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    try:
        found = hints.inspect_file(args.file)
        write_json(args.json, found)
        _print([*hints.describe(found), f"inspect: {args.json}"])
    except FlowError as exc:
        return _fail("inspect", exc)
    return 0


def run_scan(args: argparse.Namespace) -> int:
    try:
        found = scan.scan(args.paths, args.kernel)
    except FlowError as exc:
        return _fail("scan", exc)
    write_json(args.json, found)
    _print([*scan.describe(found), f"scan: {args.json}"])
    return 0 if found["functions"] else 1


def run_replay(args: argparse.Namespace) -> int:
    from ..triton_flow import replay

    try:
        result = replay.replay(args.capture, args.config, args.max_time)
    except FlowError as exc:
        return _fail("run", exc)
    _print([*replay.describe(result), f"run: {args.capture / replay.RESULT}"])
    return 0


def _optional(path: Path | None, what: str) -> Any:
    return read_json(path, what) if path is not None else None


def run_report(args: argparse.Namespace) -> int:
    try:
        fallback = _optional(args.fallback_json, "the fallback measurement")
        if args.fallback is not None:
            from ..triton_flow import fallback as eager

            fallback = eager.measure(args.fallback)
            write_json(args.out.with_name("fallback.json"), fallback)
        inputs = report.Inputs(args.kernel, _optional(args.summary, "the summary"), _optional(args.hints, "inspect"),
                               _optional(args.scan, "the scan"), _optional(args.replay, "the run result"), fallback,
                               _optional(args.attempts, "the attempts") or [])
    except FlowError as exc:
        return _fail("report", exc)
    text = report.render(inputs)
    write_atomic(args.out, text)
    decision, reasons = report.decide(inputs)
    _print([f"decision: {decision}", *[f"  {r}" for r in reasons], f"report: {args.out}"])
    return 0


def run_to_case(args: argparse.Namespace) -> int:
    try:
        made = to_case.to_case(args.capture, args.out, args.reference)
    except FlowError as exc:
        return _fail("to-case", exc)
    print(json.dumps(made, indent=2))
    case = Path(made["case"])
    print(f"next: {shlex.join([sys.executable, '-m', 'pytest', str(case), '--dcuopt-toolchain', 'triton'])}")
    return 0
