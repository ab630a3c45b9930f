"""validate --all-layers picks input sizes the model's own rules accept (``sizes.honour``,
``infer.symbols.input_dim_constraints``) and seeds states that start empty.

Two classes of model the dim-by-dim sizes (1s and 2s) could never run, built by seeded
generators: GatherND-8 whose batch dims are dynamic on one side and static on the other
(they merge, so only the static size runs), and stateful models whose ReadValue has no
initializer (what ``MakeStateful`` leaves: the cache starts empty, and its batch of 0 meets
the new keys' batch in a Concat)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ovgather.ir import read_ir
from ovgather.ops.core.symbolic import const
from ovgather.shapes import PartialShape
from ovgather.validate import prove_all_layers
from ovgather.validate.sizes import honour

SEEDS = range(6)


def _gather_nd8(path: Path, seed: int) -> Path:
    """data ``batch + [k] + tail``, indices ``batch + [m, r]`` (r ≤ 1 + len(tail)),
    ``batch_dims = len(batch)``; each batch dim dynamic on exactly one side, so the other
    side's static size is the only one that runs."""
    import openvino as ov
    import openvino.opset8 as o

    rng = random.Random(seed)
    b = rng.randint(1, 3)
    batch = [rng.randint(2, 4) for _ in range(b)]
    tail = [rng.randint(2, 5) for _ in range(rng.randint(0, 2))]
    r = rng.randint(1, 1 + len(tail))
    data_dims = [*batch, rng.randint(3, 6), *tail]
    index_dims = [*batch, rng.randint(1, 4), r]
    for i in range(b):  # one side dynamic, the other static
        (data_dims if rng.random() < 0.5 else index_dims)[i] = -1
    if rng.random() < 0.5:
        data_dims[b] = -1  # the gathered axis dynamic too: a free size
    data = o.parameter(ov.PartialShape(data_dims), ov.Type.f32, name="data")
    indices = o.parameter(ov.PartialShape(index_dims), ov.Type.i32, name="indices")
    model = ov.Model([o.gather_nd(data, indices, batch_dims=b)], [data, indices], "gnd8")
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _stateful(path: Path, seed: int) -> Path:
    """A key cache ``[B, H, P, D]`` concatenated with new keys made from ``x [B, S, H*D]``,
    made stateful by ``MakeStateful``: its ReadValue has no initializer."""
    import openvino as ov
    import openvino.opset13 as o
    from openvino._offline_transformations import apply_make_stateful_transformation

    rng = random.Random(seed)
    heads, depth = rng.randint(1, 3), rng.choice([2, 4, 8])
    past = o.parameter(ov.PartialShape([-1, heads, -1, depth]), ov.Type.f32, name="past")
    x = o.parameter(ov.PartialShape([-1, -1, heads * depth]), ov.Type.f32, name="x")
    keys = o.transpose(o.reshape(x, o.constant([0, 0, heads, depth]), special_zero=True),
                       o.constant([0, 2, 1, 3]))
    cat = o.concat([past, keys], axis=2)
    cat.output(0).get_tensor().set_names({"present"})
    scores = o.matmul(keys, cat, transpose_a=False, transpose_b=True)
    out = o.reduce_sum(scores, o.constant([1, 2, 3]), keep_dims=False)
    out.output(0).get_tensor().set_names({"out"})
    model = ov.Model([cat.output(0), out.output(0)], [past, x], "kv")
    apply_make_stateful_transformation(model, {"past": "present"})
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _proves_every_layer(report) -> None:
    assert report.ok and not report.nothing_proved, [
        (lp.name, lp.status, lp.message) for lp in report.layers if lp.status != "ok"]
    left = [lp for lp in report.layers if lp.status != "ok"]
    assert all(lp.type == "Assign" for lp in left), [(lp.name, lp.status) for lp in left]
    assert report.sizes


@pytest.mark.parametrize("seed", SEEDS)
def test_gather_nd8_with_merged_batch_dims_runs_at_the_sizes_the_batch_allows(tmp_path, seed):
    G = read_ir(_gather_nd8(tmp_path / "gnd8.xml", seed))
    report = prove_all_layers(G, seed=seed)
    _proves_every_layer(report)
    static = {a["name"]: PartialShape.parse(a["data"]["shape"])
              for _, a in G.nodes(data=True) if a["type"] == "Parameter"}
    for sizes in report.sizes.values():  # every batch dim took the other side's size
        data, indices = (PartialShape.parse(sizes[n]).dims for n in ("data", "indices"))
        for i in range(len(indices) - 2):
            assert data[i] == indices[i]
            known = static["data"].dims[i] if static["data"].dims[i].is_static \
                else static["indices"].dims[i]
            assert data[i].lo == known.lo


@pytest.mark.parametrize("seed", SEEDS)
def test_a_state_without_initializer_is_seeded_and_every_layer_proved(tmp_path, seed):
    report = prove_all_layers(read_ir(_stateful(tmp_path / "kv.xml", seed)), seed=seed)
    _proves_every_layer(report)
    for sizes in report.sizes.values():  # named in the report, batch tied to the input's
        (state,) = [v for k, v in sizes.items() if k.startswith("state ")]
        seeded, x = PartialShape.parse(state).dims, PartialShape.parse(sizes["x"]).dims
        assert seeded[0] == x[0] and seeded[2].lo >= 1


def test_the_cli_names_the_seeded_state_and_exits_0(tmp_path, capsys):
    from ovgather.cli import main

    code = main(["validate", "--all-layers", str(_stateful(tmp_path / "kv.xml", 0)), "--json"])
    out = capsys.readouterr().out
    assert code == 0 and '"state pastpresent"' in out


def test_honour_never_makes_a_dim_empty():
    params = {"x": PartialShape.parse("?,4")}
    sizes = {"x": PartialShape.parse("1,4")}
    assert honour(sizes, params, {("x", 0): const(0)}) == sizes
    assert str(honour(sizes, params, {("x", 0): const(3)})["x"]) == "[3,4]"
    bounded = {"x": PartialShape.parse("1..2,4")}
    assert honour(sizes, bounded, {("x", 0): const(3)}) == sizes  # outside the bounds
