"""Small OpenVINO graphs for the op tests: ``P`` and ``C`` build Parameters and Consts, and
the comparisons run ovgather's walk against ``read_model`` of the same IR."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset13 as o

from ovgather.infer import check
from ovgather.ir import read_ir

CORE = ov.Core()


def P(shape: str, etype=ov.Type.f32):
    return o.parameter(ov.PartialShape(shape), etype)


def C(values, dtype=np.int64):
    return o.constant(np.array(values, dtype=dtype))


def shape_of_params(rng, dim, etypes) -> tuple[list, list]:
    """One or two Parameters of rank 1 to 4, each dim drawn by ``dim(rng)``, and the
    ShapeOf of each in a type drawn from ``etypes``: ``(params, [(shape_of, rank, etype)])``,
    the start of the seeded shape chains of the bounds tests."""
    params, pool = [], []
    for _ in range(rng.choice((1, 1, 2))):
        rank = rng.randint(1, 4)
        x = P("[" + ",".join(dim(rng) for _ in range(rank)) + "]")
        params.append(x)
        etype = rng.choice(etypes)
        pool.append((o.shape_of(x, etype.get_type_name()), rank, etype))
    return params, pool


class ShapeChain:
    """A pool of 1-D integer vectors computed from ShapeOfs, ``(node, length, type)``: the
    seeded chains of the bounds tests. A subclass grows it by ``step()`` and ends it by
    ``consumer()``, an op that reads a shape from the last vector's bounds."""

    def __init__(self, rng, dim, etypes):
        self.rng = rng
        self.params, self.pool = shape_of_params(rng, dim, etypes)

    def const(self, values, etype):
        return C(values, np.int64 if etype == ov.Type.i64 else np.int32)

    def keep(self, out, length, etype) -> None:
        """Add ``out`` to the pool when its length (``length``, else its static first dim)
        is known and positive."""
        if length is None:
            dim = out.get_output_partial_shape(0)[0]
            if not dim.is_static:
                return
            length = dim.get_length()
        if length > 0:
            self.pool.append((out, length, etype))


def chain_model(rng, make_chain) -> tuple:
    """A chain drawn by ``make_chain(rng)``, 1 to 4 steps and its consumer, with every
    Parameter it reads; a chain OpenVINO refuses is drawn again."""
    for _ in range(50):
        chain = make_chain(rng)
        try:
            for _ in range(rng.randint(1, 4)):
                chain.step()
            out = chain.consumer()
        except RuntimeError:  # OpenVINO refuses these inputs: draw again
            continue
        params = list(chain.params)
        for v in out.input_values():
            node = v.get_node()
            if node.get_type_name() == "Parameter" and node not in params:
                params.append(node)
        return out, params
    raise AssertionError("50 chains in a row refused by OpenVINO")


def ov_layer_shapes(model: ov.Model) -> dict[str, list[str]]:
    return {
        op.get_friendly_name(): [str(op.get_output_partial_shape(i))
                                 for i in range(op.get_output_size())]
        for op in model.get_ops() if op.get_type_name() != "Result"
    }


def compare_with_openvino(tmp_path, outputs, params, name="m"):
    """Save, read back with both, return (report, differences)."""
    model = ov.Model([o.result(x) for x in outputs], params, name)
    path = tmp_path / f"{name}.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    expected = ov_layer_shapes(CORE.read_model(str(path)))
    report = check(read_ir(path))
    diffs = [
        (lr.name, lr.type, lr.inferred, expected[lr.name])
        for lr in report.layers
        if lr.type != "Result" and lr.name in expected and lr.inferred != expected[lr.name]
    ]
    return report, diffs


def accepted_by_openvino(case, tries: int = 20):
    """``case()`` until OpenVINO accepts the model it builds (it raises on a target it
    rejects): each seed keeps testing something instead of being skipped."""
    for _ in range(tries):
        try:
            return case()
        except (RuntimeError, ValueError):
            continue
    raise AssertionError(f"{tries} cases in a row that OpenVINO rejects")


def assert_like_openvino(tmp_path, outputs, params, name="m"):
    report, diffs = compare_with_openvino(tmp_path, outputs, params, name)
    assert not diffs, diffs
    statuses = {lr.name: lr.status for lr in report.layers}
    assert report.ok, [lr.to_dict() for lr in report.problems()]
    return statuses


def _params_of(node):
    seen, todo = [], [node]
    while todo:
        n = todo.pop()
        if n.get_type_name() == "Parameter":
            seen.append(n)
        todo += [v.get_node() for v in n.input_values()]
    return seen
