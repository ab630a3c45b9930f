"""``ovgather reshape MODEL.xml [--shape NAME=SHAPE …] (-o OUT.xml | --in-place | --dry-run)``.

Applies new input shapes (``--shape``, parsed as ``check --shape`` parses it), re-infers
every layer and writes an IR whose Parameter shapes and declared port dims are the
inferred ones (passes/reshape.py). With no ``--shape`` it repairs the dims ``check``
reports as ``mismatch``. A layer that rejects the new shapes blocks the reshape: it is named, the
exit code is 1 and nothing is written; ``--fix`` first rewrites the usual blockers
(hard-coded Reshape and Broadcast targets, a scatter's buffer of the old token count).
Before writing, the runtime proof (validate/rows.py; ``--no-runtime-proof`` skips it)
runs the written model on batches of rows and the original on each row alone, and a row
that differs is exit 1 with nothing written. ``--dry-run`` lists what would change and
writes nothing. Writes are atomic and never replace the input without ``--in-place``
(docs/cli/reshape.md).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..errors import ReshapeError, UsageError
from .common import (
    EXIT_OK,
    EXIT_PROBLEM,
    add_json,
    check_output,
    name_the_input,
    parse_shape_options,
)
from .models import add_model_argument, load
from .output import Progress, print_json, say_line, say_record, warning

__all__ = ["add_parsers", "run"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``reshape`` on ``sub``."""
    p = sub.add_parser("reshape", help="write an IR with new input shapes (or repaired dims)",
                       description="Set new input shapes, re-infer every layer and write an "
                       "IR whose every declared dim is the inferred one; with no --shape, "
                       "repair the declared dims that check reports as mismatch.")
    add_model_argument(p, onnx=False)
    p.add_argument("--shape", action="append", default=[], metavar="NAME=SHAPE",
                   help="a new Parameter shape, as for check: NAME=SHAPE or NAME[SHAPE] "
                   "(data[1,?,4], ids[1..8,3]); several separated by commas or repeated; a "
                   "shape alone ([?,1,28,28]) is a one-input model's")
    p.add_argument("-o", "--output", metavar="OUT.xml",
                   help="the IR to write (OUT.bin goes beside it)")
    p.add_argument("--in-place", action="store_true",
                   help="replace MODEL itself (atomically); without -o, OUT is MODEL")
    p.add_argument("--fix", action="store_true",
                   help="when a layer blocks the reshape, rewrite the usual culprits "
                   "upstream (a Reshape or Broadcast whose constant target hard-codes a "
                   "size that now varies) and list each fix")
    p.add_argument("--dry-run", action="store_true",
                   help="list what would change (and the fixes) but write nothing")
    p.add_argument("--runtime-proof", action=argparse.BooleanOptionalAction, default=None,
                   help="run the written model on batches of rows and the original on each "
                   "row alone (OpenVINO CPU, f32) and write nothing when a row differs; on "
                   "by default when OpenVINO is installed and a run fits --memory-budget")
    p.add_argument("--memory-budget", default=None, metavar="SIZE",
                   help="the memory the runtime proof may use (default 2GiB)")
    p.add_argument("--seed", type=int, default=0, help="seed of the proof's inputs")
    add_json(p)
    p.set_defaults(run=run)


def _output(args: argparse.Namespace) -> str | None:
    """The path to write (None for --dry-run), after the checks that keep MODEL safe."""
    if args.output is None and not (args.in_place or args.dry_run):
        raise UsageError("reshape needs -o OUT.xml, --in-place or --dry-run")
    out = Path(args.output if args.output is not None else args.model)
    check_output(out, args.model, args.in_place or args.dry_run)
    return None if args.dry_run else str(out)


def run(args: argparse.Namespace) -> int:
    """Reshape and write; exit 0, or 1 with nothing written when a layer blocks it."""
    from ..ir import write_ir
    from ..passes.reshape import reshape

    if args.model.lower().endswith(".onnx"):
        raise UsageError("reshape takes an IR .xml: save the .onnx model as an IR first "
                         "(openvino.save_model), or give its shapes to check/infer --shape",
                         file=args.model)
    out = _output(args)
    shapes = parse_shape_options(args.shape)
    with Progress(3, unit="step") as bar:
        G = load(args.model, bar, args.debug, ir_only=True)
        shapes = name_the_input(G, shapes)
        old = _input_shapes(G)
        bar.update()
        bar.describe(f"reshaping {G.number_of_nodes():,} layers")
        try:
            result = reshape(G, shapes, fix=args.fix)
        except ReshapeError as err:
            err.located(file=args.model)
            return _blocked(args, shapes, err)
        bar.update()
        proof = _prove(args, old, G, result.modified, bar)
        # a row that differs refuses the reshape; a proof that compared nothing (every
        # output a list of detections, say) is no verdict, like one that could not run:
        # written, and said, unless --runtime-proof asked for a proof
        if proof is not None and (proof.differs is not None
                                  or (not proof.ok and args.runtime_proof)):
            return _differs(args, shapes, result, proof)
        # -o always gives OUT; --in-place leaves an unchanged model's files alone
        written = out if result.modified or not args.in_place else None
        if written is not None:
            bar.describe(f"writing {os.path.basename(written)}")
            write_ir(G, written)
        bar.update()
    if args.json:
        print_json(_doc(args, shapes, written, result.changed, result.fixes, [],
                        result.report.summary, result.warnings, proof))
    else:
        for text in result.warnings:
            warning(text)
        _print_human(args, result, written, proof)
    return EXIT_OK


def _doc(args, shapes, written, changed, fixes, blocked, summary, warnings=(), proof=None
         ) -> dict[str, Any]:
    return {"path": args.model, "output": written, "shapes": shapes,
            "dry_run": bool(args.dry_run), "modified": bool(changed or fixes) and not blocked,
            "fixes": fixes, "changed": changed, "blocked": blocked, "summary": summary,
            "warnings": list(warnings),
            "runtime_proof": proof.to_dict() if proof is not None else _BLOCKED}


#: the proof's record when the reshape is blocked: nothing was written to prove
_BLOCKED = {"ran": False, "why": "the reshape is blocked", "precision": "f32", "rtol": None,
            "atol": None, "batches": [], "runs": [], "differs": None, "unpaired": [],
            "not_compared": [], "compared": [], "nothing_proven": None, "seconds": 0.0}


def _input_shapes(G: Any) -> dict[str, Any]:
    from ..validate.sizes import parameter_shapes

    return parameter_shapes(G)


def _prove(args: argparse.Namespace, old: dict[str, Any], G: Any, modified: bool,
           bar: Progress) -> Any:
    """The runtime proof of the written model (None when it is not asked for or there is
    nothing to prove); with ``--runtime-proof`` unset, skipped quietly only when it
    cannot run."""
    from ..validate.memory import DEFAULT_MEMORY_BUDGET, parse_size
    from ..validate.rows import RowProof, prove_rows

    if args.runtime_proof is False or not modified:
        return RowProof(False, "--no-runtime-proof" if modified else "nothing changed")
    try:
        budget = parse_size(args.memory_budget) if args.memory_budget else \
            DEFAULT_MEMORY_BUDGET
    except ValueError as err:
        raise UsageError(f"--memory-budget: {err}") from err
    bar.describe("proving rows on the runtime")
    proof = prove_rows(args.model, old, G, seed=args.seed, budget=budget)
    if args.runtime_proof and not proof.ran:
        raise ReshapeError(f"the runtime proof cannot run: {proof.why}", [],
                           file=args.model)
    return proof


def _differs(args: argparse.Namespace, shapes: dict[str, str], result: Any, proof: Any
             ) -> int:
    """The proof found a row that differs, or proved nothing: exit 1, nothing written."""
    d = proof.differs
    if args.json:
        doc = _doc(args, shapes, None, [], result.fixes, [], None, result.warnings, proof)
        print_json({**doc, "modified": False})
        return EXIT_PROBLEM
    for fx in result.fixes:
        _say_fix(fx, "fix (tried, not kept)")
    if d is None:  # nothing compared, or rows that cannot be told apart
        say_line(f"runtime proof: nothing proven: {proof.nothing_proven}")
        say_record(f"{args.model}: the runtime proof proves nothing about the reshaped "
                   "model's rows; nothing written (--no-runtime-proof writes it unproven)")
        return EXIT_PROBLEM
    what = f"output '{d['output']}': {d['why']}" if d["output"] else f"the run failed: " \
        f"{d['why']}"
    say_line(f"differs: {what}")
    say_record(f"{args.model}: the reshaped model does not compute what the original "
               "computes row by row (OpenVINO CPU, f32); nothing written")
    return EXIT_PROBLEM


def _say_proof(proof: Any) -> None:
    from ..validate.rows import UNSTACKED

    if proof is None:
        return
    if proof.ran and proof.nothing_proven is not None:
        say_line(f"runtime proof: nothing proven: {proof.nothing_proven}")
    elif proof.ran:
        batches = " and ".join(map(str, proof.batches))
        how = []
        for row in proof.compared:
            if row["bound"] == "quantization":
                how.append(f"{row['output']} within {row['steps']} steps of "
                           f"{row['fake_quantize']} (atol {row['atol']:.3g}), unchanged "
                           "when the other rows change")
            elif row["bound"] == "detections":
                how.append(f"{row['output']}: {row['matched']} detections matched per image "
                           f"(IoU >= {row['iou']})")
        apart = [row["output"] for row in proof.not_compared if row["why"] == UNSTACKED]
        left = (f"; not stacked row by row, so not compared: {', '.join(apart)}"
                if apart else "") + "".join(
            f"; not compared: {row['output']} ({row['why']})"
            for row in proof.not_compared if row["why"] != UNSTACKED)
        say_line(f"runtime proof: each row of batch {batches} equals the original run on it "
                 f"(CPU, f32{'; ' if how else ''}{'; '.join(how)}){left}")
    elif proof.why not in ("nothing changed", "--no-runtime-proof"):
        say_line(f"runtime proof: not run: {proof.why}")


def _blocked(args: argparse.Namespace, shapes: dict[str, str], err: ReshapeError) -> int:
    if args.json:
        print_json(_doc(args, shapes, None, [], err.fixes, err.blockers, None))
        return EXIT_PROBLEM
    for fx in err.fixes:
        _say_fix(fx, "fix (tried, not kept)")
    for row in err.blockers:
        line = f"line {row['line']}, " if row.get("line") is not None else ""
        say_line(f"blocked: {row['type']} '{row['name']}' ({line}id {row['id']}): {row['why']}")
        if "hint" in row:
            say_line(f"  hint: {row['hint']}")
    # a model problem (exit 1), as check's invalid layers: stdout, not an error line
    tried = f" after {len(err.fixes)} fix(es)" if err.fixes else ""
    say_record(f"{args.model}: cannot be reshaped: {len(err.blockers)} layer(s) block "
               f"it{tried}; nothing written")
    return EXIT_PROBLEM


def _say_fix(fx: dict[str, Any], word: str = "fix") -> None:
    line = f"line {fx['line']}, " if fx.get("line") is not None else ""
    say_line(f"{word}: {fx['type']} '{fx['name']}' ({line}id {fx['id']}): {fx['before']} -> "
             f"{fx['after']}")


def _print_human(args: argparse.Namespace, result: Any, written: str | None,
                 proof: Any = None) -> None:
    for fx in result.fixes:
        _say_fix(fx)
    repair = not args.shape  # then each rewritten dim is news; after new shapes, the inputs
    for row in result.changed:
        if row["type"] == "Parameter":
            say_line(f"input {row['name']}: {row['before']} -> {row['after']}")
        elif repair:
            say_line(f"dims {row['type']} '{row['name']}' (id {row['id']}): {row['before']} -> "
                     f"{row['after']}")
    layers = len({row["id"] for row in result.changed})
    what = (f"{len(result.changed)} output port(s) of {layers} layer(s) changed"
            + (f", {len(result.fixes)} fix(es)" if result.fixes else ""))
    _say_proof(proof)
    if not result.modified:
        what = (f"{args.model}: nothing to change (every declared dim already is the "
                "inferred one)")
    if written is None:
        say_line(f"{what}; nothing written" + (" (--dry-run)" if args.dry_run else ""))
    else:
        say_line(f"{what}; wrote {written}")
