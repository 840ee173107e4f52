"""The state rules of a closed iteration, per method (docs/loop.md "State rules"): its bucket (`effective`,
`ineffective`, `implementation_failed`, `inconclusive`) from the champion's ISA evidence (the `isa` marker's
per-method checks in isa_check.json) and its ablation; without a promotion, from the correct branches' checks."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..isa.checks import FAIL, PASS
from ..isa.signature_registry import Registry
from ..isa.signature_registry import load as load_signatures
from ..toolchains.base import Toolchain

EFFECTIVE, INEFFECTIVE, INCONCLUSIVE = "effective", "ineffective", "inconclusive"
IMPLEMENTATION_FAILED = "implementation_failed"
ISA_PRESENT, ISA_MISSING, ISA_NO_SIGNATURE, ISA_UNKNOWN = "present", "missing", "no signature", "unknown"


def classify(declared: list[dict[str, Any]], outcome: dict[str, Any]) -> list[dict[str, Any]]:
    """The state rules per method. With a promoted champion: `implementation_failed` when its expected ISA is
    missing from the champion; `inconclusive` when the ISA evidence could not be gathered or the method was not
    ablated; otherwise the ablation decides (`effective` only with a slowdown beyond noise when removed). A method
    with no instruction of its own in the champion's ISA family is judged by the ablation alone, and says so."""
    ablation = outcome.get("ablation") or {}
    measured = ablation.get("methods", {})
    isa = outcome.get("isa") or {}
    found = []
    for method in declared:
        entry: dict[str, Any] = {"id": method["id"], "name": method["name"], "axis": method["axis"]}
        if not outcome["promoted"]:
            entry.update(_without_champion(outcome, isa.get(method["id"])))
            found.append(entry)
            continue
        check = isa.get(method["id"]) or {"isa": ISA_UNKNOWN, "detail": "no ISA check result for the champion"}
        entry["isa"] = check
        if check["isa"] == ISA_MISSING:
            entry.update(bucket=IMPLEMENTATION_FAILED, note=f"expected ISA missing: {check['detail']}"[:400])
        elif check["isa"] == ISA_UNKNOWN:
            entry.update(bucket=INCONCLUSIVE, note=f"ISA evidence not gathered: {check['detail']}"[:400])
        elif method["id"] in measured:
            entry.update(bucket_from_ablation(measured[method["id"]]))
        else:
            reason = ablation.get("reason") or "no ablation_flag for this method in methods.json"
            entry.update(bucket=INCONCLUSIVE, note=f"not ablated: {reason}")
        found.append(entry)
    return found


def champion_isa(report: dict[str, Any] | None, champion: str, declared: Sequence[str] = (),
                 toolchain: type[Toolchain] | None = None) -> dict[str, dict[str, Any]]:
    """Per method id, the champion's ISA evidence from the `isa` marker's per-method checks (isa_check.json):
    `present`, `missing` (the check failed: the expected instructions are not in the dump), `no signature` (the
    method has no instruction of its own in this ISA family: timing decides) or `unknown` (the dump was
    incomplete, the function was not found, or no check ran). A declared method without a check result has no
    signature when the toolchain's ISA family has none for it (no check is needed to know that), else unknown."""
    registry = load_signatures()
    found: dict[str, dict[str, Any]] = {}
    family = toolchain.isa_family if toolchain is not None else None
    for method_id in declared:
        if _isa_state("inconclusive", method_id, family, registry) == ISA_NO_SIGNATURE:
            found[method_id] = {"isa": ISA_NO_SIGNATURE, "family": family,
                                "detail": f"no ISA check result; the method has no {family} instruction signature"}
    for entry in (report or {}).get("checks", []):
        if entry.get("branch") != champion:
            continue
        for verdict in entry.get("verdicts", []):
            family = verdict.get("family")
            for check in verdict.get("checks", []):
                if check.get("kind") != "method":
                    continue
                method_id = check["subject"]
                found[method_id] = {"isa": _isa_state(check["outcome"], method_id, family, registry),
                                    "family": family, "detail": str(check.get("detail", ""))[:300]}
    return found


def _isa_state(outcome: str, method_id: str, family: str | None, registry: Registry) -> str:
    if outcome == PASS:
        return ISA_PRESENT
    if outcome == FAIL:
        return ISA_MISSING
    try:
        signature = registry.method(method_id).families.get(family or "")
    except KeyError:  # an id the signatures do not know: nothing says it has no instruction of its own
        signature = None
    return ISA_NO_SIGNATURE if signature is not None and signature.no_evidence else ISA_UNKNOWN


def branches_isa(report: dict[str, Any] | None, branches: Sequence[str], declared: Sequence[str],
                 toolchain: type[Toolchain] | None = None) -> dict[str, dict[str, Any]]:
    """Per method id, its ISA evidence over the correct branches of an iteration without a promotion: `present` in
    one of them, else `missing` when some branch's dump lacks it, else what the checks said (`no signature`,
    `unknown`). `branches` names each branch's own state."""
    per_branch = {name: champion_isa(report, name, declared, toolchain) for name in branches}
    found: dict[str, dict[str, Any]] = {}
    for method_id in declared:
        states = {name: checks[method_id] for name, checks in per_branch.items() if method_id in checks}
        for wanted in (ISA_PRESENT, ISA_MISSING, ISA_NO_SIGNATURE):
            named = [name for name, check in states.items() if check["isa"] == wanted]
            if named:
                first = states[named[0]]
                found[method_id] = {**first, "branches": named,
                                    "detail": f"{', '.join(named)}: {first['detail']}"[:300]}
                break
    return found


def _without_champion(outcome: dict[str, Any], isa: dict[str, Any] | None = None) -> dict[str, Any]:
    """No promotion: the seed's rule first (a method whose expected ISA is missing from every correct branch that
    was checked was not implemented, whatever the timing), then the measurement."""
    if outcome["any_correct_branch"]:
        check = isa or {"isa": ISA_UNKNOWN, "detail": "no ISA check result for the correct branches"}
        if check["isa"] == ISA_MISSING:
            return {"bucket": IMPLEMENTATION_FAILED, "isa": check,
                    "note": f"expected ISA missing from the correct branches: {check['detail']}"[:400]}
        return {"bucket": INEFFECTIVE, "isa": check,
                "note": "correct branches were measured, none beat the current best beyond noise"}
    return {"bucket": INCONCLUSIVE, "note": "no branch built and passed correctness: the method was never measured"}


def bucket_from_ablation(result: dict[str, Any]) -> dict[str, Any]:
    """The state bucket of one ablated method: effective only when removing it slows the champion beyond noise."""
    verdict = result.get("outcome")
    if verdict == "helps":
        return {"bucket": EFFECTIVE, "slowdown_when_removed": result["slowdown_when_removed"],
                "slowdown_interval": result["slowdown_interval"]}
    if verdict in ("no measurable effect", "hurts"):
        return {"bucket": INEFFECTIVE, "note": f"removing it: {verdict}", "slowdown_interval":
                result.get("slowdown_interval")}
    if verdict == INCONCLUSIVE:
        return {"bucket": INCONCLUSIVE, "note": f"removing it: {result.get('note') or 'inconclusive'}",
                "slowdown_when_removed": result.get("slowdown_when_removed"),
                "slowdown_interval": result.get("slowdown_interval")}
    return {"bucket": INCONCLUSIVE, "note": f"ablated build {verdict}: {str(result.get('message', ''))[:300]}"}
