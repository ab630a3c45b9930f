"""How many times slower than the machine's own CPU this test run computes.

1 on a real CPU. ``tools/run_without_bf16.sh`` runs the suite on an emulated CPU and
sets ``OVGATHER_TEST_SLOWDOWN`` to the factor it measured before starting (the same
small Python workload timed natively and emulated). The few tests that hold a
wall-clock bound (``--help`` answers within 0.3 s, a short run shows no progress bar, a
child reaches a pause in time, the time-outs of the folder runs) multiply their bound by
it, so that they keep measuring ovgather rather than the emulator. Nothing else in
the suite reads it."""

import os

SLOWDOWN = max(1.0, float(os.environ.get("OVGATHER_TEST_SLOWDOWN") or 1))


def seconds(bound: float) -> float:
    """``bound`` seconds on the machine's own CPU, in this run's time."""
    return bound * SLOWDOWN
