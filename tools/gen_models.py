"""Generate valid OpenVINO models for tests and benchmarks, with the openvino Python API.

* ``random_model(seed)``: a small random mix of Parameter, Const, GatherND-5/8,
  GatherElements-6, Gather-8, Reshape, Concat, Add and Convert, with model rt_info, a
  layout on the Parameters (port rt_info), tensor names (some with commas) and every
  friendly name set explicitly. Parameters may have dynamic or interval dims; the model's
  ``rt_info["concrete_shapes"]`` is not used: call ``random_inputs(model, seed)``, which
  knows the concrete sizes through ``concrete_shapes(model)``.
* ``big_ir(n_layers, path)``: about ``n_layers`` layers in chains of
  GatherND/Gather/Reshape/Concat/Add/Const, saved with ``ov.save_model``.

The same seed always gives the same model. Valid models only: openvino validates every
op as it is built, so an invalid mix raises here, never downstream.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset5, opset8

__all__ = ["random_model", "random_inputs", "concrete_shapes", "big_ir"]

_CONCRETE = "ovgather_test_concrete_shapes"


class _Builder:
    """Grows a model op by op, tracking each float tensor's concrete shape."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.count = 0
        self.params: list[ov.Node] = []
        self.concrete: dict[str, list[int]] = {}
        self.pool: list[tuple[ov.Output, list[int]]] = []
        self.used: set[int] = set()

    def name(self, node: ov.Node, stem: str) -> ov.Node:
        self.count += 1
        node.set_friendly_name(f"{stem}_{self.count}")
        if self.rng.random() < 0.5:
            names = {f"t{self.count}"}
            if self.rng.random() < 0.3:
                names.add(f"t{self.count},alias")
            node.output(0).get_tensor().set_names(names)
        return node

    def small_shape(self, rank: int) -> list[int]:
        return [self.rng.randint(1, 4) for _ in range(rank)]

    def const(self, array: np.ndarray) -> ov.Node:
        return self.name(opset8.constant(array), "const")

    def indices(self, high: list[int], shape: list[int], negative: bool = False) -> ov.Node:
        """A Const of ``shape`` whose last axis picks valid positions under ``high``."""
        dtype = self.rng.choice([np.int32, np.int64])
        cols = [self.np_rng.integers(-h if negative else 0, h, size=shape[:-1] + [1])
                for h in high]
        data = np.concatenate(cols, axis=-1) if cols else np.zeros(shape, np.int64)
        return self.const(data.astype(dtype).reshape(shape))

    def add_param(self) -> None:
        shape = self.small_shape(self.rng.randint(1, 4))
        dims = []
        for d in shape:
            pick = self.rng.random()
            if pick < 0.6:
                dims.append(ov.Dimension(d))
            elif pick < 0.8:
                dims.append(ov.Dimension(-1))
            else:
                dims.append(ov.Dimension(max(1, d - 1), d + 2))
        p = opset8.parameter(ov.PartialShape(dims), np.float32)
        self.name(p, "param")
        if self.rng.random() < 0.5:
            p.set_layout(ov.Layout("N..."))
        self.params.append(p)
        self.concrete[p.get_friendly_name()] = shape
        self.pool.append((p.output(0), shape))

    def pick(self, min_rank: int = 0) -> tuple[ov.Output, list[int]] | None:
        choices = [i for i, (_, s) in enumerate(self.pool) if len(s) >= min_rank]
        if not choices:
            return None
        i = self.rng.choice(choices)
        self.used.add(i)
        return self.pool[i]

    def push(self, node: ov.Node, shape: list[int]) -> None:
        self.pool.append((node.output(0), shape))

    # -- the ops -----------------------------------------------------------------------
    def gather_nd(self) -> None:
        src = self.pick(1)
        if src is None:
            return
        x, shape = src
        r = len(shape)
        b = self.rng.randint(0, min(r - 1, 2))
        k = self.rng.randint(1, r - b)
        extra = self.small_shape(self.rng.randint(0, 2))
        ishape = shape[:b] + extra + [k]
        ind = self.indices(shape[b:b + k], ishape)
        version = self.rng.choice([5, 8])
        op = (opset5 if version == 5 else opset8).gather_nd(x, ind, b)
        self.name(op, f"gnd{version}")
        tail = shape[b + k:]
        if version == 8 or b == 0:
            out = ishape[:b] + extra + tail
        else:
            out = [int(np.prod(ishape[:b]))] + extra + tail
        self.push(op, out)

    def gather_elements(self) -> None:
        src = self.pick(1)
        if src is None:
            return
        x, shape = src
        r = len(shape)
        axis = self.rng.randint(-r, r - 1)
        ishape = list(shape)
        ishape[axis] = self.rng.randint(1, 4)
        high = shape[axis]
        data = self.np_rng.integers(0, high, size=ishape)
        ind = self.const(data.astype(self.rng.choice([np.int32, np.int64])))
        op = self.name(opset8.gather_elements(x, ind, axis), "gel")
        self.push(op, ishape)

    def gather(self) -> None:
        src = self.pick(1)
        if src is None:
            return
        x, shape = src
        r = len(shape)
        axis = self.rng.randint(0, r - 1)
        ishape = self.small_shape(self.rng.randint(0, 2))
        data = self.np_rng.integers(-shape[axis], shape[axis], size=ishape)
        ind = self.const(np.asarray(data, dtype=self.rng.choice([np.int32, np.int64])))
        axis_node = self.const(np.array(axis, np.int64))
        op = self.name(opset8.gather(x, ind, axis_node, 0), "gather")
        self.push(op, shape[:axis] + ishape + shape[axis + 1:])

    def reshape(self) -> None:
        src = self.pick(0)
        if src is None:
            return
        x, shape = src
        total = int(np.prod(shape))
        target = [total]
        while self.rng.random() < 0.5:
            f = [d for d in (2, 3) if target[-1] % d == 0]
            if not f:
                break
            target[-1] //= f[0]
            target.append(f[0])
        self.rng.shuffle(target)
        pattern = list(target)
        if self.rng.random() < 0.4:
            pattern[self.rng.randrange(len(pattern))] = -1
        op = opset8.reshape(x, self.const(np.array(pattern, np.int64)), False)
        self.push(self.name(op, "reshape"), target)

    def concat(self) -> None:
        src = self.pick(1)
        if src is None:
            return
        x, shape = src
        axis = self.rng.randrange(len(shape))
        oshape = list(shape)
        oshape[axis] = self.rng.randint(1, 3)
        other = self.const(self.np_rng.standard_normal(oshape).astype(np.float32))
        op = self.name(opset8.concat([x, other], axis), "concat")
        out = list(shape)
        out[axis] += oshape[axis]
        self.push(op, out)

    def add(self) -> None:
        src = self.pick(0)
        if src is None:
            return
        x, shape = src
        same = [o for o, s in self.pool if s == shape and o != x]
        if same and self.rng.random() < 0.5:
            other = self.rng.choice(same)
        else:
            bshape = [d if self.rng.random() < 0.6 else 1 for d in shape]
            other = self.const(self.np_rng.standard_normal(bshape).astype(np.float32))
        self.push(self.name(opset8.add(x, other), "add"), shape)

    def convert(self) -> None:
        src = self.pick(0)
        if src is None:
            return
        x, shape = src
        mid = self.name(opset8.convert(x, self.rng.choice(["f16", "i32"])), "convert")
        self.push(self.name(opset8.convert(mid, "f32"), "convert"), shape)

    def finish(self, seed: int) -> ov.Model:
        results = []
        for i, (out, _) in enumerate(self.pool):
            if i not in self.used or (i == len(self.pool) - 1):
                r = opset8.result(out)
                self.count += 1
                r.set_friendly_name(f"result_{self.count}")
                results.append(r)
        model = ov.Model(results, self.params, f"random_{seed}")
        model.set_rt_info(str(seed), ["framework", "seed"])
        model.set_rt_info("ovgather tests", "generator")
        model.set_rt_info(
            ";".join(f"{k}={','.join(map(str, v))}" for k, v in self.concrete.items()),
            _CONCRETE)
        return model


def random_model(seed: int) -> ov.Model:
    """A small valid random model (see the module docstring); deterministic in ``seed``."""
    b = _Builder(seed)
    for _ in range(b.rng.randint(1, 3)):
        b.add_param()
    ops = [b.gather_nd, b.gather_nd, b.gather_elements, b.gather, b.reshape, b.concat,
           b.add, b.convert]
    for _ in range(b.rng.randint(3, 10)):
        b.rng.choice(ops)()
    return b.finish(seed)


def concrete_shapes(model: ov.Model) -> dict[str, list[int]]:
    """The concrete input shape the generator chose for each Parameter (by friendly name)."""
    text = model.get_rt_info(_CONCRETE).astype(str) if model.has_rt_info(_CONCRETE) else ""
    out = {}
    for item in filter(None, text.split(";")):
        name, dims = item.split("=")
        out[name] = [int(d) for d in dims.split(",")] if dims else []
    return out


def random_inputs(model: ov.Model, seed: int) -> list[np.ndarray]:
    """Random float32 inputs, in Parameter order, at the generator's concrete shapes."""
    rng = np.random.default_rng(seed)
    shapes = concrete_shapes(model)
    out = []
    for p in model.get_parameters():
        shape = shapes.get(p.get_friendly_name())
        if shape is None:
            shape = [d.get_min_length() or 1 for d in p.get_partial_shape()]
        out.append(rng.standard_normal(shape).astype(np.float32))
    return out


# ---------------------------------------------------------------------------------------
# Big models for the reader benchmark
# ---------------------------------------------------------------------------------------
def _block(x: ov.Output, i: int, rng: np.random.Generator) -> ov.Output:
    """About 20 layers that keep a [2,3,4,5] float tensor flowing: GatherND-5/8 with
    batch dims, Gather, Reshape, Concat, Add, GatherElements, Convert, each with Consts."""
    ind8 = opset8.constant(rng.integers(0, 4, size=(2, 3, 2, 1)).astype(np.int32))
    g8 = opset8.gather_nd(x, ind8, 2)                                      # [2,3,2,5]
    ind5 = opset8.constant(rng.integers(0, 2, size=(2, 3, 2, 1)).astype(np.int64))
    g5 = opset5.gather_nd(g8, ind5, 2)                                     # [6,2,5]
    r1 = opset8.reshape(g5, opset8.constant(np.array([2, 3, 2, 5], np.int64)), False)
    gi = opset8.constant(np.array([0, 1, 1, 0], np.int32))
    ga = opset8.gather(r1, gi, opset8.constant(np.array(2, np.int64)), 0)  # [2,3,4,5]
    c = opset8.constant(rng.standard_normal((2, 3, 4, 5)).astype(np.float32))
    add = opset8.add(ga, c)
    cat = opset8.concat([add, opset8.constant(np.zeros((2, 3, 4, 1), np.float32))], 3)
    eli = opset8.constant(rng.integers(0, 6, size=(2, 3, 4, 5)).astype(np.int64))
    ge = opset8.gather_elements(cat, eli, 3)                               # [2,3,4,5]
    cv = opset8.convert(opset8.convert(ge, "f16"), "f32")
    out = opset8.add(cv, x)
    for j, node in enumerate((ind8, g8, ind5, g5, r1, gi, ga, c, add, cat, eli, ge, cv, out)):
        node.set_friendly_name(f"b{i}_{j}_{node.get_type_name()}")
    return out.output(0)


#: Layers per block, counting the Const nodes created inside ``opset8`` helpers.
def _count_block_layers() -> int:
    x = opset8.parameter([2, 3, 4, 5], np.float32)
    m = ov.Model([opset8.result(_block(x.output(0), 0, np.random.default_rng(0)))], [x])
    return len(m.get_ops()) - 2


def big_ir(n_layers: int, path: str | Path, seed: int = 0) -> Path:
    """Save a model of about ``n_layers`` layers at ``path`` (.xml + .bin); return path.

    Chains of blocks (see ``_block``) from a few Parameters, with a Result per chain.
    """
    rng = np.random.default_rng(seed)
    per_block = _count_block_layers()
    n_blocks = max(1, round(n_layers / per_block))
    n_chains = max(1, min(8, n_blocks // 20))
    params, results = [], []
    for c in range(n_chains):
        p = opset8.parameter([2, 3, 4, 5], np.float32, name=f"input_{c}")
        x = p.output(0)
        for i in range(c, n_blocks, n_chains):
            x = _block(x, i, rng)
        r = opset8.result(x)
        r.set_friendly_name(f"output_{c}")
        params.append(p)
        results.append(r)
    model = ov.Model(results, params, f"big_{n_layers}")
    path = Path(path)
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path
