"""The correctness stage, and the checks the other stages ask of it.

Stable: `correctness` (the correctness flow, `run_correctness`), `checked_calls` (one checked call,
`checked_call`; a timing
reply's checked calls, `check_timing_reply`, handed to bench/ as `TIMING_REPLY_CHECK`), `before_timing`
(`ready_to_time`, `verify_default`, `verify_point`: what a benchmark checks before it times) and `compare`
(tolerances, `compare`, `reproduce_command`). `verdicts` is the one writer of a branch's verdicts."""

__all__ = ["correctness", "checked_calls", "before_timing", "compare"]  # the stable submodules; the others may change
