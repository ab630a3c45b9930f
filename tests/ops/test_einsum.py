"""Einsum-7 against OpenVINO: seeded random equations (explicit and implicit, with and
without ``...``, repeated letters, broken subscripts) on static, interval and dynamic
shapes whose letters mostly agree, sometimes broadcast and sometimes clash."""

from __future__ import annotations

import openvino.opset7 as ov7
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_dim

LETTERS = "abcdA"


def _subscript(rng) -> str:
    letters = [rng.choice(LETTERS) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.35:
        letters.insert(rng.randint(0, len(letters)), "...")
    return "".join(letters)


def _shape(rng, subscript: str, sizes: dict) -> str:
    if rng.random() < 0.08:
        return "[...]"
    dims = []
    for label in ([c for c in subscript.replace("...", ".")]):
        if label == ".":
            dims += [rng.choice(("1", "2", "3", "?", random_dim(rng)))
                     for _ in range(rng.randint(0, 2))]
        elif rng.random() < 0.8:
            dims.append(sizes[label])
        else:
            dims.append(rng.choice(("1", random_dim(rng))))
    if rng.random() < 0.04:
        dims.append("2")
    return "[" + ",".join(dims) + "]"


def einsum_case(rng) -> Case:
    sizes = {c: rng.choice(("1", "2", "3", "4", "?", random_dim(rng))) for c in LETTERS}
    subscripts = [_subscript(rng) for _ in range(rng.choice((1, 1, 2, 2, 2, 3)))]
    equation = ",".join(subscripts)
    if rng.random() < 0.6:
        used = sorted({c for s in subscripts for c in s if c != "."})
        out = [c for c in used if rng.random() < 0.6]
        if rng.random() < 0.05:
            out.append("z")
        if any("..." in s for s in subscripts) or rng.random() < 0.1:
            out.insert(rng.randint(0, len(out)), "...")
        equation += "->" + "".join(out)
    if rng.random() < 0.03:
        equation = equation.replace(",", ".", 1)
    shapes = [_shape(rng, s, sizes) for s in subscripts]
    if rng.random() < 0.03:
        shapes.append("[2]")
    return Case(lambda: ov7.einsum([ov_param(s) for s in shapes], equation), "Einsum", 7,
                [tensor(s) for s in shapes], {"equation": equation},
                label=f"{equation} {shapes}")


def test_einsum_infers_what_openvino_infers():
    agree_with_openvino("einsum", einsum_case, 1500)
