"""Shape texts near a given one, for differential tests: each dim kept most of the time,
else a random dim, and now and then a random shape altogether."""

from __future__ import annotations

from ov_oracle import random_dim, random_shape


def near(rng, dims, keep: float = 0.88, anything: float = 0.06) -> str:
    """``dims`` (numbers or texts) as a shape text, mostly as they are."""
    if rng.random() < anything:
        return random_shape(rng)
    return "[" + ",".join(str(d) if rng.random() < keep else random_dim(rng)
                          for d in dims) + "]"
