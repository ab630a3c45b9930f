#!/usr/bin/env bash
# Run pytest (or any command of the venv's python) on an emulated x86-64 CPU without bf16.
#
#   tools/run_without_bf16.sh [pytest arguments]        e.g. tests/edit/test_edit.py -q
#   tools/run_without_bf16.sh --python -c "import openvino"
#
# OpenVINO's CPU plugin reads the CPU's features itself (cpuid): on a CPU with avx512_bf16
# or AMX it computes in bf16 unless a compile says otherwise, and no environment variable
# changes what it detects. QEMU's user-mode emulator (qemu-user, 10.0 or newer) runs the
# venv's Linux x86-64 python on a CPU model of its choosing; its TCG engine has no AVX-512
# at all, so OpenVINO sees a CPU with AVX2 and without bf16 (its default precision is
# then f32) and runs its AVX2 kernels.
#
# Every python the run starts is emulated too: the interpreters are reached through
# small shadow venvs in a temporary folder (pyvenv.cfg and lib/ of the real one, and a
# bin/python that starts QEMU with argv[0] set to itself), so sys.executable names the
# shadow and whatever runs `sys.executable` (pytest-xdist's workers, ovgather's crash-
# isolating worker, `python -m ovgather` in the CLI tests) runs on the same emulated CPU.
# The old OpenVINO releases' venvs (OVGATHER_CACHE, ~/.cache/ovgather) are shadowed the
# same way, after `tools/release_table.py --install` has made the missing ones natively.
#
# Before running, the script asks OpenVINO (in the emulated main interpreter, in a child
# it starts, and in each old release) which capabilities and default precision it sees,
# and stops when any of them still reports BF16. Emulation is about ten times slower:
# the script measures by how much and exports it for the few wall-clock bounds.
#
# NOBF16_CPU picks QEMU's CPU model (default: max, all QEMU can emulate; Haswell-v4 works
# too, with warnings about features TCG lacks). VENV picks the venv (default: the active
# one, else ./.venv).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cpu="${NOBF16_CPU:-max}"
venv="${VENV:-${VIRTUAL_ENV:-$root/.venv}}"

qemu="$(command -v qemu-x86_64 || true)"
if [ -z "$qemu" ]; then
    echo "run_without_bf16: qemu-x86_64 is missing (apt-get install qemu-user)" >&2; exit 2
fi
# QEMU 7.2 (Debian 12's own) emulates some AVX2 instruction wrongly: OpenVINO's AVX2 Tanh
# kernel then gives wrong values. 10.0 (bookworm-backports, Debian 13) computes it right.
qemu_major="$("$qemu" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p;q')"
if [ "${qemu_major:-0}" -lt 10 ]; then
    echo "run_without_bf16: QEMU $qemu_major.x miscomputes AVX2 code; needs 10.0 or newer" \
         "(apt-get install -t bookworm-backports qemu-user on Debian 12)" >&2; exit 2
fi
if [ "$(uname -m)" != x86_64 ] || [ ! -x "$venv/bin/python" ]; then
    echo "run_without_bf16: needs Linux x86-64 and a venv at $venv (VENV=...)" >&2; exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/nobf16.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# shadow SRC DEST: DEST is a venv whose bin/python runs SRC's python under QEMU
shadow() {
    local src="$1" dest="$2" real
    real="$(readlink -f "$src/bin/python")"
    mkdir -p "$dest/bin"
    cp "$src/pyvenv.cfg" "$dest/pyvenv.cfg"
    for d in lib lib64 include; do [ -e "$src/$d" ] && ln -s "$src/$d" "$dest/$d"; done
    printf '#!/bin/sh\nexec "%s" -cpu "%s" -0 "$0" "%s" "$@"\n' "$qemu" "$cpu" "$real" \
        > "$dest/bin/python"
    chmod +x "$dest/bin/python"
    ln -s python "$dest/bin/python3"
}

shadow "$venv" "$work/venv"
export VIRTUAL_ENV="$work/venv" PATH="$work/venv/bin:$venv/bin:$PATH"

# the old releases: installed natively where missing, then each shadowed
if [ "${OVGATHER_CACHE:-}" != off ] && [ "${OVGATHER_CACHE:-}" != OFF ]; then
    cache="${OVGATHER_CACHE:-$HOME/.cache/ovgather}"
    if "$venv/bin/python" "$root/tools/release_table.py" --install >/dev/null 2>&1; then
        mkdir -p "$work/cache"
        for release in "$cache"/openvino-*; do
            [ -x "$release/bin/python" ] && shadow "$release" "$work/cache/$(basename "$release")"
        done
        export OVGATHER_CACHE="$work/cache"
    else
        echo "run_without_bf16: the old releases could not be installed in $cache;" \
             "their tests will be skipped" >&2
        export OVGATHER_CACHE=off
    fi
fi

# what OpenVINO sees on the emulated CPU: no BF16, f32 by default, in a child process too
probe='import openvino as ov
try:
    c = ov.Core()
except AttributeError:  # 2023.0
    from openvino.runtime import Core as C; c = C(); ov.__version__ = ov.runtime.get_version()
print(ov.__version__, "|", " ".join(c.get_property("CPU", "OPTIMIZATION_CAPABILITIES")), "|",
      c.get_property("CPU", "INFERENCE_PRECISION_HINT"))'
child='import subprocess, sys
sys.exit(subprocess.run([sys.executable, "-c", sys.argv[1]]).returncode)'
seen="$("$work/venv/bin/python" -c "$probe")
$("$work/venv/bin/python" -c "$child" "$probe")"
for py in "$work"/cache/openvino-*/bin/python; do
    [ -x "$py" ] && seen="$seen
$("$py" -c "$probe")"
done
echo "$seen" | sed "s/^/run_without_bf16: QEMU -cpu $cpu: OpenVINO /" >&2
if echo "$seen" | grep -qi bf16 || echo "$seen" | grep -qv "float32\|f32$"; then
    echo "run_without_bf16: OpenVINO still sees bf16 on this CPU model ($cpu)" >&2; exit 2
fi

# how much slower the emulated CPU is: a small Python process (start-up, imports, a loop)
# timed natively and emulated, best of 3 each; the tests with a wall-clock bound scale it
# by this (tests/helpers/slowdown.py)
slowdown="$("$venv/bin/python" - "$work/venv/bin/python" <<'PY'
import subprocess, sys, time
job = ["-c", "import argparse, json, re; sum(i * i for i in range(200000))"]
def best(python):
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([python, *job], check=True)
        times.append(time.perf_counter() - start)
    return min(times)
print(f"{best(sys.argv[1]) / best(sys.executable):.1f}")
PY
)"
export OVGATHER_TEST_SLOWDOWN="$slowdown"
echo "run_without_bf16: the emulated CPU is ${slowdown} times slower (OVGATHER_TEST_SLOWDOWN)" >&2

cd "$root"
# not exec: the trap removes the shadow venvs afterwards
if [ "${1:-}" = --python ]; then
    shift; "$work/venv/bin/python" "$@"
else
    "$work/venv/bin/python" -m pytest -p no:cacheprovider "$@"
fi
