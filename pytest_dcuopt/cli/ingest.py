"""`dcuopt ingest`: a pack's results (results.tar.gz or the results/ folder its run.sh wrote) into the folder where the
loop reads them (docs/loop.md "Remote devices"): an iteration's into `iterv<i>/pytest/` (with the champion's ablation
and profile beside it), a case's into `--into DIR`. Refused, naming the file, when a packed file was changed on the
remote machine before the run or here since the pack (the results would measure other code), and refused without
--force when the destination holds results that finished later than these.
"""
from __future__ import annotations

import argparse
import json
import shutil
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

from ..files import write_atomic
from ..report.machine import now
from .finalize import FINAL_DIR
from .layout import CHAMPION_PROFILE, INGESTED_NAME, STATE_NAME, LoopError, RunLayout, iteration_record, load_state
from .open_iter import PROFILE_RUN
from .pack import ABLATION, MANIFEST, PACK_FORMAT, PACK_VERSION, RESULTS, RUN_SCRIPT, STEPS_NAME, digest


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ingest = commands.add_parser("ingest", help="bring a packed run's results back into the run directory")
    ingest.add_argument("target", type=Path, help="the run directory (or case folder) that was packed")
    ingest.add_argument("results", type=Path, help="results.tar.gz made by the pack's run.sh, or its results/ folder")
    ingest.add_argument("--into", type=Path, default=None, help="a case only: the local run directory to fill")
    ingest.add_argument("--force", action="store_true",
                        help="replace results here that finished later than the ingested ones")
    ingest.set_defaults(run=run_ingest)


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
    """Where the loop reads the results: an iteration's in iterv<i>/pytest/ (close-iter), open-iter's profile in
    iterv<i>/profile_run/, finalize's head-to-head in final/pytest/, a case's in --into DIR."""
    if manifest["kind"] in ("iteration", "profile"):
        layout = RunLayout(target)
        index = int(manifest["iteration"])
        iteration_record(load_state(layout), index)  # the iteration still exists in the state
        return layout.harness_dir(index) if manifest["kind"] == "iteration" else layout.iteration(index) / PROFILE_RUN
    if manifest["kind"] == "final":
        return RunLayout(target).run_dir / FINAL_DIR / "pytest"
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
