"""The user's input arrays: ``.npy`` and ``.npz`` files read without pickles, named by the
model inputs they feed (``compare --input NAME=FILE.npy`` or ``--input FILE.npz``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CompareError, UsageError

__all__ = ["load_inputs", "inputs_from_options", "name_pairs"]


def load_inputs(source: Mapping[str, Any] | str | os.PathLike) -> dict[str, np.ndarray]:
    """Input arrays by name from ``source``: a mapping of names to arrays or ``.npy``
    paths, or the path of one ``.npz`` (its keys the names). Files are read without
    pickles; a file NumPy cannot read is a CompareError naming it."""
    if isinstance(source, (str, os.PathLike)):
        with _opened(source) as held:
            if not hasattr(held, "files"):
                raise CompareError("an .npz file of every input (named by the inputs' "
                                   "names) is needed here, but this is one array",
                                   file=str(source))
            return {name: held[name] for name in held.files}
    out = {}
    for name, value in source.items():
        if isinstance(value, (str, os.PathLike)):
            with _opened(value) as held:
                if hasattr(held, "files"):
                    raise CompareError(f"input '{name}' needs one array (an .npy file), "
                                       f"but this is an .npz of {len(held.files)}",
                                       file=str(value))
                out[name] = held
        else:
            out[name] = np.asarray(value)
    return out


class _opened:  # noqa: N801 - used as a function: ``with _opened(path) as array_or_npz``
    def __init__(self, path: str | os.PathLike) -> None:
        self.path, self.held = Path(path), None

    def __enter__(self) -> Any:
        if not self.path.is_file():
            raise CompareError("the input file does not exist", file=str(self.path))
        try:
            self.held = np.load(self.path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as err:
            raise CompareError(f"NumPy could not read this input file (.npy or .npz): "
                               f"{str(err).splitlines()[0][:200] if str(err) else err!r}",
                               file=str(self.path)) from err
        return self.held

    def __exit__(self, *exc: object) -> None:
        if hasattr(self.held, "close"):
            self.held.close()



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


def inputs_from_options(items: list[str] | None) -> dict[str, Any] | None:
    """The arrays ``--input`` gives, by input name: ``NAME=FILE.npy`` items and the
    arrays of each ``FILE.npz``."""
    if not items:
        return None
    files = [i for i in items if "=" not in i]
    for path in files:
        if not path.lower().endswith(".npz"):
            raise UsageError(f"--input takes NAME=FILE.npy or FILE.npz, but got "
                             f"'{path[:80]}'")
    out = load_inputs(name_pairs([i for i in items if "=" in i], "--input", "NAME=FILE.npy"))
    for path in files:
        for name, array in load_inputs(path).items():
            if name in out:
                raise UsageError(f"--input names each input once, but '{name}' is given "
                                 f"twice (in {path})")
            out[name] = array
    return out
