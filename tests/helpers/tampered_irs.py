"""Copies of ir_samples/ with known faults put in, for the tests of what CI reads
(``check --format sarif|junit``, the pre-commit hook): a declared dim changed
(``mismatch``), a Const's shape changed so that a MatMul's inner dims differ (``invalid``),
a layer turned into an op no opset holds (``unknown``), and a declared dim changed on a
layer inside a Loop's body and on one inside an If's else body. Lines are never
hard-coded: :func:`layer_line` reads them from the written file with lxml."""

from __future__ import annotations

import shutil
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
#: an untouched sample
CLEAN = "gather_nd8_bd3"

#: sample -> {layer path id: the status check must give it}; a path id names a layer inside
#: a body as check does
FAULTS = {
    "mixed_ops": {"26": "mismatch", "8": "invalid", "16": "unknown"},
    "loop_gather": {"4/body/6": "mismatch"},
    "if_gather": {"2/else_body/3": "mismatch"},
}


def find_layer(root: etree._Element, path_id: str) -> etree._Element:
    """The <layer> of check's path id: "4/body/6" is layer 6 of the body of layer 4."""
    parts = path_id.split("/")
    layer = root.find(f"layers/layer[@id='{parts[0]}']")
    for body, inner in zip(parts[1::2], parts[2::2], strict=True):
        layer = layer.find(f"{body}/layers/layer[@id='{inner}']")
    assert layer is not None, path_id
    return layer


def _tamper_mixed_ops(root: etree._Element) -> None:
    out = find_layer(root, "26").find("output/port")  # Gather [?,2,8] declared [?,2,9]
    out[2].text = str(int(out[2].text) + 1)
    weights = find_layer(root, "7")  # the MatMul's weights [24,16] become [23,16]
    data = weights.find("data")
    data.set("shape", "23, 16")
    data.set("size", str(23 * 16 * 4))
    weights.find("output/port")[0].text = "23"
    find_layer(root, "8").find("input/port[@id='1']")[0].text = "23"
    turn = find_layer(root, "16")  # Transpose becomes an op OpenVINO's reader refuses
    turn.set("type", "SuperReLU")
    turn.set("version", "opset17")


def _tamper_loop_gather(root: etree._Element) -> None:
    out = find_layer(root, "4/body/6").find("output/port")  # in the Loop body: [1,4] -> [1,5]
    out[1].text = str(int(out[1].text) + 1)


def _tamper_if_gather(root: etree._Element) -> None:
    out = find_layer(root, "2/else_body/3").find("output/port")  # an If's else body: [2,2] -> [2,3]
    out[1].text = str(int(out[1].text) + 1)


def write_samples(folder: Path) -> Path:
    """The tampered copies and a clean sample, each with its .bin, in ``folder``."""
    for name, tamper in (("mixed_ops", _tamper_mixed_ops), ("loop_gather", _tamper_loop_gather),
                         ("if_gather", _tamper_if_gather), (CLEAN, None)):
        shutil.copy(SAMPLES / f"{name}.bin", folder / f"{name}.bin")
        tree = etree.parse(str(SAMPLES / f"{name}.xml"))
        if tamper is not None:
            tamper(tree.getroot())
        tree.write(str(folder / f"{name}.xml"), xml_declaration=True, encoding="UTF-8")
    return folder


def layer_line(folder: Path, name: str, path_id: str) -> int:
    """The XML line of the layer, read from the file as written."""
    return find_layer(etree.parse(str(folder / f"{name}.xml")).getroot(), path_id).sourceline


