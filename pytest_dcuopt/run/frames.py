"""Frames on a worker's pipes: how one message (pickle protocol 5, arrays out of band) is written and read, and
the checks that tell bytes a kernel wrote into the channel from a frame."""
from __future__ import annotations

import pickle
import struct
from typing import IO, Any, cast

# A frame: a magic tag, a header (the pickle's length, the number of out-of-band buffers), each buffer's length, the
# pickle (protocol 5), then each buffer's raw bytes. Contiguous arrays travel out of band: written from their own
# memory and read straight into fresh buffers, so a frame of large arrays is never copied whole on either side. The
# tag makes bytes that a kernel wrote into a descriptor it does not own (the reply pipe) show as what they are instead
# of as a length of 2**64 - 1.
_MAGIC = b"dcuopt2\n"
_HEADER = struct.Struct("<8sQQ")
_LENGTH = struct.Struct("<Q")
MAX_FRAME_BYTES = 1 << 40
MAX_FRAME_BUFFERS = 1 << 20


class FrameError(ValueError):
    """Bytes on the channel that are not a frame: something other than the worker wrote into it."""


def _read_into(stream: IO[bytes], view: memoryview) -> bool:
    """Fill `view` from `stream`; False when the stream ends first."""
    readinto = cast(Any, stream).readinto
    filled, size = 0, len(view)
    while filled < size:
        count = readinto(view[filled:])
        if not count:
            return False
        filled += count
    return True


class _FrameUnpickler(pickle.Unpickler):
    """Unpickles a frame's payload with its out-of-band buffers; every array comes out writable.

    A buffer that was read-only at the sender arrives as a read-only view (pickle's READONLY_BUFFER) of the fresh
    buffer `read_frame` read it into; numpy's rebuild is handed that fresh buffer itself, which no one else holds.
    """

    def __init__(self, payload: bytes, buffers: list[Any]) -> None:
        import io

        super().__init__(io.BytesIO(payload), buffers=buffers)
        self._fresh = {id(buffer) for buffer in buffers}

    def find_class(self, module: str, name: str, /) -> Any:
        found = super().find_class(module, name)
        if name != "_frombuffer" or not module.startswith("numpy"):
            return found
        fresh = self._fresh

        def rebuild(buffer: Any, *args: Any) -> Any:
            if isinstance(buffer, memoryview) and id(buffer.obj) in fresh:
                buffer = buffer.obj
            return found(buffer, *args)

        return rebuild


def read_frame(stream: IO[bytes]) -> Any:
    """The next message; None at the end of the stream (the writer closed it, or died mid-frame).

    Its arrays are fresh, writable and belong to the caller: each out-of-band buffer is read into its own new memory.
    """
    import numpy as np

    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    magic, pickled, count = _HEADER.unpack(header)
    if magic != _MAGIC:
        raise FrameError(f"bytes that are not a frame header: {header[:16]!r}")
    if count > MAX_FRAME_BUFFERS or pickled > MAX_FRAME_BYTES:
        raise FrameError(f"a frame header announcing {pickled} bytes and {count} buffers")
    table = stream.read(count * _LENGTH.size) if count else b""
    if len(table) < count * _LENGTH.size:
        return None
    sizes = [size for (size,) in _LENGTH.iter_unpack(table)]
    total = pickled + sum(sizes)
    if total > MAX_FRAME_BYTES:
        raise FrameError(f"a frame header announcing {total} bytes")
    payload = stream.read(pickled)
    if len(payload) < pickled:
        return None
    buffers = []
    for size in sizes:
        buffer = np.empty(size, dtype=np.uint8)  # not zeroed: its pages are touched once, by the read
        if not _read_into(stream, buffer.data):
            return None
        buffers.append(buffer)
    try:
        return _FrameUnpickler(payload, buffers).load()
    except Exception as exc:  # any bytes can reach unpickling: every error means the same thing here
        raise FrameError(f"a frame whose payload does not unpickle ({type(exc).__name__}: {exc})") from None


def write_frame(stream: IO[bytes], message: Any) -> None:
    views: list[memoryview] = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        view = buffer.raw() if memoryview(buffer).contiguous else None
        if view is None:
            return True  # in the pickle
        views.append(view)
        return False

    payload = pickle.dumps(message, protocol=5, buffer_callback=out_of_band)
    stream.write(_HEADER.pack(_MAGIC, len(payload), len(views)) + b"".join(_LENGTH.pack(view.nbytes) for view in views))
    stream.write(payload)
    for view in views:
        stream.write(view)  # straight from the array's memory
    stream.flush()
