"""numpy and networkx, imported when first used, safely from any thread.

``ovgather check`` on a usual IR needs neither: it reads the XML with lxml, keeps the graph
in plain dicts and infers shapes with Python ints. Importing numpy (~120 ms) and networkx
(~190 ms) up front would cost more than the whole check of a transformer IR. The modules on
that path bind ``np``/``nx`` through :func:`lazy_import`: a stand-in module whose first
attribute lookup imports the real one and takes over its namespace.

importlib's ``LazyLoader`` is not used: on Python 3.11 it lets a second thread see the
half-loaded module (``module 'networkx' has no attribute 'MultiDiGraph'``). Here the real
import goes through ``importlib.import_module`` (which holds the module's import lock) and
the stand-in fills its namespace under a lock of its own before any lookup returns.

>>> m = lazy_import("json")
>>> m.dumps([1])
'[1]'
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["lazy_import", "submodule_exports", "numpy", "networkx"]


class _Deferred(ModuleType):
    """Module ``name`` that imports itself on its first attribute lookup."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_lock"] = threading.Lock()

    def __getattr__(self, attr: str) -> Any:
        # only reached while the namespace is still empty of ``attr``
        with self.__dict__["_lock"]:
            real = importlib.import_module(self.__name__)
            self.__dict__.update(vars(real))
        return getattr(real, attr)


def lazy_import(name: str) -> ModuleType:
    """Module ``name``, loaded on its first attribute access (at once if already loaded)."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    if importlib.util.find_spec(name) is None:  # pragma: no cover - a broken install
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return _Deferred(name)


def submodule_exports(package: str, table: dict[str, str]) -> Callable[[str], Any]:
    """A package's ``__getattr__`` (PEP 562) for names defined in its submodules that a
    command may never need (``ir.write_ir`` for ``check``): ``table`` maps each name to
    its submodule, imported on the name's first use."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


numpy = lazy_import("numpy")
networkx = lazy_import("networkx")
