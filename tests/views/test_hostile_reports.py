"""``check --format junit|sarif`` for every file name a file system allows, made by a seeded
generator: control characters (a newline, a tab, ESC, DEL), bytes that are no UTF-8
(Latin-1), ``]]>``, ``<&"'``, names up to the 255 bytes a name may have. The JUnit XML is
well-formed and read by junitparser, each test case naming its file and giving the time
it took; every SARIF ``artifactLocation.uri`` resolves to the very bytes of its file (RFC
3986 percent-encoding), relative or absolute, and the log validates against the SARIF
schema. The tool's ``informationUri`` is the home page of pyproject.toml."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote_to_bytes, urlparse

import jsonschema
import junitparser
import pytest
from slowdown import seconds
from tampered_irs import CLEAN, ROOT, write_samples

from ovgather.views.ci_formats import sarif_log

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text())
#: pieces of names: what XML 1.0 cannot hold, what its markup means, what is no UTF-8
_PIECES = [b"\x01", b"\x1b[31m", b"\x7f", b"\n", b"\t", b"\r", b"]]>", b"<&\"'>", b"caf\xe9",
           b"\xff\xfe", b"\xc3", b" ", b"-", b"%41", b"#?", "中🙂é".encode(), b"model"]


def _names(rng: random.Random, count: int) -> list[bytes]:
    names: set[bytes] = set()
    while len(names) < count:
        raw = b"".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 8)))
        if rng.random() < 0.25:
            raw = (raw * 40)[:240]  # near the 255 bytes of a name
        raw = raw.lstrip(b".") or b"m"
        names.add(raw + b".xml")
    return sorted(names)


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> Path:
    return write_samples(tmp_path_factory.mktemp("hostile_samples"))


def _folder(samples: Path, folder: Path, seed: int) -> list[bytes]:
    """A failing or a clean sample under each generated name, with its .bin."""
    rng = random.Random(seed)
    names = _names(rng, 5)
    for i, raw in enumerate(names):
        src = samples / ("mixed_ops" if i % 2 == 0 else CLEAN)
        dst = os.path.join(os.fsencode(folder), raw)
        shutil.copy(src.with_suffix(".xml"), dst)
        shutil.copy(src.with_suffix(".bin"), dst[:-4] + b".bin")
    return names


def _check(folder: Path, names: list[bytes], fmt: str, absolute: bool
           ) -> subprocess.CompletedProcess:
    paths = [os.path.join(os.fsencode(folder), n) if absolute else n for n in names]
    return subprocess.run([os.fsencode(sys.executable), b"-m", b"ovgather", b"check",
                           b"--format", fmt.encode(), b"--", *paths], cwd=folder,
                          capture_output=True, timeout=seconds(300))


def _shown(raw: bytes) -> str:
    """A name as the JUnit XML gives it: every character XML cannot hold as an escape."""
    text = os.fsdecode(raw)
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 and ch not in "\t\n\r":
            out.append(f"\\x{code:02x}")
        else:
            out.append(ch)
    return "".join(out)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("absolute", [False, True])
def test_junit_is_well_formed_for_any_file_name(samples, tmp_path, seed, absolute):
    names = _folder(samples, tmp_path, seed)
    done = _check(tmp_path, names, "junit", absolute)
    assert done.returncode == 1, done.stderr
    (tmp_path / "report.junit").write_bytes(done.stdout)
    xml = junitparser.JUnitXml.fromfile(str(tmp_path / "report.junit"))
    cases = [case for suite in xml for case in suite]
    prefix = os.fsencode(tmp_path) + b"/" if absolute else b""
    assert [c.name for c in cases] == [_shown(prefix + n) for n in names]
    for i, case in enumerate(cases):
        assert case.time > 0  # the model's own time, not "0"
        failed = [r for r in case.result if isinstance(r, junitparser.Failure)]
        assert bool(failed) == (i % 2 == 0)
        out = _shown(prefix + names[i]).replace("\r", "\n") + ": "  # XML reads \r as \n
        assert case.system_out.startswith(out)


def _resolve(uri: str, base: str | None, bases: dict) -> bytes:
    """The file-system bytes a SARIF artifact URI names (relative to its base id)."""
    if base is not None:
        uri = bases[base]["uri"] + uri
    parsed = urlparse(uri)
    assert parsed.scheme == "file" and parsed.netloc in ("", "localhost"), uri
    return unquote_to_bytes(parsed.path)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("absolute", [False, True])
def test_every_sarif_uri_resolves_to_its_file(samples, tmp_path, seed, absolute):
    names = _folder(samples, tmp_path, seed + 10)
    done = _check(tmp_path, names, "sarif", absolute)
    assert done.returncode == 1, done.stderr
    log = json.loads(done.stdout)
    validator = jsonschema.validators.validator_for(SCHEMA)
    validator(SCHEMA).validate(log)
    run = log["runs"][0]
    bases = run.get("originalUriBaseIds", {})
    resolved = set()
    for result in run["results"]:
        where = result["locations"][0]["physicalLocation"]["artifactLocation"]
        path = _resolve(where["uri"], where.get("uriBaseId"), bases)
        os.stat(path)  # the URI points at the file itself
        resolved.add(path)
    failing = {os.path.join(os.fsencode(tmp_path), n) for n in names[::2]}
    assert resolved == failing


def test_the_information_uri_is_the_home_page_of_pyproject():
    tomllib = pytest.importorskip("tomllib")
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert set(urls) >= {"Homepage", "Documentation", "Source"}
    driver = sarif_log([], [])["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == urls["Homepage"]
