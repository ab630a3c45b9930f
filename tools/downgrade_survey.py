"""``convert --target-runtime`` measured against the old releases themselves.

For every IR (``ir_samples``, ``ir_corpus`` and the pieces of ``target_pieces.py``, plus any
given) and every older release (each installed in its venv by ``release_table.py``):

1. the release reads and compiles the IR, or not (its own ``read_model`` and CPU plugin);
2. where it does not, ovgather's ``Downgrade`` pass rewrites the IR for it (or refuses,
   naming the layers);
3. the rewritten IR is read, compiled and run by the release on the inputs the installed
   OpenVINO ran the original on (``compare``'s seeded inputs), and every output must
   equal the original's within ``rtol`` 1e-3 (``atol`` 1e-5). Both run at f32 inference
   precision: the CPU plugin computes in bf16 by default on CPUs that have it, which
   moves outputs by up to a few hundredths.

An old release may not run a model on the CPU at hand: its oneDNN lacks a primitive ("could
not create a primitive"), a JIT emitter needs an instruction set the CPU lacks ("cannot be
input register in SSE41"), or the process dies. When the untouched model fails on the
release the same way (the same message but for numbers and addresses, or both kill the
process), or the release's process dies on the untouched model, the pair is a limit of the
release on this CPU (``Pair.cpu_limit``), not a failed conversion; a converted model that
fails to read, fails otherwise, or still holds a layer ``check --target-runtime`` finds,
is a failed conversion.

Prints one line per (IR, release) that needed a rewrite and, per release, how many were
converted and proven, and how many refused.

    python tools/downgrade_survey.py [--release 2023.0 ...] [--only NAME ...] [IR.xml ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import release_table  # noqa: E402
import target_pieces  # noqa: E402

RTOL, ATOL = 1e-3, 1e-5
#: the instruction sets a model the release fails on is tried again on, its kernels limited
#: to each (oneDNN's names); one the CPU lacks changes nothing
NARROWER = ("AVX2", "AVX", "SSE41")

#: Runs in an old release's venv: reads "xml inputs.npz outputs.npz" lines, answers one
#: JSON line each (the error of the stage that failed, or the output names written).
_RUNNER = """
import json, sys
import numpy as np
try:
    from openvino import Core
except ImportError:  # 2023.0 keeps the API in openvino.runtime
    from openvino.runtime import Core
core = Core()
F32 = {"INFERENCE_PRECISION_HINT": "f32"}  # not the bf16 a CPU with it gets by default
def stage(name):  # on stderr: the stage a crash of the process stopped in
    print("stage", name, file=sys.stderr, flush=True)
for line in sys.stdin:
    xml, feed_path, out_path = line.split()
    row = {"read": None, "compile": None, "run": None}
    stage("read")
    try:
        model = core.read_model(xml)
    except Exception as err:
        row["read"] = str(err)[:2000]
        print(json.dumps(row), flush=True); continue
    stage("compile")
    try:
        compiled = core.compile_model(model, "CPU", F32)
    except Exception as err:
        row["compile"] = str(err)[:2000]
        print(json.dumps(row), flush=True); continue
    if feed_path == "-":
        print(json.dumps(row), flush=True); continue
    stage("run")
    try:
        given = dict(np.load(feed_path))
        feed = {}
        for port in compiled.inputs:
            names = set(port.get_names()) | {port.get_node().get_friendly_name()}
            feed[port] = given[next(n for n in given if n in names)]
        request = compiled.create_infer_request()
        request.infer(feed)
        outs = {}
        for i, port in enumerate(compiled.outputs):
            outs[str(i)] = request.get_output_tensor(i).data.copy()
            outs["names" + str(i)] = np.array(sorted(port.get_names()) or [""])
        np.savez(out_path, **outs)
    except Exception as err:
        row["run"] = str(err)[:2000]
    print(json.dumps(row), flush=True)
"""


@dataclass
class Pair:
    """One IR and one release that cannot take it as it is."""

    path: Path
    release: str
    verdict: dict
    refused: list[dict] = field(default_factory=list)
    converted: Path | None = None
    changes: list[dict] = field(default_factory=list)
    after: dict = field(default_factory=dict)
    differs: list[str] = field(default_factory=list)
    #: what ovgather still finds the release refuses in the converted model
    left: list[str] = field(default_factory=list)
    #: the narrower instruction set on which the release, failing with this CPU's own,
    #: ran the converted model and gave the original's outputs
    isa: str | None = None

    @property
    def proven(self) -> bool:
        return self.converted is not None and not any(self.after.values()) \
            and not self.differs and bool(self.after)

    @property
    def cpu_limit(self) -> bool:
        """The release cannot run the model on this CPU, converted or not; nothing a rewrite
        did. Either its process died on the untouched model (it cannot run it here at all),
        or the converted model, in which ovgather finds nothing left the release refuses,
        fails in the release's plugin (compile, run, or the process dying) the way the
        untouched one does, or runs with the original's outputs once the release's kernels
        are limited to a narrower instruction set (``isa``). Reading a model does not
        depend on the CPU: a failure to read the converted model is always the
        conversion's, and so are outputs that differ."""
        if self.converted is None or self.proven:
            return False
        before, after = failure(self.verdict), failure(self.after)
        if before == "died" or self.isa:
            return True
        return after is not None and after == before and not after.startswith("read") \
            and not self.left


def stored_irs() -> list[Path]:
    return sorted([*ROOT.glob("ir_samples/**/*.xml"), *ROOT.glob("ir_corpus/**/*.xml")])


def ask_release(release: str | None, jobs: list[tuple[Path, str, str]],
                isa: str | None = None) -> list[dict]:
    """Run ``jobs`` (xml, inputs npz or "-", outputs npz) in the release's venv (None:
    the installed OpenVINO), its kernels limited to instruction set ``isa`` (oneDNN's
    ``ONEDNN_MAX_CPU_ISA``, which the releases' CPU plugins follow) when given. A job
    that kills the process (a segmentation fault or an abort in the release's plugin)
    gets a row whose stage names the signal and whose ``died`` is true; the jobs after it
    run in a new process."""
    python = sys.executable if release is None else str(release_table.release_python(release))
    env = {**os.environ, "ONEDNN_MAX_CPU_ISA": isa} if isa else None
    rows: list[dict] = []
    while len(rows) < len(jobs):
        text = "\n".join(f"{x} {i} {o}" for x, i, o in jobs[len(rows):]) + "\n"
        done = subprocess.run([python, "-c", _RUNNER], input=text, capture_output=True,
                              text=True, check=False, env=env)
        rows += [json.loads(line) for line in done.stdout.splitlines()]
        if len(rows) < len(jobs):
            rows.append(_death(release, jobs[len(rows)][0], done))
    return rows


def _death(release: str | None, xml: Path, done: subprocess.CompletedProcess) -> dict:
    """The row of the job a release's process died on, in the stage it had reached."""
    if done.returncode >= 0:  # not a signal: the runner itself is broken
        raise RuntimeError(f"OpenVINO {release} stopped on {xml} (exit {done.returncode}): "
                           f"{done.stderr[-2000:]}")
    stages = re.findall(r"^stage (\w+)$", done.stderr, re.MULTILINE)
    row: dict = {"read": None, "compile": None, "run": None, "died": True}
    row[stages[-1] if stages else "read"] = \
        f"the process died by {signal.Signals(-done.returncode).name}"
    return row


def failure(row: dict) -> str | None:
    """How a release failed on a model, in a form two models can share: ``"died"`` when
    the process died (a segmentation fault or an abort, in whichever stage), else the
    stage and its message with numbers, addresses and file paths taken out (a layer's
    name keeps its letters); None when nothing failed."""
    if row.get("died"):
        return "died"
    stage = next((s for s in ("read", "compile", "run") if row.get(s)), None)
    if stage is None:
        return None
    message = re.sub(r"\S*\.(xml|bin|npz)\b", "<file>", row[stage])
    message = re.sub(r"0x[0-9a-f]+|\d+", "#", message, flags=re.IGNORECASE)
    return f"{stage}: {' '.join(message.split())}"


def reference(path: Path, feed_path: Path, seed: int = 0) -> list[tuple[set[str], np.ndarray]]:
    """Run the original on the installed OpenVINO with ``compare``'s seeded inputs; save
    the inputs by every name of each and return the outputs (names, array)."""
    from ovgather.runtime.outputs import RunnableModel
    from ovgather.shapes import PartialShape
    from ovgather.validate.runner import feeds
    from ovgather.validate.sizes import one_size_tries

    model = RunnableModel(str(path))
    params = {i: PartialShape.parse(t.shape) for i, t in enumerate(model.inputs)}
    types = {i: t.element_type for i, t in enumerate(model.inputs)}
    tries = [sizes for _, sizes in one_size_tries(params, np.random.default_rng(seed))]
    tries += [{i: PartialShape.parse(str([d if d >= 0 else 1 if axis == 0 else size
                                          for axis, d in enumerate(dims)]))
               for i, dims in _dims(params).items()} for size in (32, 64, 128, 224)]
    error = None
    for k, sizes in enumerate(tries):
        feed = feeds(sizes, types, seed, k)
        try:
            outs = model.run([feed[i] for i in range(len(model.inputs))])
        except Exception as err:  # noqa: BLE001 - try the next sizes
            error = err
            continue
        np.savez(feed_path, **{name: feed[i] for i, t in enumerate(model.inputs)
                               for name in t.names})
        return [(set(t.names), out) for t, out in zip(model.outputs, outs, strict=True)]
    raise RuntimeError(f"{path} ran on no input sizes: {error}")


def _dims(params) -> dict:
    """Each input's dims, -1 where dynamic (every input here has a static rank)."""
    return {i: [-1 if d.lo != d.hi else d.lo for d in shape.dims]
            for i, shape in params.items() if shape.dims is not None}


def differences(expected: list[tuple[set[str], np.ndarray]], got_path: Path) -> list[str]:
    """The outputs of the rewritten model (saved by the release) that are not the
    original's: matched by a tensor name in common, else by position."""
    got = np.load(got_path)
    count = sum(1 for k in got.files if not k.startswith("names"))
    outs = [(set(got[f"names{i}"].tolist()) - {""}, got[str(i)]) for i in range(count)]
    if count != len(expected):
        return [f"{count} outputs, not {len(expected)}"]
    found = []
    for i, (names, want) in enumerate(expected):
        j = next((j for j, (n, _) in enumerate(outs) if n & names), i)
        have = outs[j][1]
        if have.shape != want.shape:
            found.append(f"output {sorted(names)[:1]}: shape {have.shape} not {want.shape}")
        elif not np.allclose(have.astype(np.float64), want.astype(np.float64), rtol=RTOL,
                             atol=ATOL, equal_nan=True):
            worst = np.nanmax(np.abs(have.astype(np.float64) - want.astype(np.float64)))
            found.append(f"output {sorted(names)[:1]}: differs by up to {worst:.3g}")
    return found


def survey(paths: list[Path], releases: list[str], work: Path) -> list[Pair]:
    """Every (IR, release) the release refuses, converted and proven where possible."""
    from ovgather.errors import RewriteError
    from ovgather.infer import target_problems
    from ovgather.ir import read_ir, write_ir
    from ovgather.passes.downgrade import Downgrade, DowngradeError

    pairs: list[Pair] = []
    # an IR the installed OpenVINO cannot compile either (a dynamic rank) is no old
    # release's problem
    paths = [p for p, v in zip(paths, ask_release(None, [(p, "-", "-") for p in paths]),
                               strict=True) if not any(v.values())]
    for release in releases:
        verdicts = ask_release(release, [(p, "-", "-") for p in paths])
        pairs += [Pair(p, release, v) for p, v in zip(paths, verdicts, strict=True)
                  if v["read"] or v["compile"]]
    expected: dict[Path, list] = {}
    inputs: dict[Path, Path] = {}
    for k, pair in enumerate(pairs):
        G = read_ir(str(pair.path))
        try:
            pair.changes = Downgrade(pair.release).call(G).changes
            pair.left = [p.message for p in target_problems(G, pair.release)]
        except DowngradeError as err:
            pair.refused = err.refused
            continue
        except RewriteError as err:
            pair.refused = [{"why": str(err)}]
            continue
        pair.converted = work / pair.release / f"{k}_{pair.path.stem}.xml"
        pair.converted.parent.mkdir(parents=True, exist_ok=True)
        write_ir(G, str(pair.converted))
        if pair.path not in expected:
            inputs[pair.path] = work / f"{k}_inputs.npz"
            expected[pair.path] = reference(pair.path, inputs[pair.path])
    for release in releases:
        todo = [p for p in pairs if p.release == release and p.converted is not None]
        if not todo:
            continue
        rows = ask_release(release, [(p.converted, inputs[p.path], p.converted.with_suffix(".npz"))
                                     for p in todo])
        for pair, row in zip(todo, rows, strict=True):
            pair.after = row
            if not any(row.values()):
                pair.differs = differences(expected[pair.path],
                                           pair.converted.with_suffix(".npz"))
        for isa in NARROWER:
            _narrower(isa, [p for p in todo if _kernel_failure(p)], inputs, expected)
    return pairs


def _kernel_failure(pair: Pair) -> bool:
    """The converted model failed in the release's plugin (not reading it, not its
    outputs) in a way the untouched model does not explain, and nothing is left to
    rewrite: a kernel for this CPU's instruction set, or the conversion."""
    after = failure(pair.after)
    return after is not None and not after.startswith("read") and not pair.left \
        and not pair.cpu_limit


def _narrower(isa: str, pairs: list[Pair], inputs: dict, expected: dict) -> None:
    """Run ``pairs`` again with the release's kernels limited to ``isa``; where a model
    then runs and gives the original's outputs, the conversion is right and the failure
    was the kernels' of this CPU's wider instruction set (``Pair.isa``)."""
    if not pairs:
        return
    outs = [p.converted.with_name(f"{p.converted.stem}_{isa}.npz") for p in pairs]
    rows = ask_release(pairs[0].release, [(p.converted, inputs[p.path], out)
                                          for p, out in zip(pairs, outs, strict=True)], isa)
    for pair, row, out in zip(pairs, rows, outs, strict=True):
        if not any(row.values()) and not differences(expected[pair.path], out):
            pair.isa = isa


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("irs", nargs="*", type=Path)
    parser.add_argument("--release", action="append", choices=list(release_table.RELEASES))
    parser.add_argument("--only", action="append", help="IRs whose path contains this")
    args = parser.parse_args()
    releases = args.release or list(release_table.RELEASES)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pieces = target_pieces.write_all(work / "pieces",
                                         {**target_pieces.PIECES, **target_pieces.MORE_PIECES})
        paths = args.irs or [*stored_irs(), *pieces.values()]
        if args.only:
            paths = [p for p in paths if any(o in str(p) for o in args.only)]
        pairs = survey(paths, releases, work)
        for pair in pairs:
            where = pair.path.relative_to(ROOT) if pair.path.is_relative_to(ROOT) else \
                pair.path.name
            if pair.refused:
                why = "; ".join(f"{r.get('name')}: {r['why']}" for r in pair.refused[:2])
                print(f"{pair.release}  refused  {where}: {why}")
            elif pair.proven:
                print(f"{pair.release}  proven   {where} ({len(pair.changes)} layers rewritten)")
            elif pair.cpu_limit:
                how = f"proven with its kernels limited to {pair.isa}" if pair.isa else \
                    "converted or not"
                print(f"{pair.release}  this CPU {where}: the release cannot run it here, "
                      f"{how}: {failure(pair.after) or failure(pair.verdict)}")
            else:
                fail = next((f"{k}: {v[:300]}" for k, v in pair.after.items() if v),
                            "; ".join(pair.differs))
                print(f"{pair.release}  FAILED   {where}: {fail}")
        for release in releases:
            mine = [p for p in pairs if p.release == release]
            proven = sum(p.proven for p in mine)
            refused = sum(bool(p.refused) for p in mine)
            limit = sum(p.cpu_limit for p in mine)
            print(f"OpenVINO {release}: {len(mine)} IRs it cannot take, {proven} converted "
                  f"and proven, {refused} refused, {limit} not run on this CPU converted or "
                  f"not, {len(mine) - proven - refused - limit} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
