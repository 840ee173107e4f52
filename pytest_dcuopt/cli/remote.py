"""`dcuopt pack` and `dcuopt ingest`: measure an iteration (or any kernel case) on a machine elsewhere (docs/loop.md
"Remote devices").

pack: the case's files only (ref.py, dims, kernel sources, branches/, ablations/, methods.json), a manifest.json
(what was packed with the sha256 of each file, packed and local, the exact pytest command, the harness version) and
a run.sh that runs that command there, writing what it measured into results/ and results.tar.gz. An iteration's
generated ref.py loads the case's ref.py by its local path: the pack carries that file as `case_ref.py` and the
packed ref.py loads it from beside itself.

ingest: results.tar.gz (or the results/ folder) into the iteration's harness directory `iterv<i>/pytest/`, where
close-iter reads its harness state (a case's results go to `--into DIR`). Refused, naming the file, when a packed
file was changed on the remote machine before the run or here since the pack (the results would measure other
code), and refused without --force when the destination holds results that finished later than these.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import shlex
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from .. import __version__
from ..case.model import is_case_dir
from ..files import write_atomic
from ..report.machine import now
from .close_iter import MEASURE_SELECTION, MIN_GAIN
from .layout import (
    INGESTED_NAME,
    STATE_NAME,
    LoopError,
    RunLayout,
    current_iteration,
    iteration_record,
    load_state,
)
from .open_iter import CHAMPION_PROFILE, prepare_case, triage_due

PACK_FORMAT, PACK_VERSION = "dcuopt-pack", 2
TRIAGE_SELECTION = f"{MEASURE_SELECTION} or (test_profile and baseline)"  # the best's profile, with its SQTT pass
MANIFEST, RUN_SCRIPT, RESULTS = "manifest.json", "run.sh", "results"
REMOTE_RUN_DIR = f"{RESULTS}/pytest"  # the harness's run directory on the remote machine, relative to the pack
CASE_REF = "case_ref.py"  # an iteration's case ref.py, carried beside the generated one
# What a case is made of (case/model.py): read by collection, the build or the generated ref.py.
CASE_FILES = ("ref.py", "dims.json", "dims.*.json", "methods.json", "kernel.*")
CASE_FOLDERS = ("branches", "ablations")
HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".inc")  # headers beside kernel.<ext> that it may include
BUILD_OUTPUTS = (".so", ".o", ".pyc")
ABLATION = "ablation"  # the champion's ablation run: results/ablation there, iterv<i>/ablation here
STEPS_NAME = "steps.json"  # what the packed run did, step by step (`packed_run`)
PLUGIN_DIR = "plugin"  # the wheel of pytest_dcuopt inside the pack
PLUGIN_ROOT = "_plugin"  # where run.sh unpacks it there (first on PYTHONPATH)
PACKED_RUN = "pytest_dcuopt.cli.packed_run"  # the module run.sh runs
PYTEST_ENTRY_POINT = ("dcuopt", "pytest_dcuopt.plugin")  # pyproject.toml's [project.entry-points.pytest11]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pack = commands.add_parser("pack", help="pack an iteration (or a case) for a run on another machine")
    pack.add_argument("target", type=Path, help="a run directory (its iteration is packed) or a kernel case folder")
    pack.add_argument("--iter", type=int, default=None, help="iteration (default: the last opened)")
    pack.add_argument("--toolchain", default=None, help="a case only: --dcuopt-toolchain for the remote run")
    pack.add_argument("--pytest-args", default="", help="more pytest arguments for the remote run")
    pack.add_argument("--min-gain", type=float, default=MIN_GAIN,
                      help="an iteration only: the champion's rule there, as `dcuopt close-iter --min-gain` (the "
                           f"champion's ablation and profile run for the branch it picks). Default: {MIN_GAIN}")
    pack.add_argument("-o", "--output", type=Path, default=None,
                      help="the archive (default: RUN_DIR/iterv<i>.pack.tar.gz, or ./<case>.pack.tar.gz)")
    pack.set_defaults(run=run_pack)
    ingest = commands.add_parser("ingest", help="bring a packed run's results back into the run directory")
    ingest.add_argument("target", type=Path, help="the run directory (or case folder) that was packed")
    ingest.add_argument("results", type=Path, help="results.tar.gz made by the pack's run.sh, or its results/ folder")
    ingest.add_argument("--into", type=Path, default=None, help="a case only: the local run directory to fill")
    ingest.add_argument("--force", action="store_true",
                        help="replace results here that finished later than the ingested ones")
    ingest.set_defaults(run=run_ingest)


# ----- pack --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PackedFile:
    name: str  # path inside the pack, e.g. iterv1/branches/b1/kernel.cpp
    source: Path  # the local file it was made from
    data: bytes  # what the pack holds (the generated ref.py differs from its source)


@dataclass(frozen=True)
class Pack:
    kind: str  # iteration | case
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
        pack = iteration_pack(target, args.iter, extra, args.min_gain)
        output = args.output or target / f"{pack.name}.pack.tar.gz"
    elif is_case_dir(target):
        if args.iter is not None or args.min_gain != MIN_GAIN:
            given = f"--iter {args.iter}" if args.iter is not None else f"--min-gain {args.min_gain}"
            raise LoopError(f"{given} is for packing an iteration of a run directory (the champion's rule there); "
                            f"{target} is a kernel case. Leave {given.split()[0]} out, or pass the run directory.")
        pack = case_pack(target, args.toolchain, extra)
        output = args.output or Path.cwd() / f"{pack.name}.pack.tar.gz"
    else:
        raise LoopError(f"{target} is neither a run directory (no {STATE_NAME}) nor a kernel case (ref.py and a "
                        "kernel.<ext>); pass the run directory made by `dcuopt setup`, or a case folder.")
    manifest = write_pack(pack, output.resolve())
    print(f"pack: {output} ({len(pack.files)} files, pack {manifest['pack_id'][:12]})\n"
          f"  there: tar xzf {output.name} && bash {manifest['root']}/{RUN_SCRIPT}\n"
          f"  back here: dcuopt ingest {target} results.tar.gz"
          + (f" && dcuopt close-iter {target} --ingested" if pack.kind == "iteration" else ""))
    return 0


def iteration_pack(run_dir: Path, index: int | None, extra: list[str], min_gain: float = MIN_GAIN) -> Pack:
    """The iteration's case as close-iter measures it, with the same pytest arguments and selection; there, the
    champion is picked by close-iter's rule and ablated and profiled (`packed_run`)."""
    layout = RunLayout(run_dir)
    state = load_state(layout)
    index = index or current_iteration(state)
    if index is None:
        raise LoopError(f"no iteration of {run_dir} is open; run `dcuopt open-iter {run_dir}` first, then pack it.")
    prepare_case(layout, state, index, iteration_record(state, index))  # ref.py, dims.json, baseline: fresh
    folder = layout.iteration(index)
    files = [f for f in case_files(folder, folder.name) if f.name != f"{folder.name}/ref.py"]
    reference = Path(state["ref_file"])
    files.append(PackedFile(f"{folder.name}/ref.py", folder / "ref.py", portable_shim(folder / "ref.py", reference)))
    files.append(PackedFile(f"{folder.name}/{CASE_REF}", reference, reference.read_bytes()))
    # After three flat iterations the best's profile (its mark asks hipprof for the SQTT pass) runs there too.
    selection = TRIAGE_SELECTION if triage_due(state, index) else MEASURE_SELECTION
    args = [f"--dcuopt-toolchain={state['toolchain']}", *state.get("pytest_args", []), *extra]
    return Pack("iteration", folder.name, run_dir, sorted(files, key=lambda f: f.name), [*args, "-k", selection],
                index, state["toolchain"], args, min_gain)


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
            "created_at": now(), "pack_id": pack_id, "root": f"dcuopt-pack-{pack.name}", "kind": pack.kind,
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


@dataclass(frozen=True)
class PluginWheel:
    name: str  # pytest_dcuopt-<version>-py3-none-any.whl
    source: Path  # the package folder it was built from
    data: bytes


def plugin_wheel() -> PluginWheel:
    """A wheel of the running pytest_dcuopt, built from its files as they are (a checkout or an install), so a pack
    runs this very code there whatever is installed on that machine. Its metadata is the minimum a wheel needs and
    the pytest plugin entry point (the same name as pyproject.toml's, so pytest loads the plugin once even where
    another pytest_dcuopt is installed)."""
    package = Path(__file__).resolve().parents[1]
    files = sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and p.suffix not in (".pyc", *BUILD_OUTPUTS))
    info = f"pytest_dcuopt-{__version__}.dist-info"
    members = [(f"pytest_dcuopt/{p.relative_to(package).as_posix()}", p.read_bytes()) for p in files]
    members += [(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: pytest-dcuopt\nVersion: {__version__}\n".encode()),
                (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: dcuopt pack\nRoot-Is-Purelib: true\n"
                                  b"Tag: py3-none-any\n"),
                (f"{info}/entry_points.txt", f"[pytest11]\n{PYTEST_ENTRY_POINT[0]} = {PYTEST_ENTRY_POINT[1]}\n"
                                             .encode())]
    record = "".join(f"{name},sha256={_record_digest(data)},{len(data)}\n" for name, data in members)
    members.append((f"{info}/RECORD", (record + f"{info}/RECORD,,\n").encode()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in members:
            wheel.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return PluginWheel(f"pytest_dcuopt-{__version__}-py3-none-any.whl", package, buffer.getvalue())


def _record_digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


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


# ----- ingest ------------------------------------------------------------------------------------------------------

def run_ingest(args: argparse.Namespace) -> int:
    target = args.target.resolve()
    with results_folder(args.results.resolve()) as results:
        manifest = read_json(results / MANIFEST, "the pack's manifest")
        check_manifest(manifest, target)
        check_hashes(manifest, read_json(results / "files.json", "the hashes run.sh recorded"))
        status, remote = exit_status(results), read_remote(results)
        check_plugin(manifest, remote)
        if not (results / "pytest" / STATE_NAME).is_file():
            raise LoopError(f"the remote pytest wrote no {STATE_NAME} (exit {status}): nothing to ingest. Its log is "
                            f"{RESULTS}/pytest.log in {args.results}; fix the cause and run run.sh again.")
        incoming = read_json(results / "pytest" / STATE_NAME, "the remote harness state")
        destination = destination_of(manifest, target, args.into)
        if not replaces(destination, incoming, args.force):
            print(f"ingest: {destination} already holds these results; nothing changed")
            return 0
        place(results, destination, manifest, args.results.resolve(), companions(manifest, target))
    print(f"ingest: {args.results} -> {destination} (pytest exit {status})")
    if remote.get("harness_version") != manifest["harness_version"]:
        print(f"ingest: note: the remote ran pytest_dcuopt {remote.get('harness_version')}, this pack was made by "
              f"{manifest['harness_version']}; the record's fields are those of the remote version")
    return 0


@contextmanager
def results_folder(path: Path) -> Iterator[Path]:
    """The `results/` folder of run.sh: the folder itself, or extracted from results.tar.gz into a scratch folder
    (regular files and folders only, every path inside it) that is removed afterwards."""
    if path.is_dir():
        yield path
        return
    if not path.is_file():
        raise LoopError(f"{path} does not exist; pass the results.tar.gz that the pack's run.sh wrote.")
    with tempfile.TemporaryDirectory(prefix="dcuopt-ingest-") as scratch:
        root = Path(scratch)
        extract(path, root)
        if not (root / RESULTS).is_dir():
            raise LoopError(f"{path} holds no {RESULTS}/ folder: it is not an archive written by the pack's "
                            f"{RUN_SCRIPT}.")
        yield root / RESULTS


def extract(archive_path: Path, root: Path) -> None:
    try:
        archive = tarfile.open(archive_path, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise LoopError(f"{archive_path} is not a readable tar archive ({exc}); pass the results.tar.gz that the "
                        f"pack's {RUN_SCRIPT} wrote.") from exc
    with archive:
        for member in archive.getmembers():
            parts = PurePosixPath(member.name).parts
            if member.name.startswith("/") or ".." in parts or not (member.isfile() or member.isdir()):
                raise LoopError(f"{archive_path} holds {member.name!r}, which is not a plain file or folder inside "
                                "the archive: refused (run.sh writes only plain files).")
            path = root.joinpath(*parts)
            if member.isdir():
                path.mkdir(parents=True, exist_ok=True)
                continue
            source = archive.extractfile(member)
            assert source is not None  # a regular file always has contents
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(source.read())


def read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise LoopError(f"{what} ({path.name}) cannot be read from the results: {exc}. Ingest the results.tar.gz "
                        f"that the pack's {RUN_SCRIPT} wrote, unchanged.") from exc
    if not isinstance(data, dict):
        raise LoopError(f"{what} ({path.name}) holds a JSON {type(data).__name__}, not an object: not written by "
                        f"the pack's {RUN_SCRIPT}.")
    return data


def check_manifest(manifest: Mapping[str, Any], target: Path) -> None:
    if manifest.get("format") != PACK_FORMAT or manifest.get("format_version") != PACK_VERSION:
        raise LoopError(f"the results' manifest is format {manifest.get('format')!r} version "
                        f"{manifest.get('format_version')!r}; this dcuopt reads {PACK_FORMAT!r} version "
                        f"{PACK_VERSION}. Pack again with this dcuopt and run it again.")
    if Path(manifest["target"]) != target:
        raise LoopError(f"these results are of a pack of {manifest['target']}, not of {target}; ingest them into "
                        "the folder that was packed.")


def check_hashes(manifest: Mapping[str, Any], remote: Mapping[str, Any]) -> None:
    """Every packed file unchanged where it ran, and unchanged here since the pack: else the results are stale."""
    changed_there = [name for name, entry in manifest["files"].items() if remote.get(name) != entry["sha256"]]
    if changed_there:
        raise LoopError(f"{', '.join(changed_there)} differed from the pack when the remote run started (sha256 "
                        "changed or the file missing there): the results do not measure the packed code. Unpack "
                        "the archive afresh there, run run.sh unchanged, and ingest its results.")
    changed_here = [f"{name} ({entry['source']})" for name, entry in manifest["files"].items()
                    if _sha256_or_none(Path(entry["source"])) != entry["source_sha256"]]
    if changed_here:
        raise LoopError(f"{', '.join(changed_here)} changed here since the pack was made: the results measured "
                        "the earlier version. Pack again (`dcuopt pack`), run it there, and ingest those results.")


def _sha256_or_none(path: Path) -> str | None:
    return digest(path.read_bytes()) if path.is_file() else None


def destination_of(manifest: Mapping[str, Any], target: Path, into: Path | None) -> Path:
    if manifest["kind"] == "iteration":
        layout = RunLayout(target)
        iteration_record(load_state(layout), int(manifest["iteration"]))  # the iteration still exists in the state
        return layout.harness_dir(int(manifest["iteration"]))
    if into is None:
        raise LoopError(f"these results are of the case {target}, which has no run directory of its own: name the "
                        "local run directory to fill with --into DIR.")
    return into.resolve()


def replaces(destination: Path, incoming: Mapping[str, Any], force: bool) -> bool:
    """Whether `incoming` should replace what `destination` holds: False when it holds these very results; a
    LoopError when it holds results that finished later (unless forced)."""
    path = destination / STATE_NAME
    if not path.is_file():
        return True
    try:
        local = json.loads(path.read_text())
    except (OSError, ValueError):
        local = {}
    finished_here, finished_there = str(local.get("finished_at") or ""), str(incoming.get("finished_at") or "")
    if local.get("created_at") == incoming.get("created_at") and finished_here == finished_there:
        return False
    if finished_here > finished_there and not force:
        raise LoopError(f"{destination} holds results that finished at {finished_here}, later than the ingested "
                        f"ones ({finished_there}); they are kept. Pass --force to replace them.")
    return True


def check_plugin(manifest: Mapping[str, Any], remote: Mapping[str, Any]) -> None:
    """The packed plugin is what ran there (run.sh refuses to run another; results edited by hand may claim it)."""
    if remote.get("plugin_from_pack") is not True or remote.get("plugin_sha256") != manifest["plugin"]["sha256"]:
        raise LoopError(f"the remote run did not run the packed pytest_dcuopt ({manifest['plugin']['file']}): "
                        f"remote.json says it ran {remote.get('harness_path')!r} (from the pack: "
                        f"{remote.get('plugin_from_pack')}, wheel sha256 {remote.get('plugin_sha256')}). Unpack the "
                        "archive afresh there, run run.sh unchanged, and ingest its results.")


def companions(manifest: Mapping[str, Any], target: Path) -> dict[str, Path]:
    """An iteration's champion steps: each results/<name> folder and the folder here it becomes."""
    if manifest["kind"] != "iteration":
        return {}
    folder = RunLayout(target).iteration(int(manifest["iteration"]))
    return {ABLATION: folder / ABLATION, CHAMPION_PROFILE: folder / CHAMPION_PROFILE}


def place(results: Path, destination: Path, manifest: Mapping[str, Any], archive: Path,
          others: Mapping[str, Path]) -> None:
    """The remote harness directory becomes `destination`, each of the champion's step folders its folder here
    (emptied first, removed when the remote run made none: no file of an earlier run stays)."""
    for name, folder in {"pytest": destination, **others}.items():
        if folder.exists():
            shutil.rmtree(folder)
        if (results / name).is_dir():
            shutil.copytree(results / name, folder)
    if (results / "pytest.log").is_file():
        shutil.copyfile(results / "pytest.log", destination / "pytest.log")
    steps = results / STEPS_NAME
    record = {"ingested_at": now(), "from": str(archive), "exit_status": exit_status(results),
              "remote": read_remote(results), "manifest": dict(manifest),
              "steps": read_json(steps, "the remote run's steps") if steps.is_file() else None}
    write_atomic(destination / INGESTED_NAME, json.dumps(record, indent=2) + "\n")


def exit_status(results: Path) -> str:
    path = results / "exit_status"
    return path.read_text().strip() if path.is_file() else "unknown"


def read_remote(results: Path) -> dict[str, Any]:
    path = results / "remote.json"
    return read_json(path, "the remote machine's description") if path.is_file() else {}

