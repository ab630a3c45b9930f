"""The old OpenVINO releases (2023.0, 2024.0, 2025.0) for the tests that run them, each in
its venv under ``OVGATHER_CACHE`` (``~/.cache/ovgather``), installed on first use by
``tools/release_table.py`` (CI installs them first). Where they cannot be installed (no
network, a cache that cannot be written, ``OVGATHER_CACHE=off``), every such test is skipped
with one reason, which ``tests/conftest.py`` prints once at the end of the run."""

from __future__ import annotations

import functools

import pytest
import release_table

RELEASES = tuple(release_table.RELEASES)
#: how every skip for want of the releases begins (the conftest finds them by it)
SKIPPED = "old OpenVINO releases unavailable"


@functools.cache
def _found() -> dict[str, str] | str:
    try:
        return {r: str(p) for r, p in release_table.release_pythons(RELEASES).items()}
    except release_table.ReleaseUnavailable as err:
        return f"{SKIPPED}: {err}"


def pythons() -> dict[str, str]:
    """``{release: its venv's interpreter}``, installed once (a lock file keeps two
    processes from installing one release twice); the calling test is skipped when
    they cannot be had."""
    found = _found()
    if isinstance(found, str):
        pytest.skip(found)
    return found
