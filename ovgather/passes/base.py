"""The pass base: ``call(G) -> PassResult(G, modified)``, in onnx_ir's style.

A pass is one class. Its body is guard clauses (does this layer need the rewrite at
all?) then one rewrite; it reports ``modified`` honestly, so running it a second time
on its own output returns ``modified=False`` and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import networkx as nx

__all__ = ["Pass", "PassResult"]


@dataclass
class PassResult:
    """What a pass returns: the graph (edited in place), whether it changed, and a
    record per rewrite for reports (``--json``)."""

    graph: nx.MultiDiGraph
    modified: bool
    changes: list[dict[str, Any]] = field(default_factory=list)


class Pass:
    """Base of the graph passes. Subclasses implement :meth:`call`."""

    def call(self, G: nx.MultiDiGraph) -> PassResult:
        """Rewrite ``G`` in place and say whether anything changed."""
        raise NotImplementedError

    def __call__(self, G: nx.MultiDiGraph) -> PassResult:
        return self.call(G)
