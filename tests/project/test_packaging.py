"""What a non-editable install (``pip install .``) ships: every data file the package
reads. An editable install reads the source tree and hides a file left out: a check
that read ``releases.json`` ended in an internal error after ``pip install .``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ovgather"
CODE = {".py", ".pyx", ".pxd", ".c", ".so", ".pyc"}


def _shipped() -> set[Path]:
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    found = set()
    for package, patterns in re.findall(r'^"([\w.]+)"\s*=\s*\[(.*)\]', section, re.M):
        folder = ROOT.joinpath(*package.split("."))
        for pattern in re.findall(r'"([^"]+)"', patterns):
            found |= set(folder.glob(pattern))
    return found


def test_every_data_file_of_the_package_is_shipped():
    data = {p for p in PACKAGE.rglob("*") if p.is_file() and p.suffix not in CODE
            and "__pycache__" not in p.parts}
    assert data, "the package holds data files (opsets.json at least)"
    missing = sorted(str(p.relative_to(ROOT)) for p in data - _shipped())
    assert not missing, f"add them to [tool.setuptools.package-data]: {missing}"
