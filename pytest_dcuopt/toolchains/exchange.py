"""What a worker's snapshots leave off the reply pipe, and how the pytest process puts it back.

At real sizes a call's buffers are hundreds of MB (a 32M-element vector add: three buffers of 128 MB), and a
branch makes dozens of checked calls: correctness examples at the default dims, identical repeats, and the checked
calls around every timing. Sending every buffer of every call through the pipe and comparing it on the host cost
10-30 s per branch. Two things are not sent again:

* **Inputs the pytest process already holds.** Each input buffer of a snapshot is named by a digest of its name,
  type, shape and content (`buffer_digest`). A request lists the digests the session's `InputStore` holds; the
  worker leaves those buffers out, and `receive` puts them back from the store. The store is shared by every
  worker of the session, so the inputs of one (case, dims, seed) cross the pipe once, not once per branch and call.
* **Outputs already verified.** A call is named by a token over its dims and the digests of its inputs and outputs
  (`call_token`). Once a call's outputs matched the reference with no kernel problem (guards, const inputs), the
  pytest process keeps its token under its case (`VerifiedCalls`, kept by check/verify.py's reference cache:
  with the cache off, every call is compared); a request lists the case's tokens, and a worker
  whose call has a listed token sends no outputs and says so (`Snapshot.verified`): bit-identical outputs from the
  same inputs at the same dims of the same case were already compared. Outputs that differ in any bit (a race, a
  skipped call leaving junk, a result kept from other inputs) have another token and take the full path.

Both sides compute digests with the same functions (this module), so a key made from a digest the worker sent and
one made from an array the pytest process hashed itself are equal.
"""
from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
import xxhash

INPUT_STORE_ENV = "DCUOPT_INPUT_STORE_MB"  # 0: every snapshot carries its inputs
DEFAULT_INPUT_STORE_MB = 2048


@runtime_checkable
class Snapshot(Protocol):
    """The fields of toolchains.binding.Snapshot this module completes (binding.py imports this module)."""

    inputs: dict[str, np.ndarray]
    input_digests: dict[str, str]
    omitted_inputs: tuple[str, ...]


@dataclass(frozen=True)
class Exchange:
    """Sent with a `run` or `time` request: what the worker may leave out of its snapshots."""

    known_inputs: frozenset[str] = frozenset()  # input digests the pytest process holds
    verified: frozenset[str] = frozenset()  # call tokens of this case whose outputs matched the reference
    # Within one `time` reply, a call bit-identical to an earlier one of the same reply (the checked calls before the
    # first and after the last timed call, on the same inputs) is sent once: the pytest process compares the reply's
    # snapshots in order and stops at the first wrong one, so a later identical call has the earlier one's verdict.
    once_per_reply: bool = True

    def after(self, snapshots: Iterable[Snapshot]) -> Exchange:
        """This exchange, extended by the calls `snapshots` (taken earlier in the same reply) stand for. Their inputs
        are not added: the pytest process's store may not keep them (a buffer larger than the store), and the inputs
        of a reply's calls repeat little."""
        tokens = {token for snapshot in snapshots if (token := getattr(snapshot, "token", None))}
        if not self.once_per_reply or not tokens:
            return self
        return Exchange(self.known_inputs, self.verified | tokens, True)


def buffer_digest(name: str, dtype: str, array: np.ndarray) -> str:
    """A buffer's name, declared type, storage type, shape and bytes. XXH3-128: 8.3 GB/s on the H200's host against
    SHA-256's 1.25 GB/s (35 and 2 GB/s on the CPU box); the digests tell apart buffers of honest kernels, not
    adversaries, so a non-cryptographic 128-bit hash is enough."""
    contiguous = np.ascontiguousarray(array)
    digest = xxhash.xxh3_128(f"{name}:{dtype}:{contiguous.dtype.str}:{contiguous.shape};".encode())
    digest.update(contiguous.reshape(-1).view(np.uint8).data)
    return digest.hexdigest()


def call_token(dims: Mapping[str, Any], input_digests: Mapping[str, str], output_digests: Mapping[str, str]) -> str:
    """One call: its dims, and every input and output buffer by digest."""
    parts = [f"{k}={dims[k]!r}" for k in sorted(dims)]
    parts += [f"in:{k}={input_digests[k]}" for k in sorted(input_digests)]
    parts += [f"out:{k}={output_digests[k]}" for k in sorted(output_digests)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


class InputStore:
    """Input buffers by digest, least recently used first out, within `max_bytes`; read-only arrays (shared)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._arrays: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def nbytes(self) -> int:
        return sum(array.nbytes for array in self._arrays.values())

    def known(self) -> frozenset[str]:
        return frozenset(self._arrays)

    def get(self, digest: str) -> np.ndarray | None:
        array = self._arrays.get(digest)
        if array is not None:
            self._arrays.move_to_end(digest)
        return array

    def put(self, digest: str, array: np.ndarray) -> None:
        if digest in self._arrays or array.nbytes > self.max_bytes:
            return  # a buffer larger than the whole store is sent every time (correct, only slower)
        array.flags.writeable = False  # every snapshot of these inputs shares it
        self._arrays[digest] = array
        while self.nbytes > self.max_bytes:
            self._arrays.popitem(last=False)

    def complete(self, snapshot: Snapshot) -> Snapshot:
        """Put the inputs the worker left out back (from this store), and keep the inputs it sent."""
        for name in snapshot.omitted_inputs:
            digest = snapshot.input_digests[name]
            array = self.get(digest)
            if array is None:
                raise RuntimeError(f"the worker left input {name!r} out of its snapshot (digest {digest}) but the "
                                   "pytest process no longer holds it: a harness bug (the store must not drop what a "
                                   "request listed before the reply is read); please report it")
            snapshot.inputs[name] = array
        snapshot.omitted_inputs = ()
        for name, digest in snapshot.input_digests.items():
            if name in snapshot.inputs:
                self.put(digest, snapshot.inputs[name])
        return snapshot


class VerifiedCalls:
    """Call tokens whose outputs matched the reference, per case (a ref.py and its modification time)."""

    def __init__(self) -> None:
        self._tokens: dict[str, set[str]] = {}

    def tokens(self, case: str) -> frozenset[str]:
        return frozenset(self._tokens.get(case, ()))

    def add(self, case: str, token: str) -> None:
        self._tokens.setdefault(case, set()).add(token)


_INPUTS: InputStore | None = None


def input_store_bytes(environ: Mapping[str, str]) -> int:
    raw = environ.get(INPUT_STORE_ENV, "").strip()
    if not raw:
        return DEFAULT_INPUT_STORE_MB << 20
    try:
        megabytes = float(raw)
    except ValueError:
        raise ValueError(f"{INPUT_STORE_ENV}={raw!r} is not a number of MB; give e.g. 2048, or 0 to send every "
                         "snapshot's inputs through the pipe") from None
    if megabytes < 0:
        raise ValueError(f"{INPUT_STORE_ENV}={raw!r} is negative; give a size in MB, or 0 to turn the store off")
    return int(megabytes * (1 << 20))


def shared_input_store() -> InputStore:
    """The pytest process's input store (size from $DCUOPT_INPUT_STORE_MB, default 2048)."""
    global _INPUTS
    if _INPUTS is None:
        _INPUTS = InputStore(input_store_bytes(os.environ))
    return _INPUTS


class DrawnInputs:
    """Which inputs (by digest) a binding's `draw_key` drew, so the next branch's worker with the same key is handed
    them from the input store instead of drawing them again. At real sizes every branch binds the same boundary and
    default dims with seed 0: drawing 20M normal values takes longer than sending them through the pipe."""

    def __init__(self) -> None:
        self._digests: dict[Hashable, dict[str, str]] = {}

    def note(self, key: Hashable, input_digests: Mapping[str, str]) -> None:
        if input_digests:
            self._digests[key] = dict(input_digests)

    def arrays(self, key: Hashable, store: InputStore) -> dict[str, np.ndarray]:
        """The inputs drawn for `key`, every one still in `store`; {} when any is not (the worker then draws)."""
        found = {name: store.get(digest) for name, digest in self._digests.get(key, {}).items()}
        return {} if any(array is None for array in found.values()) else cast("dict[str, np.ndarray]", found)


_DRAWN = DrawnInputs()


def shared_drawn_inputs() -> DrawnInputs:
    return _DRAWN


def receive(result: Any) -> Any:
    """Complete every snapshot in a `run` reply (a Snapshot) or a `time` reply (its checks) from the store."""
    store = shared_input_store()
    if isinstance(result, Snapshot):
        store.complete(result)
    elif isinstance(result, dict):
        for check in result.get("checks") or ():
            if isinstance(check.get("snapshot"), Snapshot):
                store.complete(check["snapshot"])
    return result
