"""The `test_isa_<toolchain>[<branch>]` items: build (no device), dump, judge every isa mark, record.

`IsaObserver` is registered through the `pytest_dcuopt_observers` hook (plugin.py). Outcomes: every applicable mark
passes -> the test passes; one fails -> the test fails with the verdict's message; otherwise
inconclusive -> the test is skipped with the reason (it fails instead when the mark says
`strict=True`). Verdicts and the scoped dump go to `isa_check.json` in the run directory,
a summary to the branch's `isa` entry in state.json.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import DcuOptError
from ..isa.checks import FAIL, INCONCLUSIVE, PASS, Verdict, evaluate
from ..isa.model import FAMILY_COVERS, IsaDump
from ..isa.spec import IsaMarkError, IsaSpec
from ..isa.symbols import demangle
from ..markers import ISA_MARKER
from . import built_artifact

if TYPE_CHECKING:
    from ..context import RunContext
    from ..toolchains.base import Artifact, Toolchain
    from ..variant import Variant

REPORT_NAME = "isa_check.json"
REPORT_SCHEMA_VERSION = 1


class IsaObserver:
    """The `isa` marker: build the branch (no device needed), dump its ISA, judge every isa mark."""

    name = "isa"
    marker = ISA_MARKER
    report_name = REPORT_NAME
    measures = False  # reads the built ISA: runs beside the builds

    def applies(self, toolchain: type[Toolchain], marks: Sequence[pytest.Mark]) -> bool:
        families = toolchain.isa_families or (toolchain.isa_family,)
        return toolchain.isa_family != "none" and any(could_apply(m, families) for m in marks)

    def observe(self, context: RunContext, variant: Variant, item: pytest.Item) -> None:
        try:
            specs = isa_specs(item)
        except IsaMarkError as exc:
            pytest.fail(str(exc), pytrace=False)
        run_isa_test(context, variant, specs, item.nodeid)

    def write_report(self, path: Path, entries: Sequence[Mapping[str, Any]], header: Mapping[str, Any]) -> None:
        write_report(path, entries, header)


def isa_specs(item: pytest.Item) -> list[IsaSpec]:
    """Validated IsaSpecs of the item's `isa` marks, each saying where it was declared (raises IsaMarkError)."""
    specs = []
    for node, mark in item.iter_markers_with_node(ISA_MARKER):
        origin = "ref.py branch_marks" if node is item else f"{node.name} pytestmark"
        specs.append(IsaSpec.from_kwargs(mark.kwargs, mark.args, origin))
    return specs


def could_apply(mark: pytest.Mark, families: tuple[str, ...]) -> bool:
    """An isa mark whose `family` could cover one of `families` (an invalid one counts, so its error is shown)."""
    if mark.name != ISA_MARKER:
        return False
    declared = mark.kwargs.get("family")
    if declared is None:
        return True
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, (list, tuple)) or any(n not in FAMILY_COVERS for n in names):
        return True
    return any(f in FAMILY_COVERS[n] for n in names for f in families)


def run_isa_test(context: RunContext, variant: Variant, specs: Sequence[IsaSpec], nodeid: str) -> None:
    artifact = built_artifact(context, variant, runs_kernel=False)
    dump = collect_dump(variant.toolchain, artifact)
    verdicts, skipped = judge(specs, dump, variant.label)
    context.add_report(IsaObserver.name, report_entry(variant, nodeid, verdicts, skipped, dump))
    variant.record.isa = record_summary(verdicts, skipped, dump)
    _conclude(verdicts, skipped, dump)


def judge(specs: Sequence[IsaSpec], dump: IsaDump, label: str) -> tuple[list[Verdict], list[dict[str, Any]]]:
    """Verdicts of the marks that apply to the dump's family and arch; the others with why not."""
    verdicts, skipped = [], []
    for spec in specs:
        why_not = spec.applies_to(dump.family, dump.arch)
        if why_not:
            skipped.append({"mark": spec.to_json(), "not_applicable": why_not})
        else:
            verdicts.append(evaluate(spec, dump, label))
    return verdicts, skipped


def _conclude(verdicts: Sequence[Verdict], skipped: Sequence[Mapping[str, Any]], dump: IsaDump) -> None:
    if not verdicts:
        reasons = "; ".join(s["not_applicable"] for s in skipped)
        pytest.skip(f"no isa mark applies to this target ({dump.family}, {dump.arch}): {reasons}")
    failed = [v for v in verdicts if v.outcome == FAIL]
    unsure = [v for v in verdicts if v.outcome == INCONCLUSIVE]
    if failed or any(v.spec.strict for v in unsure):
        pytest.fail("\n\n".join(v.message() for v in failed + [v for v in unsure if v.spec.strict]), pytrace=False)
    if unsure:
        pytest.skip("ISA check inconclusive (not verified):\n" + "\n\n".join(v.message() for v in unsure))


def collect_dump(toolchain: Toolchain, artifact: Artifact) -> IsaDump:
    """The toolchain's `isa_dump` when it has one, else its `disassemble` + `resource_usage` wrapped."""
    dump = toolchain.isa_dump(artifact)
    if dump is None:
        dump = IsaDump(toolchain.isa_family, artifact.arch, f"{toolchain.name}.disassemble({artifact.path.name})")
        try:
            dump.functions = dict(toolchain.disassemble(artifact))
        except (DcuOptError, OSError) as exc:
            dump.errors.append(f"{toolchain.name}.disassemble failed: {exc}")
        if not dump.functions and not dump.errors:
            dump.errors.append(f"{toolchain.name}.disassemble returned no functions (its disassembler is missing "
                               "or failed)")
        try:
            dump.resources = dict(toolchain.resource_usage(artifact))
        except (DcuOptError, OSError) as exc:
            dump.notes.append(f"resource usage unavailable: {exc}")
    if not dump.demangled:
        found = demangle(list(dump.functions) + list(dump.resources))
        dump.demangled = {mangled: plain for mangled, plain in found.items() if plain != mangled}
    return dump


def record_summary(verdicts: Sequence[Verdict], skipped: Sequence[Mapping[str, Any]], dump: IsaDump) -> dict[str, Any]:
    """The branch's `isa` entry in state.json: outcome per mark and what failed, without the dump."""
    outcomes = {v.outcome for v in verdicts}
    overall = FAIL if FAIL in outcomes else INCONCLUSIVE if INCONCLUSIVE in outcomes or not verdicts else PASS
    return {
        "outcome": overall, "family": dump.family, "arch": dump.arch, "tool": dump.tool, "recorded": dump.recorded,
        "verdicts": [{"outcome": v.outcome, "mark": v.spec.to_json(),
                      "checks": [f"{c.outcome}: {c.kind} {c.subject}: {c.detail}" for c in v.checks]}
                     for v in verdicts],
        "not_applicable": list(skipped), "notes": list(dump.notes), "errors": list(dump.errors),
        "report": REPORT_NAME,
    }


def report_entry(variant: Variant, nodeid: str, verdicts: Sequence[Verdict], skipped: Sequence[Mapping[str, Any]],
                 dump: IsaDump) -> dict[str, Any]:
    """One entry of isa_check.json: every verdict in full, plus the scoped dump it was judged on."""
    scoped = sorted({name for v in verdicts for name in v.scope})
    data = dump.to_json(include_text=False)
    data["text"] = {name: text for name, text in dump.to_json(include_text=True)["text"].items() if name in scoped}
    return {
        "case": variant.case.name, "toolchain": variant.toolchain.name, "branch": variant.branch.name,
        "source": variant.record.source, "nodeid": nodeid,
        "artifact": str(variant.artifact.path) if variant.artifact else None,
        "outcome": record_summary(verdicts, skipped, dump)["outcome"],
        "verdicts": [v.to_json() for v in verdicts], "not_applicable": list(skipped), "dump": data,
    }


def write_report(path: Path, entries: Sequence[Mapping[str, Any]], header: Mapping[str, Any]) -> None:
    from ..files import write_atomic

    ordered = sorted(entries, key=lambda e: (e["case"], e["toolchain"], e["branch"]))
    document = {"schema_version": REPORT_SCHEMA_VERSION, **dict(header), "checks": ordered}
    write_atomic(path, json.dumps(document, indent=2, default=str) + "\n")
