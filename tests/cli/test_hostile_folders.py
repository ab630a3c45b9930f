"""``check DIR`` on hostile folders, made by a seeded generator: FIFOs, sockets and devices
named ``*.xml`` (never opened: a FIFO would block forever), symbolic link loops and broken
links, files that vanish between the listing and the reading, IRs with a long leading
comment or in UTF-16 with and without a byte-order mark, files that are no IR, and random
names (spaces, a leading ``-``, non-ASCII, bytes that are no UTF-8). The failing model is
found whatever its encoding, the exit code is 1, every file is counted once in the
totals, and no run hangs or prints a traceback; ``--jobs`` is capped at what the machine
allows, with one line saying so."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from slowdown import seconds
from tampered_irs import SAMPLES, write_samples

from ovgather.cli.folders import root_element, worker_count
from ovgather.ir.parse import document_root

ROOT = Path(__file__).resolve().parents[2]
CLEAN = SAMPLES / "gather_nd8_bd0.xml"
#: the characters of the generated names (no "/" and no NUL: no file system takes them)
_NAME_CHARS = "abcXYZ019 _-#%&()+,;=@[]{}~'!éßдπ中🙂\t"
_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")


def _name(rng: random.Random, taken: set[bytes], suffix: str = ".xml") -> bytes:
    """A random file name as bytes: any character a file system allows, a leading "-"
    now and then, now and then Latin-1 bytes that are no UTF-8; never hidden."""
    while True:
        text = "".join(rng.choice(_NAME_CHARS) for _ in range(rng.randint(1, 24)))
        raw = text.encode("utf-8")
        if rng.random() < 0.3:
            raw = raw + rng.choice([b"caf\xe9", b"\xff\xfe", b"na\xefve"])
        if rng.random() < 0.2:
            raw = b"-" + raw
        if rng.random() < 0.1:
            raw = raw * 6  # long names, under the 255 bytes of a file name
        raw = raw[:240].lstrip(b".") or b"x"
        raw += suffix.encode()
        if raw.lower() not in taken:
            taken.add(raw.lower())
            return raw


def _encoded(text: str, rng: random.Random, how: str) -> bytes:
    """The IR's text in another form: a leading comment of tens of KB, UTF-16 LE or BE
    with or without a byte-order mark (its declaration saying UTF-16)."""
    body = _DECL.sub("", text, count=1).lstrip()
    if how == "comment":
        filler = "".join(rng.choice("ab <>&é\n") for _ in range(rng.randint(20_000, 90_000)))
        filler = filler.replace("--", "- ")
        return ('<?xml version="1.0"?>\n<!--' + filler + ' -->\n<?pi x?>\n' + body).encode()
    if how == "utf-8":
        return text.encode()
    codec = {"utf16le": "utf-16-le", "utf16be": "utf-16-be"}[how[:7]]
    data = ('<?xml version="1.0" encoding="UTF-16"?>\n' + body).encode(codec)
    return "\ufeff".encode(codec) + data if how.endswith("bom") else data


_FORMS = ("utf-8", "comment", "utf16le", "utf16be", "utf16le-bom", "utf16be-bom")


def _ir(folder: Path, raw: bytes, data: bytes, weights: Path) -> Path:
    path = Path(os.fsdecode(os.path.join(os.fsencode(folder), raw)))
    path.write_bytes(data)
    shutil.copy(weights, path.with_suffix(".bin"))
    return path


def hostile_folder(folder: Path, seed: int) -> dict[str, list]:
    """A folder of what the seed picks, with exactly one failing model (a sample with a
    tampered declared dim, in a random form and place). What each file is, by kind."""
    rng = random.Random(seed)
    taken: set[bytes] = set()
    kinds: dict[str, list] = {k: [] for k in ("failing", "ok", "skipped")}
    (folder / ".tampered").mkdir(parents=True)
    tampered = write_samples(folder / ".tampered")  # hidden: never searched
    sub = folder / rng.choice(["", "1", "10", "nested deep", "-dash"])
    sub.mkdir(parents=True, exist_ok=True)
    bad = (tampered / "loop_gather.xml").read_text("utf-8")
    kinds["failing"].append(_ir(sub, _name(rng, taken), _encoded(bad, rng, rng.choice(_FORMS)),
                                tampered / "loop_gather.bin"))
    clean = CLEAN.read_text("utf-8")
    for _ in range(rng.randint(2, 4)):
        kinds["ok"].append(_ir(folder, _name(rng, taken), _encoded(clean, rng, rng.choice(_FORMS)),
                               CLEAN.with_suffix(".bin")))
    for _ in range(rng.randint(1, 3)):  # FIFOs: opening one would wait for a writer forever
        path = folder / os.fsdecode(_name(rng, taken))
        os.mkfifo(path)
        kinds["skipped"].append(path)
    for _ in range(rng.randint(1, 2)):  # sockets: bound under a short name, then renamed
        here = os.getcwd()
        os.chdir(folder)  # a socket's path is at most 108 bytes
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.bind("s")
        finally:
            os.chdir(here)
        path = folder / os.fsdecode(_name(rng, taken))
        os.rename(folder / "s", path)
        kinds["skipped"].append(path)
    for _ in range(rng.randint(1, 2)):  # a link to itself, two links to each other
        a, b = (folder / os.fsdecode(_name(rng, taken)) for _ in range(2))
        a.symlink_to(a.name)
        b.symlink_to(folder / "nowhere" / "model.xml")  # broken
        kinds["skipped"] += [a, b]
    c, d = (folder / os.fsdecode(_name(rng, taken)) for _ in range(2))
    c.symlink_to(d.name)
    d.symlink_to(c.name)
    kinds["skipped"] += [c, d]
    for _ in range(rng.randint(1, 3)):  # no IR: another root element, no XML at all
        path = folder / os.fsdecode(_name(rng, taken))
        path.write_bytes(rng.choice([
            '<?xml version="1.0" encoding="UTF-16"?><annotation/>'.encode("utf-16"),
            b"<?xml version='1.0'?>\n<!-- <net> -->\n<project/>", b"", b"\x00\x01 no markup",
            ('<?xml version="1.0"?><!--' + "y" * 70_000 + "--><config/>").encode()]))
        kinds["skipped"].append(path)
    kinds["vanishing"] = [folder / os.fsdecode(_name(rng, taken)) for _ in range(2)]
    for path in kinds["vanishing"]:
        path.write_text(clean)
    kinds["skipped"] += kinds["vanishing"]
    return kinds


#: ``check`` with the listing of a folder wrapped: the files named in OVGATHER_VANISH are
#: removed after the listing and before they are read
_RUN = """
import os, sys
from ovgather.cli import folders, main
listed = folders._files_in
gone = [os.fsdecode(p) for p in os.fsencode(os.environ["OVGATHER_VANISH"]).split(b"\\n") if p]
def files_in(folder, empty):
    found = listed(folder, empty)
    for path in gone:
        if os.path.lexists(path):
            os.unlink(path)
    return found
folders._files_in = files_in
sys.exit(main(sys.argv[1:]))
"""


def _check(folder: Path, vanish: list[Path], *options: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OVGATHER_VANISH": os.fsdecode(b"\n".join(
        os.fsencode(p) for p in vanish))}
    return subprocess.run([sys.executable, "-c", _RUN, "check", str(folder), *options],
                          capture_output=True, text=True, errors="surrogateescape", env=env,
                          timeout=seconds(120))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("options", [(), ("--jobs", "3"), ("--skip-non-ir", "-j", "2")])
def test_a_hostile_folder_finds_its_failing_model_and_counts_every_file(tmp_path, seed,
                                                                          options):
    kinds = hostile_folder(tmp_path, seed * 7 + len(options))
    done = _check(tmp_path, kinds["vanishing"], "--json", *options)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    failing = [m["path"] for m in doc["models"] if m["summary"]["mismatch"]]
    assert failing == [str(p) for p in kinds["failing"]]
    assert sorted(m["path"] for m in doc["models"]) == sorted(
        str(p) for p in kinds["failing"] + kinds["ok"])
    t = doc["totals"]
    assert t["models"] == t["ok"] + t["failing"] + len(doc["errors"]) == len(doc["models"])
    assert (t["ok"], t["failing"], t["errors"]) == (len(kinds["ok"]), 1, 0)
    assert sorted(s["path"] for s in doc["skipped"]) == sorted(map(str, kinds["skipped"]))
    notes = [line for line in done.stderr.splitlines() if not line.startswith("note: --jobs")]
    assert len(notes) == t["skipped"] and all(n.startswith("note: skipped ") for n in notes)
    why = {s["path"]: s["why"] for s in doc["skipped"]}
    for path in kinds["vanishing"]:
        assert "vanished" in why[str(path)]
    assert any("FIFO" in w for w in why.values()) and any("socket" in w for w in why.values())
    assert any("link loop" in w for w in why.values())


def test_the_human_summary_adds_up(tmp_path):
    kinds = hostile_folder(tmp_path / "a", 11)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.xml").write_text("<config/>")
    done = _check(tmp_path / "a", kinds["vanishing"], str(tmp_path / "empty"))
    assert done.returncode == 2  # a folder without an IR
    line = next(x for x in done.stdout.splitlines() if x.startswith("summary: "))
    m = re.match(r"summary: (\d+) model\(s\): (\d+) ok, (\d+) failing, (\d+) could not be "
                 r"used; 1 folder\(s\) could not be used; (\d+) file\(s\) skipped$", line)
    assert m is not None, line
    models, ok, failing, unusable, skipped = map(int, m.groups())
    assert models == ok + failing + unusable == len(kinds["ok"]) + 1
    assert skipped == len(kinds["skipped"]) + 1  # and the config.xml of "empty"


def test_a_fifo_is_never_opened_and_a_file_gone_from_under_the_reader_is_its_error(tmp_path):
    """The FIFO alone in a folder: no hang (the timeout); a model removed after the
    folder was searched and before the reader reads it: that model's error line."""
    os.mkfifo(tmp_path / "model.xml")
    done = _check(tmp_path, [])
    assert done.returncode == 2 and "not a regular file (a FIFO)" in done.stderr
    assert done.stderr.splitlines()[-1].endswith("no IR in this folder (an .xml file whose "
                                                 "root element is <net>)")
    script = _RUN.replace("folders._files_in = files_in", """
found = folders.find_models
def find(inputs):
    got = found(inputs)
    os.unlink(got.models[0])
    return got
folders.find_models = find
import ovgather.cli.check as check
check.find_models = find""")
    _ir(tmp_path, b"gone.xml", CLEAN.read_bytes(), CLEAN.with_suffix(".bin"))
    _ir(tmp_path, b"kept.xml", CLEAN.read_bytes(), CLEAN.with_suffix(".bin"))
    done = subprocess.run([sys.executable, "-c", script, "check", str(tmp_path)],
                          capture_output=True, text=True, timeout=seconds(120),
                          env={**os.environ, "OVGATHER_VANISH": ""})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert [x for x in done.stderr.splitlines() if x.startswith("error: ")] == [
        f"error: {tmp_path / 'gone.xml'}: the IR file cannot be read: No such file or directory"]
    assert "summary: 2 model(s): 1 ok, 0 failing, 1 could not be used; 1 file(s) skipped" \
        in done.stdout


@pytest.mark.parametrize("form", _FORMS)
def test_the_root_is_read_after_any_prolog_in_any_encoding(tmp_path, form):
    path = tmp_path / "m.xml"
    path.write_bytes(_encoded(CLEAN.read_text("utf-8"), random.Random(form), form))
    assert root_element(str(path)) == "net"
    assert document_root(path)[:2] == ("net", "net")


def test_an_undecidable_file_goes_to_the_reader_never_dropped(tmp_path):
    """A prolog the XML parser stops in (an unknown encoding): the reader says why (exit
    2), it is no silent skip."""
    (tmp_path / "m.xml").write_bytes(b'<?xml version="1.0" encoding="no-such"?><net/>')
    done = _check(tmp_path, [])
    assert done.returncode == 2 and "note:" not in done.stderr
    assert done.stderr.startswith(f"error: {tmp_path / 'm.xml'}")


def test_jobs_are_capped_at_what_the_machine_allows_with_one_line(tmp_path):
    """--jobs 10000 under a low open-file limit: no "Too many open files", one note."""
    for i in range(24):
        _ir(tmp_path, f"m{i}.xml".encode(), CLEAN.read_bytes(), CLEAN.with_suffix(".bin"))
    script = ("import resource, sys\n"
              "resource.setrlimit(resource.RLIMIT_NOFILE, (48, resource.getrlimit("
              "resource.RLIMIT_NOFILE)[1]))\n"
              "from ovgather.cli import folders\n"
              "folders._cores = lambda: 10000\n"  # a big machine: the file limit caps it
              "from ovgather.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    done = subprocess.run([sys.executable, "-c", script, "check", str(tmp_path), "--jobs",
                           "10000"], capture_output=True, text=True, timeout=seconds(300))
    assert done.returncode == 0, done.stderr
    assert "Too many open files" not in done.stderr + done.stdout
    notes = done.stderr.splitlines()
    assert len(notes) == 1 and re.match(r"note: --jobs 10000: running \d+ worker process\(es\)"
                                        r" at once, .*open-file limit.* for 24 model\(s\)$",
                                        notes[0]), notes
    assert "summary: 24 model(s): 24 ok, 0 failing, 0 could not be used" in done.stdout


def test_worker_count_never_passes_the_cores_the_files_or_the_models():
    cores = len(os.sched_getaffinity(0))
    assert worker_count(10_000, 3) == (min(cores, 3), None if cores >= 3 else worker_count(
        10_000, 3)[1])
    count, why = worker_count(10_000, 10_000)
    assert count == cores and why is not None and f"{cores} CPU core(s)" in why
    assert worker_count(1, 5) == (1, None) and worker_count(0, 1000)[0] == cores
