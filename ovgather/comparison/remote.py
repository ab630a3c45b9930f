"""The OpenVINO (and ONNX Runtime) work of ``compare`` in the runtime worker process
(``runtime.worker``): a native crash of the CPU plugin on the user's arrays ends that
child, never ``compare``, and becomes a reported result.

The parent reads both models (their inputs and outputs, the sizes to run, the arrays to
feed: OpenVINO's reader and shape inference, nothing compiled); the child compiles and
runs them, keeps each run's outputs where the runtime wrote them and compares them there
(so that the outputs are never copied through the pipe: only the verdicts come back).
A :class:`Session` names what it keeps in the child by keys of its own, opens a model
again when the child that held it died, and lets it all go at the end.

The functions below ``# -- in the child`` run there (sent by reference: module and name).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import RuntimeBridgeError
from ..runtime.worker import RuntimeCrash, Worker, shared_worker

__all__ = ["Session", "crash_words", "RuntimeCrash"]

_COUNTER = itertools.count()


class Session:
    """Models held in the runtime worker for one comparison; ``with`` lets them go."""

    def __init__(self, worker: Worker | None = None) -> None:
        self.worker = worker if worker is not None else shared_worker()
        self._open: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {}
        self._generation: dict[str, int | None] = {}
        self._prefix = f"compare-{os.getpid()}-{next(_COUNTER)}"
        #: crashes of the child so far (a crash on one model ends what the child held)
        self.crashes = 0

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def key(self, name: str) -> str:
        return f"{self._prefix}-{name}"

    def open(self, key: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(key, *args)`` in the child (it opens what ``key`` names there); called
        again, before the next call on ``key``, whenever the child has been replaced."""
        self._open[key] = (fn, args)
        return self._reopen(key)

    def _reopen(self, key: str) -> Any:
        fn, args = self._open[key]
        result = self._call(fn, key, os.getcwd(), *args)
        self._generation[key] = self.worker.generation
        return result

    def call(self, fn: Callable[..., Any], key: str, *args: Any) -> Any:
        """``fn(key, *args)`` in the child, with ``key`` opened there."""
        if self.worker.generation is None or \
                self._generation.get(key) != self.worker.generation:
            self._reopen(key)
        return self._call(fn, key, *args)

    def call_both(self, fn: Callable[..., Any], key_a: str, key_b: str, *args: Any) -> Any:
        """``fn(key_a, key_b, *args)`` in the child that holds both (no reopening: the
        values of the last runs are what ``fn`` reads)."""
        return self._call(fn, key_a, key_b, *args)

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return self.worker.call(fn, *args)
        except RuntimeCrash:
            self.crashes += 1
            raise

    def close(self) -> None:
        if self._open and self.worker.generation is not None:
            try:
                self.worker.call(drop, list(self._open))
            except RuntimeBridgeError:  # pragma: no cover - the child died meanwhile
                pass
        self._open.clear()


def crash_words(crash: RuntimeCrash) -> str:
    """``crashed (SIGSEGV)``, or the exit code's words when no signal ended it."""
    if crash.signal_name:
        return f"crashed ({crash.signal_name})"
    return crash.message.removeprefix("the runtime's ")


# -- in the child -----------------------------------------------------------------------------
_HELD: dict[str, Any] = {}
_VALUES: dict[str, Any] = {}


def _where(cwd: str) -> None:
    if os.getcwd() != cwd:
        os.chdir(cwd)


def open_model(key: str, cwd: str, source: Any, shown: str | None, threads: int | None,
               reshape: Mapping[int, str]) -> None:
    """Read ``source`` as ``compare`` runs it (``RunnableModel``), reshape and compile it."""
    from ..runtime.outputs import RunnableModel

    _where(cwd)
    drop([key])
    model = RunnableModel(source, threads)
    model.path = shown
    model.reshape(dict(reshape))
    model.compile()
    _HELD[key] = model


def run_model(key: str, feed: Sequence[np.ndarray]) -> list[str]:
    """Run the model of ``key`` on ``feed``; its outputs are kept (the runtime's memory)
    and their shapes returned."""
    _VALUES.pop(key, None)
    _VALUES[key] = _HELD[key].run(feed, copy=False)
    return ["[" + ",".join(map(str, v.shape)) + "]" for v in _VALUES[key]]


def judge_outputs(key_a: str, key_b: str, verdict: Callable[..., Any],
                  plan: Sequence[tuple[Any, Any, Any]], rtol: float, atol: float
                  ) -> list[Any]:
    """``verdict`` (``outputs._verdict``, sent by reference) of each ``(A's output, B's,
    how paired)`` of ``plan`` on the outputs of the last runs of both models."""
    ma, mb = _HELD[key_a], _HELD[key_b]
    return [verdict(ma.outputs, mb.outputs, _VALUES[key_a], _VALUES[key_b], i, j, how,
                    rtol, atol) for i, j, how in plan]


def open_layers(key: str, cwd: str, source: Any, ref: str, threads: int | None
                ) -> list[Any]:
    """A layer runner of ``source`` (OpenVINO, or ONNX Runtime with ``ref``); its
    layer outputs."""
    _where(cwd)
    drop([key])
    if ref == "onnxruntime":
        from ..runtime.onnxruntime_runner import OnnxRuntimeLayers

        runner: Any = OnnxRuntimeLayers(source, threads=threads)
    else:
        from ..runtime.layer_runs import OpenVinoLayers

        runner = OpenVinoLayers(source, threads)
    _HELD[key] = runner
    return list(runner.outputs())


def layer_bytes(key: str, shapes: Mapping[str, list[int]]) -> dict[Any, int]:
    estimate = getattr(_HELD[key], "output_bytes", None)
    return estimate(shapes) if estimate is not None else {}


def run_layers(key: str, feeds: Mapping[str, np.ndarray], wanted: Sequence[Any]) -> int:
    """Run the layer runner of ``key`` with ``wanted`` exposed; the values are kept. The
    runner's compiles so far."""
    _VALUES.pop(key, None)
    runner = _HELD[key]
    _VALUES[key] = runner.run(feeds, wanted)
    return getattr(runner, "compiles", 0)


def judge_layers(key_a: str, key_b: str, judge: Callable[..., Any],
                 alone: Callable[..., Any], chunk: Sequence[tuple[Any, Any]], rtol: float,
                 atol: float) -> list[Any]:
    """The verdict of each pair of ``chunk`` on the last runs' values: ``judge`` (and
    ``alone`` for a pair without a value; ``layers``' own, sent by reference)."""
    _judge, _alone = judge, alone
    va, vb = _VALUES.get(key_a, {}), _VALUES.get(key_b, {})
    out = []
    for x, y in chunk:
        if x not in va or y not in vb:
            out.append(_alone((x, y), "not run", "the runtime gave no value for it in "
                              f"{'A' if x not in va else 'B'}"))
        else:
            out.append(_judge((x, y), va[x], vb[y], rtol, atol))
    return out


def drop(keys: Sequence[str]) -> None:
    """Let go of what ``keys`` hold in the child."""
    for key in keys:
        _VALUES.pop(key, None)
        _HELD.pop(key, None)
