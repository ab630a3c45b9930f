"""Benchmark ``ovgather check`` against OpenVINO's own ``read_model`` (issue 4).

Both run as whole processes on the same generated IR (``gen_models.big_ir``), alternating,
in the same run; the median ratio is printed (target ≤ 1.0×). Then the shape inference
alone is timed on the graph in memory (target ≤ 15 ms per 1k layers).

    python tools/bench_check.py [--layers 20000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))


def _timed(cmd: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    return time.perf_counter() - start, done.returncode


def bench_processes(xml: Path, repeat: int) -> tuple[list[float], list[float]]:
    ours = [sys.executable, "-m", "ovgather", "check", str(xml)]
    theirs = [sys.executable, "-c",
              f"import openvino as ov; ov.Core().read_model({str(xml)!r})"]
    _timed(ours), _timed(theirs)  # warm the file cache
    t_ours, t_theirs = [], []
    for _ in range(repeat):
        t, rc = _timed(ours)
        if rc != 0:
            raise SystemExit(f"ovgather check exited {rc} on {xml}")
        t_ours.append(t)
        t_theirs.append(_timed(theirs)[0])
    return t_ours, t_theirs


_PHASES = """
import time
t0 = time.perf_counter()
from ovgather.cli import build_parser
build_parser()
t1 = time.perf_counter()
from ovgather.ir import read_ir
G = read_ir({xml!r})
t2 = time.perf_counter()
from ovgather.infer import check
check(G)
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def bench_phases(xml: Path, repeat: int) -> list[float]:
    """Median seconds of (imports, read_ir, check) inside one ``check``-like process."""
    runs = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", _PHASES.format(xml=str(xml))], cwd=ROOT,
                              capture_output=True, text=True, check=True)
        runs.append([float(x) for x in done.stdout.split()])
    return [statistics.median(col) for col in zip(*runs, strict=True)]


def bench_in_memory(xml: Path, repeat: int) -> tuple[int, float]:
    from ovgather.infer import check
    from ovgather.ir import read_ir

    G = read_ir(xml)
    check(G)  # warm up (lazy weights, caches)
    times = []
    for _ in range(repeat):
        start = time.process_time()  # CPU time: the machine may be shared
        check(G)
        times.append(time.process_time() - start)
    return G.number_of_nodes(), statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    from gen_models import big_ir

    with tempfile.TemporaryDirectory() as tmp:
        xml = big_ir(args.layers, Path(tmp) / "big.xml")
        t_ours, t_theirs = bench_processes(xml, args.repeat)
        ratios = [a / b for a, b in zip(t_ours, t_theirs, strict=True)]
        n, t_mem = bench_in_memory(xml, args.repeat)
        phases = bench_phases(xml, max(3, args.repeat // 2))
    print(f"IR: {n} layers")
    print(f"ovgather check (process):      median {statistics.median(t_ours) * 1e3:.0f} ms")
    print(f"openvino read_model (process): median {statistics.median(t_theirs) * 1e3:.0f} ms")
    print(f"median ratio check/read_model: {statistics.median(ratios):.2f}x (target <= 1.0x)")
    print("inside the check process: imports {:.0f} ms, read_ir {:.0f} ms, check {:.0f} ms"
          .format(*(p * 1e3 for p in phases)))
    print(f"shape inference in memory: {t_mem * 1e3:.0f} ms = "
          f"{t_mem * 1e3 / (n / 1000):.1f} ms per 1k layers (target <= 15)")


if __name__ == "__main__":
    main()
