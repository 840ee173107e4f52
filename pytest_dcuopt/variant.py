"""A branch of a case on one toolchain, and the build stage that turns it into a loaded, isolated kernel.

`resolve` is the only place that builds: it imports the reference, parses the C ABI, builds
through the toolchain (and its cache), and starts the branch's isolated worker. Errors are kept
on the variant (a compile error fails every test of that branch alike, without rebuilding).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .case.buffers import resolve_shapes
from .case.cabi import Param, parse_solve_signature
from .case.model import Branch, KernelCase
from .case.reference import Reference, load_reference
from .errors import CaseError, CompileError, DcuOptError, SignatureError
from .report.records import BranchRecord
from .run.isolation import IsolatedKernel, WorkerSpec
from .toolchains.base import Artifact, Toolchain
from .toolchains.cache import BuildCache


@dataclass
class Variant:
    """One branch of one case on one toolchain, resolved lazily and at most once per process."""

    case: KernelCase
    toolchain: Toolchain
    branch: Branch
    record: BranchRecord
    reference: Reference | None = None
    params: tuple[Param, ...] = ()
    artifact: Artifact | None = None
    worker: IsolatedKernel | None = None
    setup_error: DcuOptError | None = None
    default_verified: bool = False
    failed_correctness: bool = False
    examples: int = 0
    last_failure: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return f"{self.case.name}/{self.toolchain.name}/{self.branch.name}"

    @property
    def resolved(self) -> bool:
        return self.worker is not None or self.setup_error is not None

    def shapes(self, dims: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
        """Element shape of every pointer parameter at `dims` ({} for contracts without a C signature)."""
        if not self.params:
            return {}
        assert self.reference is not None
        return resolve_shapes(self.params, self.reference.shapes, dims, str(self.branch.source))


@dataclass(frozen=True)
class BuildSettings:
    """What the build stage needs from the run's options."""

    cache: BuildCache
    arch: str | None
    extra_flags: tuple[str, ...]
    log_dir: Path
    timeout_s: float


def resolve(variant: Variant, settings: BuildSettings) -> None:
    """Build and load the branch once; on failure keep the error on the variant and its record."""
    if variant.resolved:
        return
    try:
        variant.reference = load_reference(variant.case.ref_path, variant.case.dims)
        if variant.toolchain.c_abi:
            text = variant.branch.source.read_text(errors="replace")
            variant.params = parse_solve_signature(text, str(variant.branch.source))
            check_scalars(variant)
        variant.artifact = variant.toolchain.build(variant.branch.source, settings.cache)
        variant.record.build = variant.artifact.to_json()
        log = settings.log_dir / f"{variant.label.replace('/', '__')}.log"
        spec = WorkerSpec(variant.label, variant.toolchain.name, settings.arch, settings.extra_flags,
                          variant.artifact, variant.params, log)
        variant.worker = IsolatedKernel(spec, settings.timeout_s)
    except CompileError as exc:
        variant.setup_error = exc
        variant.record.build = {"toolchain": variant.toolchain.name, **exc.result.to_json()}
        variant.record.error = {"kind": "compile error", "message": str(exc)}
    except (CaseError, SignatureError) as exc:
        variant.setup_error = exc
        variant.record.error = {"kind": "case error", "message": str(exc)}


def check_scalars(variant: Variant) -> None:
    """Every scalar parameter of `solve` needs a value: from dims.json or a declared input."""
    assert variant.reference is not None
    dims, declared = variant.case.dims, variant.reference.inputs
    for param in variant.params:
        if not param.pointer and param.name not in dims and param.name not in declared:
            raise CaseError(f"{variant.branch.source}: scalar parameter {param.name!r} has no value: add it to "
                            f"dims.json (dims: {sorted(dims)}).")
