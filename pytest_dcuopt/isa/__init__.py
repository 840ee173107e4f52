"""ISA checks: per-function disassembly of every family (x86, AMDGCN, Hygon DCU, NVIDIA SASS), the
`isa` marker's specs and verdicts, and the signature registry (references/isa_signatures.json).

Modules: model (Instruction, IsaDump), lines (instruction parsers per family), functions (objdump/.s
splitting), elf (code objects out of HIP .so files), amdgcn (AMD resources), dcu (dccobjdump), sass
(cuobjdump; the cuda toolchain's), hip_dump, spec (IsaSpec), checks (verdicts), signatures, runner.
Imports here stay light: toolchains import submodules directly.
"""
