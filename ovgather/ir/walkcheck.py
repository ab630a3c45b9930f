"""Warn when the compiled IR walk is missing although this ovgather was installed with it.

The typical case: ``pip install .`` built ``ovgather/ir/_fastwalk*.so`` into site-packages,
then Python is started from the repository root, where ``import ovgather`` finds the
source tree first, which has no compiled module. Reading still works (the pure-Python
walk gives the same results) but is ~1.7× slower, so say it once.

The rule: warn when the imported package has no ``_fastwalk`` extension module while the
installed ``ovgather`` distribution lists one among its files. An install that never had
a C compiler lists none, so it stays quiet: its slower reading is what was expected.
"""

from __future__ import annotations

import importlib.machinery
import os
import warnings

__all__ = ["CompiledWalkMissingWarning", "warn_if_walk_missing", "installed_walk"]

_SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)
_checked = False


class CompiledWalkMissingWarning(RuntimeWarning):
    """The imported ovgather lacks the compiled IR walk that its installed copy has."""


def _package_has_walk(package_dir: str) -> bool:
    try:
        names = os.listdir(package_dir)
    except OSError:
        return False
    return any(n.startswith("_fastwalk.") and n.endswith(_SUFFIXES) for n in names)


def installed_walk() -> str | None:
    """The compiled walk an installed ``ovgather`` distribution lists, else None.

    Every ``ovgather`` metadata on the path is asked, not only the first: ``pip install .``
    leaves an ``ovgather.egg-info`` in the source tree, which Python started there finds
    first, and its file list never holds the built module.
    """
    from importlib import metadata

    for dist in metadata.distributions(name="ovgather"):
        for f in dist.files or []:
            if f.parts[:2] == ("ovgather", "ir") and f.name.startswith("_fastwalk.") \
                    and f.name.endswith(_SUFFIXES):
                return str(f.locate())
    return None


def warn_if_walk_missing() -> None:
    """Warn (``CompiledWalkMissingWarning``) when the rule above holds; once a process."""
    global _checked
    if _checked:
        return
    _checked = True
    here = os.path.dirname(os.path.abspath(__file__))  # ovgather/ir, the walk beside it
    if _package_has_walk(here):
        return
    other = installed_walk()
    if other is None or os.path.dirname(os.path.abspath(other)) == here:
        return
    warnings.warn(
        f"ovgather is imported from {here}, which has no compiled IR walk, while the "
        f"installed ovgather has one ({other}): reading IRs is ~1.7x slower. Start Python "
        "outside the source tree, or build it there with: pip install -e .",
        CompiledWalkMissingWarning, stacklevel=3)
