"""``ovgather validate MODEL.xml [--layer NAME …] [--seed N] [--json] [--whole-model]``.

Runs every gather layer on the OpenVINO CPU runtime and compares shapes with ovgather's
inference and values with its NumPy reference (``ovgather.validate``). Exit codes
(SPEC.md §3): 0 every layer agrees, 1 a layer disagrees (it is named), 2 the input could
not be used (the CLI frame prints the ``error:`` line). A progress bar goes to stderr,
only when stderr is a terminal and there are many layers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["add_parsers", "run_validate", "PROGRESS_MIN_LAYERS"]

EXIT_OK, EXIT_PROBLEM = 0, 1
#: Fewer gather layers than this validate too fast to need a progress bar.
PROGRESS_MIN_LAYERS = 200


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``validate`` on ``sub``."""
    p = sub.add_parser(
        "validate", help="run the gather layers on the OpenVINO CPU runtime and compare",
        description="Run every gather layer (GatherND, GatherElements, Gather) on the OpenVINO "
        "CPU runtime with random valid inputs; compare its output shape with ovgather's "
        "inference and its values with ovgather's NumPy reference.")
    p.add_argument("models", nargs="+", metavar="MODEL.xml")
    p.add_argument("--layer", action="append", default=[], metavar="NAME",
                   help="validate only this layer (friendly name or id); repeatable")
    p.add_argument("--seed", type=_seed, default=0,
                   help="seed of the random inputs (default 0)")
    p.add_argument("--json", action="store_true", help="machine output on stdout")
    p.add_argument("--whole-model", action="store_true",
                   help="compile the whole model with extra outputs at the gather layers and "
                   "compare their real output shapes with ovgather's inference")
    p.add_argument("--batch-size", type=int, default=1000, metavar="N",
                   help="layers per compiled model (default 1000)")
    p.add_argument("--memory-budget", type=_size, default=None, metavar="SIZE",
                   help="most memory for tensors at once, e.g. 512M or 4GiB (default 2GiB); "
                   "layers that need more are reported as skipped")
    p.set_defaults(run=run_validate)


def _seed(text: str) -> int:
    """A seed NumPy accepts: an integer >= 0."""
    if not (text.isascii() and text.isdigit()) or len(text) > 40:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, but got '{text[:40]}'")
    return int(text)


def _size(text: str) -> int:
    from ..validate import parse_size

    try:
        return parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def run_validate(args: argparse.Namespace) -> int:
    from ..interop import load_model
    from ..validate import validate, validate_whole_model

    reports = []
    for path in args.models:
        G = load_model(path)  # an IR, or an ONNX model through convert_model
        budget = {} if args.memory_budget is None else {"memory_budget": args.memory_budget}
        if args.whole_model:
            report = validate_whole_model(G, layers=args.layer, seed=args.seed, **budget)
        else:
            with _progress(G, args.layer) as tick:
                report = validate(G, layers=args.layer, seed=args.seed,
                                  batch_size=args.batch_size, progress=tick, **budget)
        report.path = report.path or path  # an ONNX model has no xml_path
        reports.append(report)
    if args.json:
        import json

        print(json.dumps({"models": [r.to_dict() for r in reports]}))
    else:
        for report in reports:
            _print_human(report)
    return EXIT_OK if all(r.ok for r in reports) else EXIT_PROBLEM


class _progress:
    """A tqdm bar on stderr when it is a terminal and there are many layers."""

    def __init__(self, G: Any, names: list[str]) -> None:
        from ..validate import gather_layers

        self.total = len(gather_layers(G, names))
        self.bar: Any = None

    def __enter__(self) -> Callable[[int], None] | None:
        if not sys.stderr.isatty() or self.total < PROGRESS_MIN_LAYERS:
            return None
        try:
            from tqdm import tqdm
        except ImportError:
            return None
        self.bar = tqdm(total=self.total, unit="layer", file=sys.stderr, leave=False)
        return self.bar.update

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


def _print_human(report: Any) -> None:
    s = report.summary
    counts = ", ".join(f"{s[k]} {k}" for k in ("ok", "mismatch", "invalid", "error", "skipped")
                       if s[k])
    mode = " (whole model)" if report.mode == "whole-model" else ""
    print(f"{report.path}: {s['layers']} gather layers{mode}: {counts or 'none'}")
    for lv in report.layers:
        if lv.status == "ok":  # notes on ok layers are in --json
            continue
        where = f"line {lv.line}, " if lv.line is not None else ""
        print(f"  {lv.status:8s} {lv.name} ({where}id {lv.id}, {lv.type} {lv.version}): "
              f"{lv.message}")
