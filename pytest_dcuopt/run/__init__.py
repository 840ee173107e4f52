"""The isolated worker process and what runs around it.

Stable: `isolation` (the worker and its supervisor) and `protocol` (the request and reply types)."""

__all__ = ["isolation", "protocol"]  # the stable submodules; the others may change
