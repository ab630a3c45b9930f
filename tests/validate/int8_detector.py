"""An INT8 detector-like IR, as NNCF quantizes one: convolutions whose activations and
weights pass through FakeQuantize (levels 256), a backbone of strided stages and a few
heads (class scores, boxes) at two scales; saved as IR v11 and, with its legacy output
names made to collide with tensor names, as an IR v10 (what a public detector converted
by an old Model Optimizer is). Shared by the tests and ``tools/bench_proof.py``.

    python tests/validate/int8_detector.py OUT_DIR [--blocks N]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np


def _fq(ops, x, lo: float, hi: float):
    c = [ops.constant(np.array(v, dtype=np.float32)) for v in (lo, hi, lo, hi)]
    return ops.fake_quantize(x, *c, 256)


def _conv(ops, rng, x, cin: int, cout: int, stride: int = 1, k: int = 3, act: bool = True):
    w = ops.constant(rng.standard_normal((cout, cin, k, k)).astype(np.float32) * 0.1)
    wq = ops.fake_quantize(w, *[ops.constant(np.full((cout, 1, 1, 1), v, np.float32))
                                for v in (-0.3, 0.3, -0.3, 0.3)], 256)
    xq = _fq(ops, x, -4.0, 4.0)
    pad = k // 2
    y = ops.convolution(xq, wq, [stride, stride], [pad, pad], [pad, pad], [1, 1])
    b = ops.constant(rng.standard_normal((1, cout, 1, 1)).astype(np.float32) * 0.01)
    y = ops.add(y, b)
    return ops.relu(y) if act else y


def build(blocks: int = 4, width: int = 16, size: int = 128):
    """The ov.Model: input ``image`` [?,3,size,size] (batch dynamic)."""
    import openvino as ov
    import openvino.opset13 as ops

    rng = np.random.default_rng(0)
    x = ops.parameter([-1, 3, size, size], np.float32, name="image")
    x.output(0).set_names({"image"})
    y = _conv(ops, rng, x, 3, width, stride=2)
    feats, c = [], width
    for stage in range(3):
        y = _conv(ops, rng, y, c, c * 2, stride=2)
        c *= 2
        for _ in range(blocks):
            z = _conv(ops, rng, y, c, c, k=1)
            z = _conv(ops, rng, z, c, c)
            y = ops.add(y, z)
        if stage:
            feats.append((y, c))
    results = []
    for k, (f, c) in enumerate(feats):
        cls = _conv(ops, rng, f, c, 8, k=1, act=False)
        box = _conv(ops, rng, f, c, 4 * 3, k=1, act=False)
        cls = ops.sigmoid(cls)
        for name, head in ((f"scores{k}", cls), (f"boxes{k}", box)):
            flat = ops.reshape(ops.transpose(head, ops.constant(np.array([0, 2, 3, 1]))),
                               ops.constant(np.array([0, -1], dtype=np.int64)), True)
            r = ops.result(flat)
            r.output(0).set_names({name})
            results.append(r)
    model = ov.Model(results, [x], "int8_detector")
    return model


def save(out: Path, blocks: int = 4) -> tuple[Path, Path]:
    """``out/int8_detector.xml`` (IR v11) and ``out/int8_detector_v10.xml`` (IR v10 whose
    layer names collide with other layers' tensor names, as legacy IRs' do)."""
    import openvino as ov

    out.mkdir(parents=True, exist_ok=True)
    v11 = out / "int8_detector.xml"
    ov.save_model(build(blocks), str(v11), compress_to_fp16=False)
    v10 = out / "int8_detector_v10.xml"
    v10.with_suffix(".bin").write_bytes(v11.with_suffix(".bin").read_bytes())
    v10.write_text(_as_v10(v11.read_text(encoding="utf-8")), encoding="utf-8")
    return v11, v10


def _as_v10(text: str) -> str:
    """The IR as v10, each layer's first output tensor named as the next layer is: a
    tensor name of one port that is another layer's friendly name, what OpenVINO's legacy
    output names (the producer's name) collide with when every output is exposed."""
    text = re.sub(r'(<net name="[^"]*" version=)"11"', r'\1"10"', text, count=1)
    names = re.findall(r'<layer id="\d+" name="([^"]+)" type="(?!Const"|Result"|Parameter")',
                       text)
    shift = dict(zip(names, names[1:], strict=False))
    out, layer, inside = [], None, False
    for line in text.splitlines(keepends=True):
        m = re.search(r'<layer id="\d+" name="([^"]+)"', line)
        if m:
            layer, inside = m.group(1), False
        inside = inside or "<output>" in line
        if inside and layer in shift and "<port " in line and "names=" not in line:
            line = line.replace("<port ", f'<port names="{shift.pop(layer)}" ', 1)
        out.append(line)
    return "".join(out)


if __name__ == "__main__":
    blocks = int(sys.argv[sys.argv.index("--blocks") + 1]) if "--blocks" in sys.argv else 4
    for p in save(Path(sys.argv[1]), blocks):
        print(p)
