"""The user's input arrays: ``.npy`` and ``.npz`` files read without pickles, named by the
model inputs they feed (``compare --input NAME=FILE.npy`` or ``--input FILE.npz``).

A file is hostile until its header says otherwise. Each ``.npy`` header (and, in an
``.npz``, each member's header inside the zip, and the member's inflated size from its
``ZipInfo``) is read and checked before any array memory is allocated:

- the data type is a plain NumPy one (never Python objects: a pickle, a structured type);
- the bytes the header claims (shape times item size, counted in Python integers) fit
  ``memory_budget``, all the files together too (an ``.npz`` of 0.4 MB that inflates to
  400 MB is refused before it is inflated);
- the file (the member) holds exactly those bytes after the header: a truncated file and
  a header lying about its size are refused;
- an ``.npz`` member is an ``.npy`` array (a raw pickle or another file is refused).

Every refusal is a :class:`~ovgather.errors.CompareError` naming the file, the member of
an ``.npz`` and what is wrong; the data is then read into memory of exactly that size.
"""

from __future__ import annotations

import contextlib
import math
import os
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.lib import format as npy_format

from ..errors import CompareError, UsageError
from ..validate.memory import DEFAULT_MEMORY_BUDGET, size_text

__all__ = ["load_inputs", "inputs_from_options", "name_pairs", "read_npy", "read_npz"]

#: The largest ``.npy`` header read (NumPy's own default limit).
MAX_HEADER = 10_000


class _Budget:
    """Bytes the input files may still claim, all files together."""

    def __init__(self, total: int) -> None:
        self.total, self.used = int(total), 0

    def take(self, n: int, what: str, file: str) -> None:
        if self.used + n > self.total:
            before = f" beside the {size_text(self.used)} of the inputs read before it" \
                if self.used else ""
            raise CompareError(f"{what} needs {size_text(n)} ({n} bytes){before}, more than "
                               f"the memory budget of {size_text(self.total)} "
                               f"(--memory-budget)", file=file)
        self.used += n


def load_inputs(source: Mapping[str, Any] | str | os.PathLike, *,
                memory_budget: int = DEFAULT_MEMORY_BUDGET) -> dict[str, np.ndarray]:
    """Input arrays by name from ``source``: a mapping of names to arrays or ``.npy``
    paths, or the path of one ``.npz`` (its keys the names). Files are read without
    pickles, their headers checked against ``memory_budget`` (bytes, every file together)
    before anything is allocated; a file that is no plain NumPy array, is truncated or
    says it holds more than the budget is a CompareError naming it (and its member)."""
    budget = _Budget(memory_budget)
    if isinstance(source, (str, os.PathLike)):
        path = _existing(source)
        if not _is_zip(path):
            raise CompareError("an .npz file of every input (named by the inputs' "
                               "names) is needed here, but this is one array",
                               file=str(source))
        return read_npz(path, budget)
    out = {}
    for name, value in source.items():
        if isinstance(value, (str, os.PathLike)):
            path = _existing(value)
            if _is_zip(path):
                with _zip(path) as held:
                    count = len(held.namelist())
                raise CompareError(f"input '{name}' needs one array (an .npy file), but "
                                   f"this is an .npz of {count}", file=str(value))
            out[name] = read_npy(path, budget)
        else:
            out[name] = np.asarray(value)
    return out


def _existing(path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.is_file():
        raise CompareError("the input file does not exist", file=str(path))
    return p


def _is_zip(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PK\x03\x04"
    except OSError as err:
        raise CompareError(f"the input file cannot be read: {err.strerror or err}",
                           file=str(path)) from err


def _zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
        raise CompareError(f"this .npz is no readable zip archive (truncated or damaged?): "
                           f"{_words(err)}", file=str(path)) from err


def _words(err: BaseException) -> str:
    text = str(err).splitlines()[0][:200] if str(err) else ""
    return text or type(err).__name__


def read_npy(path: str | os.PathLike, budget: _Budget | int = DEFAULT_MEMORY_BUDGET
             ) -> np.ndarray:
    """The array of one ``.npy`` file, its header checked first (see the module)."""
    budget = budget if isinstance(budget, _Budget) else _Budget(budget)
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            return _read_array(f, size, str(path), "", budget)
    except OSError as err:
        raise CompareError(f"the input file cannot be read: {err.strerror or err}",
                           file=str(path)) from err


def read_npz(path: str | os.PathLike, budget: _Budget | int = DEFAULT_MEMORY_BUDGET
             ) -> dict[str, np.ndarray]:
    """The arrays of one ``.npz``, by member name less ``.npy``: every member's inflated
    size and header checked before any member's data is read (see the module)."""
    budget = budget if isinstance(budget, _Budget) else _Budget(budget)
    path, out = Path(path), {}
    with _zip(path) as held:
        members = [i for i in held.infolist() if not i.is_dir()]
        for info in members:
            where = f"member '{info.filename}' of this .npz"
            if not info.filename.endswith(".npy"):
                raise CompareError(f"{where} is no .npy array (an .npz holds one .npy per "
                                   f"input; a pickle or another file is refused)",
                                   file=str(path))
        seen = _Budget(budget.total - budget.used)
        for info in members:  # every header before any data
            seen.take(info.file_size, f"member '{info.filename}' of this .npz (inflated)",
                      str(path))
        for info in members:
            name = info.filename[:-len(".npy")]
            if name in out:
                raise CompareError(f"this .npz names input '{name}' twice", file=str(path))
            with _member(held, info, path) as f:
                _header(f, info.file_size, str(path), info.filename)
            out[name] = None
        for info in members:
            name = info.filename[:-len(".npy")]
            with _member(held, info, path) as f:
                out[name] = _read_array(f, info.file_size, str(path), info.filename, budget)
    return out


def _header(f: IO[bytes], size: int, file: str, member: str
            ) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """``(shape, fortran order, dtype, data bytes)`` of the ``.npy`` header at ``f``,
    checked: a plain data type, and ``size`` (the file's bytes) holding exactly the data
    the header claims after it."""
    where = f"member '{member}' of this .npz" if member else "this .npy file"
    try:
        version = npy_format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = npy_format.read_array_header_1_0(f, MAX_HEADER)
        elif version == (2, 0):
            shape, fortran, dtype = npy_format.read_array_header_2_0(f, MAX_HEADER)
        elif version == (3, 0) and hasattr(npy_format, "_read_array_header"):
            shape, fortran, dtype = npy_format._read_array_header(f, version, MAX_HEADER)
        else:
            raise ValueError(f"unknown .npy format version {version}")
    except (ValueError, EOFError, OSError, SyntaxError, TypeError, zipfile.BadZipFile) as err:
        raise CompareError(f"NumPy could not read {where}: it is no .npy array (its "
                           f"header cannot be read: {_words(err)})", file=file) from err
    if not isinstance(shape, tuple) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise CompareError(f"{where} has a header of no valid shape ({shape!r})", file=file)
    if dtype.hasobject:
        raise CompareError(f"{where} holds Python objects (dtype {dtype}: a pickle), which "
                           f"are never loaded; save a numeric array", file=file)
    if dtype.fields is not None or dtype.subdtype is not None or dtype.kind == "V":
        raise CompareError(f"{where} holds a structured or raw type ({dtype}), not the "
                           f"numbers or strings of an input", file=file)
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    header = f.tell()
    left = size - header
    shown = "[" + ",".join(map(str, shape)) + "]"
    if left != nbytes and nbytes <= size:
        how = "truncated" if left < nbytes else "longer than its header says"
        raise CompareError(f"{where} is {how}: its header says shape {shown} of {dtype} "
                           f"({nbytes} bytes of data), but it holds {max(left, 0)}",
                           file=file)
    return shape, fortran, dtype, nbytes


def _read_array(f: IO[bytes], size: int, file: str, member: str, budget: _Budget
                ) -> np.ndarray:
    shape, fortran, dtype, nbytes = _header(f, size, file, member)
    where = f"member '{member}' of this .npz" if member else "this .npy file"
    shown = "[" + ",".join(map(str, shape)) + "]"
    budget.take(nbytes, f"{where} (shape {shown} of {dtype}, by its header)", file)
    if size - f.tell() != nbytes:  # the header claims more than the budget-free check
        raise CompareError(f"{where} is truncated: its header says shape {shown} of "
                           f"{dtype} ({nbytes} bytes of data), but it holds "
                           f"{max(size - f.tell(), 0)}", file=file)
    buf = bytearray(nbytes)
    view, got = memoryview(buf), 0
    while got < nbytes:
        n = f.readinto(view[got:]) if hasattr(f, "readinto") else 0
        if not n:
            break
        got += n
    if got != nbytes:
        raise CompareError(f"{where} is truncated: its header says {nbytes} bytes of data, "
                           f"but only {got} could be read", file=file)
    array = np.frombuffer(buf, dtype=dtype, count=math.prod(shape))
    return array.reshape(shape, order="F" if fortran else "C")


def name_pairs(items: list[str] | None, option: str, what: str) -> dict[str, str]:
    """``NAME=VALUE`` items as a dict; a UsageError for one without ``=`` or a name given
    twice."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"{option} takes {what}, but got '{item[:80]}'")
        if name in out:
            raise UsageError(f"{option} names each input once, but '{name}' is given twice")
        out[name] = value
    return out


def inputs_from_options(items: list[str] | None, *,
                        memory_budget: int = DEFAULT_MEMORY_BUDGET) -> dict[str, Any] | None:
    """The arrays ``--input`` gives, by input name: ``NAME=FILE.npy`` items and the
    arrays of each ``FILE.npz``, every file's header checked against ``memory_budget``
    (all files together) before its data is read."""
    if not items:
        return None
    files = [i for i in items if "=" not in i]
    for path in files:
        if not path.lower().endswith(".npz"):
            raise UsageError(f"--input takes NAME=FILE.npy or FILE.npz, but got "
                             f"'{path[:80]}'")
    budget = _Budget(memory_budget)
    out: dict[str, Any] = {}
    for name, path in name_pairs([i for i in items if "=" in i], "--input",
                                 "NAME=FILE.npy").items():
        out.update(_load_one(name, path, budget))
    for path in files:
        p = _existing(path)
        if not _is_zip(p):
            raise CompareError("an .npz file of every input (named by the inputs' names) "
                               "is needed here, but this is one array", file=path)
        for name, array in read_npz(p, budget).items():
            if name in out:
                raise UsageError(f"--input names each input once, but '{name}' is given "
                                 f"twice (in {path})")
            out[name] = array
    return out


def _load_one(name: str, path: str, budget: _Budget) -> dict[str, np.ndarray]:
    p = _existing(path)
    if _is_zip(p):
        with _zip(p) as held:
            count = len(held.namelist())
        raise CompareError(f"input '{name}' needs one array (an .npy file), but this is an "
                           f".npz of {count}", file=path)
    return {name: read_npy(p, budget)}


@contextlib.contextmanager
def _member(held: zipfile.ZipFile, info: zipfile.ZipInfo, path: Any) -> Iterator[Any]:
    """One member of an ``.npz`` opened for reading; a zip or read failure is one
    CompareError naming the file and the member."""
    try:
        with held.open(info) as f:
            yield f
    except CompareError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError,
            NotImplementedError) as err:
        raise CompareError(f"member '{info.filename}' of this .npz cannot be read "
                           f"(truncated or damaged?): {_words(err)}", file=str(path)) from err
