"""The ``ovgather-check`` pre-commit hook (.pre-commit-hooks.yaml), run by pre-commit itself
on a user's repository: ``pre-commit try-repo`` of this checkout fails on a tampered IR,
naming the layer, and passes on a clean one and on an .xml that is no IR; the lines the
docs/cli/check.md tells a user to add to their ``.pre-commit-config.yaml`` do the same.

pre-commit installs the hook's environment as it does for a user: a virtualenv into which
pip installs ovgather from the hook repository (OpenVINO, NumPy, lxml, networkx from PyPI
or pip's cache, and the compiled walk built). That costs about a minute the first time.
``try-repo`` would pay it on every run, since it keeps its store in a temporary folder
whatever ``PRE_COMMIT_HOME`` says; so ``try-repo`` runs here with that one thing changed:
its store is ``PRE_COMMIT_HOME``, under ``OVGATHER_CACHE`` (``~/.cache/ovgather/pre-commit``),
and later runs take a few seconds. The hook repository is a copy of what pip builds ovgather
from, committed with a fixed date, so its commit, and with it the environment pre-commit
keeps for it, stays the same until that code changes; the store is emptied when it does.
With ``OVGATHER_CACHE=off``, or when the environment cannot be installed (no network) outside
CI, the tests are skipped with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from release_table import file_lock
from tampered_irs import CLEAN, ROOT, write_samples

#: ``pre-commit try-repo`` with its store in PRE_COMMIT_HOME rather than a temporary folder
TRY_REPO = """\
import sys
from pre_commit.commands import try_repo
from pre_commit.main import main
from pre_commit.store import Store
try_repo.Store = lambda _temporary_folder: Store()
sys.exit(main(sys.argv[1:]))
"""
#: what pip builds ovgather from (README.md is replaced by a stub: its text changes nothing)
PACKAGE = ("pyproject.toml", "setup.py", ".pre-commit-hooks.yaml")
FIXED_DATE = "2000-01-01T00:00:00+00:00"


def _cache() -> Path:
    value = os.environ.get("OVGATHER_CACHE", "")
    if value.lower() == "off":
        pytest.skip("pre-commit hook environment unavailable: OVGATHER_CACHE=off")
    return Path(value or Path.home() / ".cache" / "ovgather")


def _git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "ovgather tests", "GIT_AUTHOR_EMAIL": "tests@invalid",
           "GIT_COMMITTER_NAME": "ovgather tests", "GIT_COMMITTER_EMAIL": "tests@invalid",
           "GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE}
    return subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null",
                           *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def _hook_repo(folder: Path) -> str:
    """``folder`` made a git repository of ovgather's package files; its commit."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name in PACKAGE:
        shutil.copy(ROOT / name, folder / name)
    (folder / "README.md").write_text("# ovgather\n")
    shutil.copytree(ROOT / "ovgather", folder / "ovgather", ignore=shutil.ignore_patterns(
        "__pycache__", "*.pyc", "*.so", "*.pyd", "_fastwalk.c"))
    _git("init", "-q", cwd=folder)
    _git("add", "-A", cwd=folder)
    _git("commit", "-q", "--no-verify", "-m", "ovgather for the pre-commit tests", cwd=folder)
    return _git("rev-parse", "HEAD", cwd=folder)


class Hook:
    """The hook repository, the store and a user's repository holding the samples."""

    def __init__(self, repo: Path, rev: str, home: Path, user: Path) -> None:
        #: a file: URL, which pre-commit keeps as it is (a path it makes relative to the
        #: user's repository, and the store would hold one environment per such folder)
        self.url = repo.as_uri()
        self.rev, self.home, self.user = rev, home, user

    def env(self) -> dict[str, str]:
        return {**os.environ, "PRE_COMMIT_HOME": str(self.home), "PRE_COMMIT_COLOR": "never",
                "NO_COLOR": "1"}

    def try_repo(self, *files: str, option: str | None = "--files"
                 ) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", TRY_REPO, "try-repo", self.url,
                               "ovgather-check", "--verbose", *[option] * bool(option),
                               *files],
                              cwd=self.user, env=self.env(), capture_output=True, text=True,
                              timeout=900)

    def run(self, *files: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--verbose",
                               "--files", *files], cwd=self.user, env=self.env(),
                              capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def hook(tmp_path_factory):
    cache = _cache()
    user = write_samples(tmp_path_factory.mktemp("user_repo"))
    (user / "pom.xml").write_text("<?xml version='1.0'?>\n<project><modelVersion>4.0.0"
                                  "</modelVersion></project>\n")
    _git("init", "-q", cwd=user)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        lock = file_lock(cache / ".pre-commit.lock")  # two test runs take turns
        lock.__enter__()
    except OSError as err:
        pytest.skip(f"pre-commit hook environment unavailable: cannot write {cache} "
                    f"({err.strerror}; OVGATHER_CACHE moves it)")
    try:
        rev = _hook_repo(cache / "pre-commit-hook-repo")
        home = cache / "pre-commit"
        stamp = cache / "pre-commit-hook-repo.rev"
        if not stamp.exists() or stamp.read_text() != rev:  # another ovgather: a new environment
            shutil.rmtree(home, ignore_errors=True)
            stamp.unlink(missing_ok=True)
        found = Hook(cache / "pre-commit-hook-repo", rev, home, user)
        first = found.try_repo(f"{CLEAN}.xml")  # installs the environment when it is new
        if first.returncode == 3 and not os.environ.get("CI"):  # pre-commit's "unexpected
            # error": pip could not install the environment (no network, say)
            why = (first.stdout + first.stderr).strip().splitlines()[-3:]
            pytest.skip(f"pre-commit hook environment unavailable: {' / '.join(why)}")
        assert first.returncode == 0, f"the hook fails on a clean IR:\n{first.stdout}" \
                                      f"{first.stderr}"
        stamp.write_text(rev)
        yield found
    finally:
        lock.__exit__(None, None, None)


def test_try_repo_fails_on_tampered_irs_naming_each_layer(hook):
    done = hook.try_repo("mixed_ops.xml", "loop_gather.xml")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert re.search(r"^ovgather check \(OpenVINO IR shapes\)\.+Failed$", out, re.M)
    for layer in ("pick_cols_g8", "fc_matmul", "turn", "row_loop/body/pick_row_g8"):
        assert re.search(rf"^(mismatch|invalid|unknown) +{re.escape(layer)} ", out, re.M), out
    assert "mixed_ops.xml: PROBLEMS:" in out and "loop_gather.xml: PROBLEMS:" in out


def test_try_repo_passes_on_a_clean_ir(hook):
    done = hook.try_repo(f"{CLEAN}.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\.+Passed$", done.stdout, re.M)
    assert f"{CLEAN}.xml: OK: 4 layers, 4 ok" in done.stdout


def test_an_xml_that_is_no_ir_passes_with_a_note(hook):
    done = hook.try_repo("pom.xml", f"{CLEAN}.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "note: pom.xml: skipped: not an OpenVINO IR (its root element is <project>" \
        in done.stdout


def test_the_documented_lines_run_the_hook(hook):
    """The lines docs/cli/check.md gives for a .pre-commit-config.yaml (the README links
    there), with this repository's path and commit put in for its URL and tag."""
    text = (ROOT / "docs" / "cli" / "check.md").read_text()
    block = re.search(r"```yaml\n(repos:\n.*?ovgather-check.*?)```", text, re.S)
    assert block is not None, "docs/cli/check.md shows no .pre-commit-config.yaml for the hook"
    config = re.sub(r"repo: \S+", f"repo: {hook.url}", block.group(1))
    config = re.sub(r"rev: \S+", f"rev: {hook.rev}", config)
    (hook.user / ".pre-commit-config.yaml").write_text(config)
    bad = hook.run("mixed_ops.xml")
    assert bad.returncode == 1 and "pick_cols_g8" in bad.stdout, bad.stdout + bad.stderr
    good = hook.run(f"{CLEAN}.xml", "pom.xml")
    assert good.returncode == 0, good.stdout + good.stderr


def _dash_copies(folder: Path) -> tuple[str, str]:
    """A tampered IR and a clean one under names that begin with "-" (each with its .bin)."""
    for src, dst in (("mixed_ops", "-mixed_ops"), (CLEAN, "--clean")):
        for suffix in (".xml", ".bin"):
            shutil.copy(folder / f"{src}{suffix}", folder / f"{dst}{suffix}")
    return "-mixed_ops.xml", "--clean.xml"


def test_the_hook_entry_ends_its_options_before_the_file_names(tmp_path):
    """The entry as pre-commit runs it, file names appended: a name that begins with "-"
    is a file, never an option (no pre-commit environment needed)."""
    import shlex

    import yaml

    (hook_def,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    entry = shlex.split(hook_def["entry"])
    assert entry[:2] == ["ovgather", "check"] and entry[-1] == "--"
    write_samples(tmp_path)
    (tmp_path / "pom.xml").write_text("<?xml version='1.0'?>\n<project/>\n")
    bad, good = _dash_copies(tmp_path)
    run = [sys.executable, "-m", "ovgather", *entry[1:]]
    done = subprocess.run([*run, bad, good], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{bad}: PROBLEMS:" in done.stdout and f"{good}: OK:" in done.stdout
    assert re.search(r"^mismatch +pick_cols_g8 ", done.stdout, re.M)
    done = subprocess.run([*run, good, "pom.xml"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_try_repo_takes_file_names_that_begin_with_a_dash(hook):
    """pre-commit gives the hook the name as it is (``--files=NAME``: pre-commit's own
    options would take ``-NAME`` for one of its own)."""
    bad, good = _dash_copies(hook.user)
    done = hook.try_repo(f"--files={bad}", option=None)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{bad}: PROBLEMS:" in done.stdout and "pick_cols_g8" in done.stdout
    done = hook.try_repo(f"--files={good}", option=None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{good}: OK: 4 layers, 4 ok" in done.stdout
