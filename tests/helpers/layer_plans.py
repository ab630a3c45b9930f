"""The plan ``compare --all-layers`` used before it judged the layers on ``compare``'s own
run: every layer output exposed, compiled apart from the outputs' run; and the verdicts of
a report, to hold one plan's against the other's."""

from __future__ import annotations

from ovgather.comparison import remote


def every_layer_apart(monkeypatch) -> None:
    """``compare`` compiles its models as they are, the layers compiled apart after, each
    one exposed (data movement too)."""
    exposing = remote.exposing
    monkeypatch.setattr(remote, "exposing", lambda budget, threads=None: exposing(0))


def verdicts(report) -> list[tuple]:
    """``(a, b, port, status, max_abs, max_rel, cosine)`` of every layer of ``report``."""
    return [(lc.a, lc.b, lc.port, lc.status, lc.max_abs, lc.max_rel, lc.cosine)
            for lc in report.layers]
