"""``ovgather compare A B [--shape NAME=SHAPE …] [--input NAME=FILE.npy | FILE.npz …]
[--map A_NAME=B_NAME …] [--by-position] [--allow-unproven] [--seed N] [--rtol R]
[--atol A] [--memory-budget SIZE] [--all-layers [--ref openvino|onnxruntime]] [--json]``.

Runs both models on the OpenVINO CPU runtime with the same inputs and compares every
output (``ovgather.comparison.outputs``). Exit codes (docs/cli/compare.md): 0 every output within
tolerance, 1 an output differs, is in one model only or proves nothing (each is named), or
a model crashed the runtime's process (the OpenVINO work runs in a worker process: the
report names the model, the signal and the inputs it was fed), 2
the models cannot be compared (a missing file, inputs that do not pair up or that the
files given do not fit, a run over the memory budget, a model the CPU plugin cannot
compile). With ``--all-layers`` every layer output that pairs up is compared too
(``ovgather.comparison.layers``), and a differing one fails like a differing output.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from .common import EXIT_OK, EXIT_PROBLEM, add_json, shape_overrides, tolerance, whole_number
from .models import ANY_HELP, quiet_native_stderr, refuse_weights
from .output import Progress, print_json, say_line, say_record

__all__ = ["add_parsers", "run_compare"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``compare`` on ``sub``."""
    p = sub.add_parser(
        "compare", help="run two models on the same inputs and compare their outputs",
        description="Run both models on the OpenVINO CPU runtime with the same inputs "
        "(paired by input name) and compare the outputs of the same name: the largest "
        "absolute and relative difference of each, and whether every element is within "
        "atol + rtol * |B|. Inputs are made from what each feeds in the graph (valid "
        "indices for a table, ones with some padding for a mask, positions 0, 1, ...) "
        "unless --input gives them. An output NaN/Inf everywhere or constant in both "
        "models proves nothing and fails unless --allow-unproven.")
    p.add_argument("model", metavar="A", help=f"the reference: {ANY_HELP}")
    p.add_argument("other", metavar="B", help="the model compared with A (the same kinds)")
    p.add_argument("--shape", action="append", metavar="NAME=SHAPE",
                   help="reshape an input of both models like openvino.Model.reshape, as for "
                   "check (repeatable); dynamic dims left get the size validate picks")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy|FILE.npz",
                   help="feed input NAME (of A) the array in FILE.npy, or every input named "
                   "in FILE.npz (repeatable); the other inputs are made as usual")
    p.add_argument("--map", action="append", metavar="A_NAME=B_NAME",
                   help="pair input A_NAME of A with input B_NAME of B (repeatable), for "
                   "models whose input names differ")
    p.add_argument("--by-position", action="store_true",
                   help="pair the inputs that neither --map nor a name pairs by their "
                   "position (the first input of A with the first of B, ...)")
    p.add_argument("--allow-unproven", action="store_true",
                   help="let an output that is NaN/Inf everywhere or constant in both "
                   "models pass (reported 'nothing proven'; by default it fails)")
    p.add_argument("--memory-budget", type=_size, default=None, metavar="SIZE",
                   help="most memory one run of both models may need, e.g. 512M or 4GiB "
                   "(default 2GiB); over it nothing runs (exit 2)")
    p.add_argument("--seed", type=lambda t: whole_number(t, digits=40), default=0,
                   help="seed of the random inputs (default 0)")
    p.add_argument("--rtol", type=tolerance, default=None, metavar="R",
                   help="relative tolerance (default 1e-5, polygraphy's)")
    p.add_argument("--atol", type=tolerance, default=None, metavar="A",
                   help="absolute tolerance (default 1e-5, polygraphy's)")
    p.add_argument("--all-layers", action="store_true",
                   help="also compare every intermediate tensor that pairs up (a tensor name "
                   "in common, else the layer's name and port; constants left out) and name "
                   "the first layer, in A's order, that differs")
    p.add_argument("--ref", choices=("openvino", "onnxruntime"), default="openvino",
                   help="what runs A's layers with --all-layers: openvino (default) or "
                   "onnxruntime (A an .onnx file; needs pip install 'ovgather[onnxruntime]')")
    add_json(p)
    p.set_defaults(run=run_compare)


def _size(text: str) -> int:
    from ..validate.memory import parse_size

    try:
        return parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def run_compare(args: argparse.Namespace) -> int:
    from ..comparison import compare, inputs_from_options, name_pairs

    models = (args.model, args.other)
    for path in models:
        refuse_weights(path)
    if args.ref != "openvino" and not args.all_layers:
        raise UsageError(f"--ref {args.ref} runs A's layers: it needs --all-layers")
    options: dict[str, Any] = {
        k: v for k, v in (("rtol", args.rtol), ("atol", args.atol),
                          ("memory_budget", args.memory_budget)) if v is not None}
    options.update(shapes=shape_overrides(args.shape), seed=args.seed,
                   inputs=inputs_from_options(args.input, **({} if args.memory_budget is None
                                              else {"memory_budget": args.memory_budget})),
                   input_map=name_pairs(args.map, "--map", "A_NAME=B_NAME"),
                   by_position=args.by_position, allow_unproven=args.allow_unproven)
    with quiet_native_stderr(enabled=not args.debug):  # the ONNX frontends' native lines
        if args.all_layers:
            report = _compare_layers(models, args.ref, options)
        else:
            report = compare(*models, **options)
    if args.json:
        print_json(report.to_dict())
    elif args.all_layers:
        _print_human(report.outputs)
        _print_layers(report)
    else:
        _print_human(report)
    return EXIT_OK if report.ok else EXIT_PROBLEM


def _compare_layers(models: tuple[str, str], ref: str, options: dict[str, Any]) -> Any:
    """``compare_layers`` with a progress bar over the chunks of layers."""
    from ..comparison.guards import distinct_names
    from ..comparison.layers import compare_layers

    label_a, label_b = distinct_names(*models)
    with Progress(None, f"comparing {label_a} with {label_b}", unit="output") as bar:
        seen = {"done": 0, "stage": None}

        def progress(stage: str, done: int, total: int) -> None:
            if stage != seen["stage"]:
                bar.reset(total, stage)
                seen.update(stage=stage, done=0)
            bar.update(done - seen["done"])
            seen["done"] = done

        return compare_layers(*models, ref=ref, progress=progress, **options)


def _print_layers(report: Any) -> None:
    """The layer verdicts: the counts, the first divergent layer with its lines, the worst
    layers after it, and the outputs without a partner (the JSON lists every layer)."""
    from ..comparison.layers import LAYER_STATUSES

    s = report.summary
    counts = ", ".join(f"{s[k]} {k}" for k in (*LAYER_STATUSES, "crashed") if s.get(k))
    ran = "ONNX Runtime" if report.ref == "onnxruntime" else "OpenVINO"
    say_line(f"  layers (A run by {ran}): {s['layers']} outputs: {counts or 'none'} "
        f"({report.chunks} chunk{'s' if report.chunks != 1 else ''})")
    first = report.first_divergent
    labels = report.outputs.labels
    if report.unproven and first is None:
        allowed = " (allowed)" if report.outputs.allow_unproven else ""
        say_line(f"  nothing proven{allowed}: {report.unproven}")
    elif first is None:
        say_line("  no layer output differs")
    else:
        say_line(f"  first divergent: {_where(first.a, first.line_a, labels[0])} / "
            f"{_where(first.b, first.line_b, labels[1])}, output {first.port} "
            f"({first.type}): {_errors(first)}")
        growth = report.growth
        if growth:
            say_line("  the worst after it:")
            for lc in growth:
                say_line(f"    {lc.status:7s} {lc.a}:{lc.port}: {_errors(lc)}")
    for status in ("crashed", "only in A", "only in B", "not run"):
        found = [lc for lc in report.layers if lc.status == status]
        for lc in found[:LISTED]:
            say_line(f"  {status:9s} {lc.a or lc.b}:{lc.port}"
                + (f": {lc.message}" if status in ("not run", "crashed") and lc.message
                   else ""))
        if len(found) > LISTED:
            say_line(f"  … and {len(found) - LISTED} more {status} (--json lists every layer)")


#: Outputs of one status listed at most in the human report.
LISTED = 10


def _where(name: str | None, line: int | None, label: str | None) -> str:
    """A layer and its line, the file by its label (the shortest distinct path suffix:
    ``line 26 of a/model.xml``)."""
    at = f" (line {line} of {label})" if line and label else ""
    return f"{name}{at}"


def _errors(lc: Any) -> str:
    said = [] if lc.max_abs is None else [f"max abs {lc.max_abs:.3g}, max rel {lc.max_rel:.3g}"]
    if lc.cosine is not None:  # near 1, what is left below 1 says more
        gap = 1.0 - lc.cosine
        said.append(f"cosine {lc.cosine:.6f}" if gap > 1e-6 else
                    "cosine 1" if gap <= 0 else f"cosine 1 - {gap:.1e}")
    if lc.message and lc.max_abs is None:
        said.append(lc.message)
    return ", ".join(said)


def _print_human(report: Any) -> None:
    from ..comparison.outputs import HINT, STATUSES

    s = report.summary
    counts = ", ".join(f"{s[k]} {k}" for k in (*STATUSES, "crashed") if s.get(k))
    fed = ", ".join(i["name"] + ("" if i["name_b"] == i["name"] else f" / {i['name_b']}")
                    + i["shape"] + _values(i) for i in report.inputs)
    n = s["outputs"]
    allowed = " (allowed)" if report.allow_unproven and s["nothing proven"] else ""
    say_record(f"{report.a} vs {report.b}: {n} output{'s' if n != 1 else ''}: "
               f"{counts or 'none'}{allowed}")
    say_line(f"  inputs (seed {report.seed}, {report.precision} inference): {fed or 'none'}")
    for crash in report.crashed:
        say_line(f"  crashed: {crash['message']}")
    for o in report.outputs:
        name = o.name if o.name_b in (None, o.name) else f"{o.name} / {o.name_b}"
        proves = o.status != "nothing proven"
        said = [f"max abs {o.max_abs:.3g}, max rel {o.max_rel:.3g}"] \
            if o.max_abs is not None and proves else []
        if o.matched_by in ("similar name", "position"):
            said.append(f"paired by {'a ' if o.matched_by != 'position' else ''}"
                        f"{o.matched_by}: no name in common")
        if o.message and o.status == "crashed":
            said.append(f"model {' and '.join(c['model'] for c in report.crashed)} crashed: "
                        "nothing compared")
        elif o.message:
            said.append(o.message if proves else o.message.split(": equal, but")[0])
        say_line(f"  {o.status:9s} {name}: {'; '.join(said)}")
    if s["nothing proven"]:
        say_line(f"  hint: equal outputs that are NaN/Inf everywhere or constant prove nothing; "
            f"{HINT}")


def _values(fed: dict[str, str]) -> str:
    """What an input was fed, in a few words, when it is not random floats."""
    values = fed.get("values", "")
    if values == "random normal":
        return ""
    if values.startswith("random indices in "):
        return f" (indices in {values.removeprefix('random indices in ')})"
    if values.startswith("mask"):
        return " (mask)"
    if values.startswith("positions"):
        return " (positions)"
    return f" ({values})"
