"""The README's test command on a machine where the old OpenVINO releases cannot be
installed (no network, a cache that cannot be written, ``OVGATHER_CACHE=off``): the tests
that run them are skipped, the rest pass, and one line says why."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import old_releases
import pytest
import release_table

ROOT = Path(__file__).resolve().parents[2]
#: pip with no index, no links and no config file: as offline as a machine gets
OFFLINE = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "",
           "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_EXTRA_INDEX_URL": ""}


def _unwritable(tmp_path: Path) -> Path:
    """A cache no one can create, root included: a folder below a file."""
    (tmp_path / "file").write_text("")
    return tmp_path / "file" / "cache"


def test_an_offline_install_says_pip_failed_and_leaves_no_venv(tmp_path, monkeypatch):
    monkeypatch.setenv("OVGATHER_CACHE", str(tmp_path / "cache"))
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(release_table.ReleaseUnavailable, match=r"could not install OpenVINO "
                       r"2023\.0\.2 into .*cache \(pip install: .+\)"):
        release_table.release_python("2023.0")
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [".openvino-2023.0.lock"]


def test_an_unwritable_or_disabled_cache_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("OVGATHER_CACHE", str(_unwritable(tmp_path)))
    with pytest.raises(release_table.ReleaseUnavailable, match="cannot write the cache .*"
                       "OVGATHER_CACHE moves it"):
        release_table.release_python("2024.0")
    monkeypatch.setenv("OVGATHER_CACHE", "off")
    with pytest.raises(release_table.ReleaseUnavailable, match="OVGATHER_CACHE=off"):
        release_table.release_python("2024.0")


def test_the_suite_skips_the_old_release_tests_with_one_line_saying_why(tmp_path):
    """As the README runs it: on two pytest-xdist workers, whose skips the main process
    gathers into the one line."""
    env = {**os.environ, **OFFLINE, "OVGATHER_CACHE": str(_unwritable(tmp_path))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile", "-p",
         "no:cacheprovider", "-k",
         "nothing_written or seeded_sample or installed_release_reads",
         "tests/passes/test_downgrade.py", "tests/infer/test_target_runtime.py"],
        cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.search(r"\b1 passed, 2 skipped\b", done.stdout), done.stdout[-3000:]
    said = [line for line in done.stdout.splitlines() if old_releases.SKIPPED in line
            or "skipped:" in line]
    assert said == [f"2 tests that run OpenVINO 2023.0, 2024.0 and 2025.0 skipped: cannot "
                    f"write the cache {env['OVGATHER_CACHE']} (Not a directory; "
                    f"OVGATHER_CACHE moves it)"], done.stdout[-3000:]
