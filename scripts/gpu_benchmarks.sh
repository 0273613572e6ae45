#!/usr/bin/env bash
# The GPU checks and benchmarks behind docs/benchmarks/, in one command, on a machine with one or
# more CUDA GPUs. Results go to OUT (default runs/gpu-benchmarks):
#   gputests.log          pytest -m gpu (every GPU-marked test)
#   evalref/, evalref.log atrl eval --policy reference on the builtin suite (full preset)
#   rollout.md            benchmarks/rollout_throughput.py (plain vs static vs compiled)
#   soak.md, soak.json    benchmarks/reliability_soak.py --backend cuda
#   feedback-cuda.md/.json benchmarks/feedback_diagnosis.py --backend cuda (the diagnosis set)
# With two GPUs the two halves run side by side (GPU 0: reference eval, then rollout benchmark;
# GPU 1: GPU tests, then the soak); with one, one after the other.
#   scripts/gpu_benchmarks.sh [OUT]
# Settings: MODEL (rollout benchmark's model dir/GGUF; default: the SmolLM2 GGUF), SOAK_N (200),
# PY (python3).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/gpu-benchmarks}
PY=${PY:-python3}
SOAK_N=${SOAK_N:-200}
mkdir -p "$OUT"
NGPU=$($PY -c 'import torch; print(torch.cuda.device_count())')
[ "$NGPU" -ge 1 ] || { echo "no CUDA GPU visible" >&2; exit 2; }
SECOND=$(( NGPU > 1 ? 1 : 0 ))
MODEL_ARG=()
[ -n "${MODEL:-}" ] && MODEL_ARG=(--model "$MODEL")

first_half() {
    export CUDA_VISIBLE_DEVICES=0
    $PY -m atrl eval --policy reference --with-solution --backend cuda --max-turns 1 \
        --max-response-tokens 4096 --context-budget 16384 --no-kb --out "$OUT/evalref" > "$OUT/evalref.log" 2>&1
    echo "reference eval: rc=$?"
    $PY benchmarks/rollout_throughput.py "${MODEL_ARG[@]}" --batch-sizes 64,256 --new-tokens 256 --repeats 2 \
        --out "$OUT/rollout.md" > "$OUT/rollout.log" 2>&1
    echo "rollout benchmark: rc=$?"
}

second_half() {
    export CUDA_VISIBLE_DEVICES=$SECOND
    $PY -m pytest -q -m gpu -p no:cacheprovider tests > "$OUT/gputests.log" 2>&1
    echo "gpu tests: rc=$? ($(tail -1 "$OUT/gputests.log"))"
    $PY benchmarks/reliability_soak.py --backend cuda --n "$SOAK_N" --workers 6 --timeout 15 \
        --json "$OUT/soak.json" > "$OUT/soak.md" 2> "$OUT/soak.log"
    echo "soak: rc=$?"
    $PY benchmarks/feedback_diagnosis.py --backend cuda --out "$OUT" > "$OUT/feedback.log" 2>&1
    echo "feedback diagnosis: rc=$?"
}

if [ "$NGPU" -gt 1 ]; then
    first_half & second_half & wait
else
    first_half; second_half
fi
echo "results in $OUT"
