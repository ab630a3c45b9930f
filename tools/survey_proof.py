"""How much of a model ``validate --all-layers`` proves: a survey over dynamic models
built from OpenVINO's ONNX-frontend test models and over the test corpus.

Run ``python tools/survey_proof.py [PROTOTXT_DIR] [--json OUT] [--no-corpus]``.

``PROTOTXT_DIR`` holds ONNX models in protobuf text format (``*.prototxt``, as OpenVINO's
ONNX frontend tests keep them). Each is parsed into an ``onnx.ModelProto``, the first dim
of every input made dynamic (``N``) and converted by ``openvino.convert_model``; a model
OpenVINO does not convert that way is tried with its inputs as they are, and a model it
does not convert at all is counted and left out. The IRs are cached under
``~/.cache/ovgather/survey-proof/<openvino>/`` (``OVGATHER_SURVEY_CACHE`` moves it).
The test corpus (``ir_corpus/**/*.xml``, ``ir_samples/*.xml``) is run too.

For every model, ``prove_all_layers`` runs; a layer is *runnable* when the runtime gave
an output for it at some size tried, and *proved* when its status is ``ok`` or
``looser``. The figures printed: layers, runnable layers, proved layers, the share of
runnable layers proved (the target is 95 %) and of all layers, and the statuses and op
types of the runnable layers not proved.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROVED = ("ok", "looser")


def cache_dir() -> Path:
    import openvino as ov

    given = os.environ.get("OVGATHER_SURVEY_CACHE")
    if given:
        return Path(given)
    return Path.home() / ".cache" / "ovgather" / "survey-proof" / ov.get_version().split("-")[0]


def dynamic_ir(source: Path, cache: Path) -> tuple[Path | None, str]:
    """The IR of one prototxt model with dim 0 of every input dynamic (its inputs as
    they are when OpenVINO refuses that), converted now unless cached: (its .xml, how),
    or (None, why not)."""
    folder = cache / source.stem
    for kind in ("dynamic", "static"):
        xml = folder / kind / "model.xml"
        if xml.exists():
            return xml, kind
    if (folder / "skipped.txt").exists():
        return None, (folder / "skipped.txt").read_text()
    why = ""
    for kind in ("dynamic", "static"):
        try:
            _convert(source, folder / kind, dynamic=kind == "dynamic")
            return folder / kind / "model.xml", kind
        except Exception as err:  # the frontend's refusal: try the next way, then skip
            why = str(err).strip().splitlines()[0][:300] if str(err).strip() else repr(err)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "skipped.txt").write_text(why)
    return None, why


def _convert(source: Path, out: Path, dynamic: bool) -> None:
    import onnx
    import openvino as ov
    from google.protobuf import text_format

    model = text_format.Parse(source.read_text(), onnx.ModelProto())
    if dynamic:
        fixed = {i.name for i in model.graph.initializer}
        for i in model.graph.input:
            dims = i.type.tensor_type.shape.dim
            if i.name not in fixed and i.type.HasField("tensor_type") and len(dims):
                dims[0].dim_param = "N"
    with tempfile.TemporaryDirectory(prefix="ovgather-survey-") as tmp:
        path = Path(tmp) / "model.onnx"
        path.write_bytes(model.SerializeToString())
        converted = ov.convert_model(str(path))
        if dynamic and all(p.get_partial_shape().is_static for p in converted.inputs):
            raise ValueError("no input with a dynamic dim")
        out.mkdir(parents=True, exist_ok=True)
        ov.save_model(converted, str(out / "model.xml"), compress_to_fp16=False)


def corpus() -> list[Path]:
    """The test corpus: ``ir_corpus/**/*.xml`` and ``ir_samples/*.xml``."""
    return sorted((ROOT / "ir_corpus").rglob("*.xml")) + sorted((ROOT / "ir_samples").glob("*.xml"))


def survey(xml: Path) -> dict:
    """One model's figures: layers, runnable, proved, and the runnable ones not proved."""
    from ovgather.errors import OvgatherError
    from ovgather.ir import read_ir
    from ovgather.validate import prove_all_layers

    try:
        report = prove_all_layers(read_ir(xml), seed=0)
    except OvgatherError as err:
        return {"error": str(err).splitlines()[0]}
    except Exception as err:  # an internal error: counted, the survey goes on
        return {"internal": f"{type(err).__name__}: {err}"[:300]}
    runnable = [lp for lp in report.layers
                if lp.status in PROVED or any(t != "-" for real in lp.real.values()
                                                    for t in real)]
    left = [lp for lp in runnable if lp.status not in PROVED]
    return {"layers": len(report.layers), "runnable": len(runnable),
            "proved": sum(lp.status in PROVED for lp in report.layers),
            "left": [{"type": lp.type, "status": lp.status, "message": lp.message[:200]}
                     for lp in left],
            "nothing_proved": report.nothing_proved}


def figures(rows: Iterable[dict]) -> dict:
    rows = list(rows)
    done = [r for r in rows if "layers" in r]
    layers = sum(r["layers"] for r in done)
    runnable = sum(r["runnable"] for r in done)
    proved = sum(r["proved"] for r in done)
    left = [x for r in done for x in r["left"]]
    return {
        "models": len(rows), "surveyed": len(done),
        "not converted": sum("skipped" in r for r in rows),
        "errors": sum("error" in r or "internal" in r for r in rows),
        "nothing proved": sum(r["nothing_proved"] for r in done),
        "layers": layers, "runnable": runnable, "proved": proved,
        "proved of runnable %": round(100 * proved / runnable, 2) if runnable else None,
        "proved of all %": round(100 * proved / layers, 2) if layers else None,
        "not proved, by status": dict(Counter(x["status"] for x in left).most_common()),
        "not proved, by op": dict(Counter(x["type"] for x in left).most_common(12)),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prototxt", nargs="?", type=Path,
                        help="a folder of ONNX models in protobuf text format (*.prototxt)")
    parser.add_argument("--no-corpus", action="store_true", help="leave the test corpus out")
    parser.add_argument("--json", type=Path, help="write the figures and every model here")
    args = parser.parse_args(argv)
    start, rows, groups = time.perf_counter(), {}, {}
    if args.prototxt is not None:
        cache = cache_dir()
        for source in sorted(args.prototxt.glob("*.prototxt")):
            xml, how = dynamic_ir(source, cache)
            name = f"prototxt/{source.stem}"
            rows[name] = {"skipped": how} if xml is None else {"kind": how, **survey(xml)}
        groups["prototxt (dynamic)"] = [r for n, r in rows.items()
                                        if n.startswith("prototxt/") and r.get("kind") != "static"]
        groups["prototxt (static: OpenVINO refuses dim 0 dynamic)"] = [
            r for n, r in rows.items() if r.get("kind") == "static"]
    if not args.no_corpus:
        for xml in corpus():
            rows[f"corpus/{xml.relative_to(ROOT)}"] = survey(xml)
        groups["corpus"] = [r for n, r in rows.items() if n.startswith("corpus/")]
    groups["all surveyed (static prototxt models left out)"] = [
        r for r in rows.values() if r.get("kind") != "static"]
    out = {name: figures(rs) for name, rs in groups.items()}
    out["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"figures": out, "models": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
