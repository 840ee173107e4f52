"""Timing: how long to sample and what the samples mean, on the host clock and on device events.

Stable: `policy` (`TimingPolicy`, `summarize`), `host`, `device` (`measure_device`) and `device_timer`
(`DeviceTimer`, the interface a GPU runtime implements)."""

__all__ = ["policy", "host", "device", "device_timer"]  # the stable submodules; the others may change
