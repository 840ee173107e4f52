"""The CPU cache flush's size (timing.host): read from a fixed probe curve, kept per machine boot, overridden by
$DCUOPT_CPU_FLUSH_MB, and named in the timing record."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_dcuopt.timing import host
from pytest_dcuopt.timing.policy import TimingPolicy

MIB = 1024 * 1024
# Seconds per byte of a pass, as probed on a 2-core EPYC VM that reports 32 MiB of L3 (picoseconds, rounded):
# flat through 16 MiB, dearer at 32 and 64 MiB, memory's speed from 128 MiB.
EPYC_VM = [(int(mib * MIB), ps * 1e-12) for mib, ps in
           ((0.25, 11.2), (0.5, 13.1), (1, 11.6), (2, 14.4), (4, 10.3), (8, 13.0), (16, 11.2), (32, 27.0),
            (64, 36.6), (128, 66.4), (256, 67.5), (512, 38.6), (1024, 38.8))]


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(host.FLUSH_ENV, raising=False)
    path = tmp_path / "probe.json"
    monkeypatch.setenv(host.PROBE_FILE_ENV, str(path))
    return path


def keep(path: Path, reported: int, curve: list[tuple[int, float]]) -> None:
    path.write_text(json.dumps({"key": host.machine_key(reported), "curve": curve}))


def test_the_effective_cache_is_the_last_size_before_the_step() -> None:
    assert host.effective_cache_bytes(EPYC_VM) == 64 * MIB
    assert host.effective_cache_bytes(EPYC_VM[:9]) == 16 * MIB  # a probe ending at 64 MiB sees a smaller step
    flat = [(size, 12e-12 * (1 + 0.1 * (i % 2))) for i, (size, _) in enumerate(EPYC_VM)]
    assert host.effective_cache_bytes(flat) is None  # no step: the cache is beyond the probe (or too noisy)
    assert host.effective_cache_bytes([(MIB, 60e-12), (2 * MIB, 61e-12), (4 * MIB, 10e-12)]) is None
    assert host.effective_cache_bytes(EPYC_VM[:1]) is None


def test_a_vm_reporting_more_cache_than_it_holds_flushes_what_it_measured(probe: Path) -> None:
    reported = 260 * MIB
    keep(probe, reported, EPYC_VM)
    chosen = host.choose_flush_size(reported)
    assert chosen.bytes == 2 * 64 * MIB  # not 2 x 260 MiB
    assert "measured effective cache (64 MiB, below the reported 260 MiB" in chosen.source


def test_the_reported_cache_bounds_the_flush_when_it_is_smaller(probe: Path) -> None:
    keep(probe, 32 * MIB, EPYC_VM)
    chosen = host.choose_flush_size(32 * MIB)
    assert chosen.bytes == 64 * MIB and "reported last-level cache (32 MiB; 64 MiB measured)" in chosen.source


def test_a_probe_of_another_boot_or_cache_is_not_reused(probe: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    probe.write_text(json.dumps({"key": "another-boot|1", "curve": [[MIB, 1e-12], [2 * MIB, 9e-12]]}))
    probed: list[int] = []

    def fake_probe(max_bytes: int) -> list[tuple[int, float]]:
        probed.append(max_bytes)
        return EPYC_VM

    monkeypatch.setattr(host, "probe_curve", fake_probe)
    assert host.choose_flush_size(260 * MIB).bytes == 128 * MIB
    assert probed == [host.PROBE_MAX_BYTES]  # 4 x 260 MiB, capped
    assert json.loads(probe.read_text())["key"] == host.machine_key(260 * MIB)  # kept for the next process
    host.choose_flush_size(260 * MIB)
    assert len(probed) == 1


def test_the_environment_sets_the_size_and_a_bad_value_names_the_fix(probe: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(host.FLUSH_ENV, "48")
    assert host.choose_flush_size(260 * MIB) == host.FlushSize(48 * MIB, "$DCUOPT_CPU_FLUSH_MB=48")
    assert not probe.exists()  # nothing probed
    for bad in ("0", "-3", "lots", "nan"):
        monkeypatch.setenv(host.FLUSH_ENV, bad)
        with pytest.raises(ValueError, match=rf"DCUOPT_CPU_FLUSH_MB='{bad}' is not a positive number of MiB.*unset"):
            host.choose_flush_size(260 * MIB)


def test_the_probe_reads_a_real_curve() -> None:
    curve = host.probe_curve(1 * MIB)
    assert [size for size, _ in curve] == [256 * 1024, 512 * 1024, MIB]
    assert all(cost > 0 for _, cost in curve)


def test_the_timing_record_says_how_big_the_flush_was_and_why(probe: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(host.FLUSH_ENV, "2")
    monkeypatch.setattr(host, "_CHOSEN", [])
    samples = host.measure_host(lambda: None, TimingPolicy(warmup_s=0.0, min_samples=3, max_time_s=0.05))
    assert samples.extra == {"flush_bytes": 2 * MIB, "flush_source": "$DCUOPT_CPU_FLUSH_MB=2"}
    assert samples.mode == "cold" and len(samples.seconds) >= 3


def test_the_flush_buffer_is_mapped_before_sampling_starts(probe: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh buffer's first pass pays a page fault per page; it must not be charged to the sampling budget."""
    monkeypatch.setenv(host.FLUSH_ENV, "1")
    monkeypatch.setattr(host, "_CHOSEN", [])
    flusher = host.CacheFlusher()
    buffer = flusher._buffer
    assert buffer.nbytes == MIB and float(buffer.min()) == float(buffer.max()) == 1.0  # written once already
