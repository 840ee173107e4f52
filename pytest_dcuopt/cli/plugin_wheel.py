"""The wheel of the running pytest_dcuopt that `dcuopt pack` puts into a pack (docs/loop.md "Remote devices"): built
from its files as they are (a checkout or an install), so a pack runs this very code there, whatever is installed on
that machine."""
from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .. import __version__

PYTEST_ENTRY_POINT = ("dcuopt", "pytest_dcuopt.plugin")  # pyproject.toml's [project.entry-points.pytest11]
BUILD_OUTPUTS = (".so", ".o", ".pyc")


@dataclass(frozen=True)
class PluginWheel:
    name: str  # pytest_dcuopt-<version>-py3-none-any.whl
    source: Path  # the package folder it was built from
    data: bytes


def plugin_wheel() -> PluginWheel:
    """A wheel of the running pytest_dcuopt, built from its files as they are (a checkout or an install), so a pack
    runs this very code there whatever is installed on that machine. Its metadata is the minimum a wheel needs and
    the pytest plugin entry point (the same name as pyproject.toml's, so pytest loads the plugin once even where
    another pytest_dcuopt is installed)."""
    package = Path(__file__).resolve().parents[1]
    files = sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and p.suffix not in (".pyc", *BUILD_OUTPUTS))
    info = f"pytest_dcuopt-{__version__}.dist-info"
    members = [(f"pytest_dcuopt/{p.relative_to(package).as_posix()}", p.read_bytes()) for p in files]
    members += [(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: pytest-dcuopt\nVersion: {__version__}\n".encode()),
                (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: dcuopt pack\nRoot-Is-Purelib: true\n"
                                  b"Tag: py3-none-any\n"),
                (f"{info}/entry_points.txt", f"[pytest11]\n{PYTEST_ENTRY_POINT[0]} = {PYTEST_ENTRY_POINT[1]}\n"
                                             .encode())]
    record = "".join(f"{name},sha256={_record_digest(data)},{len(data)}\n" for name, data in members)
    members.append((f"{info}/RECORD", (record + f"{info}/RECORD,,\n").encode()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in members:
            wheel.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return PluginWheel(f"pytest_dcuopt-{__version__}-py3-none-any.whl", package, buffer.getvalue())


def _record_digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
