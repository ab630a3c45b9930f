"""Survey ``ovgather reshape --fix`` to a new batch on every batch-1 model, as a user runs it.

Every sample and ``ir_corpus`` model whose inputs are static with a batch of 1 is reshaped
by the installed console script to batch 3 and to a dynamic batch ``?``. A pair is
*verified* when the command exits 0 and OpenVINO runs the written model at every batch
inside the request (3, or 1, 2 and 3 for ``?``) with each row equal to that row run alone
through the original model; *refused* when it exits 1 and OpenVINO refuses the original
model at the sizes the blocker names; anything else is a *lie* (exit 0 with a model that
fails or differs, or a refusal OpenVINO does not share). Prints one line per pair and the
figures the README quotes. ``tests/passes/test_reshape_batch.py`` runs the same checks.

    python tools/reshape_survey.py [--models ir_corpus/vit/pytorch_static.xml ...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import openvino as ov

ROOT = Path(__file__).resolve().parents[1]
CORE = ov.Core()
CPU = {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": "f32"}
SEED = 5
BATCHES = {"3": (3,), "?": (1, 2, 3)}


def batch_one_models() -> list[Path]:
    """The models whose inputs are static with a batch of 1 (dim 0 of a sample such as
    ``data[1000,256,10,2]`` is no batch: its constant indices address those rows)."""
    found = []
    for xml in sorted((ROOT / "ir_samples").rglob("*.xml")) + sorted(
            (ROOT / "ir_corpus").rglob("*.xml")):
        shapes = [i.get_partial_shape() for i in CORE.read_model(str(xml)).inputs]
        if all(s.is_static and s.rank.get_length() and s[0].get_length() == 1 for s in shapes):
            found.append(xml)
    return found


def built_models(folder: Path) -> list[Path]:
    """Batch-1 models no committed file holds, written to ``folder``: an SSD-style head
    whose DetectionOutput stacks every image's boxes in one output, and the models whose
    rows a reshape mixes with every shape rule holding (tools/proof_models.py: a
    mixture-of-experts block scattering into a buffer of the traced token count, a mean
    over the batch)."""
    from make_samples import ssd_head
    from proof_models import write_all

    path = folder / "ssd_head.xml"
    ov.save_model(ssd_head(), str(path), compress_to_fp16=False)
    return [path, *write_all(folder)]


def batch_shapes(xml: Path, batch: str) -> dict[str, str]:
    """Every input with dim 0 set to ``batch``, as ``--shape`` texts."""
    return {i.get_any_name(): "[" + ",".join([batch] + [str(d) for d in
                                              i.get_partial_shape().to_shape()[1:]]) + "]"
            for i in CORE.read_model(str(xml)).inputs}


def reshape_args(xml: Path, shapes: dict[str, str], out: Path) -> list[str]:
    args = ["reshape", str(xml), "--fix", "--json", "-o", str(out)]
    for name, shape in shapes.items():
        args += ["--shape", f"{name}={shape}"]
    return args


def _feeds(model: ov.Model, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    feeds = {}
    for inp in model.inputs:
        shape = [batch, *inp.get_partial_shape().to_shape()[1:]]
        dtype = inp.get_element_type().to_dtype()
        if "mask" in inp.get_any_name():
            # ones with a different number of padded positions per row: a batched model
            # that masks every row with one row's mask computes other rows
            mask = np.ones(shape, dtype)
            if len(shape) == 2 and shape[1] > 1:
                for r in range(shape[0]):
                    mask[r, shape[1] - r % shape[1]:] = 0
            feeds[inp.get_any_name()] = mask
        elif dtype.kind in "iub":
            feeds[inp.get_any_name()] = rng.integers(0, 2, shape).astype(dtype)
        else:
            feeds[inp.get_any_name()] = rng.standard_normal(shape).astype(dtype)
    return feeds


def _run(compiled: ov.CompiledModel, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    request = compiled.create_infer_request()
    request.infer(feeds)
    return [np.array(request.get_output_tensor(i).data) for i in range(len(compiled.outputs))]


def _rows_mismatch(one: ov.CompiledModel, many: ov.CompiledModel, model: ov.Model,
                   batch: int, rng: np.random.Generator) -> str | None:
    """None when every output of ``many`` at ``batch`` is the rows of ``one`` run one by
    one, stacked (a batch folded into a leading dim stacks the same way; a cross-row
    output such as CLIP's image-text logits is compared on its diagonal)."""
    feeds = _feeds(model, batch, rng)
    got = _run(many, feeds)
    rows = [_run(one, {k: v[r:r + 1] for k, v in feeds.items()}) for r in range(batch)]
    for i, out in enumerate(got):
        want = np.concatenate([row[i] for row in rows], axis=0)
        if out.ndim >= 2 and out.shape[:2] == (batch, batch) != want.shape[:2]:
            out = out[np.arange(batch), np.arange(batch)][:, None]
        elif _detections(out) and batch > 1:
            # DetectionOutput stacks every image's boxes in one [1,1,N*K,7], column 0 the
            # image: image r's boxes, renumbered 0, are row r's
            out = np.concatenate([_boxes_of(out, r) for r in range(batch)])
            want = np.concatenate([_boxes_of(row[i], 0) for row in rows])
        if out.shape != want.shape:
            return f"batch {batch}, output {i}: shape {out.shape}, rows give {want.shape}"
        # f32 tolerance, absolute per unit of the output's magnitude (a batch reorders sums)
        scale = float(np.nanmax(np.abs(want))) if want.size and want.dtype.kind == "f" else 1.0
        if not np.allclose(out, want, rtol=1e-3, atol=1e-4 * max(scale, 1e-6), equal_nan=True):
            nans = int(np.isnan(out).sum() - np.isnan(want).sum())
            worst = float(np.nanmax(np.abs(out - want))) if nans == 0 else float("nan")
            return (f"batch {batch}, output {i}: rows differ by up to {worst:.3g}"
                    + (f" ({nans} more NaN)" if nans else ""))
    return None


def _detections(out: np.ndarray) -> bool:
    return out.ndim == 4 and out.shape[:2] == (1, 1) and out.shape[3] == 7


def _boxes_of(out: np.ndarray, image: int) -> np.ndarray:
    """Image ``image``'s boxes of a DetectionOutput result, its column 0 set to 0."""
    boxes = out[0, 0][out[0, 0][:, 0] == image].copy()
    boxes[:, 0] = 0
    return boxes


def rows_differ(original: Path, written: Path, batches: tuple[int, ...]) -> str | None:
    """None when, at each batch, ``written`` computes the rows of ``original`` run one by
    one; else what differs. A run that fails raises RuntimeError."""
    one = CORE.compile_model(str(original), "CPU", CPU)
    many = CORE.compile_model(str(written), "CPU", CPU)
    rng = np.random.default_rng(SEED)
    model = CORE.read_model(str(original))
    for batch in batches:
        wrong = _rows_mismatch(one, many, model, batch, rng)
        if wrong:
            return wrong
    return None


def openvino_refuses(original: Path, shapes: dict[str, str], blocked: list[dict]) -> bool:
    """OpenVINO refuses, fails or computes wrong rows with the original model at the
    sizes the first blocker names: its shape inference at those static sizes, else a run
    there compared row by row with the rows run alone."""
    sizes = {**shapes, **blocked[0].get("sizes", {})}
    model = CORE.read_model(str(original))
    try:
        model.reshape({k: ov.PartialShape(v) for k, v in sizes.items()})
        many = CORE.compile_model(model, "CPU", CPU)
        one = CORE.compile_model(str(original), "CPU", CPU)
        batch = ov.PartialShape(next(iter(sizes.values())))[0].get_length()
        wrong = _rows_mismatch(one, many, CORE.read_model(str(original)), batch,
                               np.random.default_rng(SEED))
    except RuntimeError:
        return True
    return wrong is not None


def proof_refusal(xml: Path, shapes: dict[str, str], command: list[str], out: Path,
                  differs: dict) -> tuple[str, str]:
    """A refusal by the runtime proof is real when the model written without it fails or
    computes other rows at the batches of the request."""
    args = [*reshape_args(xml, shapes, out), "--no-runtime-proof"]
    done = subprocess.run([*command, *args], capture_output=True, text=True)
    what = f"runtime proof: {differs['output'] or 'run failed'}"
    if done.returncode != 0:
        return "lie", f"{what}, but without it the reshape exits {done.returncode}"
    batch = next(iter(shapes.values()))[1:].split(",")[0]
    try:
        wrong = rows_differ(xml, out, BATCHES[batch])
    except RuntimeError:
        return "refused", f"{what} (the run fails)"
    return ("refused", f"{what} ({wrong})") if wrong else ("lie", f"{what}, but rows agree")


def survey(xml: Path, batch: str, command: list[str], tmp: Path) -> tuple[str, str]:
    """``(verdict, detail)`` for one model and batch, running ``command`` + the args."""
    shapes = batch_shapes(xml, batch)
    out = tmp / "out.xml"
    done = subprocess.run([*command, *reshape_args(xml, shapes, out)], capture_output=True,
                          text=True)
    if done.returncode not in (0, 1):
        return "lie", f"exit {done.returncode}: {done.stderr.strip()[:200]}"
    doc = json.loads(done.stdout)
    if done.returncode == 1 and doc["runtime_proof"]["differs"]:
        return proof_refusal(xml, shapes, command, out, doc["runtime_proof"]["differs"])
    if done.returncode == 1:
        first = doc["blocked"][0]
        if openvino_refuses(xml, shapes, doc["blocked"]):
            return "refused", f"{first['type']} '{first['name']}'"
        return "lie", f"refused, but OpenVINO runs it: {first['why'][:160]}"
    try:
        wrong = rows_differ(xml, out, BATCHES[batch])
    except RuntimeError as err:
        return "lie", f"exit 0, but the run fails: {str(err).splitlines()[0][:160]}"
    if wrong:
        return "lie", f"exit 0, but {wrong}"
    return "verified", f"{len(doc['fixes'])} fix(es)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", type=Path)
    args = parser.parse_args()
    command = [shutil.which("ovgather") or sys.executable] + \
        ([] if shutil.which("ovgather") else ["-m", "ovgather"])
    counts = {"verified": 0, "refused": 0, "lie": 0}
    built = Path(tempfile.mkdtemp())
    for xml in args.models or batch_one_models() + built_models(built):
        for batch in BATCHES:
            with tempfile.TemporaryDirectory() as tmp:
                verdict, detail = survey(xml.resolve(), batch, command, Path(tmp))
            counts[verdict] += 1
            shown = xml.relative_to(ROOT) if xml.is_relative_to(ROOT) else xml.name
            print(f"{verdict:9} {shown} [{batch}]: {detail}", flush=True)
    shutil.rmtree(built, ignore_errors=True)
    total = sum(counts.values())
    print(f"{total} model x batch pairs: {counts['verified']} changed and verified "
          f"({100 * counts['verified'] / max(total, 1):.0f}%), {counts['refused']} refused "
          f"with a real blocker, {counts['lie']} wrong")
    return 1 if counts["lie"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
