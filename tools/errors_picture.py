"""Draw the README's picture of ``compare --all-layers``: a BERT converted from ONNX, saved
with FP32 and with FP16 weights, compared layer by layer, then drawn by ``ovgather show
--errors`` around the first layer whose error passes the tolerance.

    python tools/errors_picture.py [--out docs/compare-layers-bert.png] [--depth 2]

Runs the installed ``ovgather`` console script; needs Graphviz's ``dot``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "tests" / "data" / "onnx_ref" / "bert.onnx"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "compare-layers-bert.png"))
    ap.add_argument("--depth", type=int, default=2)
    args = ap.parse_args()
    import openvino as ov

    with tempfile.TemporaryDirectory() as tmp:
        fp32, fp16, report = (Path(tmp) / n for n in ("bert_fp32.xml", "bert_fp16.xml",
                                                       "report.json"))
        ov.save_model(ov.convert_model(str(MODEL)), str(fp32), compress_to_fp16=False)
        ov.save_model(ov.convert_model(str(MODEL)), str(fp16))
        done = subprocess.run(["ovgather", "compare", str(fp32), str(fp16), "--all-layers",
                               "--rtol", "1e-4", "--atol", "1e-4", "--json"],
                              capture_output=True, text=True)
        if done.returncode not in (0, 1):
            raise SystemExit(done.stderr)
        report.write_text(done.stdout, encoding="utf-8")
        first = json.loads(done.stdout)["first_divergent"]
        layer = ["--layer", first["a"]] if first else []
        subprocess.run(["ovgather", "show", str(fp32), "--errors", str(report), *layer,
                        "--depth", str(args.depth), "--format", "png", "-o", args.out],
                       check=True)
    print(f"{args.out}: first divergent {first and first['a']}")


if __name__ == "__main__":
    main()
