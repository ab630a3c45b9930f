"""Headless Chromium for the tests of the pages ``ovgather show --format html`` writes.

Chromium is required, never skipped: .ci/run installs it (``apt-get install chromium``).
:func:`page_dom` opens a page with every host name unresolvable (so that a page that
fetched anything would fail to), lets its scripts run, and returns the DOM as they left it.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium() -> str:
    """The Chromium program; fails (with how to install it) when there is none."""
    for name in _NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError("headless Chromium is needed for the HTML page tests: "
                         "apt-get install chromium (.ci/run installs it)")


def page_dom(page: Path, fragment: str = "", budget_ms: int = 3000) -> tuple[str, float]:
    """The DOM of ``page`` (opened at ``#fragment``) after its scripts ran, and the wall
    seconds Chromium took from start to exit."""
    with tempfile.TemporaryDirectory(prefix="ovgather-chromium-") as profile:
        args = [chromium(), "--headless", "--disable-gpu", "--no-sandbox",
                "--no-first-run", f"--user-data-dir={profile}",
                "--host-resolver-rules=MAP * ~NOTFOUND", f"--virtual-time-budget={budget_ms}",
                "--dump-dom", page.resolve().as_uri() + (f"#{fragment}" if fragment else "")]
        start = time.perf_counter()
        run = subprocess.run(args, capture_output=True, timeout=120, check=False)
        seconds = time.perf_counter() - start
    assert run.returncode == 0, run.stderr.decode("utf-8", "replace")[-2000:]
    return run.stdout.decode("utf-8"), seconds


def with_probe(page: Path, script: str, out: Path) -> Path:
    """A copy of ``page`` at ``out`` with ``script`` run after the page's own scripts
    (the test's eyes: it writes what it measures into ``document.body.dataset``)."""
    text = page.read_text(encoding="utf-8")
    out.write_text(text.replace("</body>", f"<script>{script}</script>\n</body>"),
                   encoding="utf-8")
    return out
