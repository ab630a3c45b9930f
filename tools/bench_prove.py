"""How fast ``validate --all-layers`` proves layers: layers proved per second and the
number of compiles, on the given IRs (by default the deepest model of ``ir_corpus/``, the
one with the most layers) and on generated chains (``gen_models.big_ir``).

    python tools/bench_prove.py [--model X.xml ...] [--sizes 1000,5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from ovgather.ir import read_ir  # noqa: E402
from ovgather.validate import prove_all_layers  # noqa: E402


def bench(xml: Path, repeat: int) -> tuple[int, int, int, int, float]:
    """(layers, proved, sizes run, compiles, median seconds) of proving ``xml``."""
    G = read_ir(xml)
    runs = [prove_all_layers(G) for _ in range(repeat)]
    s = runs[0].summary
    return (s["layers"], s["proved"], len(runs[0].sizes), s["compiles"],
            statistics.median(r.seconds for r in runs))


def deepest(corpus: Path) -> Path:
    """The IR of ``corpus`` with the most layers."""
    return max(sorted(corpus.rglob("*.xml")), key=lambda xml: read_ir(xml).number_of_nodes())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--sizes", default="1000,5000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from gen_models import big_ir

    print("| IR | layers | proved | input sizes | compiles | seconds | layers proved / s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        files = [Path(m) for m in args.model] or [deepest(ROOT / "ir_corpus")]
        files += [big_ir(int(n), Path(tmp) / f"big_{n}.xml") for n in args.sizes.split(",") if n]
        for xml in files:
            layers, proved, sizes, compiles, seconds = bench(xml, args.repeat)
            print(f"| {xml.name} | {layers} | {proved} | {sizes} | {compiles} | "
                  f"{seconds:.2f} | {proved / seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
