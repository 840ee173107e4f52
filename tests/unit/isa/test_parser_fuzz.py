"""No ISA parser crashes on garbage or truncated input (Hypothesis).

Text parsers must return (possibly empty) results for any text; binary readers may only raise
`ElfError`, which callers turn into a tool error in the dump.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_dcuopt.isa import amdgcn, dcu, elf, sass
from pytest_dcuopt.isa.checks import evaluate
from pytest_dcuopt.isa.functions import split_asm, split_objdump
from pytest_dcuopt.isa.instruction_lines import parse_amdgcn, parse_sass, parse_x86
from pytest_dcuopt.isa.model import IsaDump
from pytest_dcuopt.isa.spec import IsaSpec
from tests.fuzz_settings import fuzz_settings

ISA = Path(__file__).parents[2] / "data" / "isa"
FUZZ = fuzz_settings()

SAMPLES = {path: path.read_text() for path in [
    ISA / "amdgcn/features.gfx90a.objdump.txt", ISA / "amdgcn/features.gfx906.s",
    ISA / "amdgcn/spill.gfx90a.remarks.txt",
    ISA / "dcu/recorded_gfx936.s", ISA / "dcu/assumed_dccobjdump_layout.txt", ISA / "x86/features.x86.objdump.txt",
    ISA / "sass/features.sm_80.sass.txt", ISA / "sass/features.sm_90.resources.txt",
]}
BINARY = (ISA / "amdgcn/vadd4.gfx90a.so").read_bytes()

TEXT_PARSERS: dict[str, Callable[[str], Any]] = {
    "parse_amdgcn": parse_amdgcn, "parse_x86": parse_x86, "parse_sass": parse_sass,
    "split_objdump": split_objdump, "split_asm": split_asm, "dccobjdump.split_listing": dcu.split_listing,
    "remark_resources": amdgcn.remark_resources,
    "asm_resources": lambda text: amdgcn.asm_resources(split_asm(text), text),
    "cuobjdump.split_sass": sass.split_sass, "cuobjdump.parse_resource_usage": sass.parse_resource_usage,
    "ptxas.parse_ptxas_verbose": sass.parse_ptxas_verbose,
}
BINARY_READERS: dict[str, Callable[[bytes], Any]] = {
    "sections": elf.sections, "notes": elf.notes, "unbundle": elf.unbundle, "amdgpu_metadata": elf.amdgpu_metadata,
    "code_objects": lambda blob: amdgcn.code_objects(blob, "gfx90a"),
    "metadata_resources": amdgcn.metadata_resources,
}


@st.composite
def mangled_sample(draw: st.DrawFn) -> str:
    """A real sample, cut at a random point and with random lines duplicated, dropped or garbled."""
    text = draw(st.sampled_from(sorted(SAMPLES.values())))
    lines = text.splitlines(keepends=True)[: draw(st.integers(0, 400))]
    for _ in range(draw(st.integers(0, 6))):
        if not lines:
            break
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "dup", "garble", "cut"]))
        if action == "drop":
            del lines[index]
        elif action == "dup":
            lines.insert(index, lines[index])
        elif action == "garble":
            lines[index] = draw(st.text(max_size=80)) + "\n"
        else:
            lines[index] = lines[index][: draw(st.integers(0, len(lines[index])))]
    return "".join(lines)


ANY_TEXT = st.one_of(st.text(max_size=400), mangled_sample())


@pytest.mark.parametrize("name", sorted(TEXT_PARSERS))
@FUZZ
@given(text=ANY_TEXT)
def test_text_parsers_never_crash(name: str, text: str) -> None:
    result = TEXT_PARSERS[name](text)
    assert isinstance(result, (list, dict))


@st.composite
def damaged_binary(draw: st.DrawFn) -> bytes:
    blob = bytearray(BINARY[: draw(st.integers(0, len(BINARY)))])
    for _ in range(draw(st.integers(0, 8))):
        if blob:
            blob[draw(st.integers(0, len(blob) - 1))] = draw(st.integers(0, 255))
    return bytes(blob)


def _prefixed(magic: bytes) -> st.SearchStrategy[bytes]:
    return st.binary(max_size=300).map(lambda tail: magic + tail)


ANY_BYTES = st.one_of(st.binary(max_size=300), damaged_binary(), _prefixed(b"\x7fELF\x02\x01"),
                      _prefixed(elf.BUNDLE_MAGIC), _prefixed(elf.COMPRESSED_BUNDLE_MAGIC))


@pytest.mark.parametrize("name", sorted(BINARY_READERS))
@FUZZ
@given(blob=ANY_BYTES)
def test_binary_readers_raise_only_elf_error(name: str, blob: bytes) -> None:
    try:
        BINARY_READERS[name](blob)
    except elf.ElfError:
        pass


@FUZZ
@given(data=st.binary(max_size=200))
def test_msgpack_decoder_raises_only_elf_error(data: bytes) -> None:
    try:
        elf._msgpack(data, 0, 0)
    except elf.ElfError:
        pass


@FUZZ
@given(text=ANY_TEXT, family=st.sampled_from(["x86", "amdgcn", "dcu", "sass"]))
def test_verdicts_on_garbage_dumps_never_crash(text: str, family: str) -> None:
    dump = IsaDump(family, None, "fuzz", {"f": text, "g": text[: len(text) // 2]})
    spec = IsaSpec.from_kwargs({"require": [r"\bv_add"], "forbid": ["@scratch_traffic"],
                                "methods": ["memory.lds_tiling"], "max_spills": 0, "function": "f*"})
    verdict = evaluate(spec, dump, "fuzz")
    assert verdict.outcome in ("pass", "fail", "inconclusive")
    assert verdict.message()
