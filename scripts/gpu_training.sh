#!/usr/bin/env bash
# Training that learns, measured on one GPU (docs/benchmarks/train.md, "Training mechanics"):
#   scripts/gpu_training.sh sft        supervised warm start (SFT_EPOCHS, 10)           -> $ROOT/sft/model
#   scripts/gpu_training.sh precision  5 steps each, side by side, from the SFT start: the direct bf16
#                                      update (fp32_master=false), fp32 master weights, LoRA -> $ROOT/prec-*
#   scripts/gpu_training.sh rl         STEPS steps of RL, 64 episodes per step, compaction after every
#                                      turn, CUDA harness reward                        -> $ROOT/rl
#   scripts/gpu_training.sh scale      2 steps at 128 episodes per step (step time split) -> $ROOT/scale128
#   scripts/gpu_training.sh all        sft, then precision and rl side by side, then scale
#   scripts/gpu_training.sh collect    metrics, configs and logs of every run -> $ROOT/results.tgz
# Every phase resumes (a finished run is skipped, an unfinished one continues from its checkpoint).
# Settings: ROOT (runs/gpu-training), STEPS (30), SFT_EPOCHS (10), PY (python3), EXTRA_RL (more KEY=VALUE
# settings for the rl and scale phases, e.g. "task_ids=[builtin/relu] harness_timed_calls=20").
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${ROOT:-runs/gpu-training}
STEPS=${STEPS:-30}
SFT_EPOCHS=${SFT_EPOCHS:-10}
PY=${PY:-python3}
CONFIG=configs/train-compaction-gpu.yaml
mkdir -p "$ROOT"
export ATRL_GPU_LOCK_DIR=${ATRL_GPU_LOCK_DIR:-$ROOT/.gpu-locks}

trap 'status=$?; kill $(jobs -p) 2>/dev/null || true; exit $status' EXIT
trap 'exit 130' INT TERM

train() {  # train OUT KEY=VALUE...: one run, resumed when OUT holds a checkpoint
    local out=$1; shift
    local sets=()
    for kv in "$@"; do sets+=(--set "$kv"); done
    $PY -m atrl train --config "$CONFIG" --set "model=hf:$ROOT/sft/model" "${sets[@]}" --out "$out" \
        > "$out.log" 2>&1 || { tail -20 "$out.log"; return 1; }
}

sft() {
    [ -f "$ROOT/sft/model/config.json" ] && { echo "[sft] done"; return 0; }
    echo "[sft] -> $ROOT/sft"
    $PY -m atrl sft --config configs/sft-smollm2.yaml --set epochs=$SFT_EPOCHS --out "$ROOT/sft" > "$ROOT/sft.log" 2>&1 \
        || { tail -20 "$ROOT/sft.log"; return 1; }
    tail -2 "$ROOT/sft.log"
}

precision() {
    echo "[precision] 3 arms x 5 steps, side by side"
    local common=(steps=5 save_every=100 tasks_per_step=4 group_size=4 harness_workers=4)
    train "$ROOT/prec-bf16" "${common[@]}" fp32_master=false & local a=$!
    train "$ROOT/prec-fp32" "${common[@]}" & local b=$!
    train "$ROOT/prec-lora" "${common[@]}" lora=true lora_r=16 lr=1e-4 & local c=$!
    local failed=0
    for pid in $a $b $c; do wait "$pid" || failed=1; done
    return $failed
}

rl() {
    echo "[rl] $STEPS steps -> $ROOT/rl"
    train "$ROOT/rl" "steps=$STEPS" ${EXTRA_RL:-}
}

scale() {
    echo "[scale] 128 episodes per step -> $ROOT/scale128"
    train "$ROOT/scale128" ${EXTRA_RL:-} steps=2 tasks_per_step=16 save_every=100
}

collect() {
    (cd "$ROOT" && tar czf results.tgz --ignore-failed-read $(ls -d *.log */metrics.jsonl */config.yaml sft/model/config.json 2>/dev/null))
    echo "collected $(du -h "$ROOT/results.tgz" | cut -f1)"
}

case "${1:-all}" in
    sft) sft ;;
    precision) precision ;;
    rl) rl ;;
    scale) scale ;;
    collect) collect ;;
    all) sft && { precision & p=$!; rl; wait $p; } && scale ;;
    *) echo "usage: $0 sft|precision|rl|scale|all|collect" >&2; exit 2 ;;
esac
