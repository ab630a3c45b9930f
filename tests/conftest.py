"""Shared test set-up: make ``tools/`` (model generators) and ``tests/helpers/`` (the
OpenVINO oracles and builders the tests share) importable; say in one line at the end
why the tests that run the old OpenVINO releases were skipped, if they were
(``tests/helpers/old_releases.py``).

The README's command runs the suite on two pytest-xdist workers with ``--dist loadfile``:
each test file on one worker, so that a module-scoped fixture (the old releases' survey,
the ONNX backend sample, …) runs once, not once per worker."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from old_releases import SKIPPED  # noqa: E402 - importable once the path is set


def pytest_terminal_summary(terminalreporter) -> None:
    """One line for every test skipped for want of the old releases (pytest -q shows
    skip reasons only with -rs); with pytest-xdist the reports come from the workers."""
    reasons = [rep.longrepr[2] for rep in terminalreporter.stats.get("skipped", [])
               if isinstance(rep.longrepr, tuple) and SKIPPED in rep.longrepr[2]]
    if reasons:
        why = reasons[0].split(SKIPPED, 1)[1].lstrip(": ")
        terminalreporter.write_line(f"{len(reasons)} tests that run OpenVINO 2023.0, 2024.0 and "
                                    f"2025.0 skipped: {why}", yellow=True)

