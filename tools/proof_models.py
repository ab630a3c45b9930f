"""Batch-1 models whose rows a reshape can mix without any shape rule breaking, for the
runtime proof of ``ovgather reshape`` (tests/passes/test_reshape_proof.py and
tools/reshape_survey.py build them; no file is committed).

* :func:`moe_block`: a Mixtral-style sparse mixture-of-experts block as a batch-1 trace of
  transformers' expert loop writes it: the tokens flattened to ``[T,D]``, TopK routing,
  each expert's tokens found by NonZero and their outputs added by ScatterNDUpdate into a
  zero buffer that is a Const ``[T,D]`` of the traced token count.
* :func:`batch_mixer`: a model that adds the mean over dim 0 (a batch-1 trace of a
  statistic that was meant per row): every rule holds at any batch, and rows mix.
* :func:`row_pick`: a GatherND whose constant indices pick row 0 (advanced indexing
  traced at batch 1, as recent attention-mask exports write it): every row reads row 0.

    python tools/proof_models.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset15 as op


def moe_block(seq: int = 4, hidden: int = 8, experts: int = 4, top_k: int = 2,
              seed: int = 3, bias: bool = False) -> ov.Model:
    """The MoE block at batch 1: input ``hidden_states [1,seq,hidden]``, output ``out``.
    ``bias``: the buffer starts from a random bias per token instead of zeros (no value
    to broadcast: no fix can rebuild it at another size)."""
    rng = np.random.default_rng(seed)

    def weights(*shape: int):
        return op.constant((rng.standard_normal(shape) * 0.5).astype(np.float32))

    def i64(values):
        return op.constant(np.array(values, np.int64))

    x = op.parameter([1, seq, hidden], np.float32, name="hidden_states")
    tokens = op.reshape(x, i64([-1, hidden]), False, name="moe/tokens")
    logits = op.matmul(tokens, weights(hidden, experts), False, False, name="moe/router")
    top = op.topk(logits, i64(top_k), -1, "max", "value", "i64", name="moe/topk")
    routing = op.softmax(top.output(0), -1, name="moe/routing")
    start = rng.standard_normal((seq, hidden)) if bias else np.zeros((seq, hidden))
    buffer = op.constant(start.astype(np.float32), name="moe/buffer").output(0)
    for e in range(experts):
        chosen = op.equal(top.output(1), i64(e), name=f"moe/expert{e}/chosen")
        weight = op.reduce_sum(op.select(chosen, routing, op.constant(np.float32(0))),
                               i64([1]), True, name=f"moe/expert{e}/weight")
        hit = op.reduce_logical_or(chosen, i64([1]), False, name=f"moe/expert{e}/hit")
        where = op.transpose(op.non_zero(hit, "i64"), i64([1, 0]), name=f"moe/expert{e}/where")
        state = op.gather_nd(tokens, where, 0, name=f"moe/expert{e}/state")
        hidden_out = op.relu(op.matmul(state, weights(hidden, hidden), False, False))
        update = op.multiply(hidden_out, op.gather_nd(weight, where, 0),
                             name=f"moe/expert{e}/update")
        buffer = op.scatter_nd_update(buffer, where, update, "sum",
                                      name=f"moe/expert{e}/index_add").output(0)
    y = op.add(x, op.reshape(buffer, i64([-1, seq, hidden]), False, name="moe/unflatten"),
               name="moe/residual")
    out = op.result(y, name="out")
    model = ov.Model([out], [x], "moe_block")
    model.outputs[0].get_tensor().set_names({"out"})
    return model


def batch_mixer(width: int = 4) -> ov.Model:
    """``y = x + mean(x, axis 0)`` at ``x [1,width]``: at batch 1 the mean is the row."""
    x = op.parameter([1, width], np.float32, name="x")
    mean = op.reduce_mean(x, op.constant(np.array([0], np.int64)), True, name="mean")
    out = op.result(op.add(x, mean, name="mix"), name="y")
    model = ov.Model([out], [x], "batch_mixer")
    model.outputs[0].get_tensor().set_names({"y"})
    return model


def row_pick(seq: int = 6, width: int = 3, inner: int = 2, features: bool = False,
             seed: int = 0) -> ov.Model:
    """A batch-1 trace of advanced indexing: a GatherND whose constant indices
    ``[1,(1,)*inner,seq,2]`` hold row 0 and a position (a permutation, from ``seed``).

    ``features``: the gathered tensor is the activations ``h [1,seq,width]`` (tokens taken
    in another order, one ``[width]`` row each) and the output is ``h`` so gathered;
    otherwise it is the mask ``m [1,seq]`` and the output ``x * m`` over ``x
    [1,(1,)*inner,seq]``. Reshaped to a batch, every row reads row 0 unless fixed."""
    rng = np.random.default_rng(seed)
    lead = [1] * (1 + inner)
    positions = rng.permutation(seq)
    index = np.zeros([*lead, seq, 2], np.int64)
    index[..., 1] = positions
    if features:
        h = op.parameter([1, seq, width], np.float32, name="h")
        gathered = op.gather_nd(h, op.constant(index), 0, name="pick")
        out = op.result(op.relu(gathered, name="act"), name="y")
        params = [h]
    else:
        m = op.parameter([1, seq], np.int64, name="m")
        x = op.parameter([*lead, seq], np.float32, name="x")
        gathered = op.gather_nd(m, op.constant(index), 0, name="pick")
        masked = op.multiply(x, op.convert(gathered, np.float32, name="as_float"), name="mask")
        out = op.result(masked, name="y")
        params = [m, x]
    model = ov.Model([out], params, "row_pick")
    model.outputs[0].get_tensor().set_names({"y"})
    return model


def write_all(folder: Path) -> list[Path]:
    """Both models saved in ``folder``; their paths."""
    paths = []
    for make in (moe_block, batch_mixer):
        path = folder / f"{make.__name__}.xml"
        ov.save_model(make(), str(path), compress_to_fp16=False)
        paths.append(path)
    return paths


if __name__ == "__main__":
    print("\n".join(map(str, write_all(Path(sys.argv[1])))))
