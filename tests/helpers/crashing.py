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
