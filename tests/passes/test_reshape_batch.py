"""``reshape --fix`` to a new batch never exits 0 with a model that fails or differs.

Every model whose inputs are static with a batch of 1 (the samples, the static
``ir_corpus`` exports) is reshaped through the CLI to batch 3 and to a dynamic batch
``?``. Exit 0 promises that OpenVINO runs the written model at every batch inside the
request (1, 2 and 3 for ``?``) and that each row equals that row run alone through the
original model: the outputs at the old size are unchanged, and no row leaks into
another. An SSD-style head the test builds joins them (its DetectionOutput stacks every
image's boxes in one output: compared image by image). Exit 1 must name a layer that
really blocks: OpenVINO refuses the original model at the sizes the blocker names; exit 1
from the runtime proof must be a model that, written without the proof, computes other
rows (or fails) on OpenVINO. A mixture-of-experts block and a model that mixes its rows
(tools/proof_models.py) join them. The checks live in ``tools/reshape_survey.py``, which
prints the figures for docs/cli/reshape.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reshape_survey import (
    BATCHES,
    ROOT,
    batch_one_models,
    batch_shapes,
    built_models,
    openvino_refuses,
    reshape_args,
    rows_differ,
)

from ovgather.cli import main

MODELS = batch_one_models()


def test_the_survey_covers_samples_and_real_models():
    kinds = {p.relative_to(ROOT).parts[0] for p in MODELS}
    assert kinds == {"ir_samples", "ir_corpus"} and len(MODELS) >= 10


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    return {p.stem: p for p in built_models(tmp_path_factory.mktemp("built"))}


@pytest.mark.parametrize("batch", list(BATCHES))
@pytest.mark.parametrize("xml", [*MODELS, "ssd_head", "moe_block", "batch_mixer"],
                         ids=lambda p: str(p.relative_to(ROOT).with_suffix(""))
                         if isinstance(p, Path) else p)
def test_reshape_fix_batch_runs_or_names_a_real_blocker(xml, batch, built, tmp_path, capsys):
    xml = built[xml] if isinstance(xml, str) else xml
    shapes = batch_shapes(xml, batch)
    out = tmp_path / "out.xml"
    code = main(reshape_args(xml, shapes, out))
    doc = json.loads(capsys.readouterr().out)
    assert code in (0, 1), doc
    if code == 1 and doc["runtime_proof"]["differs"]:
        # refused by the runtime proof: written without it, OpenVINO shows the rows differ
        assert not doc["blocked"] and doc["output"] is None and not out.exists()
        assert main([*reshape_args(xml, shapes, out), "--no-runtime-proof"]) == 0
        capsys.readouterr()
        try:
            assert rows_differ(xml, out, BATCHES[batch]) is not None
        except RuntimeError:
            pass  # the run fails
        return
    if code == 1:
        assert doc["blocked"] and doc["output"] is None and not out.exists()
        assert openvino_refuses(xml, shapes, doc["blocked"]), doc["blocked"][0]
        return
    assert rows_differ(xml, out, BATCHES[batch]) is None
