"""``ovgather validate MODEL.xml [--layer NAME …] [--seed N] [--json] [--whole-model]``.

Runs every gather layer on the OpenVINO CPU runtime and compares shapes with ovgather's
inference and values with its NumPy reference (``ovgather.validate``). Exit codes
(docs/cli/validate.md): 0 every layer agrees, 1 a layer disagrees (it is named), 2 an input could
not be used (its ``error:`` line is printed and the other models still run). A folder
stands for the IRs below it, ``--jobs N`` validates N models at once (cli/folders.py). A progress
bar goes to stderr, only when stderr is a terminal and the run takes more than a moment.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from typing import Any

from .common import add_json, add_wide, whole_number
from .folders import add_jobs, find_models, run_models
from .models import add_model_argument, load
from .output import Progress, print_json, say_line, say_record

__all__ = ["add_parsers", "run_validate"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``validate`` on ``sub``."""
    p = sub.add_parser(
        "validate", help="run the gather layers on the OpenVINO CPU runtime and compare",
        description="Run every gather layer (GatherND, GatherElements, Gather) on the OpenVINO "
        "CPU runtime with random valid inputs; compare its output shape with ovgather's "
        "inference and its values with ovgather's NumPy reference.")
    add_model_argument(p, many=True)
    p.add_argument("--layer", action="append", default=[], metavar="NAME",
                   help="validate only this layer (friendly name or id); repeatable")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the random inputs (default 0)")
    add_json(p)
    add_wide(p)
    p.add_argument("--whole-model", action="store_true",
                   help="compile the whole model with extra outputs at the gather layers and "
                   "compare their real output shapes with ovgather's inference")
    p.add_argument("--batch-size", type=whole_number, default=1000, metavar="N",
                   help="layers per compiled model (default 1000)")
    p.add_argument("--all-layers", action="store_true",
                   help="prove every layer's shape, not only the gathers': compile the model "
                   "once with an extra output at every layer, run it at two or three input "
                   "sizes inside the dynamic dims' bounds and compare each real output shape "
                   "with ovgather's inference for those sizes (the gathers' values are "
                   "checked too)")
    p.add_argument("--memory-budget", type=_size, default=None, metavar="SIZE",
                   help="most memory for tensors at once, e.g. 512M or 4GiB (default 2GiB); "
                   "layers that need more are reported as skipped")
    add_jobs(p)
    p.set_defaults(run=run_validate)


def _seed(text: str) -> int:
    """A seed NumPy accepts: an integer >= 0."""
    return whole_number(text, digits=40)


def _size(text: str) -> int:
    from ..validate import parse_size

    try:
        return parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def run_validate(args: argparse.Namespace) -> int:
    """Validate every model (a folder: the IRs below it; ``--jobs`` at once), printing
    each one's result as soon as it and those before it are done."""
    found = find_models(args.models)
    budget = {} if args.memory_budget is None else {"memory_budget": args.memory_budget}

    def prepare():  # once in each process that runs models
        from ..runtime import shared_workers
        from ..validate import gather_layers, prove_all_layers, validate, validate_whole_model

        shared_workers().start()  # the runtime's processes start while the first model is read

        def one(path: str, shared: Any) -> Any:
            name = os.path.basename(path)
            with (Progress(None, f"reading {name}", unit="layer") if shared is None
                  else contextlib.nullcontext(shared)) as bar:
                G = load(path, bar, args.debug)  # an IR, or an ONNX model (convert_model)
                if args.all_layers:
                    bar.describe(f"proving every layer of {name}")
                    report = prove_all_layers(G, seed=args.seed,
                                              progress=None if shared is not None
                                              else _proving(bar, name), **budget)
                elif args.whole_model:
                    bar.describe(f"compiling {name} (whole model)")
                    report = validate_whole_model(G, layers=args.layer, seed=args.seed,
                                                  **budget)
                else:
                    bar.reset(len(gather_layers(G, args.layer)), f"validating {name}")
                    report = validate(G, layers=args.layer, seed=args.seed,
                                      batch_size=args.batch_size, progress=bar.update,
                                      **budget)
            report.path = report.path or path  # an ONNX model has no xml_path
            return report

        return one

    batch = run_models(args, found, prepare, lambda r: not r.ok, _print_human,
                       verb="validating", warm=_warm)
    if args.json and batch.results:
        print_json({"models": [r.to_dict() for r in batch.results], **batch.json_fields()})
    elif not args.json:
        batch.print_summary()
    return batch.code


def _proving(bar: Any, name: str) -> Any:
    """``prove_all_layers``'s progress on ``bar``: layers proved of all (the bar, its
    elapsed time and estimate), compiles done of planned (its words)."""
    shown = [-1, 0]  # the total the bar counts to, the count shown

    def told(proved: int, total: int, compiles: int, planned: int) -> None:
        if shown[0] != total:
            bar.reset(total, f"proving every layer of {name}")
            shown[:] = [total, 0]
        bar.describe(f"proving {name}: compiles {compiles}/{planned}, layers")
        if proved > shown[1]:
            bar.update(proved - shown[1])
            shown[1] = proved
    return told


def _warm() -> None:
    """The reader and the validate package (never openvino), imported once before
    ``--jobs`` forks its workers."""
    from .. import ir, validate  # noqa: F401


def _print_human(report: Any) -> None:
    from ..runtime.core import INFERENCE_PRECISION

    if report.mode == "all-layers":
        _print_proof(report)
        return
    s = report.summary
    counts = ", ".join(f"{s[k]} {k}" for k in ("ok", "mismatch", "invalid", "error", "skipped",
                                               "crashed") if s[k])
    mode = " (whole model)" if report.mode == "whole-model" else ""
    say_record(f"{report.path}: {s['layers']} gather layers{mode}: {counts or 'none'} "
               f"({INFERENCE_PRECISION} inference)")
    for lv in report.layers:
        if lv.status == "ok":  # notes on ok layers are in --json
            continue
        where = f"line {lv.line}, " if lv.line is not None else ""
        say_line(f"  {lv.status:8s} {lv.name} ({where}id {lv.id}, {lv.type} {lv.version}): "
                 f"{lv.message}")
    for line in report.verdicts():
        say_line(f"  {line}")


def _print_proof(report: Any) -> None:
    """The summary, then the layers whose shape differs and those whose declared dims
    are wrong (declared, inferred and real side by side)."""
    from ..validate import declared_rows, left_out_line, problem_rows, summary_line

    say_line(summary_line(report))
    if (left := left_out_line(report)) is not None:
        say_line(left)
    for line in [*problem_rows(report), *declared_rows(report)]:
        say_line(line)
    if report.layers and not report.sizes:  # nothing ran: say why once
        say_line(f"  {next((lp.message for lp in report.layers if lp.status == 'not run'), '')}")
    for line in report.verdicts():
        say_line(f"  {line}")
