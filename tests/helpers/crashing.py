"""Runtime work that ends its process by a signal, as a crash in OpenVINO's native code
does: run in ovgather's runtime worker (by reference, so importable there) to prove that
such a crash becomes a reported layer and the rest of the model still runs."""

from __future__ import annotations

import os
import signal
from typing import Any

from ovgather import runtime


def run_cases_or_die(cases: list[Any], *, marker: str, **kwargs: Any) -> list[Any]:
    """``runtime.run_cases``, unless a case is the layer named ``marker``: then SIGSEGV."""
    if any(case.label == marker for case in cases):
        os.kill(os.getpid(), signal.SIGSEGV)
    return runtime.run_cases(cases, **kwargs)


def squares_or_die(items: list[int], *, bad: set[int]) -> list[int]:
    """The square of each item, unless an item is in ``bad``: then SIGSEGV."""
    if bad & set(items):
        os.kill(os.getpid(), signal.SIGSEGV)
    return [i * i for i in items]


def shapes_refusing_many(xml: str, wanted: list, *args: Any, limit: int) -> Any:
    """``validate.runner.shapes_in_worker``, but a compile with more than ``limit`` extra
    outputs is refused, as the CPU plugin refuses some models with many
    (``leaf_names.find(res_name)`` in icompiled_model.cpp)."""
    from ovgather.errors import RuntimeBridgeError
    from ovgather.validate.runner import shapes_in_worker

    if len(wanted) > limit:
        raise RuntimeBridgeError("the CPU plugin could not compile: Check 'leaf_names.find("
                                 "res_name) != leaf_names.end()' failed (stub)")
    return shapes_in_worker(xml, wanted, *args)


def shapes_crashing_at(xml: str, wanted: list, threads: Any, ranks_only: bool, cut: bool,
                       *args: Any, marker: str) -> Any:
    """``validate.runner.shapes_in_worker``, but the process dies by SIGSEGV whenever the
    layer named ``marker`` would run: always in the whole model, in a cut model when an
    output asked for is that layer or depends on it."""
    import networkx as nx

    from ovgather.ir import read_ir
    from ovgather.validate.runner import shapes_in_worker

    G = read_ir(xml)
    node = next(n for n, a in G.nodes(data=True) if a["name"] == marker)
    reach = {G.nodes[n]["name"] for n in nx.descendants(G, node)} | {marker}
    if not cut or any(name in reach for name, _ in wanted):
        os.kill(os.getpid(), signal.SIGSEGV)
    return shapes_in_worker(xml, wanted, threads, ranks_only, cut, *args)
