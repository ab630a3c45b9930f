"""Time the HTML page of ``ovgather show`` in headless Chromium: load to first render, and
opening a block, by the page's own performance marks (``og-rendered``, ``og-open``).

    python tools/bench_page.py                    # ir_corpus/llama_deep and a 50k-layer model
    python tools/bench_page.py MODEL.xml [...]    # these models

Prints one line per model: layers, page size, Chromium's first complete render (ms from
navigation start), the slowest of opening each of the first closed blocks (ms).
"""

from __future__ import annotations

import html
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "helpers"), str(ROOT / "tools")]

from browser import page_dom, with_probe  # noqa: E402

from ovgather.cli import main  # noqa: E402

PROBE = """
const P = window.ovgatherPage;
const first = performance.getEntriesByName("og-rendered")[0].startTime;
const closed = Array.from(document.querySelectorAll("g.block.closed")).map(g => +g.id.slice(1));
const opens = [];
closed.slice(0, 5).forEach(function (b) {
  P.open(b);
  const m = performance.getEntriesByName("og-open");
  opens.push(m[m.length - 1].duration);
});
document.body.dataset.probe = JSON.stringify({first: first, opens: opens,
  layers: P.layers.length, shown: document.querySelectorAll("g.node").length});
"""


def bench(model: Path, out: Path) -> dict:
    start = time.perf_counter()
    assert main(["show", str(model), "-o", str(out / "m.html")]) == 0
    written = time.perf_counter() - start
    dom, wall = page_dom(with_probe(out / "m.html", PROBE, out / "p.html"), budget_ms=20000)
    probe = json.loads(html.unescape(re.search(r'data-probe="([^"]*)"', dom).group(1)))
    probe.update(write_s=round(written, 1), chromium_s=round(wall, 1),
                 mb=round((out / "m.html").stat().st_size / 1e6, 1))
    return probe


def main_(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        models = [Path(a) for a in argv]
        if not models:
            from gen_models import big_ir

            models = [ROOT / "ir_corpus" / "llama_deep" / "pytorch_dynamic.xml",
                      big_ir(50_000, Path(tmp) / "big50k.xml", seed=1)]
        for model in models:
            r = bench(model, Path(tmp))
            print(f"{model.name}: {r['layers']} layers, page {r['mb']} MB written in "
                  f"{r['write_s']} s; first render {r['first']:.0f} ms; open a block "
                  f"max {max(r['opens'], default=0):.0f} ms ({len(r['opens'])} opened); "
                  f"{r['shown']} layers shown", flush=True)


if __name__ == "__main__":
    main_(sys.argv[1:])
