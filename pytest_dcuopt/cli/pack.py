"""`dcuopt pack`: what an iteration (or any kernel case) needs on a device elsewhere, and nothing else, in one archive
(docs/loop.md "Remote devices"): the case's files only (ref.py, dims, kernel sources, branches/, ablations/,
methods.json), the plugin as a wheel (`plugin_wheel`), a manifest.json (what was packed with the sha256 of each file,
packed and local, the exact pytest command, the harness version) and a run.sh that runs `packed_run` there, writing
what it measured into results/ and results.tar.gz, which `dcuopt ingest` brings back. An iteration's generated ref.py
loads the case's ref.py by its local path: the pack carries that file as `case_ref.py` and the packed ref.py loads
it from beside itself.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import shlex
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..case.model import is_case_dir
from ..files import write_atomic
from ..report.machine import now
from .close_iter import MEASURE_SELECTION, MIN_GAIN
from .finalize import FINAL_SELECTION, prepare_final
from .layout import CHAMPION_PROFILE, STATE_NAME, LoopError, RunLayout, current_iteration, iteration_record, load_state
from .open_iter import PROFILE_SELECTION, prepare_case, triage_due
from .plugin_wheel import BUILD_OUTPUTS, PluginWheel, plugin_wheel

PACK_FORMAT, PACK_VERSION = "dcuopt-pack", 2
TRIAGE_SELECTION = f"{MEASURE_SELECTION} or (test_profile and baseline)"  # the best's profile, with its SQTT pass
MANIFEST, RUN_SCRIPT, RESULTS = "manifest.json", "run.sh", "results"
REMOTE_RUN_DIR = f"{RESULTS}/pytest"  # the harness's run directory on the remote machine, relative to the pack
CASE_REF = "case_ref.py"  # an iteration's case ref.py, carried beside the generated one
# What a case is made of (case/model.py): read by collection, the build or the generated ref.py.
CASE_FILES = ("ref.py", "dims.json", "dims.*.json", "methods.json", "kernel.*")
CASE_FOLDERS = ("branches", "ablations")
HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".inc")  # headers beside kernel.<ext> that it may include
ABLATION = "ablation"  # the champion's ablation run: results/ablation there, iterv<i>/ablation here
STEPS_NAME = "steps.json"  # what the packed run did, step by step (`packed_run`)
PLUGIN_DIR = "plugin"  # the wheel of pytest_dcuopt inside the pack
PLUGIN_ROOT = "_plugin"  # where run.sh unpacks it there (first on PYTHONPATH)
PACKED_RUN = "pytest_dcuopt.cli.packed_run"  # the module run.sh runs


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pack = commands.add_parser("pack", help="pack an iteration (or a case) for a run on another machine")
    pack.add_argument("target", type=Path, help="a run directory (its iteration is packed) or a kernel case folder")
    pack.add_argument("--iter", type=int, default=None, help="iteration (default: the last opened)")
    pack.add_argument("--toolchain", default=None, help="a case only: --dcuopt-toolchain for the remote run")
    pack.add_argument("--pytest-args", default="", help="more pytest arguments for the remote run")
    pack.add_argument("--min-gain", type=float, default=MIN_GAIN,
                      help="an iteration only: the champion's rule there, as `dcuopt close-iter --min-gain` (the "
                           f"champion's ablation and profile run for the branch it picks). Default: {MIN_GAIN}")
    pack.add_argument("--profile", action="store_true",
                      help="a run directory only: open-iter's profile of the best before the open iteration, alone "
                           "(`dcuopt open-iter --ingested` reads it back: the budget before methods are chosen)")
    pack.add_argument("--final", action="store_true",
                      help="a run directory only: finalize's head-to-head of the first baseline and the final best "
                           "(`dcuopt finalize --ingested` reads it back)")
    pack.add_argument("-o", "--output", type=Path, default=None,
                      help="the archive (default: RUN_DIR/<what>.pack.tar.gz, or ./<case>.pack.tar.gz)")
    pack.set_defaults(run=run_pack)


@dataclass(frozen=True)
class PackedFile:
    name: str  # path inside the pack, e.g. iterv1/branches/b1/kernel.cpp
    source: Path  # the local file it was made from
    data: bytes  # what the pack holds (the generated ref.py differs from its source)


@dataclass(frozen=True)
class Pack:
    kind: str  # iteration | profile | final | case
    name: str  # the case folder's name inside the pack (pytest's target there)
    target: Path
    files: list[PackedFile]
    pytest_args: list[str]  # the measurement's (with its -k selection)
    iteration: int | None = None
    toolchain: str | None = None
    champion_args: list[str] | None = None  # an iteration's: for the champion's ablation and profile
    min_gain: float | None = None


def run_pack(args: argparse.Namespace) -> int:
    target = args.target.resolve()
    extra = shlex.split(args.pytest_args)
    if (target / STATE_NAME).is_file() and not is_case_dir(target):
        if args.toolchain:
            raise LoopError(f"--toolchain {args.toolchain} is for packing a case; an iteration of {target} runs on "
                            "the run's own toolchain (its state.json). Leave --toolchain out.")
        if args.profile and args.final:
            raise LoopError("--profile (open-iter's profile of the best) and --final (finalize's head-to-head) are two "
                            "packs: make one, then the other.")
        if args.final:
            pack = final_pack(target, extra)
        elif args.profile:
            pack = profile_pack(target, args.iter, extra)
        else:
            pack = iteration_pack(target, args.iter, extra, args.min_gain)
        output = args.output or target / f"{pack_label(pack)}.pack.tar.gz"
    elif is_case_dir(target):
        given = [flag for flag, on in ((f"--iter {args.iter}", args.iter is not None),
                                       (f"--min-gain {args.min_gain}", args.min_gain != MIN_GAIN),
                                       ("--profile", args.profile), ("--final", args.final)) if on]
        if given:
            raise LoopError(f"{given[0]} is for packing a step of a run directory (an iteration, its profile, the "
                            f"head-to-head); {target} is a kernel case. Leave {given[0].split()[0]} out, or pass the "
                            "run directory.")
        pack = case_pack(target, args.toolchain, extra)
        output = args.output or Path.cwd() / f"{pack.name}.pack.tar.gz"
    else:
        raise LoopError(f"{target} is neither a run directory (no {STATE_NAME}) nor a kernel case (ref.py and a "
                        "kernel.<ext>); pass the run directory made by `dcuopt setup`, or a case folder.")
    manifest = write_pack(pack, output.resolve())
    print(f"pack: {output} ({len(pack.files)} files, pack {manifest['pack_id'][:12]})\n"
          f"  there: tar xzf {output.name} && bash {manifest['root']}/{RUN_SCRIPT}\n"
          f"  back here: dcuopt ingest {target} results.tar.gz{NEXT_STEP.get(pack.kind, '').format(target=target)}")
    return 0


NEXT_STEP = {"iteration": " && dcuopt close-iter {target} --ingested",
             "profile": " && dcuopt open-iter {target} --ingested",
             "final": " && dcuopt finalize {target} --ingested"}


def pack_label(pack: Pack) -> str:
    """The pack's name for its archive and root folder: iterv<i>, iterv<i>-profile, final, or the case's."""
    return f"{pack.name}-profile" if pack.kind == "profile" else pack.name


def opened(run_dir: Path, index: int | None) -> tuple[RunLayout, dict[str, Any], int]:
    layout = RunLayout(run_dir)
    state = load_state(layout)
    index = index or current_iteration(state)
    if index is None:
        raise LoopError(f"no iteration of {run_dir} is open; run `dcuopt open-iter {run_dir}` first, then pack it.")
    return layout, state, index


def iteration_files(layout: RunLayout, state: dict[str, Any], index: int) -> list[PackedFile]:
    """The iteration case (ref.py, dims.json, the frozen baseline: regenerated first), its ref.py made portable."""
    prepare_case(layout, state, index, iteration_record(state, index))
    folder = layout.iteration(index)
    return with_case_ref(case_files(folder, folder.name), folder, Path(state["ref_file"]))


def with_case_ref(files: list[PackedFile], folder: Path, reference: Path) -> list[PackedFile]:
    """`files` with the generated ref.py loading the case's ref.py from beside itself (carried as case_ref.py)."""
    kept = [f for f in files if f.name != f"{folder.name}/ref.py"]
    kept.append(PackedFile(f"{folder.name}/ref.py", folder / "ref.py", portable_shim(folder / "ref.py", reference)))
    kept.append(PackedFile(f"{folder.name}/{CASE_REF}", reference, reference.read_bytes()))
    return sorted(kept, key=lambda f: f.name)


def iteration_pack(run_dir: Path, index: int | None, extra: list[str], min_gain: float = MIN_GAIN) -> Pack:
    """The iteration's case as close-iter measures it, with the same pytest arguments and selection; there, the
    champion is picked by close-iter's rule and ablated and profiled (`packed_run`)."""
    layout, state, index = opened(run_dir, index)
    files = iteration_files(layout, state, index)
    # After three flat iterations the best's profile (its mark asks hipprof for the SQTT pass) runs there too.
    selection = TRIAGE_SELECTION if triage_due(state, index) else MEASURE_SELECTION
    args = [f"--dcuopt-toolchain={state['toolchain']}", *state.get("pytest_args", []), *extra]
    return Pack("iteration", layout.iteration(index).name, run_dir, files, [*args, "-k", selection],
                index, state["toolchain"], args, min_gain)


def profile_pack(run_dir: Path, index: int | None, extra: list[str]) -> Pack:
    """open-iter's profile of the best before the iteration, as open-iter runs it here: the iteration case without
    its branches and methods (profiling the baseline needs neither, and they are written after the budget)."""
    layout, state, index = opened(run_dir, index)
    name = layout.iteration(index).name
    files = [f for f in iteration_files(layout, state, index) if f.name != f"{name}/methods.json"
             and not f.name.startswith(tuple(f"{name}/{sub}/" for sub in CASE_FOLDERS))]
    args = [f"--dcuopt-toolchain={state['toolchain']}", *state.get("pytest_args", []), *extra, "-rs"]
    return Pack("profile", name, run_dir, files, [*args, "-k", PROFILE_SELECTION], index, state["toolchain"])


def final_pack(run_dir: Path, extra: list[str]) -> Pack:
    """finalize's head-to-head case (the first baseline and the final best); each kernel's source is the run's own
    file, so a best that moves after the pack makes the results stale."""
    layout = RunLayout(run_dir)
    state = load_state(layout)
    folder = prepare_final(layout, state)
    sources = {"kernel": Path(state["baseline_file"]), "branches": Path(state["best_file"])}
    files = [PackedFile(f.name, sources.get(f.name.split("/")[1].split(".")[0], f.source), f.data)
             for f in case_files(folder, folder.name)]
    args = [f"--dcuopt-toolchain={state['toolchain']}", *state.get("pytest_args", []), *extra]
    return Pack("final", folder.name, run_dir, with_case_ref(files, folder, Path(state["ref_file"])),
                [*args, "-k", FINAL_SELECTION], toolchain=state["toolchain"])


def case_pack(case_dir: Path, toolchain: str | None, extra: list[str]) -> Pack:
    args = [*([f"--dcuopt-toolchain={toolchain}"] if toolchain else []), *extra]
    return Pack("case", case_dir.name, case_dir, case_files(case_dir, case_dir.name), args, toolchain=toolchain)


def portable_shim(shim: Path, reference: Path) -> bytes:
    """The iteration's generated ref.py, loading the case's ref.py from beside itself instead of its local path."""
    text = shim.read_text()
    local = repr(str(reference))
    if text.count(local) != 1:
        raise LoopError(f"{shim} does not load the case reference {reference} exactly once, as `dcuopt open-iter` "
                        "writes it; run `dcuopt open-iter` again to regenerate it, then pack.")
    return text.replace(local, f'str(_Path(__file__).parent / "{CASE_REF}")').encode()


def case_files(folder: Path, name: str) -> list[PackedFile]:
    """The files of a case folder that define it (CASE_FILES, headers, CASE_FOLDERS): never results or builds."""
    found = {p for pattern in CASE_FILES for p in folder.glob(pattern)}
    found |= {p for p in folder.iterdir() if p.suffix in HEADER_SUFFIXES}
    for sub in CASE_FOLDERS:
        if (folder / sub).is_dir():
            found |= set((folder / sub).rglob("*"))
    kept = sorted(p for p in found if p.is_file() and p.suffix not in BUILD_OUTPUTS and "__pycache__" not in p.parts)
    return [PackedFile(f"{name}/{p.relative_to(folder).as_posix()}", p, p.read_bytes()) for p in kept]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pytest_command(pack: Pack) -> list[str]:
    """The pytest arguments run there (after `python -m pytest`), from the pack's root folder."""
    return [pack.name, f"--dcuopt-run-dir={REMOTE_RUN_DIR}", "-p", "no:cacheprovider", *pack.pytest_args]


def manifest_of(pack: Pack, plugin: PluginWheel) -> dict[str, Any]:
    files = {f.name: {"sha256": digest(f.data), "source": str(f.source), "source_sha256": digest(f.source.read_bytes())}
             for f in pack.files}
    command = pytest_command(pack)
    pack_id = digest(json.dumps({"files": {k: v["sha256"] for k, v in files.items()}, "command": command,
                                 "plugin": digest(plugin.data), "champion_args": pack.champion_args,
                                 "min_gain": pack.min_gain}, sort_keys=True).encode())
    steps = ["measure", *(["champion", ABLATION, CHAMPION_PROFILE] if pack.kind == "iteration" else [])]
    return {"format": PACK_FORMAT, "format_version": PACK_VERSION, "harness_version": __version__,
            "created_at": now(), "pack_id": pack_id, "root": f"dcuopt-pack-{pack_label(pack)}", "kind": pack.kind,
            "name": pack.name, "target": str(pack.target), "iteration": pack.iteration, "toolchain": pack.toolchain,
            "pytest_args": command, "command": f"python -m pytest {shlex.join(command)}",
            "harness_args": pack.pytest_args, "champion_args": pack.champion_args, "min_gain": pack.min_gain,
            "steps": steps, "plugin": {"file": f"{PLUGIN_DIR}/{plugin.name}", "sha256": digest(plugin.data),
                                       "version": __version__, "built_from": str(plugin.source)},
            "files": files}


def write_pack(pack: Pack, output: Path) -> dict[str, Any]:
    plugin = plugin_wheel()
    manifest = manifest_of(pack, plugin)
    root = manifest["root"]
    members = [(f"{root}/{f.name}", f.data, 0o644) for f in pack.files]
    members.append((f"{root}/{manifest['plugin']['file']}", plugin.data, 0o644))
    members += [(f"{root}/{MANIFEST}", (json.dumps(manifest, indent=2) + "\n").encode(), 0o644),
                (f"{root}/{RUN_SCRIPT}", run_script(manifest).encode(), 0o755),
                # The pack's root is pytest's rootdir there: no configuration of the remote machine's folders applies.
                (f"{root}/pytest.ini", b"[pytest]\n", 0o644)]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data, mode in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            archive.addfile(info, io.BytesIO(data))
    output.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(output, buffer.getvalue())
    return manifest



def run_script(manifest: Mapping[str, Any]) -> str:
    return f"""#!/usr/bin/env bash
# Made by `dcuopt pack` (pytest_dcuopt {manifest['harness_version']}, pack {manifest['pack_id'][:12]}): runs the packed
# {manifest['kind']} {manifest['name']} here ({', '.join(manifest['steps'])}); what it measures goes to results/ and
# results.tar.gz. Bring results.tar.gz back and run `dcuopt ingest {manifest['target']} results.tar.gz` there.
# PYTHON picks the interpreter (default python3). It needs pytest, pytest-benchmark, hypothesis, numpy, jsonschema,
# xxhash, what the case imports (torch) and the case's toolchain; not pytest_dcuopt: the pack carries it as a wheel
# ({manifest['plugin']['file']}), unpacked into {PLUGIN_ROOT}/ and put first on PYTHONPATH, so it is the one that runs.
set -uo pipefail
cd "$(dirname "$0")"
PYTHON=${{PYTHON:-python3}}
rm -rf {RESULTS} {RESULTS}.tar.gz {PLUGIN_ROOT}
mkdir -p {RESULTS}
"$PYTHON" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \\
    {shlex.quote(manifest['plugin']['file'])} {PLUGIN_ROOT} || exit 3
export PYTHONPATH="$PWD/{PLUGIN_ROOT}${{PYTHONPATH:+:$PYTHONPATH}}"
"$PYTHON" -m {PACKED_RUN} 2>&1 | tee {RESULTS}/run.log
status=${{PIPESTATUS[0]}}
echo "$status" > {RESULTS}/exit_status
cp {MANIFEST} {RESULTS}/{MANIFEST}
# Only plain files travel: the harness's `latest` link (a pointer here, meaningless where it is ingested) and a
# profiler's control FIFOs are left out.
find {RESULTS} ! -type f ! -type d -delete
tar czf {RESULTS}.tar.gz {RESULTS}
echo "run.sh: exit $status; bring back $(pwd)/{RESULTS}.tar.gz and run: dcuopt ingest TARGET {RESULTS}.tar.gz"
exit "$status"
"""
