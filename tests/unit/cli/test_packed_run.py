"""What a pack's run.sh refuses to run with: a missing dependency (named with its pip command), or a pytest_dcuopt
that is not the packed one."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_dcuopt.cli.packed_run import describe_remote, refusal


def remote(**changes: Any) -> dict[str, Any]:
    return {"missing_dependencies": [], "plugin_from_pack": True, "executable": "/usr/bin/python3",
            "harness_path": "/pack/_plugin/pytest_dcuopt", **changes}


def test_a_missing_dependency_is_named_with_the_pip_command() -> None:
    message = refusal(remote(missing_dependencies=["jsonschema", "xxhash"]))
    assert message is not None and "/usr/bin/python3 lacks jsonschema xxhash" in message
    assert "pip install jsonschema xxhash" in message and "comes with the pack" in message


def test_an_installed_plugin_that_shadows_the_packed_one_is_refused() -> None:
    message = refusal(remote(plugin_from_pack=False, harness_path="/usr/lib/python3/site-packages/pytest_dcuopt"))
    assert message is not None and "imported from /usr/lib/python3/site-packages/pytest_dcuopt" in message
    assert "run.sh" in message
    assert refusal(remote()) is None


def test_outside_a_pack_the_running_plugin_is_not_the_packed_one(tmp_path: Path) -> None:
    found = describe_remote(tmp_path, {"plugin": {"file": "plugin/none.whl"}})
    assert found["plugin_from_pack"] is False and found["plugin_sha256"] is None
    assert found["missing_dependencies"] == []  # this environment has every dependency
