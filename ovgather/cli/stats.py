"""``ovgather stats`` and ``ovgather info`` (docs/cli/stats.md, docs/cli/info.md).

``stats MODEL [--shape NAME=SHAPE …] [--symbols SPEC …] [--by block|type|layer]
[--depth N] [--top N] [--json]`` prints what the model costs (``ovgather.cost``): FLOPs
and MACs, weights, output bytes and the peak activation memory, by block, op type or
layer. A layer ovgather cannot count (no shape rule, an extension op) is listed as
uncounted and makes the exit code 1. ``info MODEL [--json]``: the model on one screen.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import (
    EXIT_OK,
    EXIT_PROBLEM,
    add_json,
    add_wide,
    name_the_input,
    parse_shape_options,
    whole_number,
)
from .models import add_model_argument, load, quiet_native_stderr
from .output import print_json, say_line, say_record, say_report, table

__all__ = ["add_parsers", "run_stats", "run_info"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``stats`` and ``info`` on ``sub``."""
    p = sub.add_parser("stats", help="what a model costs: FLOPs, MACs, weights, memory",
                       description="Count every layer's MACs and FLOPs from ovgather's "
                       "inferred shapes, its weights (each Const once, as stored) and "
                       "output bytes, and the peak activation memory, by block (the "
                       "layers' name scopes), op type or layer.")
    add_model_argument(p)
    p.add_argument("--shape", action="append", default=[], metavar="NAME=SHAPE",
                   help="set an input's shape (as for check), so dynamic dims get sizes")
    p.add_argument("--symbols", action="append", default=[], metavar="SPEC",
                   help="name input dims, input_ids[B,S]: the totals are written in those "
                   "names (with --shape also evaluated at its sizes)")
    p.add_argument("--by", choices=("block", "type", "layer"), default="block",
                   help="the rows: one per block (default), op type or layer")
    p.add_argument("--depth", type=whole_number, default=None, metavar="N",
                   help="keep the first N dotted parts of each block name (model.layers.3)")
    p.add_argument("--top", type=whole_number, default=None, metavar="N",
                   help="only the N rows of most FLOPs (default: every row, in run order)")
    p.add_argument("--profile", action="store_true",
                   help="also run the model on the CPU plugin with profiling on and give "
                   "each layer and block its time and achieved FLOP/s")
    p.add_argument("--iterations", type=whole_number, default=5, metavar="N",
                   help="the timed runs of --profile (default 5, after one untimed)")
    add_json(p)
    add_wide(p)
    p.set_defaults(run=run_stats)
    q = sub.add_parser("info", help="a model on one screen: inputs, outputs, ops, weights",
                       description="Print the model's inputs and outputs (names, shapes, "
                       "element types, layouts), IR version and producer, op types with "
                       "counts and opsets, and its weight bytes.")
    add_model_argument(q)
    add_json(q)
    add_wide(q)
    q.set_defaults(run=run_info)


def run_info(args: argparse.Namespace) -> int:
    from ..cost.summary import info

    report = info(load(args.model, debug=args.debug))
    say_report(report, args.json, hang=4)
    return EXIT_OK


def run_stats(args: argparse.Namespace) -> int:
    from ..cost import stats

    G = load(args.model, debug=args.debug, plain=not (args.symbols or args.profile))
    shapes = name_the_input(G, parse_shape_options(args.shape)) if args.shape else None
    symbols = (name_the_input(G, parse_shape_options(args.symbols, "--symbols"), "--symbols")
               if args.symbols else None)
    prof = None
    if args.profile:  # first: without --shape, the counts are at the sizes it ran
        from ..cost.timing import profile

        with quiet_native_stderr(enabled=not args.debug):
            prof = profile(G, shapes, args.iterations)
        shapes = shapes or {n: f"[{','.join(map(str, s))}]" for n, s in prof.sizes.items()}
    report = stats(G, shapes, symbols, depth=args.depth)
    if args.json:
        doc = report.to_dict(layers=args.by == "layer")
        print_json(doc if prof is None else {**doc, "profile": _profile_doc(report, prof)})
    else:
        _print(report, args.by, args.top)
        if prof is not None:
            _print_profile(report, prof, args.top)
    return EXIT_OK if report.ok else EXIT_PROBLEM


def _profile_doc(report: Any, prof: Any) -> dict[str, Any]:
    from ..cost.timing import by_block, layer_rows

    doc = prof.to_dict()
    doc["blocks"] = [{"block": b, "ms": round(ms, 4),
                      "flops_per_second": None if r is None else round(r)}
                     for b, ms, r in by_block(report, prof)]
    doc["layers"] = [{"name": n, "type": t, "ms": round(ms, 4),
                      "flops_per_second": None if r is None else round(r), "how": how}
                     for n, t, ms, r, how in layer_rows(report, prof)]
    return doc


def _print_profile(report: Any, prof: Any, top: int | None) -> None:
    from ..cost.timing import by_block, layer_rows

    sizes = ", ".join(f"{n}[{','.join(map(str, s))}]" for n, s in prof.sizes.items())
    say_line(f"CPU time: {prof.total_ms:.3f} ms per inference at {sizes} (mean of "
             f"{prof.iterations}); {prof.coverage:.1%} of it in IR layers", hang=4)
    rows = [(b, f"{ms:.3f}", _n(round(r)) + "FLOP/s" if r is not None else "")
            for b, ms, r in by_block(report, prof)[:top or 10]]
    if rows:
        table(("block", "ms", "achieved"), rows, shrink=(0,))
    rows = [(n, t, f"{ms:.3f}", _n(round(r)) + "FLOP/s" if r is not None else "", how)
            for n, t, ms, r, how in layer_rows(report, prof, top or 10)]
    if rows:
        table(("layer", "type", "ms", "achieved", "kernel"), rows, shrink=(0,))
    if prof.unmapped:
        names = ", ".join(f"{n} ({t})" for n, t, _ in prof.unmapped[:5])
        say_line(f"not in the IR: {len(prof.unmapped)} node(s) the plugin made, e.g. {names}",
                 hang=4)


def _n(value: Any, unit: str = "") -> str:
    from ..cost.report import human

    return human(value, unit)


def _at(report: Any, value: Any, unit: str = "") -> str:
    """A total; an expression also at the --shape sizes (``… = 1.32 M at B=1, S=16``)."""
    text = _n(value, unit)
    if value is None or isinstance(value, int) or not report.environment:
        return text
    at = ", ".join(f"{k}={v}" for k, v in sorted(report.environment.items()))
    return f"{text} (= {_n(report.evaluate(value), unit)} at {at})"


def _print(report: Any, by: str, top: int | None) -> None:
    t = report.total
    if by == "layer":
        rows = [(lc.name, lc.type, lc.status, lc.flops, lc.macs, lc.weight_bytes,
                 lc.out_bytes, lc.live, ("quantized " if lc.quantized else "") + lc.note)
                for lc in report.layers]
        head = ("layer", "type", "status", "FLOPs", "MACs", "weights", "output", "live",
                "note")
    else:
        groups = report.by_block if by == "block" else report.by_type
        rows = [(name, str(g.layers), "", g.flops, g.macs, g.weight_bytes, g.out_bytes,
                 g.peak, f"{g.quantized} quantized" if g.quantized else "")
                for name, g in groups.items()]
        head = (by, "layers", "", "FLOPs", "MACs", "weights", "output", "peak", "note")
    if top is not None:
        def flops(row: tuple) -> int:  # an expression by its value at --shape
            value = row[3] if isinstance(row[3], int) else report.evaluate(row[3])
            return -1 if value is None else value

        rows = sorted(rows, key=flops, reverse=True)[:top]
    keep = [i for i in range(len(head)) if head[i]]
    cells = [tuple(cell if isinstance(cell, str) else _n(cell, "B" if i in (5, 6, 7) else "")
                   for i, cell in enumerate(row)) for row in rows]
    if cells:
        table(tuple(head[i] for i in keep), [tuple(row[i] for i in keep) for row in cells],
              shrink=(0,))
    by_type = ", ".join(f"{et} {_n(row['bytes'], 'B')}"
                        for et, row in report.weights_by_type.items())
    say_line(f"weights: {_n(t.weight_bytes, 'B')} ({_n(t.params)} params)"
             + (f": {by_type}" if by_type else ""), hang=4)
    if t.statuses["dynamic"]:
        say_line(f"{t.statuses['dynamic']} layer(s) have dims that are not known: give "
                 "--shape (sizes) or --symbols (names) to count them", hang=4)
    for lc in report.uncounted[:10]:
        say_line(f"uncounted: {lc.name} ({lc.type}/{lc.version}, id {lc.id}): {lc.note}",
                 hang=4)
    if len(report.uncounted) > 10:
        say_line(f"uncounted: and {len(report.uncounted) - 10} more layer(s)")
    flops = _at(report, t.flops, "FLOPs")
    if t.flops is None:
        flops = f"FLOPs ? ({t.statuses['dynamic']} layer(s) of unknown size)"
    elif report.uncounted:
        flops = f"at least {flops} ({len(report.uncounted)} layer(s) uncounted)"
    say_record(f"{report.path}: {t.layers} layers, {flops}, {_at(report, t.macs, 'MACs')}, "
               f"peak activation {_n(t.peak, 'B')}")
