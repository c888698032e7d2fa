#!/usr/bin/env bash
# Prepare the GPU run (bench/gpu_run.py) here, with our venv: copy the 2.7.0a0 tree into
# build/gpu-tree (14 MB; the GPU machine has no network), prebuild every PTX into build/gpu/cache
# and record the CPU backend's verdicts and times (build/gpu/cpu.json).
# Carry: build/gpu-tree build/gpu
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
TREE=${TREE:-/root/.cache/mps-corpus/pytorch-v2.7.0a0}
[ -d "$TREE" ] || TREE=$(bash ../shared/corpus/fetch-pytorch-tree --version 2.7.0a0 | tail -1)
rm -rf build/gpu-tree build/gpu
mkdir -p build/gpu
cp -r "$TREE" build/gpu-tree
"$PY" bench/gpu_run.py --prepare
du -sh build/gpu-tree build/gpu
