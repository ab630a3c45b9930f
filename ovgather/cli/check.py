"""``ovgather check`` and ``ovgather infer`` (docs/cli/check.md).

``check MODEL.xml [MODEL.xml …] [--shape NAME=SHAPE …] [--json] [--all]
[--target-runtime RELEASE] [--format text|json|sarif|junit] [--skip-non-ir]`` re-infers
every layer and compares with the declared port dims, and with ``--target-runtime`` lists
every layer that OpenVINO release cannot load or compile (``--format sarif|junit``: the
same verdicts for CI, ``ci_formats.py``); ``infer`` prints what it inferred. The
check path never imports openvino: it must start and finish faster than OpenVINO's own
``read_model`` does on the same file (tools/bench_check.py).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from ..errors import OvgatherError, UsageError
from .common import (
    EXIT_BAD_INPUT,
    add_jobs,
    add_json,
    add_wide,
    name_the_input,
    needs_folders,
    parse_shape_options,
    print_error,
    run_files,
)
from .models import add_model_argument, load
from .output import print_json, say_err, say_line, say_record, table, write_bytes

__all__ = ["add_parsers", "run_check", "run_infer"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``check`` and ``infer`` on ``sub``."""
    p = sub.add_parser("check", help="compare declared output shapes with re-inferred ones",
                       description="Re-infer every layer's output shapes and report the "
                       "layers whose declared dims contradict them.")
    add_model_argument(p, many=True)
    _shape_and_json(p)
    p.add_argument("--all", action="store_true", help="list every layer, not only problems")
    p.add_argument("--target-runtime", metavar="RELEASE",
                   help="also list every layer OpenVINO RELEASE (2023.0, 2024.0, 2025.0, "
                   "2026.4; a patch such as 2023.0.2 is the same) cannot read, or its CPU "
                   "plugin is known not to compile; any such layer makes the exit code 1")
    _extension(p)
    p.add_argument("--format", choices=("text", "json", "sarif", "junit"), default=None,
                   help="text (the default), json (as --json), sarif (SARIF 2.1.0: one result "
                   "per failing layer at its XML line, for GitHub code scanning) or junit "
                   "(JUnit XML: a test case per model, for CI test reports); on stdout")
    p.add_argument("--skip-non-ir", action="store_true",
                   help="skip an .xml MODEL whose root element is not <net> (not an IR) with "
                   "a note on stderr instead of an error (the pre-commit hook passes it)")
    add_jobs(p)
    p.set_defaults(run=run_check)
    q = sub.add_parser("infer", help="print every layer's inferred output shapes",
                       description="Print every layer's inferred output shapes.")
    add_model_argument(q, many=True)
    _shape_and_json(q)
    q.add_argument("--symbols", action="append", default=[], metavar="SPEC",
                   help="name input dims and write every output dim in those names: "
                   "input_ids[B,S],attention_mask[B,T] (a dim is a name, an integer or ?; "
                   "a ReadValue's variable_id may be named too); several separated by "
                   "commas or repeated")
    _extension(q)
    add_jobs(q)
    q.set_defaults(run=run_infer)


def _extension(p: argparse.ArgumentParser) -> None:
    p.add_argument("--extension", action="append", default=[], metavar="PATH_OR_PACKAGE",
                   help="load an OpenVINO extension (a shared library, or an installed "
                   "package such as openvino_tokenizers) and let OpenVINO infer the layers "
                   "of its ops; repeatable")


def _shape_and_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shape", action="append", default=[], metavar="NAME=SHAPE",
                   help="override a Parameter shape like openvino.Model.reshape: NAME=SHAPE "
                   "or NAME[SHAPE] (data[1,?,4], ids[1..8,3]); several separated by "
                   "commas or repeated; a shape alone ([?,1,28,28]) is a one-input model's; "
                   "applied to each MODEL, and a MODEL without such a Parameter is an error "
                   "for that MODEL only")
    add_json(p)
    add_wide(p)


# -- running --------------------------------------------------------------------------------
#: The graph of the last model checked: ``console_main`` exits without the interpreter's
#: teardown, so keeping it saves freeing a big graph object by object (0.2 s per 100k
#: layers) before the output is even printed.
_LAST_GRAPH: list[Any] = []


#: the op files of the layers nearly every model has (an LLM, a CNN, a generated chain)
_COMMON_OPS = ("elementwise", "reshape", "concat_split", "gather", "slicing", "reduce")


def _import_walk() -> None:
    """The walk and the rules nearly every model needs: imported while the first model's
    XML is parsed on other threads (``load``'s ``meanwhile``), in time the read would
    spend waiting; the walk imports any other op file when a layer needs it."""
    _import_infer()
    from ..ops.core.registry import op_module

    for name in _COMMON_OPS:
        op_module(name)


def _import_infer() -> None:
    """The walk alone: a small file is parsed before ``meanwhile`` runs, with nothing to
    overlap, so its op files are left to the walk (those of its layers' types only)."""
    from .. import infer  # noqa: F401


def _meanwhile(path: str):  # noqa: ANN202
    """What to import while ``path`` is read: :func:`_import_walk` for a file read in
    pieces on other threads (over ``STREAM_PIECE`` bytes), else :func:`_import_infer`."""
    from ..ir.parse import STREAM_PIECE

    try:
        big = os.path.getsize(path) > STREAM_PIECE
    except OSError:  # the reader says why
        big = False
    return _import_walk if big else _import_infer


def _each_model(args: argparse.Namespace, work, failing, show=None, plain: bool = False
                ) -> Any:
    """Apply ``work(G, shapes)`` to every model (a folder: the IRs below it; ``--jobs``
    at once, cli/folders.py) and ``show(result)`` as soon as each is done, in order (human
    output). A model that cannot be used (a missing file, a --shape name it does not have)
    prints one error line and makes the exit code 2; the others still run. ``failing``:
    a result with a problem (exit 1). ``plain``: ``work`` takes a ``LayerGraph`` (see
    ``load``). ``work`` imports the walk itself (the first read imports it meanwhile).
    With ``--skip-non-ir`` an .xml that is no IR is passed over with a note. Named files
    with one job run without ``folders.py`` (``common.run_files``): a ``check FILE``
    imports what it runs only.
    """
    shapes = parse_shape_options(args.shape)
    given = args.models
    if getattr(args, "skip_non_ir", False):
        given = [path for path in given if not _not_an_ir(path)]

    def prepare():  # once in each process that runs models
        hook = _extensions(args)
        run, flat = (work, plain) if hook is None else (_with_hook(work, hook), False)

        def one(path: str, bar: Any) -> Any:
            G = load(path, bar, args.debug, plain=flat, meanwhile=_meanwhile(path))
            bar.update()
            bar.describe(f"checking {os.path.basename(path)} ({G.number_of_nodes():,} layers)")
            result = run(G, name_the_input(G, shapes))
            _LAST_GRAPH[:] = [G]  # the last one is freed by the exit, not object by object
            bar.update()
            return result

        return one

    if not needs_folders(args, given):
        return run_files(args, given, prepare, failing, show, steps=2)
    from .folders import find_models, run_models

    return run_models(args, find_models(given), prepare, failing, show, steps=2, warm=_warm)


def _warm() -> None:
    """The reader, the walk, numpy and networkx (a model with bodies or constants to fold
    needs them), imported once before ``--jobs`` forks its workers rather than once in
    each: ir_corpus's workers spent a quarter of their time importing them."""
    import networkx  # noqa: F401
    import numpy  # noqa: F401

    from .. import ir  # noqa: F401

    _import_walk()


def _not_an_ir(path: str) -> bool:
    """``--skip-non-ir``: True, after a note on stderr, for an .xml whose root element is
    not <net>; a file that does not start as XML, or cannot be read, is left to the reader
    (an error, as any broken IR)."""
    if not path.lower().endswith(".xml"):
        return False
    from ..ir.parse import root_name

    root = root_name(path)
    if root is None or root == "net":
        return False
    say_err(f"note: {path}: skipped: not an OpenVINO IR (its root element is <{root}>, "
            "not <net>)")
    return True


def _extensions(args: argparse.Namespace) -> Any:
    """The walk's hook for the layers of ``--extension`` ops (runtime/extensions.py)."""
    if not getattr(args, "extension", None):
        return None
    from ..runtime.extensions import extension_shapes, load_extensions

    load_extensions(args.extension)
    return extension_shapes()


def _with_hook(work, hook):
    def run(G: Any, shapes: dict[str, str]) -> Any:
        G.graph["op_shapes"] = hook
        return work(G, shapes)

    return run


def run_check(args: argparse.Namespace) -> int:
    """Check every model; exit 1 when a layer is mismatch, invalid or unknown (OpenVINO
    cannot read it), 2 on unusable input."""
    release = args.target_runtime
    if release is not None:
        from ..ops.core.releases import release_of

        try:
            release = release_of(release)
        except OvgatherError as err:
            print_error(err)
            return EXIT_BAD_INPUT

    form = _output_format(args)
    if form is None:
        return EXIT_BAD_INPUT

    def show(report: Any) -> None:
        _print_report(report, args.all)
        _print_reshape(getattr(report, "reshape", None))
        _print_target(release, getattr(report, "target", None))

    def work(G: Any, shapes: dict[str, str]) -> Any:
        from ..infer import check

        report = _check_reshaped(G, shapes) if shapes else check(G)
        if release is not None:
            from ..infer import target_problems

            report.target = target_problems(G, release)
        return report

    started = time.perf_counter()
    batch = _each_model(args, work, _check_fails, show if form == "text" else None,
                        plain=not args.shape)
    reports = batch.results
    if form == "json" and reports:  # nothing at all on stdout when no model could be used
        print_json({"models": [_with_target(release, r, _with_reshape(
            r, r.to_dict(all_layers=args.all))) for r in reports], **batch.json_fields()})
    elif form == "text":
        batch.print_summary()
    elif form in ("sarif", "junit"):
        _print_ci_format(form, reports, batch.errors, release, batch.code,
                         time.perf_counter() - started)
    return batch.code


def _check_fails(report: Any) -> bool:
    """Exit 1: a layer mismatch, invalid or unknown, or one --target-runtime cannot use."""
    return not report.ok or bool(getattr(report, "target", None))


def _output_format(args: argparse.Namespace) -> str | None:
    """``--format``, with ``--json`` the same as ``--format json``; None (after the
    ``error:`` line) when the two disagree."""
    if args.format in (None, "json") or not args.json:
        args.json = args.json or args.format == "json"
        return "json" if args.json else (args.format or "text")
    print_error(UsageError(f"--json and --format {args.format} ask for two different "
                           "outputs: give one of them"))
    return None


def _print_ci_format(form: str, reports: list[Any], failed: list[tuple[str, str]],
                     release: str | None, code: int, seconds: float) -> None:
    """The SARIF log or JUnit XML of the whole command on stdout (ci_formats.py)."""
    from .. import __version__
    from ..views.ci_formats import junit_xml, sarif_log

    if form == "sarif":
        print_json(sarif_log(reports, failed, release, exit_code=code, version=__version__))
    else:
        write_bytes(junit_xml(reports, failed, release, seconds))


def _with_target(release: str | None, report: Any, doc: dict[str, Any]) -> dict[str, Any]:
    if release is None:
        return doc
    from ..runtime.core import INFERENCE_PRECISION

    return {**doc, "target_runtime": {"release": release, "inference_precision":
                                      INFERENCE_PRECISION, "problems": [
        p.to_dict() for p in report.target]}}


def _print_target(release: str | None, problems: list[Any] | None) -> None:
    if release is None or problems is None:
        return
    if not problems:
        say_line(f"OpenVINO {release} reads every layer; no known compile limit is met")
        return
    say_line(f"OpenVINO {release} cannot use {len(problems)} layer(s):")
    for p in problems:
        line = "" if p.line is None else f", line {p.line}"
        say_line(f"  {p.stage}{line}: {p.type}/{p.version} (id {p.id}) {p.name}")
        for reason in p.reasons:
            say_line(f"    {reason}")


def _check_reshaped(G: Any, shapes: dict[str, str]) -> Any:
    """check with --shape, answering "does the model run at these shapes?": dims declared
    for the old input shapes are changes, not mismatches (``follow_resize``), invalid
    layers come first, and ``reshape`` says which layers the overrides change, which stop
    them and whether every layer's rule holds at the new shapes (``runs``)."""
    from ..infer import check
    from ..infer.report import follow_resize
    from ..passes.reshape import reshape_effect

    report = check(G, shapes)
    original = check(G)
    effect = reshape_effect(G, shapes, after=report)
    follow_resize(report, original)
    broken = [lr for lr in report.layers if lr.status in ("invalid", "unknown")]
    effect["runs"] = not broken
    report.reshape = effect
    return report


def _with_reshape(report: Any, doc: dict[str, Any]) -> dict[str, Any]:
    effect = getattr(report, "reshape", None)
    return doc if effect is None else {**doc, "reshape": effect}


def _print_reshape(effect: dict[str, Any] | None) -> None:
    if effect is None:
        return
    blocked = [row for row in effect["stopped"] if row["status"] == "invalid"]
    say_line("at the new shapes: every layer's rule holds, so the model runs there"
             if effect["runs"] else
             f"at the new shapes the model does not run: {len(blocked) or 'a'} layer(s) break "
             f"({', '.join(row['name'] for row in blocked[:5]) or 'see above'})")
    say_line(f"--shape changes {len(effect['changed'])} layer(s):")
    for row in effect["changed"]:
        say_line(f"  {row['name']} ({row['type']}): {' '.join(row['before'])} -> "
                 f"{' '.join(row['after'])}")
    for row in effect["stopped"]:
        say_line(f"  stopped at {row['name']} ({row['type']}, {row['status']}): {row['why']}")


def _print_report(report: Any, all_layers: bool) -> None:
    rows = report.layers if all_layers else report.problems()
    if rows:
        table(("status", "layer", "id", "type", "declared", "inferred", "line", "why"), [(
            lr.status, lr.name, lr.id, f"{lr.type}/{lr.version}", " ".join(lr.declared),
            NO_SHAPE if lr.status in _NO_RULE_RAN else " ".join(lr.inferred),
            "" if lr.line is None else str(lr.line), lr.message,
        ) for lr in rows], shrink=(1, 4, 5, 3))
    s = report.summary
    verdict = "OK" if report.ok else "PROBLEMS"
    unknown = f", {s['unknown']} unknown" if s["unknown"] else ""
    say_record(f"{report.path}: {verdict}: {s['layers']} layers, {s['ok']} ok, {s['mismatch']} "
        f"mismatch, {s['invalid']} invalid, {s['unchecked']} unchecked{unknown}")
    _print_unread(report.unread())


def _print_unread(unread: list[Any]) -> None:
    """The model's verdict when OpenVINO's reader refuses layers: it cannot read it."""
    if not unread:
        return
    from ..infer.readable import READER_RELEASE

    named = ", ".join(f"{lr.name} ({lr.type}/{lr.version}, id {lr.id}"
                      f"{'' if lr.line is None else f', line {lr.line}'})" for lr in unread[:5])
    more = f" and {len(unread) - 5} more" if len(unread) > 5 else ""
    say_line(f"  OpenVINO {READER_RELEASE} cannot read this model: it refuses {named}{more}")


#: the inferred column of an invalid layer: its rule failed, so it has no inferred shape
#: (nor has a layer OpenVINO cannot read: the reader refuses it before any rule)
NO_SHAPE = "—"
_NO_RULE_RAN = ("invalid", "unknown")


def _infer_rows(report: Any) -> list[tuple[str, ...]]:
    symbolic = getattr(report, "symbolic", None)
    rows = []
    for lr in report.layers:
        if lr.status in _NO_RULE_RAN:
            shown, note = NO_SHAPE, f"{lr.status}: {lr.message}"
        else:
            shown = " ".join(lr.inferred) if lr.inferred else "(no outputs)"
            note = ("unchecked: op not known, declared dims kept"
                    if lr.status == "unchecked" else "")
        row = (lr.id, lr.name, f"{lr.type}/{lr.version}", shown)
        if symbolic is not None:
            row += (_symbolic_text(lr, symbolic.get(lr.id)),)
        rows.append((*row, note))
    return rows


def _symbolic_text(lr: Any, syms: list | None) -> str:
    """The symbolic column: a dim the names prove static where the inferred one is
    dynamic shows both, ``? (=4)``."""
    if syms is None or lr.status in _NO_RULE_RAN:
        return NO_SHAPE
    ports = []
    for shape, sym in zip(lr.inferred_shapes, syms, strict=False):
        if shape.dims is None or sym.dims is None:
            ports.append(str(sym))
            continue
        dims = [f"? (={e.const})" if e.const is not None and not d.is_static else str(e)
                for d, e in zip(shape.dims, sym.dims, strict=True)]
        ports.append(f"[{','.join(dims)}]")
    return " ".join(ports)


def _print_infer(report: Any) -> None:
    say_line(f"{report.path}:")
    symbolic = ("symbolic",) if getattr(report, "symbolic", None) is not None else ()
    table(("id", "layer", "type", "inferred", *symbolic, "note"), _infer_rows(report),
          shrink=(1, 3, *(4 for _ in symbolic), 2))


def _infer_doc(report: Any) -> dict[str, Any]:
    symbolic = getattr(report, "symbolic", None)
    layers = []
    for lr in report.layers:
        doc = {"id": lr.id, "name": lr.name, "type": lr.type, "version": lr.version,
               "inferred": None if lr.status in _NO_RULE_RAN else lr.inferred}
        if symbolic is not None:
            syms = symbolic.get(lr.id)
            doc["symbolic"] = None if syms is None or lr.status in _NO_RULE_RAN else \
                [str(s) for s in syms]
        layers.append({**doc, "status": lr.status, "line": lr.line, "message": lr.message})
    return {"path": report.path, "ir_version": report.ir_version, "layers": layers}


def _check_with_symbols(symbols: dict[str, str]):
    """``check`` plus each layer's output dims in the names of ``symbols`` (the report's
    ``symbolic``, by layer id)."""
    from ..infer import check
    from ..infer.symbols import infer_symbols

    def work(G: Any, shapes: dict[str, str]) -> Any:
        report = check(G, shapes)
        report.symbolic = infer_symbols(G, name_the_input(G, symbols, "--symbols"), shapes)
        return report

    return work


def run_infer(args: argparse.Namespace) -> int:
    """Print every layer's inferred output shapes; exit 1 when a layer is invalid or
    OpenVINO cannot read one (``unknown``)."""
    from ..infer import check

    work = check
    if args.symbols:
        work = _check_with_symbols(parse_shape_options(args.symbols, "--symbols"))
    batch = _each_model(args, work, _infer_fails, _print_infer)
    if args.json and batch.results:
        print_json({"models": [_infer_doc(r) for r in batch.results], **batch.json_fields()})
    elif not args.json:
        batch.print_summary()
    return batch.code


def _infer_fails(report: Any) -> bool:
    """Exit 1: a layer is invalid or OpenVINO cannot read one (unknown)."""
    return any(lr.status in _NO_RULE_RAN for lr in report.layers)
