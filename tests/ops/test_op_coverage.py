"""Which op types of OpenVINO's opset1–opset16 ovgather infers, and which it still lacks.

ovgather covers every one of them; a type a new OpenVINO brings (``tools/list_opsets.py``
regenerates the table) shows up as a failure until its rule exists, or until it is
listed in ``KNOWN_MISSING`` for the time being. Run with ``-s`` to see both lists.
"""

from __future__ import annotations

from ovgather.infer import known_ops
from ovgather.ops.core.opsets import OPSETS
from ovgather.ops.core.spec import ALIASES

#: The opsets ovgather covers (opset17 is OpenVINO's opset in the making).
LAST_COVERED_OPSET = 16

KNOWN_MISSING: list[str] = []


def openvino_types() -> set[str]:
    """The op types some opset from 1 to LAST_COVERED_OPSET holds."""
    return {t for t, rows in OPSETS.items() if rows[0][0] <= LAST_COVERED_OPSET}


def covered_types() -> set[str]:
    """OpenVINO's names of the op types ovgather infers (its IR aliases folded in)."""
    by_lower = {t.lower(): t for t in OPSETS}
    return {by_lower[ALIASES.get(t, t).lower()] for t in known_ops()
            if ALIASES.get(t, t).lower() in by_lower}


def test_the_missing_op_types_are_exactly_the_known_missing_list():
    ours, theirs = covered_types(), openvino_types()
    missing = sorted(theirs - ours)
    print(f"\novgather covers {len(theirs & ours)} of the {len(theirs)} op types of "
          f"opset1-opset{LAST_COVERED_OPSET}: {' '.join(sorted(theirs & ours))}")
    print(f"missing ({len(missing)}): {' '.join(missing)}")
    newly_covered = sorted(set(KNOWN_MISSING) - set(missing))
    assert not newly_covered, f"covered now, take them off KNOWN_MISSING: {newly_covered}"
    unlisted = sorted(set(missing) - set(KNOWN_MISSING))
    assert not unlisted, f"OpenVINO holds op types ovgather lacks: {unlisted}"


def test_known_missing_is_sorted_and_without_repeats():
    assert KNOWN_MISSING == sorted(set(KNOWN_MISSING))
