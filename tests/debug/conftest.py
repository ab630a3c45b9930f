"""Make ``reduce_faults`` (the faults these tests put into models, and the crashing
worker stub, run in the worker by reference) importable, here and in the worker."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
