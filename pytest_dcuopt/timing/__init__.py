"""Timing: how long to sample and what the samples mean, on the host clock and on device events.

Stable: `policy` (`TimingPolicy`, `summarize`), `host`, `device` (`measure_device`) and `backend`
(`DeviceBackend`, the interface a GPU runtime implements)."""

__all__ = ["policy", "host", "device", "backend"]  # the stable submodules; the others may change
