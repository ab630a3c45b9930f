"""Benchmark ``ovgather.read_ir`` against ``openvino.Core().read_model`` on the same files.

Generates IRs of 1k, 10k and 50k layers (``gen_models.big_ir``), then for each file
alternates the two readers several times and reports the medians: milliseconds per 1k
layers, peak Python memory of read_ir (tracemalloc, measured in a separate run so it does
not slow the timed ones), read_model's time and the ratio. read_model also re-infers every
shape, in C++; the ratio is the figure to keep at or below 1.5.

Wall-clock time is what a user waits for; CPU time (``time.process_time``) is also shown
because it is steadier on a busy machine.

    python tools/bench_read.py [--sizes 1000,10000,50000] [--repeat 7] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import openvino as ov  # noqa: E402
from gen_models import big_ir  # noqa: E402

from ovgather.ir import read_ir  # noqa: E402


def _timed(fn, path: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call, the result freed afterwards."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(str(path))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    del result
    gc.collect()
    return wall, cpu


def _peak_memory(path: Path) -> int:
    """Peak bytes Python allocates while read_ir builds the graph (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    G = read_ir(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del G
    return peak


def bench(path: Path, repeat: int) -> dict[str, float]:
    core = ov.Core()
    ours, theirs, ours_cpu, theirs_cpu = [], [], [], []
    _timed(read_ir, path), _timed(core.read_model, path)  # warm the page cache
    for _ in range(repeat):
        wall, cpu = _timed(read_ir, path)
        ours.append(wall)
        ours_cpu.append(cpu)
        wall, cpu = _timed(core.read_model, path)
        theirs.append(wall)
        theirs_cpu.append(cpu)
    G = read_ir(path)
    layers = G.number_of_nodes()
    del G
    med = statistics.median
    return {
        "layers": layers,
        "ours_ms": med(ours) * 1000,
        "theirs_ms": med(theirs) * 1000,
        "ratio": med(ours) / med(theirs),
        "cpu_ratio": med(ours_cpu) / med(theirs_cpu),
        "peak_mb": _peak_memory(path) / 2**20,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--keep", help="folder for the generated IRs (default: temporary)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        rows = []
        for n in sizes:
            path = big_ir(n, folder / f"big_{n}.xml")
            rows.append(bench(path, args.repeat))
    from ovgather.ir import compiled

    walk = "compiled walk (ovgather._fastwalk)" if compiled._fastwalk is not None else \
        "pure-Python walk (no ovgather._fastwalk: built without a C compiler?)"
    print(f"openvino {ov.__version__}, median of {args.repeat} alternating runs, {walk}\n")
    print("| layers | read_ir ms | ms / 1k layers | peak MB | read_model ms | ratio "
          "| CPU ratio |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        per_1k = r["ours_ms"] / r["layers"] * 1000
        print(f"| {r['layers']} | {r['ours_ms']:.0f} | {per_1k:.1f} | {r['peak_mb']:.0f} "
              f"| {r['theirs_ms']:.0f} | {r['ratio']:.2f}× | {r['cpu_ratio']:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
