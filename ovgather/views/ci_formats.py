"""``check --format sarif`` and ``check --format junit``: the check reports as documents
that CI systems show (docs/cli/check.md).

**SARIF 2.1.0** (GitHub code scanning, any SARIF viewer): one run for the whole command,
one result per layer that fails the check (``mismatch``, ``invalid``, ``unknown``) and, with
``--target-runtime``, per layer that release cannot use. Each result points at the model's
file and the layer's own XML line (a layer inside a TensorIterator, Loop or If body has its
own line), so a viewer marks that line. The rule id is the status. Every level is
``error``: each of these makes the exit code 1, and an ``unknown`` layer means that OpenVINO
cannot read the model at all, which is no less than a mismatch. A path given relative is
written relative to ``%SRCROOT%``, the folder the command ran in (where a CI job checks the
repository out); an absolute one as a ``file:`` URI.

**JUnit XML** (Jenkins, GitLab, Azure DevOps test reports): one ``<testsuite>``, one
``<testcase>`` per model, failed by one ``<failure>`` that lists every bad layer with its
line. One failure, not one per layer: Jenkins' JUnit plugin, Azure DevOps and GitLab show
only the first ``<failure>`` of a test case, and the older JUnit schema allows only one.
A model that could not be used is a test case with an ``<error>``.

Only the standard library: these are written, never parsed.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import quote

__all__ = ["FORMATS", "SARIF_SCHEMA", "RULES", "sarif_log", "junit_xml"]

#: the values of ``check --format``
FORMATS = ("text", "json", "sarif", "junit")

SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
#: where a SARIF viewer sends a user who asks about the tool: the home page of
#: pyproject.toml's [project.urls], used when the installed metadata names none (an older
#: install)
INFORMATION_URI = "https://github.com/ovgather/ovgather"
SRCROOT = "%SRCROOT%"

#: rule id (the status check gives the layer) -> (name, short description, full description)
RULES: dict[str, tuple[str, str, str]] = {
    "mismatch": (
        "DeclaredShapeMismatch",
        "A layer declares dims that contradict the shapes OpenVINO's rules infer.",
        "The dims the IR declares on a port of this layer cannot hold the shape that "
        "OpenVINO's shape inference computes from the model's inputs (same rank, every pair "
        "of dims able to be equal). OpenVINO's reader silently recomputes shapes, so the "
        "model may still load, but anything that trusts the declared dims is wrong."),
    "invalid": (
        "InvalidLayer",
        "A layer's inputs break its op's rules.",
        "The shapes or values reaching this layer break a rule of its op (the message says "
        "which): OpenVINO refuses the model, or this layer, at these input shapes."),
    "unknown": (
        "UnreadableLayer",
        "OpenVINO's reader refuses this layer, so it cannot read the model.",
        "The layer's type is in no opset, or the opset its version names lacks it (a custom "
        "op without its extension, say): OpenVINO's read_model refuses the whole model."),
    "target-runtime": (
        "TargetRuntimeUnsupported",
        "The requested OpenVINO release cannot read or compile this layer.",
        "check --target-runtime RELEASE: that release's reader refuses this layer, or its "
        "CPU plugin is known not to compile it; the message gives every reason."),
}
_HELP = ("`ovgather explain MODEL --layer NAME` shows the layer's rule step by step, from the "
         "shapes reaching it.")
_LEVEL = "error"  # every rule: each one makes check exit 1 (see the module docstring)


# -- SARIF ------------------------------------------------------------------------------------
def sarif_log(reports: list[Any], failed: list[tuple[str, str]], release: str | None = None,
              exit_code: int = 0, cwd: str | None = None, version: str = "") -> dict[str, Any]:
    """The SARIF log of one ``check`` command: ``reports`` the CheckReports of the models
    read, ``failed`` ``(path, error line)`` of those that could not be used (tool
    notifications, not results), ``release`` the ``--target-runtime`` release if any,
    ``version`` ovgather's own (the CLI passes it: views sit below the package surface)."""
    rule_ids = list(RULES) if release is not None else [r for r in RULES if r != "target-runtime"]
    results = []
    for report in reports:
        for lr in report.layers:
            if lr.status in rule_ids and lr.status != "target-runtime":
                results.append(_result(report.path, lr.status, rule_ids.index(lr.status),
                                       _layer_text(lr), lr, _layer_properties(lr)))
        for p in getattr(report, "target", None) or []:
            results.append(_result(report.path, "target-runtime",
                                   rule_ids.index("target-runtime"),
                                   f"OpenVINO {release} cannot {p.stage} layer '{p.name}' "
                                   f"(id {p.id}, {p.type}/{p.version}): {p.message}", p,
                                   {"layerId": p.id, "layerType": p.type,
                                    "opset": p.version, "stage": p.stage,
                                    "release": release}))
    driver = {"name": "ovgather", "version": version, "semanticVersion": version,
              "informationUri": _information_uri(),
              "rules": [_rule(r) for r in rule_ids]}
    invocation: dict[str, Any] = {"executionSuccessful": not failed, "exitCode": exit_code}
    if failed:
        invocation["toolExecutionNotifications"] = [{
            "level": "error", "message": {"text": _clean(text)},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(path)}}],
        } for path, text in failed]
    run = {"tool": {"driver": driver}, "invocations": [invocation], "results": results,
           "columnKind": "unicodeCodePoints"}
    paths = [r.path for r in reports] + [path for path, _ in failed]
    if any(not os.path.isabs(p) for p in paths if p):
        root = os.path.join(cwd or os.getcwd(), "")
        run["originalUriBaseIds"] = {SRCROOT: {"uri": _file_uri(root)}}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _rule(rule_id: str) -> dict[str, Any]:
    name, short, full = RULES[rule_id]
    return {"id": rule_id, "name": name, "shortDescription": {"text": short},
            "fullDescription": {"text": full}, "help": {"text": f"{full} {_HELP}"},
            "defaultConfiguration": {"level": _LEVEL},
            "properties": {"tags": ["openvino", "ir", "shapes"]}}


def _result(path: str | None, rule_id: str, index: int, text: str, layer: Any,
            properties: dict[str, Any]) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(path or "")}
    if layer.line is not None:
        physical["region"] = {"startLine": layer.line}
    return {"ruleId": rule_id, "ruleIndex": index, "level": _LEVEL,
            "message": {"text": _clean(text)},
            "locations": [{"physicalLocation": physical, "logicalLocations": [
                {"name": _clean(layer.name), "fullyQualifiedName": _clean(layer.name),
                 "kind": "element"}]}],
            "properties": properties}


def _layer_text(lr: Any) -> str:
    where = f"layer '{lr.name}' (id {lr.id}, {lr.type}/{lr.version})"
    return f"{lr.status}: {where}: {lr.message}" if lr.message else f"{lr.status}: {where}"


def _layer_properties(lr: Any) -> dict[str, Any]:
    doc = {"layerId": lr.id, "layerType": lr.type, "opset": lr.version, "status": lr.status,
           "declared": lr.declared}
    if lr.status == "mismatch":
        doc["inferred"] = lr.inferred
    return doc


def _artifact(path: str) -> dict[str, Any]:
    """The artifactLocation of ``path`` as the command was given it: its bytes on the
    file system percent-encoded (RFC 3986), so that the URI names that very file even when
    the name is no UTF-8 (a Latin-1 ``café.xml`` is ``caf%E9.xml``)."""
    if os.path.isabs(path):
        return {"uri": _file_uri(path)}
    text = path.replace(os.sep, "/") if os.sep != "/" else path
    return {"uri": quote(os.fsencode(text), safe="/-._~"), "uriBaseId": SRCROOT}


def _file_uri(path: str) -> str:
    from pathlib import Path

    uri = Path(path).as_uri()  # percent-encodes the file system bytes, as _artifact does
    return uri + "/" if path.endswith(os.sep) and not uri.endswith("/") else uri


def _information_uri() -> str:
    """The home page the installed package's metadata names, else :data:`INFORMATION_URI`."""
    try:
        from importlib.metadata import PackageNotFoundError, metadata

        urls = metadata("ovgather").get_all("Project-URL") or []
    except (ImportError, PackageNotFoundError):
        urls = []
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "home", "documentation") and url.strip():
            return url.strip()
    return INFORMATION_URI


# -- JUnit ------------------------------------------------------------------------------------
def junit_xml(reports: list[Any], failed: list[tuple[str, str]],
              release: str | None = None, seconds: float = 0.0) -> bytes:
    """The JUnit XML of one ``check`` command: a test case per model (``reports`` in the
    order they were read, then the ``failed`` ones, which could not be used), in UTF-8."""
    from xml.etree import ElementTree as ET

    cases = []
    for report in reports:
        case = ET.Element("testcase", classname="ovgather.check", name=_text(report.path or ""),
                          file=_text(report.path or ""), time=_seconds(report))
        bad = [lr for lr in report.layers if lr.status in ("mismatch", "invalid", "unknown")]
        target = getattr(report, "target", None) or []
        if bad or target:
            failure = ET.SubElement(case, "failure", type=_failure_type(bad, target),
                                    message=_text(_counts(bad, target, release)))
            failure.text = _text("\n".join(
                [_junit_line(report.path, lr.line, _layer_text(lr)) for lr in bad]
                + [_junit_line(report.path, p.line, f"target-runtime: OpenVINO {release} "
                               f"cannot {p.stage} layer '{p.name}' (id {p.id}, "
                               f"{p.type}/{p.version}): {p.message}") for p in target]))
        s = report.summary
        out = ET.SubElement(case, "system-out")
        out.text = _text(f"{report.path}: {'OK' if report.ok and not target else 'PROBLEMS'}: "
                         f"{s['layers']} layers, {s['ok']} ok, {s['mismatch']} mismatch, "
                         f"{s['invalid']} invalid, {s['unchecked']} unchecked, "
                         f"{s['unknown']} unknown")
        cases.append(case)
    for path, text in failed:
        case = ET.Element("testcase", classname="ovgather.check", name=_text(path),
                          file=_text(path), time="0")
        error = ET.SubElement(case, "error", type="unusable input", message=_text(text))
        error.text = _text(text)
        cases.append(case)
    failures = sum(1 for c in cases if c.find("failure") is not None)
    counts = {"tests": str(len(cases)), "failures": str(failures),
              "errors": str(len(failed)), "skipped": "0", "time": f"{seconds:.3f}"}
    suites = ET.Element("testsuites", name="ovgather check", **counts)
    suite = ET.SubElement(suites, "testsuite", name="ovgather check", **counts)
    suite.extend(cases)
    ET.indent(suites)
    return ET.tostring(suites, encoding="UTF-8", xml_declaration=True) + b"\n"


def _seconds(report: Any) -> str:
    """The seconds the model took (read and checked), as the run measured it; "0" when it
    is not known (a report made elsewhere)."""
    elapsed = getattr(report, "elapsed", None)
    if isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool) and elapsed >= 0 \
            and elapsed == elapsed and elapsed != float("inf"):
        return f"{elapsed:.3f}"
    return "0"


def _junit_line(path: str | None, line: int | None, text: str) -> str:
    return f"{path}:{line}: {text}" if line is not None else f"{path}: {text}"


def _failure_type(bad: list[Any], target: list[Any]) -> str:
    kinds = sorted({lr.status for lr in bad}) + (["target-runtime"] if target else [])
    return " ".join(kinds)


def _counts(bad: list[Any], target: list[Any], release: str | None) -> str:
    parts = [f"{sum(lr.status == s for lr in bad)} {s}" for s in ("mismatch", "invalid", "unknown")
             if any(lr.status == s for lr in bad)]
    if target:
        parts.append(f"{len(target)} that OpenVINO {release} cannot use")
    total = len(bad) + len(target)
    verb = "layer fails" if total == 1 else "layers fail"
    return f"{total} {verb} the check: {', '.join(parts)}"


#: what XML 1.0 cannot hold (and JSON written as UTF-8 cannot either: lone surrogates, from
#: a file name that is not valid UTF-8)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _escape(m: re.Match[str]) -> str:
    char = m[0]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is no UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _text(text: str) -> str:
    """``text`` as JUnit XML can hold it, every character kept apart: what XML 1.0 cannot
    hold (control characters, a byte of a name that is no UTF-8, a lone surrogate) is
    written as a visible escape (``\\x01``, ``\\xe9``), as a terminal shows the name.
    The serializer escapes markup (``<``, ``&``, ``]]>``)."""
    return _NOT_XML.sub(_escape, text)
