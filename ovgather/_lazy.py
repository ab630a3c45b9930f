"""numpy and networkx, imported when first used.

``ovgather check`` on a usual IR needs neither: it reads the XML with lxml, keeps the graph
in plain dicts and infers shapes with Python ints. Importing numpy (~120 ms) and networkx
(~190 ms) up front would cost more than the whole check of a transformer IR. The modules on
that path bind ``np``/``nx`` through :func:`lazy_import`, which defers the real import to
the first attribute access (importlib's ``LazyLoader``); everything else imports them as
usual.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_import(name: str) -> ModuleType:
    """Module ``name``, loaded on its first attribute access (at once if already loaded)."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:  # pragma: no cover - a broken install
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module



numpy = lazy_import("numpy")
networkx = lazy_import("networkx")
