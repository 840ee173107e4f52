"""Evaluate an `IsaSpec` against an `IsaDump`: a verdict of pass, fail or inconclusive, with evidence.

Rules:
* Only the scoped functions are read (default: every function of the branch's own binary).
* Presence is proven by any matching instruction. Absence is proven only by a complete dump:
  when the disassembler failed (`dump.errors`) or the scope holds no instructions, a check that
  needs absence is inconclusive, never passed.
* A method whose signature says `evidence: none` is inconclusive (it has no instruction of its own).
* A resource the toolchain does not report is inconclusive for its bound.
A failed check names what was required, what was found instead, and the closest matches.
"""
from __future__ import annotations

import difflib
import fnmatch
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .instruction_lines import instructions
from .model import UNSPLIT, Instruction, IsaDump
from .signature_registry import PATTERN_FLAGS, FamilySignature, Registry, load
from .spec import BOUNDS, IsaSpec
from .symbols import base_name

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
AMD_ONLY_BOUNDS = ("max_vgprs", "max_sgprs", "max_agprs")
_UNITS = {"max_vgprs": "VGPRs", "max_sgprs": "SGPRs", "max_agprs": "AGPRs", "max_registers": "registers",
          "max_shared_bytes": "bytes of LDS/shared memory", "max_scratch_bytes": "bytes of scratch/stack",
          "max_spills": "spills (count on AMD, bytes on NVIDIA)", "min_occupancy": "waves per SIMD"}
_EVIDENCE = 3
_REGEX_SYNTAX_RE = re.compile(r"\\[bBAZzdDsSwW]|\(\?[:=!<]+|[\^$()\[\]{}?*+|\\]")


@dataclass
class CheckResult:
    kind: str  # scope | require | forbid | method | resource
    subject: str
    outcome: str
    detail: str
    evidence: list[str] = field(default_factory=list)
    closest: list[str] = field(default_factory=list)
    hint: str = ""

    def lines(self) -> list[str]:
        tag = {PASS: "ok  ", FAIL: "FAIL", INCONCLUSIVE: "??  "}[self.outcome]
        out = [f"  {tag} {self.kind} {self.subject}: {self.detail}"]
        if self.outcome != PASS:
            out += [f"         found: {e}" for e in self.evidence]
        if self.closest:
            out.append(f"         closest: {'; '.join(self.closest)}")
        if self.hint and self.outcome != PASS:
            out.append(f"         fix: {self.hint}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in ("", [])}


@dataclass
class Verdict:
    outcome: str
    label: str
    spec: IsaSpec
    dump: IsaDump
    scope: list[str]
    instruction_count: int
    checks: list[CheckResult]

    def message(self) -> str:
        word = {PASS: "passed", FAIL: "FAILED", INCONCLUSIVE: "INCONCLUSIVE"}[self.outcome]
        dump = self.dump
        arch = dump.arch or "the build machine (arch not recorded)"
        head = [f"ISA check {word}: {self.label} on {arch} ({dump.family})"
                + (" [RECORDED sample]" if dump.recorded else ""),
                f"  mark: isa({_mark_text(self.spec)})" + (f"  [{self.spec.origin}]" if self.spec.origin else "")]
        if self.spec.reason:
            head.append(f"  why: {self.spec.reason}")
        names = ", ".join(base_name(dump.display_name(s)) for s in self.scope) or "(none)"
        head.append(f"  scope: {names} ({len(self.scope)} function(s), {self.instruction_count} instructions)")
        head.append(f"  disassembler: {dump.tool or '(none)'}")
        body = [line for check in self.checks for line in check.lines()]
        tail = [f"  note: {n}" for n in dump.notes] + [f"  tool error: {e}" for e in dump.errors]
        return "\n".join(head + body + tail)

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "mark": self.spec.to_json(), "family": self.dump.family,
                "arch": self.dump.arch, "tool": self.dump.tool, "recorded": self.dump.recorded,
                "scope": list(self.scope),
                "instructions": self.instruction_count, "checks": [c.to_json() for c in self.checks],
                "notes": list(self.dump.notes), "errors": list(self.dump.errors)}


def evaluate(spec: IsaSpec, dump: IsaDump, label: str, registry: Registry | None = None) -> Verdict:
    """Judge one mark against one dump (the mark is assumed to apply to the dump's family and arch)."""
    registry = registry or load()
    scope, checks = resolve_scope(spec.functions, dump)
    parsed = {name: instructions(dump.functions[name], dump.family) for name in scope}
    context = _Context(dump, parsed, registry)
    for pattern, minimum in spec.require:
        checks.append(context.require(pattern, minimum))
    for pattern, maximum in spec.forbid:
        checks.append(context.forbid(pattern, maximum))
    for method in spec.methods:
        checks.append(context.method(method))
    for bound, limit in spec.bounds:
        checks.append(context.resource(bound, limit, scope))
    outcomes = {c.outcome for c in checks}
    outcome = FAIL if FAIL in outcomes else INCONCLUSIVE if INCONCLUSIVE in outcomes else PASS
    return Verdict(outcome, label, spec, dump, scope, context.total, checks)


def resolve_scope(wanted: Sequence[str], dump: IsaDump) -> tuple[list[str], list[CheckResult]]:
    """The functions to check and, when a named function is missing or unscoped, a check saying so."""
    available = list(dump.functions)
    if not wanted:
        return available, []
    if available and not dump.split:
        return [], [CheckResult("scope", ", ".join(wanted), INCONCLUSIVE,
                                "the dump has no function boundaries, so it cannot be narrowed to a named function")]
    chosen, missing = [], []
    for name in wanted:
        hits = [s for s in available if _name_matches(name, s, dump.display_name(s))]
        chosen += [h for h in hits if h not in chosen]
        if not hits:
            missing.append(name)
    if not missing:
        return chosen, []
    listed = ", ".join(f"{base_name(dump.display_name(s))}" for s in available[:20]) or "none"
    outcome = FAIL if available else INCONCLUSIVE
    return chosen, [CheckResult("scope", ", ".join(missing), outcome,
                                f"no such function in the dump; functions found: {listed}")]


def _name_matches(wanted: str, symbol: str, demangled: str) -> bool:
    candidates = {symbol, demangled, base_name(demangled)}
    return any(wanted == c or fnmatch.fnmatchcase(c, wanted) for c in candidates)


class _Context:
    """The scoped instructions of one dump and the registry, shared by the checks of one mark."""

    def __init__(self, dump: IsaDump, parsed: dict[str, list[Instruction]], registry: Registry) -> None:
        self.dump, self.parsed, self.registry = dump, parsed, registry
        self.total = sum(len(v) for v in parsed.values())
        self.complete = not dump.errors and self.total > 0

    def _why_unknown(self) -> str:
        if not self.dump.functions:
            return "no ISA: " + ("; ".join(self.dump.errors) or "the toolchain returned no functions")
        if self.total == 0:
            return "the checked function(s) hold no instructions"
        return "the dump is incomplete (" + "; ".join(self.dump.errors) + "), so absence is not proven"

    def _patterns(self, pattern: str) -> tuple[str, ...]:
        return self.registry.pattern_set(pattern[1:], self.dump.family) if pattern.startswith("@") else (pattern,)

    def matches(self, patterns: Iterable[str]) -> list[tuple[str, Instruction]]:
        compiled = [re.compile(p, PATTERN_FLAGS) for p in patterns]
        return [(name, ins) for name, found in self.parsed.items() for ins in found
                if any(c.search(ins.text) for c in compiled)]

    def evidence(self, hits: Sequence[tuple[str, Instruction]]) -> list[str]:
        shown = [f"{base_name(self.dump.display_name(n))}:{i.line} `{i.text}`" for n, i in hits[:_EVIDENCE]]
        return shown + ([f"... {len(hits) - _EVIDENCE} more"] if len(hits) > _EVIDENCE else [])

    def require(self, pattern: str, minimum: int) -> CheckResult:
        patterns = self._patterns(pattern)
        subject = f"/{pattern}/" + (f" x{minimum}" if minimum != 1 else "")
        if not patterns:
            return CheckResult("require", subject, INCONCLUSIVE,
                               f"pattern set {pattern} has no {self.dump.family} patterns")
        hits = self.matches(patterns)
        if len(hits) >= minimum:
            return CheckResult("require", subject, PASS, f"found {len(hits)}", self.evidence(hits))
        if not self.complete:
            return CheckResult("require", subject, INCONCLUSIVE, f"found {len(hits)}; {self._why_unknown()}",
                               self.evidence(hits))
        return CheckResult("require", subject, FAIL, f"required at least {minimum}, found {len(hits)}",
                           self.evidence(hits), self.closest(patterns))

    def forbid(self, pattern: str, maximum: int) -> CheckResult:
        patterns = self._patterns(pattern)
        subject = f"/{pattern}/" + (f" at most {maximum}" if maximum else "")
        if not patterns:
            return CheckResult("forbid", subject, INCONCLUSIVE,
                               f"pattern set {pattern} has no {self.dump.family} patterns")
        hits = self.matches(patterns)
        if len(hits) > maximum:
            return CheckResult("forbid", subject, FAIL, f"allowed {maximum}, found {len(hits)}", self.evidence(hits))
        if not self.complete:
            return CheckResult("forbid", subject, INCONCLUSIVE, f"found {len(hits)}; {self._why_unknown()}")
        return CheckResult("forbid", subject, PASS, f"found {len(hits)} (allowed {maximum})")

    def method(self, method_id: str) -> CheckResult:
        method = self.registry.method(method_id)
        signature: FamilySignature = method.families[self.dump.family]
        if signature.no_evidence:
            return CheckResult("method", method_id, INCONCLUSIVE,
                               f"no {self.dump.family} instruction signature: {signature.no_evidence}")
        results = [self._group(group) for group in signature.groups]
        satisfied = [hits for ok, hits in results if ok]
        bounds = [self.resource(b, limit, list(self.parsed)) for b, limit in signature.resources.items()]
        bound_outcomes = {b.outcome for b in bounds}
        if signature.groups and not satisfied:
            wanted = " or ".join(" and ".join(f"/{p}/" for p in group) for group in signature.groups)
            if not self.complete:
                return CheckResult("method", method_id, INCONCLUSIVE, f"expected {wanted}; {self._why_unknown()}")
            closest = self.closest([p for group in signature.groups for p in group])
            return CheckResult("method", method_id, FAIL, f"expected {wanted}; none found", closest=closest,
                               hint=method.hint)
        evidence = self.evidence(satisfied[0]) if satisfied else []
        evidence += [f"{b.subject}: {b.detail}" for b in bounds]
        if FAIL in bound_outcomes:
            return CheckResult("method", method_id, FAIL, "resource signature not met", evidence, hint=method.hint)
        if INCONCLUSIVE in bound_outcomes:
            return CheckResult("method", method_id, INCONCLUSIVE, "resource signature unknown", evidence)
        return CheckResult("method", method_id, PASS, f"{method.name}: signature found", evidence)

    def _group(self, group: Sequence[str]) -> tuple[bool, list[tuple[str, Instruction]]]:
        hits: list[tuple[str, Instruction]] = []
        for pattern in group:
            found = self.matches([pattern])
            if not found:
                return False, []
            hits += found[:1]
        return True, hits

    def resource(self, bound: str, limit: int, scope: Sequence[str]) -> CheckResult:
        field_name = BOUNDS[bound]
        relation = ">=" if bound.startswith("min_") else "<="
        subject = f"{bound} {relation} {limit}"
        if bound in AMD_ONLY_BOUNDS and self.dump.family not in ("amdgcn", "dcu"):
            return CheckResult("resource", subject, INCONCLUSIVE, f"{bound} is an AMD/DCU register class; "
                               f"use max_registers for {self.dump.family}")
        if not scope:
            return CheckResult("resource", subject, INCONCLUSIVE, self._why_unknown())
        values, unknown, broken = {}, [], []
        for name in scope:
            usage = self.dump.resources.get(name) or self.dump.resources.get(self.dump.display_name(name))
            value = getattr(usage, field_name, None) if usage else None
            shown = base_name(self.dump.display_name(name))
            if value is None:
                unknown.append(shown)
            else:
                values[shown] = value
                if (value < limit) if relation == ">=" else (value > limit):
                    broken.append(f"{shown}: {value}")
        found = ", ".join(f"{k}: {v}" for k, v in values.items())
        if broken:
            return CheckResult("resource", subject, FAIL, f"{', '.join(broken)} {_UNITS[bound]}")
        if unknown:
            source = "the toolchain reports no resource usage" if not self.dump.resources else "not reported"
            detail = f"{field_name} unknown for {', '.join(unknown)} ({source})" + (f"; {found}" if found else "")
            return CheckResult("resource", subject, INCONCLUSIVE, detail)
        return CheckResult("resource", subject, PASS, found)

    def closest(self, patterns: Sequence[str]) -> list[str]:
        """The scope's instructions most similar to what was required, with counts and a sample each."""
        counts: Counter[str] = Counter()
        sample: dict[str, tuple[str, Instruction]] = {}
        for name, found in self.parsed.items():
            for ins in found:
                counts[ins.mnemonic] += 1
                sample.setdefault(ins.mnemonic, (name, ins))
        literals = [_REGEX_SYNTAX_RE.sub("", p).lower() for p in patterns if not p.startswith("@")]
        scored = sorted(((max(difflib.SequenceMatcher(None, lit, m.lower()).ratio() for lit in literals or [""]), m)
                         for m in counts), reverse=True)
        picked = [m for score, m in scored if score >= 0.55][:3] or [m for _, m in scored[:3]]
        out = []
        for mnemonic in picked:
            name, ins = sample[mnemonic]
            out.append(f"{mnemonic} x{counts[mnemonic]} (e.g. {base_name(self.dump.display_name(name))}:{ins.line} "
                       f"`{ins.text}`)")
        return out


def _mark_text(spec: IsaSpec) -> str:
    return ", ".join(f"{k}={_show(v)}" for k, v in spec.to_json().items() if k != "origin")


def _show(value: Any) -> str:
    """Mark values as a person wrote them: patterns as raw strings, single values unwrapped."""
    if isinstance(value, str):
        return f"r'{value}'" if "\\" in value else repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_show(k)}: {v}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return _show(value[0]) if len(value) == 1 else "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value)


__all__ = ["CheckResult", "Verdict", "evaluate", "resolve_scope", "PASS", "FAIL", "INCONCLUSIVE", "UNSPLIT"]
