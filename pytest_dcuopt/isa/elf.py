"""Read AMDGPU code objects straight from a HIP shared object, with no ROCm tools.

Three small readers, all pure Python and all raising `ElfError` (never anything else) on
truncated or malformed input:

* ELF64 sections and notes (`sections`, `notes`),
* clang offload bundles, the `.hip_fatbin` payload (`unbundle`),
* the AMDGPU metadata note (MessagePack, `NT_AMDGPU_METADATA`, code object v3+).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_BUNDLE_MAGIC = b"CCOB"
NT_AMDGPU_METADATA = 32
_ELF_MAGIC = b"\x7fELF"
_SHT_NOTE = 7


class ElfError(ValueError):
    """The bytes are not what the reader expected (truncated, not ELF, unknown layout)."""


@dataclass(frozen=True)
class Note:
    owner: str
    type: int
    desc: bytes


def _unpack(fmt: str, data: bytes, offset: int) -> tuple[Any, ...]:
    size = struct.calcsize(fmt)
    if offset < 0 or offset + size > len(data):
        raise ElfError(f"truncated: need {size} bytes at offset {offset}, have {len(data)} in total")
    return struct.unpack_from(fmt, data, offset)


def _slice(data: bytes, offset: int, size: int, what: str) -> bytes:
    if offset < 0 or size < 0 or offset + size > len(data):
        raise ElfError(f"{what} lies outside the file (offset {offset}, size {size}, file {len(data)} bytes)")
    return data[offset:offset + size]


def sections(data: bytes) -> dict[str, tuple[int, bytes]]:
    """{section name: (sh_type, contents)} of a little-endian ELF64 file."""
    if data[:4] != _ELF_MAGIC:
        raise ElfError("not an ELF file (no \\x7fELF magic)")
    if data[4:6] != b"\x02\x01":
        raise ElfError(f"only little-endian ELF64 is supported (EI_CLASS/EI_DATA = {data[4:6]!r})")
    shoff, = _unpack("<Q", data, 0x28)
    shentsize, shnum, shstrndx = _unpack("<HHH", data, 0x3A)
    if shnum == 0 or shentsize < 64 or shstrndx >= shnum:
        raise ElfError(f"no usable section table (shnum={shnum}, shentsize={shentsize}, shstrndx={shstrndx})")
    headers = [_unpack("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = _slice(data, headers[shstrndx][4], headers[shstrndx][5], "the section name table")
    found: dict[str, tuple[int, bytes]] = {}
    for name_offset, sh_type, _, _, offset, size, *_ in headers:
        name = (names[name_offset:names.find(b"\0", name_offset)].decode("utf-8", "replace")
                if name_offset < len(names) else "")
        found[name] = (sh_type, b"" if sh_type == 8 else _slice(data, offset, size, f"section {name!r}"))  # 8 = NOBITS
    return found


def notes(data: bytes) -> list[Note]:
    """Every note in the SHT_NOTE sections of an ELF64 file."""
    found: list[Note] = []
    for sh_type, contents in sections(data).values():
        if sh_type == _SHT_NOTE:
            found += _parse_notes(contents)
    return found


def _parse_notes(blob: bytes) -> list[Note]:
    found, offset = [], 0
    while offset + 12 <= len(blob):
        namesz, descsz, note_type = _unpack("<III", blob, offset)
        offset += 12
        name = _slice(blob, offset, namesz, "a note name")
        offset += (namesz + 3) & ~3
        desc = _slice(blob, offset, descsz, "a note descriptor")
        offset += (descsz + 3) & ~3
        found.append(Note(name.rstrip(b"\0").decode("utf-8", "replace"), note_type, desc))
    return found


def unbundle(blob: bytes) -> dict[str, bytes]:
    """{offload target triple: code object} of an uncompressed clang offload bundle."""
    if blob.startswith(COMPRESSED_BUNDLE_MAGIC):
        raise ElfError("the offload bundle is compressed (CCOB, built with --offload-compress); "
                       "unbundle it with `clang-offload-bundler --unbundle` first")
    if not blob.startswith(BUNDLE_MAGIC):
        raise ElfError(f"not a clang offload bundle (starts with {blob[:24]!r}, expected {BUNDLE_MAGIC!r})")
    count, = _unpack("<Q", blob, len(BUNDLE_MAGIC))
    if count > 4096:
        raise ElfError(f"implausible offload bundle entry count {count}")
    offset, entries = len(BUNDLE_MAGIC) + 8, {}
    for _ in range(count):
        start, size, triple_size = _unpack("<QQQ", blob, offset)
        offset += 24
        triple = _slice(blob, offset, triple_size, "a bundle triple").decode("utf-8", "replace")
        offset += triple_size
        entries[triple] = _slice(blob, start, size, f"bundle entry {triple!r}")
    return entries


def amdgpu_metadata(code_object: bytes) -> dict[str, Any]:
    """The decoded `NT_AMDGPU_METADATA` note (`amdhsa.kernels`, `amdhsa.target`, ...)."""
    for note in notes(code_object):
        if note.owner == "AMDGPU" and note.type == NT_AMDGPU_METADATA:
            value, _ = _msgpack(note.desc, 0, 0)
            if not isinstance(value, dict):
                raise ElfError(f"AMDGPU metadata is a {type(value).__name__}, expected a map")
            return value
    raise ElfError("no AMDGPU metadata note (NT_AMDGPU_METADATA); code object v2 or not an AMDGPU object")


# A minimal MessagePack decoder: the subset the AMDGPU metadata uses (and the rest, for safety).
_FIXED = {0xC0: None, 0xC2: False, 0xC3: True}
_INTS = {0xCC: "B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: "b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
         0xCA: ">f", 0xCB: ">d"}
_SIZED = {0xD9: ("B", "str"), 0xDA: (">H", "str"), 0xDB: (">I", "str"), 0xC4: ("B", "bin"), 0xC5: (">H", "bin"),
          0xC6: (">I", "bin"), 0xDC: (">H", "array"), 0xDD: (">I", "array"), 0xDE: (">H", "map"), 0xDF: (">I", "map")}


def _msgpack(data: bytes, offset: int, depth: int) -> tuple[Any, int]:
    if depth > 64:
        raise ElfError("MessagePack nesting deeper than 64 levels")
    byte, = _unpack("B", data, offset)
    offset += 1
    if byte <= 0x7F:
        return byte, offset
    if byte >= 0xE0:
        return byte - 0x100, offset
    if byte in _FIXED:
        return _FIXED[byte], offset
    if byte in _INTS:
        fmt = _INTS[byte]
        return _unpack(fmt, data, offset)[0], offset + struct.calcsize(fmt)
    if 0xA0 <= byte <= 0xBF:
        return _msgpack_sized(data, offset, byte & 0x1F, "str", depth)
    if 0x90 <= byte <= 0x9F:
        return _msgpack_sized(data, offset, byte & 0x0F, "array", depth)
    if 0x80 <= byte <= 0x8F:
        return _msgpack_sized(data, offset, byte & 0x0F, "map", depth)
    if byte in _SIZED:
        fmt, kind = _SIZED[byte]
        size, = _unpack(fmt, data, offset)
        return _msgpack_sized(data, offset + struct.calcsize(fmt), size, kind, depth)
    raise ElfError(f"unsupported MessagePack type byte 0x{byte:02x} at offset {offset - 1}")


def _msgpack_sized(data: bytes, offset: int, size: int, kind: str, depth: int) -> tuple[Any, int]:
    if kind in ("str", "bin"):
        raw = _slice(data, offset, size, f"a MessagePack {kind}")
        return (raw.decode("utf-8", "replace") if kind == "str" else raw), offset + size
    if size > len(data) - offset:
        raise ElfError(f"MessagePack {kind} of {size} items cannot fit in {len(data) - offset} remaining bytes")
    if kind == "array":
        items = []
        for _ in range(size):
            item, offset = _msgpack(data, offset, depth + 1)
            items.append(item)
        return items, offset
    mapping: dict[Any, Any] = {}
    for _ in range(size):
        key, offset = _msgpack(data, offset, depth + 1)
        value, offset = _msgpack(data, offset, depth + 1)
        mapping[key if isinstance(key, (str, int, float, bool, type(None))) else repr(key)] = value
    return mapping, offset
