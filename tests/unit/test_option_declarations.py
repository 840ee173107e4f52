"""Every `--dcuopt-*` option refuses a bad value up front, as a usage error naming the option, the value, why and
the fix; none is accepted to crash later or to be ignored."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt import option_declarations

# Options that take no value, or free text any value of which means something.
NO_BAD_VALUE = {
    option_declarations.HOT_OPTION: "a flag",
    option_declarations.NO_HOST_LOCK_OPTION: "a flag",
    option_declarations.SIDE_FIGURES_OPTION: "a flag",
    option_declarations.FLAGS_OPTION: "compiler flags, passed on as written (the compiler judges them)",
    option_declarations.ALLOW_IMPLAUSIBLE_OPTION: "a flag",
    option_declarations.CHECK_EVERY_CALL_OPTION: "a flag",
}
A_FILE = "<a file>"  # replaced by the path of an existing file: a directory option must refuse it

BAD_VALUES: dict[str, list[str]] = {
    option_declarations.TOOLCHAIN_OPTION: ["nosuch", "cpu,nosuch", ","],
    option_declarations.DEPRECATED_BACKEND_OPTION: ["nosuch"],
    option_declarations.ARCH_OPTION: ["", "sm 90"],
    option_declarations.RUN_DIR_OPTION: [A_FILE, ""],
    option_declarations.CACHE_DIR_OPTION: [A_FILE],
    option_declarations.TIMEOUT_OPTION: ["nan", "inf", "0", "-1", "ten"],
    option_declarations.EXAMPLES_OPTION: ["0", "-1", "1.5"],
    option_declarations.PROFILE_OPTION: ["nosuch"],
    option_declarations.DIMS_OPTION: ["{", "[1]", "{}", '{"N": "x"}', '{"N": true}', '{"N": NaN}'],
    option_declarations.SEED_OPTION: ["abc", "1.5"],
    option_declarations.SIZES_OPTION: [","],
    option_declarations.MIN_SAMPLES_OPTION: ["0", "nan"],
    option_declarations.MAX_TIME_OPTION: ["nan", "inf", "0"],
    option_declarations.WARMUP_OPTION: ["nan", "inf", "-1", "0"],
    option_declarations.NOISE_OPTION: ["nan", "0", "1", "-0.1"],
    option_declarations.INTERLEAVE_OPTION: ["-3", "1.5", "many"],
    option_declarations.L2_FLUSH_OPTION: ["sometimes"],
    option_declarations.EVENT_OFFSET_OPTION: ["guess"],
    option_declarations.COMPARE_OPTION: ["/nonexistent/state.json"],
    option_declarations.COMPARE_THRESHOLD_OPTION: ["nan", "0", "2"],
    option_declarations.COMPARE_FLOOR_OPTION: ["nan", "inf", "-1"],
    option_declarations.COMPARE_RETRIES_OPTION: ["-1", "nan"],
    option_declarations.DEVICES_OPTION: [",", "0,0"],
    option_declarations.SPARE_WORKERS_OPTION: ["-1", "two"],
    option_declarations.BUILD_JOBS_OPTION: ["-1", "1.5"],
    option_declarations.TRITON_CAPTURE_OPTION: [A_FILE],
    option_declarations.REFERENCE_DEVICE_OPTION: ["tpu"],
    option_declarations.XDIST_SCHEDULE_OPTION: ["random"],
    option_declarations.MAX_SPEEDUP_OPTION: ["nan", "inf", "1", "0.5", "fast"],
    option_declarations.INPUT_SET_OPTION: ["wide"],
    # without --dcuopt-dims: there is no example to replay
    option_declarations.RUN_SEED_OPTION: ["-1", "abc", "1.5", str(2**63)],
}


def every_option() -> list[str]:
    names = [value for name, value in vars(option_declarations).items()
             if name.endswith("_OPTION") and isinstance(value, str)]
    return sorted(set(names))


def test_every_option_has_bad_values_here_or_a_reason_it_has_none() -> None:
    missing = [name for name in every_option() if name not in BAD_VALUES and name not in NO_BAD_VALUE]
    assert not missing, f"add bad values of {missing} to BAD_VALUES (or a reason to NO_BAD_VALUE)"


@pytest.mark.parametrize(("option", "value"), [(o, v) for o, values in BAD_VALUES.items() for v in values])
def test_a_bad_value_is_a_usage_error_naming_the_option_and_the_value(option: str, value: str,
                                                                     pytester: pytest.Pytester) -> None:
    if value == A_FILE:
        value = str(pytester.makefile(".txt", "not a directory"))
    run_dir = f"{option_declarations.RUN_DIR_OPTION}={pytester.path / 'run'}"
    args = [f"{option}={value}"] + ([] if option == option_declarations.RUN_DIR_OPTION else [run_dir])
    with pytest.raises(pytest.UsageError) as refused:
        pytester.parseconfigure(*args)
    message = str(refused.value)
    assert option.removeprefix("--") in message and (value in message or repr(value) in message), message


def test_a_good_value_of_each_checked_kind_is_accepted(pytester: pytest.Pytester, tmp_path: Path) -> None:
    config = pytester.parseconfigure(
        "--dcuopt-toolchain=cpu,python", "--dcuopt-warmup=0.01", "--dcuopt-interleave=0",
        f"--dcuopt-run-dir={tmp_path}", '--dcuopt-dims={"N": 17, "alpha": 0.5}', "--dcuopt-seed=-3",
        "--dcuopt-arch=sm_90", "--dcuopt-compare-floor-us=0")
    assert config.getoption(option_declarations.INTERLEAVE_OPTION) == 0
    assert config.getoption(option_declarations.DIMS_OPTION) == {"N": 17, "alpha": 0.5}
    assert config.getoption(option_declarations.SEED_OPTION) == -3
