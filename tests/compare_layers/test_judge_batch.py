"""Layer outputs judged together (``_judge_all``) get exactly the verdicts, numbers and
messages they get judged one by one (``_judge``): NaN, infinities, zeros, empty arrays,
other dtypes and shapes among them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ovgather.comparison.layers import _SPAN, _judge, _judge_all


def _output(name: str) -> SimpleNamespace:
    return SimpleNamespace(layer=name, port=0, line=1, type="Add", tensor_names={"t"})


def _items(seed: int) -> list:
    rng = np.random.default_rng(seed)
    items = []
    for k in range(300):
        shape = tuple(int(d) for d in rng.integers(1, 6, rng.integers(1, 4)))
        dtype = [np.float32, np.float16, np.float64, np.int64][k % 4 if k % 5 else 0]
        x = (rng.standard_normal(shape) * 4).astype(dtype)
        y = (x + rng.standard_normal(shape) * 10.0 ** -int(rng.integers(1, 8))).astype(dtype)
        if x.dtype.kind == "f":
            if k % 7 == 0:
                y.flat[0] = np.nan
            if k % 11 == 0:
                x.flat[0] = y.flat[0] = np.inf
            if k % 23 == 0:
                x.flat[-1] = -np.inf
        if k % 13 == 0:
            y = np.zeros_like(y)
        if k % 17 == 0:
            x = y = np.zeros((0,), np.float32)
        if k % 19 == 0:
            y = y.reshape(-1)  # another layout: compared element by element
        if k % 29 == 0:
            x = rng.standard_normal(_SPAN + 3).astype(np.float32)  # past one span
            y = x.copy()
        items.append(((_output(f"a{k}"), _output(f"b{k}")), x, y))
    return items


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", range(4))
def test_judged_together_equals_judged_one_by_one(seed):
    items = _items(seed)
    together = _judge_all(items, 1e-3, 1e-4)
    alone = [_judge(pair, x, y, 1e-3, 1e-4) for pair, x, y in items]
    assert len(together) == len(alone)
    assert any(lc.status == "differs" for lc in alone) and any(lc.status == "ok" for lc in alone)
    for got, want in zip(together, alone, strict=True):
        assert got == want
