"""Shared test set-up: make ``tools/`` (model generators) and ``tests/helpers/`` (the
OpenVINO oracles and builders the tests share) importable."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
