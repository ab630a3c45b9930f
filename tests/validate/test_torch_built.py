"""``validate --all-layers`` proves models PyTorch built (tools/make_torch_models.py wrote
them to tests/data/torch_models/; nothing here imports torch):

- ``gather_index``: ``data[b, c, idx]`` (advanced indexing) as OpenVINO's PyTorch
  frontend converts it: a chain of Gathers over flattened dims, every dim dynamic but
  the channels;
- ``gather_nd_batch``: that chain as the GatherND-8 it computes, ``batch_dims=2``, the
  data's batch dims ``[?,3]`` merged with the indices' static ``[2,3]`` (PyTorch's
  converter never emits a GatherND: the converted graph was edited with OpenVINO's API);
- ``kv_decoder``: an attention decoder with a KV cache, made stateful by OpenVINO's
  ``apply_make_stateful_transformation``: ReadValues with no initializer, which the proof
  seeds with a past of its own (``state …`` in ``sizes``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ovgather.cli import main
from ovgather.ir import read_ir
from ovgather.validate import prove_all_layers

DATA = Path(__file__).resolve().parents[1] / "data" / "torch_models"


def _types(G, op):
    return [n for n in G if G.nodes[n]["type"] == op]


def _proved(name):
    G = read_ir(str(DATA / f"{name}.xml"))
    report = prove_all_layers(G)
    bad = [(lp.type, lp.name, lp.status) for lp in report.layers
           if lp.status != "ok" and lp.type != "Assign"]
    assert not bad, bad
    return G, report


def test_gather_nd_with_merged_batch_dims():
    """GatherND-8, batch_dims 2: data [?,3,?,5] against indices [2,3,4,1]; proved at
    every size, the data's dynamic batch dim fed the indices' 2."""
    G, report = _proved("gather_nd_batch")
    (gnd,) = _types(G, "GatherND")
    assert G.nodes[gnd]["version"] == "opset8"
    assert str(G.nodes[gnd]["data"]["batch_dims"]) == "2"
    assert report.ok
    assert {s["data"].split(",")[0] for s in report.sizes.values()} == {"[2"}


def test_gather_chain_torch_makes_of_advanced_indexing():
    """What OpenVINO's PyTorch frontend makes of data[b, c, idx]: Gathers, no GatherND."""
    G, report = _proved("gather_index")
    assert _types(G, "Gather") and not _types(G, "GatherND")
    assert report.ok


def test_stateful_decoder_state_is_seeded():
    """ReadValue with no initializer (its first call starts from an empty cache): the
    proof seeds each state, and every layer but the Assigns (no output) is ok."""
    G, report = _proved("kv_decoder")
    reads = _types(G, "ReadValue")
    assert len(reads) == 2 and all(G.in_degree(n) == 0 for n in reads)
    for sizes in report.sizes.values():
        states = [k for k in sizes if k.startswith("state ")]
        assert len(states) == 2, sizes
    assert report.ok


@pytest.mark.parametrize("name", ["gather_nd_batch", "kv_decoder"])
def test_validate_all_layers_exits_zero(name, capsys):
    assert main(["validate", "--all-layers", str(DATA / f"{name}.xml")]) == 0
