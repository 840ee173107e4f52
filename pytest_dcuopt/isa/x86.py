"""The x86 family's reader: per-function x86-64 text of an ELF file (the shared object a host toolchain builds),
from `objdump -d -M intel`. Any toolchain whose `isa_family` is "x86" gets it as its `disassemble`
(toolchains/base.py `FAMILY_DISASSEMBLERS`), so its kernels meet the x86 signatures and `isa` marks as written."""
from __future__ import annotations

import re
from pathlib import Path

from ..external_tools import run_tool, which
from .functions import split_objdump

# Functions the C runtime adds to every shared object; never part of a kernel's ISA.
RUNTIME_SYMBOLS = re.compile(r"^(\.plt.*|\.init|\.fini|_init|_fini|frame_dummy|register_tm_clones|"
                             r"deregister_tm_clones|__do_global_dtors_aux|__cxa_finalize@plt|.*@plt|_start)$")


def disassemble_elf(path: Path) -> dict[str, str]:
    """{symbol: its x86-64 text in Intel syntax}, the C runtime's own functions left out; {} when objdump is not
    on PATH or fails (the ISA observer then says that no functions came back)."""
    objdump = which("objdump")
    if objdump is None:
        return {}
    result = run_tool([objdump, "-d", "--no-show-raw-insn", "-M", "intel", path], timeout=120)
    if not result.ok:
        return {}
    return {name: body for name, body in split_objdump(result.stdout).items() if not RUNTIME_SYMBOLS.match(name)}
