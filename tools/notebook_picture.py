"""Draw the README's picture of the notebook view: run examples/notebook.ipynb in a kernel
of this Python, lay its cells and their outputs out as a Jupyter page does, and take a
screenshot with headless Chromium.

    python tools/notebook_picture.py [--out docs/notebook-view.png] [--cells 3,4]

``--cells``: the code cells to show (1-based; default: the check report and the failing
layer's picture). Needs ``pip install -e ".[dev]"`` (nbclient, ipykernel), Graphviz's
``dot`` and Chromium.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "notebook.ipynb"
PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 16px; width: {width}px; }}
.in {{ background: #f5f5f5; border: 1px solid #e0e0e0; padding: 6px 10px; margin: 10px 0 4px;
       font: 13px monospace; white-space: pre; }}
.prompt {{ color: #303f9f; font: 12px monospace; }}
.out {{ padding: 4px 10px; font-size: 14px; }}
.out svg {{ max-width: 100%; height: auto; }}
</style></head><body>{cells}</body></html>"""


def run_notebook(path: Path) -> dict:
    """The notebook, executed in a kernel of this Python from its own folder."""
    import nbformat
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory() as kernels:
        spec = Path(kernels) / "kernels" / "this-python"
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "this Python", "language": "python"}))
        os.environ["JUPYTER_PATH"] = kernels
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, kernel_name="this-python", timeout=300,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def page(nb: dict, cells: list[int], width: int) -> str:
    code = [c for c in nb.cells if c.cell_type == "code"]
    out = []
    for i in cells:
        cell = code[i - 1]
        n = cell.get("execution_count")
        out.append(f'<div class="prompt">In [{n}]:</div><div class="in">'
                   f"{html.escape(cell.source)}</div>")
        for o in cell.outputs:
            data = o.get("data", {})
            shown = data.get("text/html") or data.get("image/svg+xml")
            if shown:
                out.append(f'<div class="prompt">Out[{n}]:</div><div class="out">{shown}</div>')
    return PAGE.format(width=width, cells="".join(out))


def screenshot(page_html: str, out: Path, width: int, height: int) -> None:
    chromium = next(filter(None, map(shutil.which, ("chromium", "chromium-browser",
                                                    "google-chrome"))), None)
    if chromium is None:
        raise SystemExit("headless Chromium is needed: apt-get install chromium")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "page.html"
        src.write_text(page_html, encoding="utf-8")
        shot = Path(tmp) / "shot.png"
        subprocess.run([chromium, "--headless", "--disable-gpu", "--no-sandbox",
                        f"--user-data-dir={tmp}/profile", "--hide-scrollbars",
                        f"--window-size={width + 40},{height}", f"--screenshot={shot}",
                        src.as_uri()], check=True, capture_output=True, timeout=120)
        shutil.copy(shot, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "notebook-view.png")
    ap.add_argument("--cells", default="3,4", help="code cells to show, 1-based")
    ap.add_argument("--width", type=int, default=1000)
    ap.add_argument("--height", type=int, default=1000)
    args = ap.parse_args()
    nb = run_notebook(NOTEBOOK)
    cells = [int(c) for c in args.cells.split(",")]
    screenshot(page(nb, cells, args.width), args.out, args.width, args.height)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
