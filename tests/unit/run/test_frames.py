"""Frames on the worker's pipes (run/frames.py): pickle protocol 5, arrays out of band, the channel's safety checks."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from typing import Any

import numpy as np
import pytest

from pytest_dcuopt.run import frames
from pytest_dcuopt.run.frames import MAX_FRAME_BUFFERS, MAX_FRAME_BYTES, FrameError, read_frame, write_frame

# Builds the same message in this process and in a writer subprocess.
MESSAGE_CODE = """
import numpy as np

def message():
    rng = np.random.default_rng(7)
    big = rng.standard_normal(1 << 20, dtype=np.float32)  # 4 MB: many pipe buffers, short reads
    grid = rng.standard_normal((64, 48))
    readonly = np.arange(1000, dtype=np.int64)
    readonly.flags.writeable = False
    return {
        "ok": True,
        "result": {
            "outputs": {"y": big, "grid_f": np.asfortranarray(grid), "every_other": big[::2],
                        "columns": grid[:, ::3], "transposed": grid.T[:10],
                        "axes_permuted": np.arange(24.0).reshape(2, 3, 4).transpose(1, 0, 2)},
            "zero": [np.zeros(0, np.float32), np.empty((3, 0), np.int16), np.empty((0, 5), order="F")],
            "dtypes": tuple(rng.integers(-100, 100, 257).astype(dtype)
                            for dtype in ("int8", "uint16", "int64", "float16", "float64", "complex64", "bool")),
            "scalar": np.array(3.5, np.float32),
            "readonly": readonly,
            "record": np.array([(1, 2.0), (3, 4.0)], dtype=[("a", "i4"), ("b", "f8")]),
            "objects": np.array([{"k": 1}, "text", None], dtype=object),
            "blob": b"\\x00" * 100_000, "mutable_blob": bytearray(b"xyz" * 1000), "text": "ok", "none": None,
        },
    }
"""
namespace: dict[str, Any] = {}
exec(MESSAGE_CODE, namespace)
message = namespace["message"]


def frame_bytes(msg: Any) -> bytes:
    out = io.BytesIO()
    write_frame(out, msg)
    return out.getvalue()


def through_thread_pipe(*messages: Any) -> list[Any]:
    """Write each message from a thread into a real pipe, read them back here; then read the end of the stream."""
    read_fd, write_fd = os.pipe()

    def write() -> None:
        with os.fdopen(write_fd, "wb") as stream:
            for msg in messages:
                write_frame(stream, msg)

    writer = threading.Thread(target=write)
    writer.start()
    with os.fdopen(read_fd, "rb") as stream:
        got = [read_frame(stream) for _ in messages]
        assert read_frame(stream) is None
    writer.join()
    return got


def assert_same(got: Any, want: Any) -> None:
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray)
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype == object:
            assert got.tolist() == want.tolist()
        else:
            assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
        assert got.flags.writeable, "arrays that come out of a frame are the caller's to modify"
        if want.size > 1 and want.ndim > 1 and want.flags.f_contiguous and not want.flags.c_contiguous:
            assert got.flags.f_contiguous
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys()
        for key in want:
            assert_same(got[key], want[key])
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for got_item, want_item in zip(got, want, strict=True):
            assert_same(got_item, want_item)
    else:
        assert type(got) is type(want) and got == want


def all_arrays(value: Any) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [array for item in value for array in all_arrays(item)]
    return []


def test_nested_message_round_trips_through_a_pipe_between_threads() -> None:
    want = message()
    first, second = through_thread_pipe(want, {"op": "run", "n": 2})
    assert_same(first, want)
    assert second == {"op": "run", "n": 2}


def test_nested_message_round_trips_through_a_pipe_between_processes() -> None:
    code = MESSAGE_CODE + ("import sys\nfrom pytest_dcuopt.run.frames import write_frame\n"
                           "write_frame(sys.stdout.buffer, message())\nwrite_frame(sys.stdout.buffer, 'second')\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    try:
        got = read_frame(proc.stdout)
        assert read_frame(proc.stdout) == "second"
        assert read_frame(proc.stdout) is None
    finally:
        proc.stdout.close()
        assert proc.wait(timeout=60) == 0
    assert_same(got, message())


def test_arrays_read_from_a_frame_are_writable_and_independent() -> None:
    want = message()
    got, = through_thread_pipe(want)
    arrays = [array for array in all_arrays(got) if array.size and array.dtype != object]
    assert len(arrays) >= 10
    for array in arrays:
        last = array.flat[-1].copy()
        array[...] = last  # the caller may write into any of them
        assert np.all(array == last)
    for i, one in enumerate(arrays):
        for other in arrays[i + 1:]:
            assert not np.shares_memory(one, other)
    assert got["result"]["readonly"].flags.writeable  # read-only at the sender: still a fresh, writable copy here


def test_contiguous_arrays_travel_out_of_band_and_others_in_the_pickle() -> None:
    big = np.arange(1 << 18, dtype=np.float32)
    frame = frame_bytes({"c": big, "f": np.asfortranarray(np.ones((8, 9))), "strided": big[::4], "empty": big[:0]})
    _, pickled, count = frames._HEADER.unpack_from(frame)
    sizes = [size for (size,) in frames._LENGTH.iter_unpack(frame[frames._HEADER.size:][:count * 8])]
    assert big.nbytes in sizes and 8 * 9 * 8 in sizes  # C and Fortran order: raw, out of band
    assert pickled > big.nbytes // 4  # the strided view is copied into the pickle
    assert len(frame) == frames._HEADER.size + 8 * count + pickled + sum(sizes)


def test_end_of_stream_and_truncated_frames_read_as_none() -> None:
    frame = frame_bytes({"a": np.arange(5000, dtype=np.float64), "b": [np.ones(3, np.int8), "x"]})
    assert read_frame(io.BytesIO(b"")) is None
    _, pickled, count = frames._HEADER.unpack_from(frame)
    header_end = frames._HEADER.size + 8 * count
    cuts = {1, 8, frames._HEADER.size - 1, frames._HEADER.size + 3, header_end, header_end + pickled // 2,
            header_end + pickled, header_end + pickled + 100, len(frame) - 5, len(frame) - 1}
    for cut in sorted(cuts):
        assert read_frame(io.BytesIO(frame[:cut])) is None, cut
    assert read_frame(io.BytesIO(frame)) is not None


def test_a_writer_that_dies_mid_frame_reads_as_none() -> None:
    frame = frame_bytes({"y": np.arange(1 << 20, dtype=np.float32)})
    read_fd, write_fd = os.pipe()

    def write_part() -> None:
        with os.fdopen(write_fd, "wb") as stream:
            stream.write(frame[: len(frame) * 2 // 3])

    writer = threading.Thread(target=write_part)
    writer.start()
    with os.fdopen(read_fd, "rb") as stream:
        assert read_frame(stream) is None
    writer.join()


@pytest.mark.parametrize("junk", [b"\xff" * 64, b"hello from a kernel printf\n" * 3, b"\x00" * 40])
def test_junk_on_the_channel_is_a_frame_error(junk: bytes) -> None:
    with pytest.raises(FrameError, match="bytes that are not a frame header"):
        read_frame(io.BytesIO(junk))


def test_junk_after_a_good_frame_is_a_frame_error_at_the_next_read() -> None:
    stream = io.BytesIO(frame_bytes({"ok": True}) + b"\xff" * 64)
    assert read_frame(stream) == {"ok": True}
    with pytest.raises(FrameError):
        read_frame(stream)


def test_oversize_headers_are_frame_errors() -> None:
    magic = frame_bytes(None)[:8]
    header, length = frames._HEADER, frames._LENGTH
    too_long_pickle = header.pack(magic, MAX_FRAME_BYTES + 1, 0)
    too_many_buffers = header.pack(magic, 10, MAX_FRAME_BUFFERS + 1)
    too_large_in_total = header.pack(magic, 10, 2) + length.pack(MAX_FRAME_BYTES // 2) * 2
    for frame in (too_long_pickle, too_many_buffers, too_large_in_total, header.pack(magic, 2**64 - 1, 2**64 - 1)):
        with pytest.raises(FrameError, match="a frame header announcing"):
            read_frame(io.BytesIO(frame + b"\x00" * 64))


def test_a_payload_that_does_not_unpickle_is_a_frame_error() -> None:
    garbage = b"\x80\x05not a pickle at all"
    frame = frames._HEADER.pack(frame_bytes(None)[:8], len(garbage), 0) + garbage
    with pytest.raises(FrameError, match="does not unpickle"):
        read_frame(io.BytesIO(frame))
    # A pickle that asks for more out-of-band buffers than the frame carries.
    payload = frame_bytes(np.arange(10))
    _, pickled, _ = frames._HEADER.unpack_from(payload)
    start = frames._HEADER.size + 8
    missing = frames._HEADER.pack(payload[:8], pickled, 0) + payload[start:start + pickled]
    with pytest.raises(FrameError, match="does not unpickle"):
        read_frame(io.BytesIO(missing))
