"""The `--dcuopt-*` options: their names as constants, typed converters that refuse a bad value up front, and
`add_options`, the one option group with each default documented in its help."""
from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .toolchains.exchange import RUN_SEED_BITS

TOOLCHAIN_OPTION = "--dcuopt-toolchain"
DEPRECATED_BACKEND_OPTION = "--dcuopt-backend"  # the old name of --dcuopt-toolchain, kept as an alias
ARCH_OPTION = "--dcuopt-arch"
FLAGS_OPTION = "--dcuopt-flags"
RUN_DIR_OPTION = "--dcuopt-run-dir"
CACHE_DIR_OPTION = "--dcuopt-cache-dir"
TIMEOUT_OPTION = "--dcuopt-timeout"
EXAMPLES_OPTION = "--dcuopt-examples"
PROFILE_OPTION = "--dcuopt-hypothesis-profile"
DIMS_OPTION = "--dcuopt-dims"
SEED_OPTION = "--dcuopt-seed"
INPUT_SET_OPTION = "--dcuopt-input-set"
RUN_SEED_OPTION = "--dcuopt-run-seed"
CHECK_EVERY_CALL_OPTION = "--dcuopt-check-every-call"
MIN_SAMPLES_OPTION = "--dcuopt-min-samples"
MAX_TIME_OPTION = "--dcuopt-max-time"
WARMUP_OPTION = "--dcuopt-warmup"
NOISE_OPTION = "--dcuopt-noise"
HOT_OPTION = "--dcuopt-hot"
ALLOW_IMPLAUSIBLE_OPTION = "--dcuopt-allow-implausible"
MAX_SPEEDUP_OPTION = "--dcuopt-max-speedup"
INTERLEAVE_OPTION = "--dcuopt-interleave"
L2_FLUSH_OPTION = "--dcuopt-l2-flush"
EVENT_OFFSET_OPTION = "--dcuopt-event-offset"
COMPARE_OPTION = "--dcuopt-compare"
COMPARE_THRESHOLD_OPTION = "--dcuopt-compare-threshold"
COMPARE_FLOOR_OPTION = "--dcuopt-compare-floor-us"
COMPARE_RETRIES_OPTION = "--dcuopt-compare-retries"
DEVICES_OPTION = "--dcuopt-devices"
NO_HOST_LOCK_OPTION = "--dcuopt-no-host-lock"
SPARE_WORKERS_OPTION = "--dcuopt-spare-workers"
SIDE_FIGURES_OPTION = "--dcuopt-side-figures"
BUILD_JOBS_OPTION = "--dcuopt-build-jobs"
TRITON_CAPTURE_OPTION = "--dcuopt-triton-capture"
SIZES_OPTION = "--dcuopt-sizes"
REFERENCE_DEVICE_OPTION = "--dcuopt-reference-device"
XDIST_SCHEDULE_OPTION = "--dcuopt-xdist-schedule"

HOME_NAME = ".dcuopt"  # runs/, build-cache/ and logs/ go in here
DEFAULT_RUN_ROOT = f"{HOME_NAME}/runs"
HOME_RULE = ("the rootdir when pytest found a config file (pytest.ini, pyproject.toml, tox.ini, setup.cfg) or was "
             "given --rootdir, else the directory pytest was run from")


def _number(text: str, example: str) -> float:
    """A finite number: NaN compares false with every bound, and infinity is no duration, count or spread."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give e.g. {example}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; give e.g. {example}")
    return value


def parse_positive_float(text: str) -> float:
    value = _number(text, "2 or 0.5 (seconds)")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0; give e.g. 2 or 0.5 (seconds)")
    return value


def parse_speedup_bound(text: str) -> float:
    value = _number(text, "50 (times the baseline's speed)")
    if value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is no speedup bound: a bound at or below 1 would mark every "
                                         "faster branch implausible; give e.g. 50")
    return value


def parse_positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer; give a whole number of 1 or more")
    return int(text)


def parse_run_seed(text: str) -> int:
    if not text.isdigit() or int(text) >= 2**RUN_SEED_BITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a run seed: give the integer from 0 to 2**{RUN_SEED_BITS}-1 "
                                         "that a failure's reproduce command or state.json's options.run_seed shows")
    return int(text)


def parse_fraction(text: str) -> float:
    value = _number(text, "0.01 (1%)")
    if value <= 0 or value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is a relative spread; give a fraction above 0 and below 1 such "
                                         "as 0.01 (1%)")
    return value


def parse_non_negative_float(text: str) -> float:
    value = _number(text, "1 or 0.5")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more; give e.g. 1 or 0.5")
    return value


def parse_non_negative_int(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 0 or more; give e.g. 0 or 4")
    return int(text)


def parse_seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; give the seed a failure report printed, "
                                         "e.g. 0") from None


def parse_dir(text: str) -> str:
    """A directory to write into: an existing file of that name would fail only at the end of the run."""
    path = Path(text).expanduser()
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a directory, e.g. /tmp/dcuopt_run")
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a directory; give a directory (new or existing)")
    return text


def parse_arch(text: str) -> str:
    if not text.strip() or text.strip() != text or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an architecture name; give one word such as sm_90, gfx90a "
                                         "or gfx936")
    return text


def parse_devices(text: str) -> tuple[str, ...]:
    """`0,1` (device indices as nvidia-smi / rocm-smi number them) or GPU UUIDs, comma separated."""
    devices = tuple(d.strip() for d in text.split(",") if d.strip())
    if not devices or len(set(devices)) != len(devices):
        raise argparse.ArgumentTypeError(f"{text!r}: give distinct device indices or UUIDs, comma separated, e.g. 0,1")
    return devices


def parse_dims(text: str) -> dict[str, Any]:
    example = "'{\"N\": 17}'"
    try:
        dims = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not JSON ({exc}); write e.g. {example}") from None
    if not isinstance(dims, dict) or not dims:
        raise argparse.ArgumentTypeError(f"{text!r} must be a JSON object naming at least one dim, e.g. {example}")
    bad = [name for name, value in dims.items()
           if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)]
    if bad:
        raise argparse.ArgumentTypeError(f"{text!r}: the value of {', '.join(bad)} is not a finite number; dims are "
                                         f"numbers, e.g. {example}")
    return dims


def parse_size_names(text: str) -> tuple[str, ...]:
    """`all`, or benchmark size names (ref.py `bench_sizes`) separated by commas; repeats are dropped."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r}: give `all` or benchmark size names separated by commas, "
                                         "e.g. l2,dram")
    return names


def parse_toolchains(text: str) -> tuple[str, ...]:
    """`auto` or registered toolchain names (a typo is caught here, before any case is collected)."""
    from .toolchains import registered_names

    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r}: give `auto` or a comma-separated list of toolchain names")
    known = registered_names()
    unknown = [name for name in names if name != "auto" and name not in known]
    if unknown:
        raise argparse.ArgumentTypeError(f"{text!r}: unknown toolchain(s) {', '.join(unknown)}; registered: "
                                         f"{', '.join(known)}; give `auto` or some of these")
    return names


@dataclass(frozen=True)
class NumberOption:
    """An option that takes one number, checked by `parse`; `help` ends with the default as --help shows it."""

    name: str
    metavar: str
    parse: Callable[[str], float | int]
    default: float | int | None
    help: str

    def add_to(self, group: pytest.OptionGroup, section: str) -> None:
        group.addoption(self.name, metavar=self.metavar, type=self.parse, default=self.default,
                        help=f"{section}: {self.help}")


# The sampling rules (TimingPolicy) and the A/B rounds, in the order --help lists them.
TIMING_NUMBERS = (
    NumberOption(MIN_SAMPLES_OPTION, "N", parse_positive_int, 10, "minimum samples per branch. Default: 10"),
    NumberOption(MAX_TIME_OPTION, "SECONDS", parse_positive_float, 2.0,
                 "cap on sampling time per branch. Default: 2.0"),
    NumberOption(WARMUP_OPTION, "SECONDS", parse_positive_float, 0.05, "warm-up time before sampling. Default: 0.05"),
    NumberOption(NOISE_OPTION, "FRACTION", parse_fraction, 0.01,
                 "stop sampling once the median's 95%% CI half-width is below this fraction of the median. "
                 "Default: 0.01"),
    NumberOption(INTERLEAVE_OPTION, "ROUNDS", parse_non_negative_int, 4,
                 "after timing a branch, time it against the baseline in this many alternating rounds so drift "
                 "cancels; speedups and the champion use these A/B figures. 0 turns it off. Default: 4"),
)
# The gate's rule (--dcuopt-compare), in the order --help lists them.
GATE_NUMBERS = (
    NumberOption(COMPARE_THRESHOLD_OPTION, "FRACTION", parse_fraction, None,
                 "smallest relative change called SLOW or FAST. Default: 0.02 (2%%) for device-event timings, "
                 "0.05 (5%%) for host clocks"),
    NumberOption(COMPARE_FLOOR_OPTION, "US", parse_non_negative_float, 1.0,
                 "smallest absolute change called SLOW or FAST, in microseconds. Default: 1"),
    NumberOption(COMPARE_RETRIES_OPTION, "N", parse_non_negative_int, 2,
                 "re-measurements of an AMBIGUOUS branch before it is reported (without failing). Default: 2"),
)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("dcuopt", "kernel correctness and benchmarks (pytest_dcuopt)")
    group.addoption(TOOLCHAIN_OPTION, DEPRECATED_BACKEND_OPTION, dest="dcuopt_toolchain", metavar="NAMES",
                    type=parse_toolchains, default=("auto",),
                    help="Toolchains to test with: `auto` (every registered toolchain; those that cannot run here "
                         "skip with the reason) or names such as cpu,python. --dcuopt-backend is the deprecated old "
                         "name of this option. Default: auto")
    group.addoption(ARCH_OPTION, metavar="ARCH", type=parse_arch, default=None,
                    help="Target architecture for GPU toolchains (sm_90, gfx936, ...). Default: the device's")
    group.addoption(FLAGS_OPTION, metavar="FLAGS", default="",
                    help="Extra compiler flags appended to every build, space separated. Default: none")
    group.addoption(RUN_DIR_OPTION, metavar="DIR", type=parse_dir, default=None,
                    help=f"Where state.json and summary.md are written (the end of the run prints the path). "
                         f"Default: {DEFAULT_RUN_ROOT}/run_<timestamp>_<pid> in {HOME_RULE}, with a `latest` link "
                         "beside it")
    group.addoption(CACHE_DIR_OPTION, metavar="DIR", type=parse_dir, default=None,
                    help=f"Build cache (keyed by source, flags, compiler and arch). Default: {HOME_NAME}/build-cache "
                         "in the same directory as the run dir's default. Nothing is created unless a kernel is built")
    group.addoption(TIMEOUT_OPTION, metavar="SECONDS", type=parse_positive_float, default=60.0,
                    help="Per kernel call: a call that runs longer is killed and fails its branch. Default: 60")
    group.addoption(EXAMPLES_OPTION, metavar="N", type=parse_positive_int, default=None,
                    help="Hypothesis examples per branch (overrides the profile). Default: the profile's")
    group.addoption(PROFILE_OPTION, metavar="NAME", default="dcuopt-dev", choices=("dcuopt-dev", "dcuopt-ci"),
                    help="Hypothesis settings profile: dcuopt-dev (25 examples) or dcuopt-ci (60, derandomized). "
                         "Default: dcuopt-dev")
    group.addoption(DIMS_OPTION, metavar="JSON", type=parse_dims, default=None,
                    help="Replay one correctness example with these dims (e.g. from a failure report). Default: none")
    group.addoption(SEED_OPTION, metavar="INT", type=parse_seed, default=None,
                    help="Seed of the replayed example (with --dcuopt-dims). Default: 0")
    group.addoption(INPUT_SET_OPTION, metavar="NAME", default=None,
                    help="Input distribution of the replayed example (with --dcuopt-dims): a name in ref.py "
                         "`input_sets`. Default: `inputs`")
    group.addoption(RUN_SEED_OPTION, metavar="INT", type=parse_run_seed, default=None,
                    help="The run's secret seed, which every input of every checked and timed call is drawn from "
                         "(state.json: options.run_seed; failures print it in their reproduce command). "
                         "Default: a new one from os.urandom every run")
    group.addoption(SIZES_OPTION, metavar="NAMES", type=parse_size_names, default=("all",),
                    help="Benchmark sizes to time, by the names ref.py's `bench_sizes` gives them (comma separated), "
                         "or `all`. A case without `bench_sizes` is timed at its default dims whatever this says; a "
                         "name no collected case declares is an error. Default: all")
    for option in TIMING_NUMBERS:
        option.add_to(group, "Timing")
    group.addoption(HOT_OPTION, action="store_true", default=False,
                    help="Timing: do not flush caches before each sample (hot/back-to-back numbers). Default: cold")
    group.addoption(ALLOW_IMPLAUSIBLE_OPTION, action="store_true", default=False,
                    help="Let a branch whose figures exceed what the machine can do (more bandwidth than it copies, "
                         "more FLOP/s than its peak) be champion and beat noise; it is still marked implausible. "
                         "Default: off (docs/security.md)")
    group.addoption(MAX_SPEEDUP_OPTION, metavar="X", type=parse_speedup_bound, default=None,
                    help="Mark a branch implausible when its A/B speedup over the baseline exceeds X. Default: no "
                         "bound")
    group.addoption(L2_FLUSH_OPTION, choices=("read", "write", "none"), default="",
                    help="GPU timing: how the L2 is flushed before each cold sample: `read` (a reduction over 2x "
                         "the L2, leaves it clean), `write` (nvbench's memset, leaves it dirty), `none`. "
                         "Default: $DCUOPT_L2_FLUSH, else read")
    group.addoption(EVENT_OFFSET_OPTION, choices=("calibrated", "profiler", "none"), default="",
                    help="GPU timing: how the start/end event pair's own cost is removed: `calibrated` (measured "
                         "once per device with a tiny kernel), `profiler` (against CUPTI/roctracer kernel records), "
                         "`none` (raw event times). Default: $DCUOPT_EVENT_OFFSET, else calibrated")
    group.addoption(COMPARE_OPTION, metavar="PATH", default=None,
                    help="Gate against an earlier run: its state.json, its run directory, or `latest` (the newest run "
                         "beside this one's). Per branch FAST/SAME/SLOW/AMBIGUOUS; SLOW fails the benchmark test, a "
                         "correctness or ISA regression fails its test (docs/gating.md). Default: no gate")
    for option in GATE_NUMBERS:
        option.add_to(group, "Gate")
    group.addoption(DEVICES_OPTION, metavar="LIST", type=parse_devices, default=(),
                    help="GPUs to pin kernel workers to, e.g. 0,1: xdist worker gwN uses the N-th (round robin), "
                         "set in the kernel worker's CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES before its runtime "
                         "starts; the record's device.pin names it. Timing on a GPU always holds that GPU's lock. "
                         "Default: no pinning (the runtime's first visible GPU)")
    group.addoption(TRITON_CAPTURE_OPTION, metavar="DIR", type=parse_dir, default=None,
                    help="Record TorchInductor's autotuning (configs, timings, inputs, standalone kernels) into DIR "
                         "for code this pytest process compiles with torch.compile; same as "
                         "$DCUOPT_TRITON_CAPTURE=DIR (docs/triton.md, `dcuopt triton`). Default: off")
    group.addoption(NO_HOST_LOCK_OPTION, action="store_true", default=False,
                    help="CPU timing: do not hold the host's timing lock (shared by xdist workers and other pytest "
                         "sessions), so CPU branches may be timed concurrently. Default: hold it")
    group.addoption(SPARE_WORKERS_OPTION, metavar="N", type=parse_non_negative_int, default=None,
                    help="Keep N worker processes started ahead, importing what the next branch's worker needs (torch "
                         "for GPU, Python and Triton branches) while the current branch runs its tests; 0 starts every "
                         "worker when its first test needs it. Default: 2 on a host with 4 cores or more, else 1")
    group.addoption(XDIST_SCHEDULE_OPTION, choices=("branch", "xdist"), default="branch",
                    help="Under pytest -n with xdist's default --dist load: `branch` sends each branch's tests "
                         "(correctness, benchmarks, ISA) to one worker as one unit, so its benchmark does not check "
                         "it again on another worker; `xdist` leaves xdist's own scheduling. Another --dist mode is "
                         "always left to xdist. Default: branch")
    group.addoption(CHECK_EVERY_CALL_OPTION, action="store_true", default=False,
                    help="Compare the outputs of every timed call (warm-up included) with the reference, not only the "
                         "ones chosen at random from the run's seed: one reference and one output transfer per call, "
                         "so keep sizes and --dcuopt-max-time small. Host-timed toolchains only (cpu, python). "
                         "Default: off")
    group.addoption(SIDE_FIGURES_OPTION, action="store_true", default=False,
                    help="GPU timing: also measure the side figures (hot and hot-rotated samples, the original "
                         "method's number, the launch overhead), which cost time every branch; interleaved A/B rounds "
                         "never take them. Default: off (recorded as absent, with the reason)")
    group.addoption(REFERENCE_DEVICE_OPTION, choices=("auto", "cpu", "gpu"), default="auto",
                    help="Where the float64 reference runs. auto: a reference whose buffers reach 64 MiB runs on the "
                         "GPU of a GPU branch when torch in the pytest process can use it (under the GPU's device "
                         "lock), others on the host; cpu: always the host; gpu: every reference of a GPU branch on its "
                         "GPU. A reference that fails on the GPU runs again on the host; the record says where it ran "
                         "and why (observations.reference_device). Default: auto")
    group.addoption(BUILD_JOBS_OPTION, metavar="N", type=parse_non_negative_int, default=os.cpu_count() or 1,
                    help="Build the selected branches this many at a time in the background while the tests run "
                         "(in the tests' order; a test waits only for its own branch, a timing or profile for all "
                         "of them; 0: build each branch in its first test instead). Default: the number of CPUs "
                         "(os.cpu_count())")
