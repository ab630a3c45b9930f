"""``ovgather compare A B --input …`` on hostile input files and arrays, each CLASS of
problem drawn by a seeded generator (random names, sizes, dtypes and file kinds):

- a bad ``.npy``/``.npz`` (a header claiming 10^12 elements, objects or a pickle, strings
  for a number, a truncated file, a header lying about its size, a member that is no
  ``.npy``) is one ``error:`` line naming the file (and member) and what is wrong, exit 2;
  an ``.npz`` small on disk and huge inflated is refused before the process grows;
- one input fed twice under two of its names is refused, naming both;
- an index array out of its table's range is refused before running, naming the input,
  the range and the value; an index array in range runs.
"""

from __future__ import annotations

import json
import os
import pickle
import string
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from numpy.lib import format as npy_format

from ovgather.cli import main
from ovgather.comparison.inputs import read_npz

ROOT = Path(__file__).resolve().parents[2]
TABLE = 10  # rows of the table ``ids`` indexes


def _model(path: Path) -> Path:
    """Inputs x (f32 [2,3]), ids (i64 [4], indexing a table of TABLE rows), z (bf16 [3])."""
    x = ops.parameter([2, 3], np.float32, name="x")
    ids = ops.parameter([4], np.int64, name="ids")
    z = ops.parameter([3], ov.Type.bf16, name="z")
    for p, n in ((x, "x"), (ids, "ids"), (z, "z")):
        p.output(0).set_names({n})
    table = ops.constant(np.arange(TABLE * 2, dtype=np.float32).reshape(TABLE, 2))
    outs = [ops.relu(x), ops.gather(table, ids, ops.constant(np.int64(0))),
            ops.convert(z, "f32")]
    for o, n in zip(outs, ("rx", "g", "fz"), strict=True):
        o.output(0).set_names({n})
    path.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov.Model(outs, [x, ids, z], "m"), str(path))
    return path


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return _model(tmp_path_factory.mktemp("m") / "model.xml")


def _name(rng: np.random.Generator) -> str:
    letters = string.ascii_lowercase + string.digits + "_-"
    return "".join(rng.choice(list(letters), size=int(rng.integers(3, 12))))


def _header_only(path: Path, shape: tuple[int, ...], descr: str, extra: bytes) -> None:
    with open(path, "wb") as f:
        npy_format.write_array_header_1_0(f, {"descr": descr, "fortran_order": False,
                                              "shape": shape})
        f.write(extra)


NPY_KINDS = ("huge", "objects", "strings", "truncated", "longer", "bf16 strings")
NPZ_KINDS = ("npz huge", "npz objects", "npz pickle member", "npz truncated",
             "npz strings", "npz lying member")


def _bad(kind: str, rng: np.random.Generator, folder: Path) -> tuple[list[str], list[str]]:
    """``--input`` items of one bad file of ``kind`` and what its error line must say."""
    name = _name(rng)
    npy, npz = folder / f"{name}.npy", folder / f"{name}.npz"
    dtype = str(rng.choice(["<f4", "<i8", "<f8", "|u1"]))
    if kind == "huge":
        shape = (10**6, 10**6) if rng.random() < 0.5 else (10**12,)
        _header_only(npy, shape, dtype, rng.bytes(int(rng.integers(0, 64))))
        return [f"x={npy}"], [str(npy), "memory budget"]
    if kind == "objects":
        np.save(npy, np.array([{"a": 1}] * 6, dtype=object).reshape(2, 3),
                allow_pickle=True)
        return [f"x={npy}"], [str(npy), "Python objects"]
    if kind in ("strings", "bf16 strings"):
        target, shape = ("x", (2, 3)) if kind == "strings" else ("z", (3,))
        words = rng.choice(["ab", "1.5", "nan", "x"], size=shape)
        np.save(npy, words.astype("U") if rng.random() < 0.5 else words.astype("S"))
        return [f"{target}={npy}"], ["input '" + target + "'", "the array given is"]
    if kind == "truncated":
        np.save(npy, rng.standard_normal((2, 3)).astype(np.float32))
        data = npy.read_bytes()
        npy.write_bytes(data[:int(rng.integers(len(data) - 20, len(data) - 1))])
        return [f"x={npy}"], [str(npy), "truncated"]
    if kind == "longer":
        np.save(npy, rng.standard_normal((2, 3)).astype(np.float32))
        npy.write_bytes(npy.read_bytes() + rng.bytes(int(rng.integers(1, 100))))
        return [f"x={npy}"], [str(npy), "longer than its header says"]
    member = str(rng.choice(["x", "ids", "z"]))
    if kind == "npz huge":
        with zipfile.ZipFile(npz, "w") as zf:
            with zf.open(f"{member}.npy", "w") as f:
                npy_format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False,
                                                      "shape": (10**12,)})
        return [str(npz)], [str(npz), f"member '{member}.npy'", "memory budget"]
    if kind == "npz objects":
        np.savez(npz, **{member: np.array([None, {"k": 1}], dtype=object)})
        return [str(npz)], [str(npz), f"member '{member}.npy'", "Python objects"]
    if kind == "npz pickle member":
        with zipfile.ZipFile(npz, "w") as zf:
            zf.writestr(f"{member}.pkl", pickle.dumps([1, 2, 3]))
        return [str(npz)], [str(npz), f"member '{member}.pkl'", "no .npy array"]
    if kind == "npz truncated":
        np.savez(npz, x=rng.standard_normal((2, 3)).astype(np.float32),
                 ids=np.arange(4, dtype=np.int64))
        data = npz.read_bytes()
        npz.write_bytes(data[:int(rng.integers(30, len(data) - 30))])
        return [str(npz)], [str(npz), "truncated or damaged"]
    if kind == "npz strings":
        np.savez(npz, x=np.array([["a"] * 3] * 2))
        return [str(npz)], ["input 'x'", "the array given is <U1"]
    if kind == "npz lying member":
        with zipfile.ZipFile(npz, "w") as zf:
            with zf.open(f"{member}.npy", "w") as f:
                npy_format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False,
                                                      "shape": (1000,)})
                f.write(b"\0" * int(rng.integers(0, 3999)))
        return [str(npz)], [str(npz), f"member '{member}.npy'", "truncated"]
    raise AssertionError(kind)


@pytest.mark.parametrize("seed", range(4))
def test_every_kind_of_bad_input_file_is_one_error_line(seed, model, tmp_path, capsys):
    rng = np.random.default_rng([20261207, seed])
    kinds = list(NPY_KINDS + NPZ_KINDS)
    rng.shuffle(kinds)
    for kind in kinds:
        folder = tmp_path / kind.replace(" ", "_")
        folder.mkdir()
        items, said = _bad(kind, rng, folder)
        argv = ["compare", str(model), str(model)]
        for item in items:
            argv += ["--input", item]
        budget = ["--memory-budget", str(rng.choice(["64M", "1G", "2GiB"]))]
        assert main(argv + budget) == 2, kind
        captured = capsys.readouterr()
        lines = captured.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (kind, captured.err)
        assert "internal error" not in lines[0], (kind, lines[0])
        for words in said:
            assert words in lines[0], (kind, words, lines[0])


def _bomb(path: Path, inflated: int) -> None:
    """An .npz whose one member, ``x.npy``, is a header and ``inflated`` zero bytes:
    about inflated / 1000 bytes on disk (written a MiB at a time)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open("x.npy", "w", force_zip64=True) as f:
            npy_format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False,
                                                  "shape": (inflated // 4,)})
            zeros = bytes(1 << 20)
            for _ in range(inflated >> 20):
                f.write(zeros)


def test_a_small_npz_that_inflates_past_the_budget_is_refused_before_it_grows(
        model, tmp_path):
    inflated = 400 << 20
    bomb = tmp_path / "bomb.npz"
    _bomb(bomb, inflated)
    assert bomb.stat().st_size < 1 << 20
    # a small launcher starts ovgather and reports its peak: a child forked from this
    # (big) test process would count this process's pages as its own until its exec
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK_OF_CHILD, sys.executable, "-m", "ovgather", "compare",
         str(model), str(model), "--input", str(bomb), "--memory-budget", "64M"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    *err, peak_kib = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stderr
    [line] = err
    assert str(bomb) in line and "member 'x.npy'" in line and "memory budget" in line
    assert int(peak_kib) * 1024 < inflated // 2, peak_kib  # ru_maxrss: KiB


#: run argv[1:], pass its stderr on, then print its own peak RSS (KiB) as a last line
_PEAK_OF_CHILD = """
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = p.stderr.read()
_, status, usage = os.wait4(p.pid, 0)
sys.stderr.write(err.decode() + str(usage.ru_maxrss) + "\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_an_npz_within_the_budget_is_read_exactly(tmp_path):
    rng = np.random.default_rng(3)
    for k in range(8):
        arrays = {_name(rng): rng.standard_normal(tuple(rng.integers(0, 5, size=rng.integers(
            0, 4)))).astype(rng.choice(["float32", "int64", "float16", "uint8"]))
            for _ in range(int(rng.integers(1, 4)))}
        path = tmp_path / f"{k}.npz"
        (np.savez_compressed if k % 2 else np.savez)(path, **arrays)
        got = read_npz(path)
        assert set(got) == set(arrays)
        for name, array in arrays.items():
            assert got[name].dtype == array.dtype and np.array_equal(got[name], array)


def _aliased(path: Path) -> Path:
    """One input with tensor names x and x_alias (and its friendly name p)."""
    x = ops.parameter([2, 3], np.float32, name="p")
    x.output(0).set_names({"x", "x_alias"})
    y = ops.relu(x)
    y.output(0).set_names({"y"})
    ov.save_model(ov.Model([y], [x], "aliased"), str(path))
    return path


@pytest.mark.parametrize("seed", range(3))
def test_one_input_fed_twice_under_two_names_is_refused(seed, tmp_path, capsys):
    rng = np.random.default_rng(seed)
    a = _aliased(tmp_path / "a.xml")
    names = list(rng.permutation(["x", "x_alias", "p"]))[:2]
    items = []
    for k, n in enumerate(names):
        np.save(tmp_path / f"{k}.npy", rng.standard_normal((2, 3)).astype(np.float32))
        items += ["--input", f"{n}={tmp_path / f'{k}.npy'}"]
    assert main(["compare", str(a), str(a), *items]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("error: ") and f"'{names[0]}'" in line and f"'{names[1]}'" in line
    assert "two names of one input" in line


@pytest.mark.parametrize("seed", range(4))
def test_indices_out_of_range_are_refused_before_running(seed, model, tmp_path, capsys):
    rng = np.random.default_rng([7, seed])
    ids = rng.integers(-TABLE, TABLE, size=4)
    at = int(rng.integers(0, 4))
    far = int(rng.choice([TABLE, TABLE + 1, 10**12, -TABLE - 1, -(10**15)]))
    ids[at] = far
    np.save(tmp_path / "ids.npy", ids)
    argv = ["compare", str(model), str(model), "--input", f"ids={tmp_path / 'ids.npy'}"]
    assert main(argv) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "input 'ids'" in line and f"[{-TABLE},{TABLE})" in line
    assert f"holds {far} at [{at}]" in line and "refused before running" in line
    ids[at] = int(rng.integers(-TABLE, TABLE))  # in range, negatives from the end: runs
    np.save(tmp_path / "ids.npy", ids)
    assert main([*argv, "--json", "--allow-unproven"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {i["name"]: i["values"] for i in doc["inputs"]}["ids"] == "given"
