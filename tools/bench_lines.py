"""Benchmark the exact line lookup past line 65,535: ``ovgather check`` of a long chain of
layers whose attributes are not in OpenVINO's order (``name`` before ``id``), once as it
is and once after a comment holding one ``<layer>`` tag, in the same run.

libxml2 only estimates lines past 65,535, so the reader finds each layer's line itself.
A quadratic lookup (a search for ``<layer id="N"`` from the last place found, which runs
to the end of the file for every layer once one tag is written otherwise and the count
of tags is off by the comment's one) made the commented file take many times as long;
the figure to keep is the ratio, near 1.

    python tools/bench_lines.py [--layers 150000] [--repeat 1] [--keep DIR]

The machine may be loaded by other work: both files are timed alternately, and the
ratio of the medians is what to read, not the seconds.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def chain_xml(n_layers: int, comment: bool) -> str:
    """A Parameter, ``n_layers - 2`` ReLUs and a Result, each layer's attributes written
    ``name``, ``type``, ``version``, ``id`` and one element a line (past line 65,535
    from about 8,000 layers on); with ``comment``, a comment holding a ``<layer>`` tag
    before the layers."""
    def ports(kind: str, port: int) -> str:
        return (f'\t\t\t<{kind}>\n\t\t\t\t<port id="{port}" precision="FP32">\n'
                f"\t\t\t\t\t<dim>1</dim>\n\t\t\t\t\t<dim>8</dim>\n\t\t\t\t</port>\n"
                f"\t\t\t</{kind}>\n")

    out = ['<?xml version="1.0"?>\n<net name="chain" version="11">\n']
    if comment:
        out.append("\t<!-- a note that mentions a <layer> tag -->\n")
    out.append("\t<layers>\n")
    out.append('\t\t<layer name="x" type="Parameter" version="opset1" id="0">\n'
               '\t\t\t<data shape="1,8" element_type="f32"/>\n' + ports("output", 0)
               + "\t\t</layer>\n")
    for i in range(1, n_layers - 1):
        out.append(f'\t\t<layer name="r{i}" type="ReLU" version="opset1" id="{i}">\n'
                   + ports("input", 0) + ports("output", 1) + "\t\t</layer>\n")
    last = n_layers - 1
    out.append(f'\t\t<layer name="out" type="Result" version="opset1" id="{last}">\n'
               + ports("input", 0) + "\t\t</layer>\n\t</layers>\n\t<edges>\n")
    out.append('\t\t<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>\n')
    for i in range(1, last):
        out.append(f'\t\t<edge from-layer="{i}" from-port="1" to-layer="{i + 1}" '
                   'to-port="0"/>\n')
    out.append("\t</edges>\n</net>\n")
    return "".join(out)


def check_seconds(path: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``ovgather check`` (exit 0 required); CPU time (user +
    system, all threads) is steadier than wall time on a loaded machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ovgather", "check", str(path)],
                          capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"check of {path} exited {done.returncode}: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=150_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="write the two files here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        plain, commented = folder / "chain.xml", folder / "chain_commented.xml"
        plain.write_text(chain_xml(args.layers, comment=False))
        commented.write_text(chain_xml(args.layers, comment=True))
        times: dict[Path, list[tuple[float, float]]] = {plain: [], commented: []}
        for _ in range(args.repeat):
            for path in times:
                times[path].append(check_seconds(path))
    print(f"{args.layers:,} layers, attributes name-first, {args.repeat} run(s) each "
          "(medians)")
    for k, what in enumerate(("wall", "CPU")):
        a = statistics.median(t[k] for t in times[plain])
        b = statistics.median(t[k] for t in times[commented])
        print(f"  {what}: without the comment {a:.2f} s, with a <layer> comment {b:.2f} s, "
              f"ratio {b / a:.2f} (1 is the goal)")


if __name__ == "__main__":
    main()
