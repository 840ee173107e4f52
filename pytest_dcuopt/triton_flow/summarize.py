"""`dcuopt triton summarize`: autotuning results to JSON and Markdown.

Two sources, read alike:

* a capture folder (`dcuopt triton capture`): `autotune.jsonl`, one record per tuned kernel with every config's
  time, the winner, the arguments (shapes, dtypes, strides) and the footprint rate;
* TorchInductor's own debug log (`TORCH_LOGS=+inductor`, stderr): `Benchmark all input configs for K, get:` and
  its per-config lines, `Best config for K: ...`, coordinate-descent trials (`COORDESC: ...`), the template
  tables of max-autotune (`AUTOTUNE addmm(...)` with one row per choice), and the files Inductor wrote
  (`Output code written to:`, `Save heuristic tuning result to`, `Triton cache dir:`).
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .flow_files import FlowError

RECORDS_NAME = "autotune.jsonl"
# "I1201 05:51:52.018000 807 torch/_inductor/x.py:1147] [0/0] [__output_code] message" -> "message"
_GLOG_PREFIX_RE = re.compile(r"^[IVWDEF]\d{4} [\d:.]+\s+\d+ \S+\] (?:\[[^\]]*\] )*")
_BENCH_START_RE = re.compile(r"^Benchmark all input configs for (?P<kernel>\S+), get:$")
# One benchmarked config of that table: "XBLOCK: 512, num_warps: 16, ...: 0.1716, nreg 30, nspill 0, #shared-mem 0"
_TRIAL_RE = re.compile(r"^(?P<config>.*): (?P<ms>[0-9.]+|inf), nreg (?P<nreg>\d+), nspill (?P<nspill>\d+), "
                       r"#shared-mem (?P<shared>\S+)$")
_BEST_RE = re.compile(r"^Best config for (?P<kernel>\S+): (?P<rest>.*)$")
_COORDESC_RE = re.compile(r"^COORDESC: (?P<rest>.*)$")
# Lines that name the kernel the following COORDESC lines belong to (those lines do not name it).
_CURRENT_RES = (re.compile(r"^CachingAutotuner gets (?P<n>\d+) configs for (?P<kernel>\S+)$"),
                re.compile(r"^= Do coordinate descent tuning for (?P<kernel>\S+) =$"))
_TEMPLATE_RE = re.compile(r"^AUTOTUNE (?P<op>\w+)\((?P<shapes>[^)]*)\)$")
_TEMPLATE_ROW_RE = re.compile(r"^\s+(?P<choice>\S+) (?P<ms>[0-9.]+|inf) ms (?P<share>[0-9.]+)%\s?(?P<desc>.*)$")
_TEMPLATE_END_RE = re.compile(r"^SingleProcess AUTOTUNE benchmarking takes (?P<bench>[0-9.]+) seconds and "
                              r"(?P<pre>[0-9.]+) seconds precompiling for (?P<n>\d+) choices")
_FILES_RES = {"output_code": re.compile(r"Output code written to: (?P<path>\S+)"),
              "best_config": re.compile(r"Save heuristic tuning result to (?P<path>\S+)"),
              "triton_cache_dirs": re.compile(r"Triton cache dir: (?P<path>\S+)")}


def message(line: str) -> str:
    return _GLOG_PREFIX_RE.sub("", line.rstrip("\n"))


def trial(text: str) -> dict[str, Any] | None:
    found = _TRIAL_RE.match(text)
    if found is None:
        return None
    ms = float(found.group("ms"))
    return {"config": found.group("config"), "ms": ms, "n_regs": int(found.group("nreg")),
            "n_spills": int(found.group("nspill")), "shared": found.group("shared")}


class LogReader:
    """A line-by-line reader of an Inductor debug log (the state is which table a line belongs to)."""

    def __init__(self) -> None:
        self.kernels: list[dict[str, Any]] = []
        self.current: str | None = None  # the kernel Inductor is compiling or tuning now
        self.templates: list[dict[str, Any]] = []
        self.files: dict[str, list[str]] = {key: [] for key in _FILES_RES}
        self.block: str | None = None  # "bench" inside a Benchmark-all table, "template" inside an AUTOTUNE one

    def kernel(self, name: str, fresh: bool = False) -> dict[str, Any]:
        """The entry of `name` (a new one when `fresh` and the last one already has its result)."""
        for entry in reversed(self.kernels):
            if entry["kernel"] == name and not (fresh and (entry["best"] or entry["coordesc"])):
                return entry
        self.kernels.append({"kernel": name, "origin": "inductor log", "configs": [], "best": None, "coordesc": []})
        return self.kernels[-1]

    def feed(self, raw: str) -> None:
        text = message(raw)
        for key, pattern in _FILES_RES.items():
            found = pattern.search(text)
            if found and found.group("path") not in self.files[key]:
                self.files[key].append(found.group("path"))
        if self.block == "template" and self.template_line(text):
            return
        self.block = None if self.block == "template" else self.block
        self.kernel_line(text)

    def template_line(self, text: str) -> bool:
        table = self.templates[-1]
        row = _TEMPLATE_ROW_RE.match(text)
        if row:
            table["choices"].append({"choice": row.group("choice"), "ms": float(row.group("ms")),
                                     "share_of_best_pct": float(row.group("share")), "config": row.group("desc")})
            return True
        for key in ("strides", "dtypes"):
            if text.startswith(f"{key}: "):
                table[key] = text[len(key) + 2:]
                return True
        end = _TEMPLATE_END_RE.match(text)
        if end:
            table.update(benchmark_s=float(end.group("bench")), precompile_s=float(end.group("pre")),
                         choices_total=int(end.group("n")))
            self.block = None
            return True
        return False

    def kernel_line(self, text: str) -> None:
        start, best, coordesc = _BENCH_START_RE.match(text), _BEST_RE.match(text), _COORDESC_RE.match(text)
        template = _TEMPLATE_RE.match(text)
        for pattern in _CURRENT_RES:
            named = pattern.match(text)
            if named:
                self.current = named.group("kernel")
        if start:
            self.current = start.group("kernel")
            self.kernel(self.current, fresh=True)
            self.block = "bench"
        elif best:
            entry = self.kernel(best.group("kernel"))
            entry["best"] = trial(best.group("rest"))
            self.block = None
        elif coordesc and self.current:
            found = trial(coordesc.group("rest"))
            if found:
                self.kernel(self.current)["coordesc"].append(found)
        elif template:
            self.templates.append({"op": template.group("op"), "shapes": template.group("shapes"), "choices": []})
            self.block = "template"
        elif self.block == "bench" and (found := trial(text)) is not None:
            self.kernels[-1]["configs"].append(found)


def read_inductor_log(lines: Iterable[str]) -> dict[str, Any]:
    reader = LogReader()
    for line in lines:
        reader.feed(line)
    for entry in reader.kernels:
        tried = entry["coordesc"]
        baseline = entry["best"]["ms"] if entry["best"] else (tried[0]["ms"] if tried else None)
        faster = [t for t in tried if baseline is not None and t["ms"] < baseline]
        entry["coordesc_best"] = min(faster, key=lambda t: t["ms"]) if faster else None
    return {"kernels": reader.kernels, "templates": reader.templates, "files": reader.files}


def read_records(folder: Path) -> list[dict[str, Any]]:
    path = folder / RECORDS_NAME
    if not path.is_file():
        raise FlowError(f"{folder} holds no {RECORDS_NAME}: it is not a capture folder. Make one with "
                        f"`dcuopt triton capture --out {folder} -- python your_model.py`, or summarize an Inductor "
                        "log file (TORCH_LOGS=+inductor) instead")
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                records.append({**json.loads(line), "origin": "capture"})
            except json.JSONDecodeError as exc:
                raise FlowError(f"{path}:{number} is not a JSON record ({exc}); the capture was cut short: "
                                "capture again") from None
    return records


def summarize(sources: Iterable[Path]) -> dict[str, Any]:
    summary: dict[str, Any] = {"sources": [], "kernels": [], "templates": [], "files": {}}
    for source in sources:
        summary["sources"].append(str(source))
        if source.is_dir():
            summary["kernels"] += read_records(source)
            continue
        if not source.is_file():
            raise FlowError(f"summarize: {source} does not exist; give a capture folder or an Inductor log "
                            "(the stderr of a run with TORCH_LOGS=+inductor)")
        with source.open(errors="replace") as handle:
            found = read_inductor_log(handle)
        summary["kernels"] += found["kernels"]
        summary["templates"] += found["templates"]
        for key, paths in found["files"].items():
            summary["files"].setdefault(key, []).extend(p for p in paths if p not in summary["files"].get(key, []))
    return summary


def markdown(summary: dict[str, Any]) -> str:
    lines = ["# Autotuning summary", "", f"Sources: {', '.join(summary['sources'])}", ""]
    for entry in summary["kernels"]:
        best = entry.get("best") or {}
        lines += [f"## {entry['kernel']} ({entry['origin']})", ""]
        if entry.get("args"):
            lines += ["| argument | shape | stride | dtype |", "|---|---|---|---|"]
            lines += [f"| {a['name']} | {a.get('shape', '')} | {a.get('stride', '')} | "
                      f"{a.get('dtype', a.get('value'))} |" for a in entry["args"]]
            lines.append("")
        lines += ["| config | ms | regs | spills | shared | best |", "|---|---|---|---|---|---|"]
        for config in entry["configs"]:
            mark = "yes" if best and config["config"] == best.get("config") else ""
            lines.append(f"| {config['config']} | {config['ms']:.4f} | {config.get('n_regs', '')} | "
                         f"{config.get('n_spills', '')} | {config.get('shared', '')} | {mark} |")
        if entry.get("coordesc_best"):
            lines += ["", f"Coordinate descent then found {entry['coordesc_best']['config']} at "
                          f"{entry['coordesc_best']['ms']:.4f} ms ({len(entry['coordesc'])} trials)."]
        if entry.get("footprint_gbps"):
            lines += ["", f"Footprint rate at the best config: {entry['footprint_gbps']:.1f} GB/s "
                          f"({entry.get('footprint_bytes', 0) / 1e6:.2f} MB of tensor arguments; not HBM traffic)."]
        lines.append("")
    for table in summary["templates"]:
        lines += [f"## template {table['op']}({table['shapes']})", "", f"dtypes: {table.get('dtypes', '?')}; "
                  f"strides: {table.get('strides', '?')}", "", "| choice | ms | % of best | config |",
                  "|---|---|---|---|"]
        lines += [f"| {c['choice']} | {c['ms']:.4f} | {c['share_of_best_pct']:.1f} | {c['config']} |"
                  for c in table["choices"]]
        lines.append("")
    for key, paths in summary["files"].items():
        lines += [f"{key}: " + ", ".join(paths)] if paths else []
    return "\n".join(lines).rstrip() + "\n"


_CPP_KERNEL_RE = re.compile(r"\b(cpp_fused_\w+)")
_TRITON_KERNEL_RE = re.compile(r"^def (triton_\w+)\(", re.M)


def generated_kernels(log: Path) -> dict[str, list[str]]:
    """What Inductor generated, from the output code files its log names: C++ kernels (`cpp_fused_*`: the CPU
    backend, which autotunes nothing) and Triton kernels (`def triton_*`)."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    files = list(dict.fromkeys(m.group("path") for m in _FILES_RES["output_code"].finditer(text)))
    cpp: list[str] = []
    triton: list[str] = []
    for name in files:
        path = Path(name)
        code = path.read_text(errors="replace") if path.is_file() else ""
        cpp += [k for k in dict.fromkeys(_CPP_KERNEL_RE.findall(code)) if k not in cpp]
        triton += [k for k in dict.fromkeys(_TRITON_KERNEL_RE.findall(code)) if k not in triton]
    return {"output_code": files, "cpp": cpp, "triton": triton}


def nothing_tuned_reason(generated: dict[str, list[str]]) -> str:
    """Why a capture recorded no tuned kernel, from what Inductor generated."""
    cpp, triton = generated["cpp"], generated["triton"]
    if cpp and not triton:
        return (f"Inductor generated C++ for the CPU ({len(cpp)} kernel(s): {', '.join(cpp[:3])}), not Triton: "
                "there is nothing to autotune on a CPU device; capture on a GPU to record Triton kernels")
    if triton:
        return (f"Inductor generated {len(triton)} Triton kernel(s) ({', '.join(triton[:3])}) and autotuned none "
                "(each had a single config); TORCHINDUCTOR_MAX_AUTOTUNE=1 or coordinate descent makes it tune")
    if not generated["output_code"]:
        return "Inductor's log names no output code: the script compiled nothing (is torch.compile called?)"
    return "Inductor's output code holds neither C++ nor Triton kernels"

