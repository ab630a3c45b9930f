"""Property: no mutation of a valid IR makes ovgather crash, hang or leak.

Hypothesis takes small valid IRs (the committed ``ir_samples/`` and one written here by
OpenVINO), breaks them the way files get broken — characters deleted, inserted and swapped;
attributes changed, dropped and doubled; elements deleted, doubled and swapped; edges
rewired and added; the .bin cut, flipped, dropped or padded — and runs what a user runs:
``read_ir``, ``check``, ``write_ir`` and ``read_ir`` again, and the ``check`` command line.

The mutations include the second round of hostile input: namespaced attributes (which
must be written back readable), integers of thousands of digits, digits other than 0-9,
and comments or processing instructions inside a ``<dim>``.

The property: every failure is an ``ovgather`` error that names the file (never a bare
``KeyError``, ``ValueError``, ``MemoryError``, ``RecursionError`` …), no example takes 2 s,
what ``write_ir`` writes can be read back, and the command line answers 0, 1 or 2 with one
``error:`` line for 2. ``derandomize=True`` makes every CI run try the same examples.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ovgather import errors
from ovgather.cli import main
from ovgather.ir import read_ir, write_ir

ROOT = Path(__file__).resolve().parents[2]
MAX_XML_BYTES = 16_000
MAX_BIN_BYTES = 64_000
TIME_LIMIT = 2.0

FUZZ = settings(max_examples=2000, deadline=2000, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FUZZ_CLI = settings(FUZZ, max_examples=300)


def _generated_sample(folder: Path) -> Path:
    """A model with more op kinds than the samples: Gather, GatherElements, Reshape, Concat."""
    import openvino as ov
    from openvino import opset8 as ops

    data = ops.parameter([2, 3, 4], np.float32, name="data")
    ids = ops.parameter([2, -1, 4], np.int64, name="ids")
    ge = ops.gather_elements(data, ids, axis=1, name="ge")
    g = ops.gather(data, ops.constant(np.array([2, 0], np.int32), name="gi"),
                   ops.constant(np.array(2, np.int64), name="axis"), name="g")
    flat = ops.reshape(g, ops.constant(np.array([2, -1], np.int64), name="target"),
                       special_zero=False, name="flat")
    cat = ops.concat([flat, flat], axis=1, name="cat")
    shape = ops.shape_of(ge, name="shape")
    results = [ops.result(cat, name="out"), ops.result(ge, name="out2"),
               ops.result(shape, name="out3")]
    model = ov.Model(results, [data, ids], "fuzz")
    path = folder / "generated.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _load_samples() -> list[tuple[str, str, bytes | None]]:
    """(name, xml text, bin bytes) of every small sample, sorted for repeatability."""
    paths = sorted(p for p in (ROOT / "ir_samples").rglob("*.xml")
                   if p.stat().st_size <= MAX_XML_BYTES)
    with tempfile.TemporaryDirectory() as tmp:
        paths.append(_generated_sample(Path(tmp)))
        samples = []
        for path in paths:
            bin_path = path.with_suffix(".bin")
            blob = bin_path.read_bytes() if bin_path.exists() else None
            if blob is not None and len(blob) > MAX_BIN_BYTES:
                continue
            samples.append((path.name, path.read_text(), blob))
    return samples


SAMPLES = _load_samples()


# --------------------------------------------------------------------------------------------
# Mutations. Each takes the hypothesis draw function and the current text (or bytes).
# --------------------------------------------------------------------------------------------

SNIPPETS = [
    "<", ">", "/>", "</", "&", "&amp;", "&#10;", "&#0;", "&a;", '"', "'", "=", " ", "\n",
    "\x00", "\x1f", "\udcff", "\ufffe", "é", "..", "?", "-1", "-", "0", "99999999999999999999",
    '<!DOCTYPE net [<!ENTITY a "b">]>', '<!DOCTYPE net SYSTEM "file:///etc/passwd">',
    "<!--", "-->", "<![CDATA[x]]>", "<?pi x?>", "</layer>", "</port>", "<dim>-1</dim>",
    "<dim>0</dim>", "<dim>2..5</dim>", '<port id="9" precision="FP32"/>',
    '<layer id="99" name="z" type="Const" version="opset1"/>',
    '<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>',
]
VALUES = [
    "", " ", "-1", "0", "1", "2", "3", "-2", "x", "?", "2..5", "5..2", "1.5", "1e3",
    "99999999999999999999", "18446744073709551615", "4294967296", "65536,65536,65537",
    "1,2", "?,?", "...", "-1,-1", "opset1", "opset5", "opset8", "opset99", "f32", "i64",
    "i32", "u1", "u4", "string", "boolean", "bogus", "Const", "Parameter", "GatherND",
    "Gather", "Reshape", "Result", "FP32", "I64", "numpy", "none", "true", "&amp;", "&lt;",
    "9" * 5000, "\uff13", "2,\u00b3,4", "\u0663..\u0665",
]
ATTR = re.compile(r'([\w:-]+)="([^"]*)"')
TAGS = ["layer", "port", "dim", "edge", "data", "input", "output", "rt_info", "info", "layers",
        "edges"]


def _element_spans(text: str, tag: str) -> list[tuple[int, int]]:
    """(start, end) of every ``<tag …/>`` or ``<tag …>…</tag>`` (tags that do not nest)."""
    spans = []
    for m in re.finditer(rf"<{tag}[\s>/]", text):
        start = m.start()
        close = text.find(">", start)
        if close < 0:
            continue
        if text[close - 1] == "/":
            spans.append((start, close + 1))
            continue
        end = text.find(f"</{tag}>", close)
        if end >= 0:
            spans.append((start, end + len(tag) + 3))
    return spans


def _delete_chars(draw, text: str) -> str:
    pos = draw(st.integers(0, max(len(text) - 1, 0)))
    n = draw(st.integers(1, 40))
    return text[:pos] + text[pos + n:]


def _insert_chars(draw, text: str) -> str:
    pos = draw(st.integers(0, len(text)))
    piece = draw(st.sampled_from(SNIPPETS) | st.text(max_size=6))
    return text[:pos] + piece + text[pos:]


def _swap_chars(draw, text: str) -> str:
    if len(text) < 4:
        return text
    n = draw(st.integers(1, 12))
    a = draw(st.integers(0, len(text) - n))
    b = draw(st.integers(0, len(text) - n))
    a, b = min(a, b), max(a, b)
    if b < a + n:
        return text
    return text[:a] + text[b:b + n] + text[a + n:b] + text[a:a + n] + text[b + n:]


def _attr_change(draw, text: str) -> str:
    matches = list(ATTR.finditer(text))
    if not matches:
        return text
    m = draw(st.sampled_from(matches))
    other = [x.group(2) for x in matches]
    value = draw(st.sampled_from(VALUES) | st.sampled_from(other))
    return text[:m.start(2)] + value + text[m.end(2):]


def _attr_drop(draw, text: str) -> str:
    matches = list(ATTR.finditer(text))
    if not matches:
        return text
    m = draw(st.sampled_from(matches))
    return text[:m.start()] + text[m.end():]


def _attr_double(draw, text: str) -> str:
    matches = list(ATTR.finditer(text))
    if not matches:
        return text
    m = draw(st.sampled_from(matches))
    return text[:m.end()] + " " + m.group(0) + text[m.end():]


def _element_op(draw, text: str) -> str:
    tag = draw(st.sampled_from(TAGS))
    spans = _element_spans(text, tag)
    if not spans:
        return text
    a, b = draw(st.sampled_from(spans))
    how = draw(st.sampled_from(["delete", "double", "swap"]))
    if how == "delete":
        return text[:a] + text[b:]
    if how == "double":
        return text[:b] + text[a:b] + text[b:]
    c, d = draw(st.sampled_from(spans))
    if (c, d) == (a, b) or not (b <= c or d <= a):
        return text
    (a, b), (c, d) = sorted([(a, b), (c, d)])
    return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]


def _edge_rewire(draw, text: str) -> str:
    spans = _element_spans(text, "edge")
    if not spans:
        return text
    a, b = draw(st.sampled_from(spans))
    edge = text[a:b]
    attr = draw(st.sampled_from(["from-layer", "from-port", "to-layer", "to-port"]))
    ids = re.findall(r'<layer id="([^"]*)"', text) or ["0"]
    value = draw(st.sampled_from(ids) | st.integers(-1, 6).map(str))
    edge = re.sub(rf'{attr}="[^"]*"', f'{attr}="{value}"', edge)
    return text[:a] + edge + text[b:]


def _edge_add(draw, text: str) -> str:
    ids = re.findall(r'<layer id="([^"]*)"', text)
    pos = text.find("</edges>")
    if not ids or pos < 0:
        return text
    src, dst = draw(st.sampled_from(ids)), draw(st.sampled_from(ids))
    fp, tp = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    edge = f'<edge from-layer="{src}" from-port="{fp}" to-layer="{dst}" to-port="{tp}" />'
    return text[:pos] + edge + text[pos:]


# The second round of hostile input: namespaced attributes, integers past Python's 4300-digit
# limit, digits other than 0-9 (which OpenVINO refuses), markup inside a <dim>.
NAMESPACED = [' xml:lang="en"', ' xml:base="http://x/"',
              ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="a b"',
              ' xmlns:q="urn:q" q:note="1"']
LONG_DIGITS = ["9" * 5000, "0" * 4400 + "1", "1" * 4301, "9" * 20]
ODD_DIGITS = ["\uff13", "\u0663", "\u00b3", "\u00b2", "\u2463", "\U0001d7d1"]
MARKUP = ["<!--c-->", "<!---->", "<?p x?>", " <!--c--> "]
START_TAG = re.compile(r"<(net|layer|data|port|edge)[\s>/]")
NUMBER = re.compile(r'(?<=")[0-9][0-9, ]*(?=")|(?<=<dim>)[^<]*(?=</dim>)')


def _namespaced_attr(draw, text: str) -> str:
    tags = list(START_TAG.finditer(text))
    if not tags:
        return text
    m = draw(st.sampled_from(tags))
    pos = m.start() + 1 + len(m.group(1))
    return text[:pos] + draw(st.sampled_from(NAMESPACED)) + text[pos:]


def _long_digits(draw, text: str) -> str:
    numbers = list(NUMBER.finditer(text))
    if not numbers:
        return text
    m = draw(st.sampled_from(numbers))
    return text[:m.start()] + draw(st.sampled_from(LONG_DIGITS)) + text[m.end():]


def _odd_digits(draw, text: str) -> str:
    numbers = [m for m in NUMBER.finditer(text) if m.group()]
    if not numbers:
        return text
    m = draw(st.sampled_from(numbers))
    pos = draw(st.integers(m.start(), m.end() - 1))
    return text[:pos] + draw(st.sampled_from(ODD_DIGITS)) + text[pos + 1:]


def _markup_in_dim(draw, text: str) -> str:
    dims = [m for m in re.finditer(r"<dim>([^<]*)</dim>", text)]
    if not dims:
        return text
    m = draw(st.sampled_from(dims))
    pos = draw(st.integers(m.start(1), m.end(1)))
    return text[:pos] + draw(st.sampled_from(MARKUP)) + text[pos:]


HOSTILE = [_namespaced_attr, _long_digits, _odd_digits, _markup_in_dim]

# Weighted towards the structured mutations: most character-level ones end as XML syntax
# errors, while the structured ones reach the graph checks and the shape inference.
STRUCTURED = [*[_attr_drop] * 2, *[_attr_change] * 6, *[_element_op] * 4, *[_edge_rewire] * 3,
              _edge_add, *HOSTILE]
XML_MUTATIONS = [_delete_chars, _insert_chars, _swap_chars, _attr_double, *STRUCTURED]


def _mutate_bin(draw, blob: bytes | None) -> bytes | None:
    how = draw(st.sampled_from(["keep"] * 10 + ["drop", "empty", "cut", "flip", "flip", "pad"]))
    if blob is None or how == "keep":
        return blob
    if how == "drop":
        return None
    if how == "empty":
        return b""
    if how == "cut":
        return blob[:draw(st.integers(0, max(len(blob) - 1, 0)))]
    if how == "pad":
        return blob + draw(st.binary(min_size=1, max_size=64))
    if not blob:
        return blob
    data = bytearray(blob)
    for _ in range(draw(st.integers(1, 8))):
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(data)


class Broken(tuple):
    """(sample name, mutated XML bytes, .bin bytes or None) with a short repr, so that a
    failing example prints as the sample and its mutations, not as kilobytes of XML."""

    steps: list[str]

    def __repr__(self) -> str:
        return f"Broken({self[0]!r}, steps={self.steps})"


@st.composite
def broken_irs(draw) -> Broken:
    """A small sample, mutated 1-3 times, with its .bin maybe corrupted."""
    name, text, blob = draw(st.sampled_from(SAMPLES))
    # two thirds of the examples keep the XML well-formed, to reach the graph and shape checks
    mutations = XML_MUTATIONS if draw(st.integers(0, 2)) == 0 else STRUCTURED
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        mutation = draw(st.sampled_from(mutations))
        text = mutation(draw, text)
        steps.append(mutation.__name__.strip("_"))
    new_blob = _mutate_bin(draw, blob)
    if new_blob != blob:
        steps.append("bin: " + ("dropped" if new_blob is None else f"{len(new_blob)} bytes"))
    case = Broken((name, text.encode("utf-8", "surrogateescape"), new_blob))
    case.steps = steps
    return case


@contextlib.contextmanager
def _workdir() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="ovgather-fuzz-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _write(folder: Path, xml: bytes, blob: bytes | None) -> Path:
    path = folder / "model.xml"
    path.write_bytes(xml)
    bin_path = path.with_suffix(".bin")
    if blob is None:
        bin_path.unlink(missing_ok=True)
    else:
        bin_path.write_bytes(blob)
    return path


def _check(graph):  # noqa: ANN001, ANN202 - ovgather.infer lands in parallel with this file
    from ovgather.infer import check

    return check(graph)


def test_samples_are_found() -> None:
    """The property below is only as good as its inputs: real samples, all valid."""
    assert len(SAMPLES) >= 5
    with _workdir() as folder:
        for _, text, blob in SAMPLES:
            _check(read_ir(_write(folder, text.encode(), blob)))


@FUZZ
@given(broken_irs())
def test_mutated_ir_gives_an_ovgather_error_or_a_report(case: Broken) -> None:
    _, xml, blob = case
    with _workdir() as folder:
        path = _write(folder, xml, blob)
        start = time.perf_counter()
        try:
            graph = read_ir(path)
            report = _check(graph)
            json.loads(report.to_json())
            event(f"checked: {'ok' if report.ok else 'problems'}")
        except errors.OvgatherError as err:
            event(f"refused: {type(err).__name__}")
            assert "model.xml" in str(err) or "model.bin" in str(err), str(err)
            return
        finally:
            assert time.perf_counter() - start < TIME_LIMIT
        out = folder / "out" / "copy.xml"
        out.parent.mkdir()
        try:
            write_ir(graph, out)
        except errors.OvgatherError:
            assert sorted(p.name for p in out.parent.iterdir()) == []
            return
        read_ir(out)  # what ovgather wrote, ovgather reads


@FUZZ_CLI
@given(broken_irs())
def test_mutated_ir_through_the_cli(case: Broken) -> None:
    _, xml, blob = case
    with _workdir() as folder:
        path = _write(folder, xml, blob)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["check", str(path), "--json"])
        assert code in (0, 1, 2)
        if code == 2:
            lines = err.getvalue().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: "), err.getvalue()
            assert "internal error" not in lines[0] and "Traceback" not in err.getvalue()
            assert not out.getvalue() or json.loads(out.getvalue())["models"] == []
        else:
            json.loads(out.getvalue())


@pytest.mark.parametrize("sample", [s[0] for s in SAMPLES])
def test_every_sample_survives_truncation_at_every_tenth(sample: str) -> None:
    """A deterministic sweep next to the random one: cut each sample at 10 %, 20 %, …"""
    _, text, blob = next(s for s in SAMPLES if s[0] == sample)
    data = text.encode()
    with _workdir() as folder:
        for tenth in range(1, 10):
            path = _write(folder, data[: len(data) * tenth // 10], blob)
            with pytest.raises(errors.XMLSyntaxError):
                read_ir(path)
