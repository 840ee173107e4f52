"""The run's options as one `Options` value, read once from the parsed command line (`option_declarations`
declares them) and checked for combinations no single option can refuse."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .option_declarations import (
    ALLOW_IMPLAUSIBLE_OPTION,
    ARCH_OPTION,
    BUILD_JOBS_OPTION,
    CACHE_DIR_OPTION,
    CHECK_EVERY_CALL_OPTION,
    COMPARE_FLOOR_OPTION,
    COMPARE_OPTION,
    COMPARE_RETRIES_OPTION,
    COMPARE_THRESHOLD_OPTION,
    DEFAULT_RUN_ROOT,
    DEVICES_OPTION,
    DIMS_OPTION,
    EVENT_OFFSET_OPTION,
    EXAMPLES_OPTION,
    FLAGS_OPTION,
    HOME_NAME,
    HOT_OPTION,
    INPUT_SET_OPTION,
    INTERLEAVE_OPTION,
    L2_FLUSH_OPTION,
    MAX_SPEEDUP_OPTION,
    MAX_TIME_OPTION,
    MIN_SAMPLES_OPTION,
    NO_HOST_LOCK_OPTION,
    NOISE_OPTION,
    PROFILE_OPTION,
    REFERENCE_DEVICE_OPTION,
    RUN_DIR_OPTION,
    RUN_SEED_OPTION,
    SEED_OPTION,
    SIDE_FIGURES_OPTION,
    SIZES_OPTION,
    SPARE_WORKERS_OPTION,
    TIMEOUT_OPTION,
    WARMUP_OPTION,
)
from .timing.policy import TimingPolicy
from .toolchains.exchange import new_run_seed

RUN_SEED_KEY = "dcuopt_run_seed"  # in xdist's workerinput: every worker draws the controller's inputs
RUN_DIR_KEY = "dcuopt_run_dir"  # in xdist's workerinput: every worker's files go under the controller's run


@dataclass(frozen=True)
class Options:
    toolchains: tuple[str, ...]
    arch: str | None
    extra_flags: tuple[str, ...]
    run_dir: Path
    cache_dir: Path
    log_dir: Path
    timeout_s: float
    examples: int | None
    hypothesis_profile: str
    replay_dims: dict[str, Any] | None
    replay_seed: int | None
    policy: TimingPolicy
    interleave_rounds: int
    compare: str | None = None  # --dcuopt-compare as given (gate.baseline resolves it)
    compare_threshold: float | None = None
    compare_floor_us: float = 1.0
    compare_retries: int = 2
    devices: tuple[str, ...] = ()
    host_lock: bool = True
    build_jobs: int = 1  # --dcuopt-build-jobs: builds at a time in the background (0: none)
    spare_workers: int = 1  # --dcuopt-spare-workers: worker processes started ahead (0: none)
    bench_sizes: tuple[str, ...] = ("all",)  # --dcuopt-sizes: the benchmark sizes picked by name, or `all`
    reference_device: str = "auto"  # --dcuopt-reference-device (check/reference_device.py)
    replay_input_set: str | None = None  # --dcuopt-input-set: the replayed example's ref.py `input_sets` entry
    allow_implausible: bool = False  # --dcuopt-allow-implausible (report/plausibility.py)
    max_speedup: float | None = None  # --dcuopt-max-speedup: a larger A/B speedup is implausible
    run_seed: int = 0  # --dcuopt-run-seed, else the xdist controller's, else os.urandom (toolchains/exchange.py)
    check_every_call: bool = False  # --dcuopt-check-every-call (bench/run.py `plan_for`)

    @classmethod
    def from_config(cls, config: pytest.Config) -> Options:
        get = config.getoption
        root = default_home(config)
        stamp = time.strftime("%Y%m%d_%H%M%S")
        run_dir = Path(get(RUN_DIR_OPTION) or controller_run_dir(config)
                       or root / DEFAULT_RUN_ROOT / f"run_{stamp}_{_pid()}")
        if get(INPUT_SET_OPTION) is not None and get(DIMS_OPTION) is None:
            raise pytest.UsageError(f"{INPUT_SET_OPTION} replays one example and needs {DIMS_OPTION} too, e.g. "
                                    f"{DIMS_OPTION}='{{\"N\": 17}}' {INPUT_SET_OPTION}={get(INPUT_SET_OPTION)}")
        if get(SEED_OPTION) is not None and get(DIMS_OPTION) is None:
            raise pytest.UsageError(f"{SEED_OPTION} replays one example and needs {DIMS_OPTION} too, e.g. "
                                    f"{DIMS_OPTION}='{{\"N\": 17}}' {SEED_OPTION}={get(SEED_OPTION)}")
        policy = TimingPolicy(warmup_s=get(WARMUP_OPTION), min_samples=get(MIN_SAMPLES_OPTION),
                              target_rel_spread=get(NOISE_OPTION), max_time_s=get(MAX_TIME_OPTION),
                              cold=not get(HOT_OPTION), l2_flush=get(L2_FLUSH_OPTION),
                              event_offset=get(EVENT_OFFSET_OPTION), side_figures=get(SIDE_FIGURES_OPTION))
        return cls(
            toolchains=get("dcuopt_toolchain"), arch=get(ARCH_OPTION), extra_flags=tuple(get(FLAGS_OPTION).split()),
            run_dir=run_dir.resolve(),
            cache_dir=Path(get(CACHE_DIR_OPTION) or root / HOME_NAME / "build-cache").resolve(),
            log_dir=(root / HOME_NAME / "logs").resolve(), timeout_s=get(TIMEOUT_OPTION), examples=get(EXAMPLES_OPTION),
            hypothesis_profile=get(PROFILE_OPTION), replay_dims=get(DIMS_OPTION), replay_seed=get(SEED_OPTION),
            policy=policy, interleave_rounds=get(INTERLEAVE_OPTION),
            compare=get(COMPARE_OPTION), compare_threshold=get(COMPARE_THRESHOLD_OPTION),
            compare_floor_us=get(COMPARE_FLOOR_OPTION), compare_retries=get(COMPARE_RETRIES_OPTION),
            devices=get(DEVICES_OPTION), host_lock=not get(NO_HOST_LOCK_OPTION), build_jobs=get(BUILD_JOBS_OPTION),
            spare_workers=default_spares() if get(SPARE_WORKERS_OPTION) is None else get(SPARE_WORKERS_OPTION),
            bench_sizes=get(SIZES_OPTION), reference_device=get(REFERENCE_DEVICE_OPTION),
            replay_input_set=get(INPUT_SET_OPTION),
            allow_implausible=get(ALLOW_IMPLAUSIBLE_OPTION), max_speedup=get(MAX_SPEEDUP_OPTION),
            run_seed=chosen_run_seed(config), check_every_call=get(CHECK_EVERY_CALL_OPTION),
        )

    def to_json(self) -> dict[str, Any]:
        return {"toolchains": list(self.toolchains), "arch": self.arch, "extra_flags": list(self.extra_flags),
                "timeout_s": self.timeout_s, "examples": self.examples, "hypothesis_profile": self.hypothesis_profile,
                "timing": self.policy.to_json(), "interleave_rounds": self.interleave_rounds,
                "cache_dir": str(self.cache_dir), "compare": self.compare,
                "compare_rule": {"threshold": self.compare_threshold, "floor_us": self.compare_floor_us,
                                 "retries": self.compare_retries},
                "devices": list(self.devices), "host_lock": self.host_lock, "build_jobs": self.build_jobs,
                "spare_workers": self.spare_workers,
                "bench_sizes": list(self.bench_sizes), "reference_device": self.reference_device,
                "run_seed": self.run_seed, "check_every_call": self.check_every_call}


def controller_run_dir(config: pytest.Config) -> str | None:
    """In an xdist worker, the controller's run folder (a default one names the controller's process and second, so
    a worker computing its own would put its files, e.g. profile work folders, outside the run); else None."""
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput[RUN_DIR_KEY]) if workerinput is not None and RUN_DIR_KEY in workerinput else None


def chosen_run_seed(config: pytest.Config) -> int:
    """--dcuopt-run-seed; else, in an xdist worker, its controller's (one run, one seed); else a fresh secret."""
    given = config.getoption(RUN_SEED_OPTION)
    if given is not None:
        return int(given)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and RUN_SEED_KEY in workerinput:
        return int(workerinput[RUN_SEED_KEY])
    return new_run_seed()


def default_spares() -> int:
    from .run.spare_workers import default_count

    return default_count()


def default_home(config: pytest.Config) -> Path:
    """The directory whose .dcuopt/ holds the default run, cache and log dirs.

    pytest's rootdir without a config file is only the common ancestor of the arguments (or an
    ancestor with a setup.py), which is not where a user who ran `pytest cases/mycase` looks.
    """
    if config.inipath is not None or config.getoption("rootdir", None):
        return config.rootpath
    return config.invocation_params.dir


def _pid() -> int:
    import os

    return os.getpid()
