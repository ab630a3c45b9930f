"""Every example in README.md runs and prints exactly what the README shows.

* a ```console block is a sequence of ``$ ovgather …`` commands, each followed by its whole
  output as a person sees it: stdout and stderr on one terminal (a pseudo-terminal; only
  its ``\r\n`` line ends are read as ``\n``, the examples print no timings), so every line
  shown fits the 100 columns ovgather keeps to on a terminal;
* a ```console block in ``docs/**/*.md`` runs the same way;
* a ```python block runs, and what it prints is the ```text block right after it (or
  nothing when none follows);
* a ```sh set-up command that ends in ``ovgather …`` prints the ```text block after it;
  the set-up command that runs the tests is the one .ci/run runs, verbatim.

Everything runs in a folder holding a copy of ``ir_samples/`` (and ``ir_corpus/``, linked:
the examples only read it), so the files the examples write land there.
"""

from __future__ import annotations

import contextlib
import io
import os
import pty
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from terminal import read_terminal

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").rglob("*.md"))


def _blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in
            re.finditer(r"^```(\w*)\n(.*?)^```$", text, flags=re.M | re.S)]


BLOCKS = _blocks(README)


def _console_examples(blocks: list[tuple[str, str]] = BLOCKS) -> list[tuple[str, str]]:
    examples = []
    for lang, body in blocks:
        if lang != "console":
            continue
        for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
            command, _, output = chunk.partition("\n")
            examples.append((command, output))
    return examples


def _writers(command: str, blocks: list[tuple[str, str]] = BLOCKS) -> list[str]:
    """The earlier commands of ``command``'s console block that write a file it reads
    (``-o FILE``): run first, as a reader of the README runs the block in order."""
    for lang, body in blocks:
        commands = [c for c, _ in _console_examples([(lang, body)])]
        if command in commands:
            args = set(shlex.split(command))
            earlier = commands[:commands.index(command)]
            return [c for c in earlier if args & set(re.findall(r"-o (\S+)", c))]
    return []


def _followed_by_text(lang: str) -> list[tuple[str, str | None]]:
    out = []
    for i, (kind, body) in enumerate(BLOCKS):
        if kind == lang:
            nxt = BLOCKS[i + 1] if i + 1 < len(BLOCKS) else None
            out.append((body, nxt[1] if nxt and nxt[0] == "text" else None))
    return out


@pytest.fixture
def samples_copy(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "ir_samples", tmp_path / "ir_samples")
    (tmp_path / "ir_corpus").symlink_to(ROOT / "ir_corpus")  # read only, never written
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(command: str, cwd: Path) -> str:
    """What ``command`` shows on a terminal (no progress bar: the examples are quick, and a
    bar clears its line when it ends anyway)."""
    argv = shlex.split(command)
    assert argv[0] == "ovgather", f"a README example that is not ovgather: {command}"
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "ovgather", *argv[1:]], cwd=cwd,
                            stdout=slave, stderr=slave,
                            env=dict(os.environ, OVGATHER_PROGRESS_DELAY="3600", COLUMNS="100"))
    os.close(slave)
    shown = read_terminal(master)
    proc.wait()
    return shown.decode().replace("\r\n", "\n")


#: an error figure of a comparison line (compare's ``ok``/``differs`` rows)
_ERROR_FIGURE = re.compile(r"(max (?:abs|rel)) (\d[\d.e+-]*)")


def _rounding_as_tiny(text: str) -> str:
    """``text`` with every error figure below 1e-5 of an ``ok`` row shown as ``<1e-5``.

    Two f32 runs of the same model differ by rounding only, and by how much depends on the
    CPU's kernels (AVX-512 and AVX2 sum in other orders: 1.82e-07 on one, 2.18e-07 on the
    other); a status, or an error as big as a real difference, must still match exactly."""
    def tiny(m: re.Match) -> str:
        return f"{m[1]} <1e-5" if float(m[2]) < 1e-5 else m[0]

    return "\n".join(_ERROR_FIGURE.sub(tiny, line) if line.lstrip().startswith("ok ") else line
                     for line in text.split("\n"))


def test_rounding_as_tiny_keeps_what_matters():
    assert _rounding_as_tiny("  ok  y: max abs 5.96e-08, max rel 2.18e-07") == \
        _rounding_as_tiny("  ok  y: max abs 5.96e-08, max rel 1.82e-07")
    assert _rounding_as_tiny("  ok  y: max abs 0.003, max rel 0") != \
        _rounding_as_tiny("  ok  y: max abs 0.002, max rel 0")
    assert _rounding_as_tiny("  differs  y: max abs 5.96e-08") != \
        _rounding_as_tiny("  differs  y: max abs 2e-08")


def test_the_readme_has_examples_of_every_subcommand():
    from terminal import COMMANDS

    commands = {shlex.split(c)[1] for c, _ in _console_examples()}
    assert commands == set(COMMANDS)


@pytest.mark.parametrize("command,expected", _console_examples(),
                         ids=[c for c, _ in _console_examples()])
def test_console_example_prints_exactly_what_the_readme_shows(command, expected,
                                                              samples_copy):
    for writer in _writers(command):
        _run(writer, samples_copy)
    assert _rounding_as_tiny(_run(command, samples_copy)) == _rounding_as_tiny(expected)
    assert all(len(line) <= 100 for line in expected.splitlines())


DOC_EXAMPLES = [(f"{path.relative_to(ROOT / 'docs').as_posix()}: {command}", command, output)
                for path in DOCS  # "cli/check.md: ovgather check …"
                for command, output in _console_examples(_blocks(path.read_text("utf-8")))]


def test_the_docs_have_console_examples_to_run():
    assert DOC_EXAMPLES  # the reshape example in cli/reshape.md, at least


@pytest.mark.parametrize("where,command,expected", DOC_EXAMPLES,
                         ids=[where for where, _, _ in DOC_EXAMPLES])
def test_console_example_in_the_docs_prints_what_they_show(where, command, expected,
                                                           samples_copy):
    page = (ROOT / "docs" / where.split(":")[0]).read_text("utf-8")
    for writer in _writers(command, _blocks(page)):
        _run(writer, samples_copy)
    assert _rounding_as_tiny(_run(command, samples_copy)) == _rounding_as_tiny(expected)


@pytest.mark.parametrize("code,expected", _followed_by_text("python"),
                         ids=[f"python block {i + 1}"
                              for i in range(len(_followed_by_text("python")))])
def test_python_example_prints_exactly_what_the_readme_shows(code, expected, samples_copy):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102
    assert printed.getvalue() == (expected or "")


def test_there_are_exactly_two_set_up_commands_and_ci_runs_the_second():
    setups = _followed_by_text("sh")
    assert len(setups) == 2
    (install, _), (tests, _) = setups
    assert "pip install -q ." in install and install.strip().endswith(
        "ovgather check ir_samples/gather_nd8_bd3.xml")
    assert tests.strip() in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_the_first_set_up_command_prints_what_the_readme_shows(samples_copy):
    (install, expected), _ = _followed_by_text("sh")
    command = install.strip().split("&&")[-1].strip()
    assert expected is not None and _run(command, samples_copy) == expected


def test_the_readme_says_how_long_the_tests_take_and_what_they_need():
    assert re.search(r"takes \d+[–-]\d+ minutes", README)
    for need in ("Graphviz", "C compiler", "OpenVINO", "Chromium"):
        assert need in README


def test_ci_installs_chromium_for_the_page_tests_which_never_skip():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"command -v chromium .*\n.*apt-get install -y -qq chromium", ci)
    page_tests = (ROOT / "tests" / "views" / "test_show_page.py").read_text(encoding="utf-8")
    assert "skip" not in page_tests


def test_ci_installs_once_more_without_a_compiler_as_the_readme_says():
    """The run itself is CI's (.ci/run fails when the compile was not attempted, when it
    succeeded, or when check or the reader tests fail); here: the README describes it."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "CC=/bin/false" in ci and '"${bare[@]}" pip install -v .' in ci
    assert re.search(r'"\$\{bare\[@\]\}" ovgather check "\$nocc/src/ir_samples/\w+\.xml"', ci)
    assert re.search(r'"\$\{bare\[@\]\}" python -m pytest .* tests/ir/test_reader\.py', ci)
    assert "no C compiler reachable" in README and "pure-Python walk" in README


def test_the_readme_counts_the_tests_within_5_percent():
    """The time it gives goes with a number of tests: when that grows, both are measured
    again."""
    said = int(re.search(r"about ([\d,]+) tests", README).group(1).replace(",", ""))
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True)
    collected = int(re.search(r"^(\d+) tests? collected", done.stdout, re.M).group(1))
    assert abs(collected - said) <= 0.05 * said, (said, collected)


def test_the_readme_picture_is_a_small_png_of_a_corpus_model_drawn_by_show():
    pictures = re.findall(r"!\[[^\]]*\]\((docs/[^)]+\.png)\)", README)
    assert pictures
    for picture in pictures:
        data = (ROOT / picture).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 300_000
        made_by = re.search(rf"`ovgather show (ir_corpus/\S+\.xml)[^`]*-o (\S+)`[^!]*"
                            rf"!\[[^\]]*\]\({re.escape(picture)}\)", README)
        # or the notebook view, which the tool that runs the example notebook draws
        tool = re.search(rf"`python (tools/\w+\.py)`[^!]*!\[[^\]]*\]\({re.escape(picture)}\)",
                         README)
        assert (made_by and (ROOT / made_by.group(1)).is_file()) or (
            tool and (ROOT / tool.group(1)).is_file()), picture
