"""`dcuopt triton collect`: Inductor's files for one kernel, by name, copied into one folder with a manifest.

Looked up under an Inductor cache root (TORCHINDUCTOR_CACHE_DIR; Triton's cache is its `triton/` folder):
* the generated Python that defines the kernel (`def <kernel>(`) and the `.best_config` files beside it
  (the autotuner's winner, coordinate descent included);
* the compiled stages of every variant Triton built for it (`<hash>/<kernel>.ttir/.ttgir/.llir/.ptx/.cubin/
  .amdgcn/.hsaco/.json`) into `variants/<hash>/`; each variant's metadata (num_warps, num_stages, shared) is
  listed, and a variant whose launch parameters and block sizes equal the winner's is marked `best` and copied
  to `best/` too (the folder to scan and inspect: the other variants are the configs that lost);
* the output code (the module that calls the kernels) from the log's `Output code written to:` lines. A log
  recorded on another machine names paths there: they are looked up again under the given cache root.
"""
from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .flow_files import FlowError, write_json

STAGES = (".ttir", ".ttgir", ".llir", ".ptx", ".cubin", ".amdgcn", ".hsaco", ".json", ".source")
MANIFEST = "manifest.json"
BEST = "best"  # the winner's compiled stages
_RANGE_END_RE = re.compile(r"tt\.make_range \{end = (\d+) : i32")
_BLOCK_KEY_RE = re.compile(r"^[A-Z0-9_]*BLOCK[A-Z0-9_]*$")


def generated_sources(cache_root: Path, kernel: str) -> list[Path]:
    pattern = re.compile(rf"^def {re.escape(kernel)}\(", re.M)
    return sorted(p for p in cache_root.glob("*/*.py") if pattern.search(p.read_text(errors="replace")))


def variants(cache_root: Path, kernel: str) -> list[Path]:
    return sorted(p.parent for p in (cache_root / "triton").glob(f"*/*/{kernel}.json"))


def best_configs(sources: Iterable[Path]) -> list[dict[str, Any]]:
    found = []
    for source in sources:
        for path in sorted(source.parent.glob("*.best_config")):
            try:
                found.append({"file": path.name, **json.loads(path.read_text())})
            except (OSError, json.JSONDecodeError):
                continue
    return found


def matches(variant: Path, kernel: str, best: dict[str, Any], meta: dict[str, Any]) -> bool:
    """The variant was built with the winner's launch parameters and block sizes."""
    if any(key in best and meta.get(key) != best[key] for key in ("num_warps", "num_stages")):
        return False
    ttir = variant / f"{kernel}.ttir"
    ends = {int(n) for n in _RANGE_END_RE.findall(ttir.read_text())} if ttir.is_file() else set()
    blocks = [int(v) for k, v in best.items() if _BLOCK_KEY_RE.match(k) and isinstance(v, int) and v > 1]
    return all(b in ends for b in blocks)


def relocate(logged: str, cache_root: Path) -> Path | None:
    """A path from the log, or the same file under `cache_root` (its last two parts: `tb/ctb2....py`)."""
    path = Path(logged)
    if path.is_file():
        return path
    moved = cache_root / path.parent.name / path.name
    return moved if moved.is_file() else None


def collect(cache_root: Path, kernel: str, out: Path, output_code: Iterable[str] = ()) -> dict[str, Any]:
    if not (cache_root / "triton").is_dir() and not any(cache_root.glob("*/*.py")):
        raise FlowError(f"collect: {cache_root} is not an Inductor cache (no generated *.py, no triton/ folder); "
                        "give the TORCHINDUCTOR_CACHE_DIR the run used (set it before the run so the files land "
                        "in a folder of your own)")
    if out.resolve().is_relative_to(cache_root.resolve()):
        raise FlowError(f"collect: the output folder {out} is inside the cache {cache_root}; choose another folder")
    out.mkdir(parents=True, exist_ok=True)
    missing: list[str] = []
    sources = generated_sources(cache_root, kernel)
    if not sources:
        missing.append(f"no generated Python under {cache_root} defines {kernel}")
    copied: dict[str, Any] = {"generated": [_copy(p, out / "generated") for p in sources]}
    bests = best_configs(sources)
    copied["best_config"] = bests
    if not bests:
        missing.append("no .best_config beside the generated source (a single-config kernel, or autotuning off)")
    copied["variants"] = []
    copied["best"] = []
    for folder in variants(cache_root, kernel):
        meta = json.loads((folder / f"{kernel}.json").read_text())
        stages = [p for p in sorted(folder.iterdir()) if p.name.startswith(kernel) and p.suffix in STAGES]
        best = any(matches(folder, kernel, b, meta) for b in bests)
        copied["variants"].append({"hash": folder.name, "files": [_copy(p, out / "variants" / folder.name[:12])
                                                                  for p in stages], "best": best,
                                   **{k: meta.get(k) for k in ("num_warps", "num_stages", "shared", "arch",
                                                               "triton_version")}})
        if best:
            copied["best"] = [_copy(p, out / BEST) for p in stages]
    if not copied["variants"]:
        missing.append(f"no compiled variant of {kernel} under {cache_root / 'triton'}")
    copied["output_code"] = []
    for logged in output_code:
        found = relocate(logged, cache_root)
        if found is None:
            missing.append(f"output code {logged} (named by the log) is not there nor under {cache_root}")
        elif kernel in found.read_text(errors="replace"):
            copied["output_code"].append(_copy(found, out / "output_code"))
    manifest = {"kernel": kernel, "cache_root": str(cache_root), "copied": copied, "missing": missing}
    write_json(out / MANIFEST, manifest)
    return manifest


def _copy(path: Path, folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, folder / path.name)
    return str(folder / path.name)


def describe(manifest: dict[str, Any]) -> list[str]:
    copied = manifest["copied"]
    best = [v for v in copied["variants"] if v["best"]]
    lines = [f"{manifest['kernel']}: {len(copied['generated'])} generated source(s), {len(copied['variants'])} "
             f"compiled variant(s) ({len(best)} matching the winner), {len(copied['output_code'])} output code file(s)"]
    lines += [f"  best variant {v['hash'][:12]}: num_warps={v['num_warps']} num_stages={v['num_stages']} "
              f"shared={v['shared']}" for v in best]
    lines += [f"not gathered: {m}" for m in manifest["missing"]]
    return lines
