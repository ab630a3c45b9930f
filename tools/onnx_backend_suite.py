"""ovgather on the ONNX backend test models: every model OpenVINO converts, checked
against ``read_model`` and proved on the CPU plugin.

Run ``python tools/onnx_backend_suite.py [--json OUT] [--resume] [NAME ...]``.

The models are the installed ``onnx`` package's: its node tests, built from the Python
test cases (``onnx.backend.test.case.node``: the package ships no ``data/node`` and
``cmd_tools generate-data`` writes only the model tests), and the ``light``, ``simple``,
``pytorch-converted`` and ``pytorch-operator`` models it ships. Each is converted once by
``openvino.convert_model`` and saved (``compress_to_fp16=False``) in a cache,
``~/.cache/ovgather/onnx-backend/<onnx>-<openvino>/`` (``OVGATHER_ONNX_CACHE`` moves it);
a model OpenVINO cannot convert is skipped and counted, its reason kept beside it.

For each IR, ``ovgather.check`` and ``read_model`` are compared port by port on the shape
text (``corpus_report.compare_model``: a looser and a tighter shape both differ), layers
``check`` calls ``mismatch`` or ``invalid`` are false alarms (OpenVINO read the same IR),
unknown ops are unchecked; then ``validate --all-layers`` runs, which must end neither in
an internal error (an exception not ovgather's own) nor in a signal. Models run in a
worker process, one after another (``--jobs N``: N workers side by side); a worker ended
by a signal blames the model it was on and a new worker goes on with the rest, so a crash
costs one model, not the run.

Results are appended to ``results.jsonl`` in the cache as they come; ``--resume`` keeps
the ones there and runs the rest. This is a report: it exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

KINDS = ("node", "light", "simple", "pytorch-converted", "pytorch-operator")
#: a model whose worker says nothing for this long is stopped and counted as hung
HANG_SECONDS = 300


def cache_dir() -> Path:
    """Where the converted IRs live: one directory per onnx and openvino version."""
    import onnx
    import openvino as ov

    given = os.environ.get("OVGATHER_ONNX_CACHE")
    if given:
        return Path(given)
    version = ov.get_version().split("-")[0]
    return Path.home() / ".cache" / "ovgather" / "onnx-backend" / f"{onnx.__version__}-{version}"


def model_index(cache: Path) -> dict[str, str]:
    """Every backend test model, ``kind/name`` -> its ``.onnx`` file; the node tests are
    written into the cache the first time (building them takes ~15 s)."""
    index = cache / "index.json"
    if index.exists():
        return json.loads(index.read_text())
    import onnx
    import onnx.backend.test.case.node as node_cases

    models: dict[str, str] = {}
    for case in node_cases.collect_testcases(None):
        path = cache / "node" / case.name / "model.onnx"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(case.model.SerializeToString())
        models[f"node/{case.name}"] = str(path)
    shipped = Path(onnx.__file__).parent / "backend" / "test" / "data"
    for kind in KINDS[1:]:
        for path in sorted((shipped / kind).glob("*/model.onnx")):
            models[f"{kind}/{path.parent.name}"] = str(path)
    _write_whole(index, json.dumps(models, indent=0, sort_keys=True).encode())
    return dict(sorted(models.items()))


def _write_whole(path: Path, data: bytes) -> None:
    """Write ``path`` under a name of this process's, then rename it: a run beside this
    one (another test session on the same cache) never reads half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    part.write_bytes(data)
    part.replace(path)


def converted(cache: Path, name: str, source: str) -> tuple[Path | None, str]:
    """The IR of one model, converted now if the cache has none: (its .xml, "") or
    (None, why OpenVINO could not convert it)."""
    import openvino as ov

    from ovgather.runtime.interop import conversion_error

    folder = cache / "ir" / name
    xml, skipped = folder / "model.xml", folder / "skipped.txt"
    if xml.exists():
        return xml, ""
    if skipped.exists():
        return None, skipped.read_text()
    folder.mkdir(parents=True, exist_ok=True)
    part = folder / f"part-{os.getpid()}.xml"
    try:
        model = ov.convert_model(source)
        ov.save_model(model, str(part), compress_to_fp16=False)
    except Exception as err:  # the ONNX frontend's failures: a skip, with its words
        _write_whole(skipped, conversion_error(err).encode())
        return None, skipped.read_text()
    part.with_suffix(".bin").replace(folder / "model.bin")
    part.replace(xml)  # last: a half-written IR is never taken
    return xml, ""


# --------------------------------------------------------------------------------------
# The worker: one process running models one after another, a JSON line per stage


def _check_stage(cache: Path, name: str, source: str) -> dict:
    """Convert, then compare ``check`` with ``read_model`` port by port."""
    from corpus_report import compare_model

    xml, reason = converted(cache, name, source)
    if xml is None:
        return {"name": name, "stage": "check", "skipped": reason}
    rep = compare_model(xml, cache / "ir")
    return {"name": name, "stage": "check", "layers": rep.layers,
            "statuses": dict(rep.statuses), "unchecked": dict(rep.unchecked),
            "ports": rep.ports, "equal_ports": rep.equal_ports,
            "unmatched": rep.unmatched, "diffs": rep.diffs}


def _validate_stage(cache: Path, name: str) -> dict:
    """``validate --all-layers`` in this process: its summary, or the internal error."""
    from ovgather.errors import OvgatherError
    from ovgather.ir import read_ir
    from ovgather.validate import prove_all_layers

    row = {"name": name, "stage": "validate"}
    try:
        report = prove_all_layers(read_ir(cache / "ir" / name / "model.xml"), seed=0)
    except OvgatherError as err:  # the CLI's one error line: not a crash
        return {**row, "error": str(err).splitlines()[0]}
    except Exception as err:  # what the CLI calls an internal error
        tb = traceback.format_exception(err)[-3:]
        return {**row, "internal": f"{type(err).__name__}: {err}", "traceback": "".join(tb)}
    return {**row, "ok": report.ok, "summary": report.summary}


def worker(cache: Path, names: Sequence[str]) -> None:
    """Run ``names`` in order, printing one JSON line per stage as soon as it is done."""
    index = model_index(cache)
    for name in names:
        row = _check_stage(cache, name, index[name])
        print(json.dumps(row), flush=True)
        if "skipped" not in row:
            print(json.dumps(_validate_stage(cache, name)), flush=True)


# --------------------------------------------------------------------------------------
# The parent: workers over the models, a crash blamed on the model it happened on


def run_models(names: Sequence[str], cache: Path,
               seen: Callable[[dict], None] = lambda result: None) -> dict[str, dict]:
    """Every model's result by name: its check stage, merged with its validate stage,
    or ``signal`` / ``hung`` when the worker died or stalled on it. ``seen`` gets each
    model's result as soon as it is whole."""
    results: dict[str, dict] = {}
    left = list(names)
    while left:
        left = _one_worker(left, cache, results, seen)
    return results


def _one_worker(names: list[str], cache: Path, results: dict[str, dict],
                seen: Callable[[dict], None]) -> list[str]:
    """Run a worker over ``names`` until it ends; the names still to run after it."""
    proc = subprocess.Popen(
        [sys.executable, __file__, "--worker", "--cache", str(cache), *names],
        stdout=subprocess.PIPE, text=True,
        # CI=true: convert_model then sends no telemetry (a forked process per model)
        env={**os.environ, "PYTHONPATH": _pythonpath(), "CI": "true"})
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put(None)],
                     daemon=True).start()
    pending = list(names)
    while pending:
        try:
            line = lines.get(timeout=HANG_SECONDS)
        except queue.Empty:
            proc.kill()
            _finish(results, pending.pop(0), {"hung": HANG_SECONDS}, seen)
            break
        if line is None:
            code = proc.wait()
            _finish(results, pending.pop(0), {"signal": -code if code < 0 else None,
                                              "exit": code}, seen)
            break
        row = json.loads(line)
        name = row.pop("name")
        stage = row.pop("stage")
        results.setdefault(name, {}).update(row)
        if stage == "validate" or "skipped" in row:
            _finish(results, pending.pop(0), {}, seen)
    proc.wait()
    return pending


def _finish(results: dict[str, dict], name: str, extra: dict, seen: Callable) -> None:
    result = results.setdefault(name, {})
    result.update(extra, name=name)
    result["problems"] = problems(result)
    seen(result)


def _pythonpath() -> str:
    """The worker imports this tree's ovgather and ``tools/`` (``corpus_report``)."""
    here = Path(__file__).resolve().parent
    return os.pathsep.join([str(here.parent), str(here),
                            *filter(None, [os.environ.get("PYTHONPATH")])])


def problems(result: dict) -> list[str]:
    """What is wrong with one model's result, in words (empty: clean or skipped)."""
    if "skipped" in result:
        return []
    found = []
    statuses = result.get("statuses", {})
    alarms = statuses.get("mismatch", 0) + statuses.get("invalid", 0)
    if alarms:
        found.append(f"{alarms} false alarm(s)")
    if result.get("unchecked"):
        found.append("unchecked " + ", ".join(sorted(result["unchecked"])))
    for d in result.get("diffs", []):
        found.append(f"{d['op']} {d['layer']!r} port {d['port']} ({d['status']}): "
                     f"ovgather {d['ovgather']} vs read_model {d['openvino']}")
    if result.get("unmatched"):
        found.append(f"{len(result['unmatched'])} layer(s) not in read_model")
    if "internal" in result:
        found.append(f"validate internal error: {result['internal']}")
    if result.get("signal") or "exit" in result:
        found.append(f"worker ended by signal {result.get('signal')} (exit {result['exit']})")
    if "hung" in result:
        found.append(f"no answer for {result['hung']} s")
    return found


def summary(results: Iterable[dict]) -> dict[str, int]:
    """The figures for the README."""
    results = list(results)
    converted = [r for r in results if "skipped" not in r]
    statuses = Counter()
    for r in converted:
        statuses.update(r.get("statuses", {}))
    return {
        "models": len(results), "converted": len(converted),
        "skipped": len(results) - len(converted),
        "clean": sum(not r["problems"] for r in converted),
        "with differing ports": sum(bool(r.get("diffs")) for r in converted),
        "differing ports": sum(len(r.get("diffs", [])) for r in converted),
        "ports": sum(r.get("ports", 0) for r in converted),
        "with false alarms": sum(bool(statuses_of(r)) for r in converted),
        "with unchecked layers": sum(bool(r.get("unchecked")) for r in converted),
        "unchecked layers": statuses["unchecked"],
        "validate not ok": sum(r.get("ok") is False for r in converted),
        "validate errors": sum("error" in r for r in converted),
        "validate internal errors": sum("internal" in r for r in converted),
        "validate signals": sum(bool(r.get("signal")) or "exit" in r for r in converted),
        "hung": sum("hung" in r for r in converted),
    }


def statuses_of(result: dict) -> int:
    """The false alarms of one model: layers ``check`` calls mismatch or invalid."""
    s = result.get("statuses", {})
    return s.get("mismatch", 0) + s.get("invalid", 0)


def run_logged(names: Sequence[str], cache: Path, log: Path, *, resume: bool = False,
               jobs: int = 1) -> dict[str, dict]:
    """``run_models`` on ``jobs`` workers side by side, each model's result appended to
    ``log`` and its problems printed as it comes; with ``resume`` the models ``log``
    already has are kept, not run."""
    done = {}
    if resume and log.exists():
        done = {r["name"]: r for r in map(json.loads, log.read_text().splitlines())}
    elif log.exists():
        log.unlink()
    todo = [n for n in names if n not in done]
    lock = threading.Lock()
    with log.open("a") as out, ThreadPoolExecutor(jobs) as pool:
        def seen(result: dict) -> None:
            with lock:
                out.write(json.dumps(result) + "\n")
                out.flush()
                for problem in result["problems"]:
                    print(f"{result['name']}: {problem}"[:300], flush=True)

        shards = [todo[k::jobs] for k in range(jobs)]
        for part in pool.map(lambda shard: run_models(shard, cache, seen), shards):
            done.update(part)
    return done


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="kind/name of models (all when none)")
    parser.add_argument("--json", type=Path, help="write the summary and every model here")
    parser.add_argument("--resume", action="store_true",
                        help="keep the results of an earlier run, run only the rest")
    parser.add_argument("--jobs", type=int, default=1,
                        help="workers side by side (each model runs on one)")
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--fresh", action="store_true",
                        help="convert every model again (empties the cache)")
    args = parser.parse_args(argv)
    cache = args.cache or cache_dir()
    if args.worker:
        worker(cache, args.names)
        return 0
    if args.fresh and cache.exists():
        shutil.rmtree(cache)
    index = model_index(cache)  # built here the first time
    unknown = [n for n in args.names if n not in index]
    if unknown:
        parser.error(f"not a backend test model: {', '.join(unknown)} (names are kind/name, "
                     f"as node/test_abs)")
    names = args.names or list(index)
    # a run of some models keeps its own log, so that the whole run's can be resumed
    log = cache / ("results-named.jsonl" if args.names else "results.jsonl")
    start = time.perf_counter()
    done = run_logged(names, cache, log, resume=args.resume, jobs=args.jobs)
    results = [done[n] for n in names if n in done]
    figures = summary(results)
    figures["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"summary": figures, "models": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
