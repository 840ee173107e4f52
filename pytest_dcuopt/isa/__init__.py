"""ISA checks: per-function disassembly of every family (x86, AMDGCN, Hygon DCU, NVIDIA SASS), the
`isa` marker's specs and verdicts, and the signature registry (isa/data/isa_signatures.json).

Modules: model (Instruction, IsaDump, ResourceUsage), instruction_lines (instruction parsers per family), functions
(splitting listings and .s files into functions), symbols (demangling, bare names), elf (code objects out
of HIP .so files), x86 (objdump on an ELF: every x86 toolchain's reader), amdgcn (AMD resources), dcu
(dccobjdump), sass (cuobjdump and ptxas reports), spec
(IsaSpec), checks (verdicts), signature_registry (the registry). The hip toolchain's dump is toolchains/hip_isa.py;
the observer that runs the checks is observe/isa.py. Imports here stay light: toolchains import submodules
directly.

Stable: the modules in `__all__`.
"""

__all__ = ["model", "spec", "checks", "signature_registry", "instruction_lines"]  # the others may change
