"""SQTT passes: the seed's hipprof command line, and counts of whatever the files hold (an unverified format)."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_dcuopt.profile import sqtt


def test_the_command_is_the_seeds_triage_pass(tmp_path: Path) -> None:
    line = sqtt.command("hipprof", tmp_path, ["python", "app.py"], kernel="solve_kernel")
    assert line == ["hipprof", "-o", f"{tmp_path}/sqtt", "-d", f"{tmp_path}/sqtt_json/", "--output-type", "0",
                    "--sqtt", "--sqtt-type", "1", "--kernel-name", "solve_kernel", "python", "app.py"]


def test_a_trace_is_counted_by_event_kind_and_a_csv_by_rows(tmp_path: Path) -> None:
    (tmp_path / "sqtt_json").mkdir()
    events = [{"name": "ISSUE STALL", "ph": "X"}] * 3 + [{"cat": "wave", "ph": "B"}, {"ph": "E"}, 7]
    (tmp_path / "sqtt_json" / "thread_trace_0_se0.json").write_text(json.dumps({"traceEvents": events}))
    (tmp_path / "sqtt_json" / "k.sqtt.csv").write_text("KernelName,sqtt_se0_size\nk,10\nk,12\n")
    (tmp_path / "other.json").write_text(json.dumps({"version": 1, "kernels": []}))
    found = sqtt.summarize(tmp_path)
    assert found["format"].startswith("unverified format")
    by_name = {f["file"]: f for f in found["files"]}
    trace = by_name["thread_trace_0_se0.json"]
    assert trace["events"] == 6 and trace["events_by_kind"] == {"name=ISSUE STALL": 3, "cat=wave": 1, "ph=E": 1,
                                                                 "int": 1}
    assert by_name["k.sqtt.csv"]["rows"] == 2 and by_name["k.sqtt.csv"]["columns"] == ["KernelName", "sqtt_se0_size"]
    assert by_name["other.json"]["keys"] == ["kernels", "version"]


def test_a_missing_folder_has_no_files(tmp_path: Path) -> None:
    assert sqtt.summarize(tmp_path / "absent")["files"] == []


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=2000), suffix=st.sampled_from([".json", ".csv"]))
def test_any_bytes_are_summarized_or_named_as_unreadable_never_raised(tmp_path_factory, data: bytes,
                                                                      suffix: str) -> None:
    folder = tmp_path_factory.mktemp("sqtt")
    (folder / f"thread_trace{suffix}").write_bytes(data)
    (entry,) = sqtt.summarize(folder)["files"]
    assert entry["bytes"] == len(data)
