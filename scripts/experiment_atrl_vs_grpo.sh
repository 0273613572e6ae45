#!/usr/bin/env bash
# The ATRL-vs-GRPO experiment (docs/experiments/README.md) on one machine with one or more GPUs.
#
#   scripts/experiment_atrl_vs_grpo.sh sft      supervised warm start on GPU 0      -> $ROOT/sft/model
#   scripts/experiment_atrl_vs_grpo.sh train    every arm x seed at once, spread over the GPUs -> $ROOT/<arm>-s<seed>
#   scripts/experiment_atrl_vs_grpo.sh eval     the SFT start and every run's checkpoint at the last step
#                                               that all runs reached, on the held-out level-1 tasks -> $ROOT/eval-*
#   scripts/experiment_atrl_vs_grpo.sh summary  tables, reward-vs-step plot, all metrics -> $ROOT/summary
#   scripts/experiment_atrl_vs_grpo.sh all      the four in order
#
# Every phase resumes: run it again after an interruption and it continues unfinished runs.
# Settings (environment variables): ROOT (runs/exp), ARMS ("atrl grpo"), SEEDS ("0 1"), STEPS (8),
# SAMPLES (4 episodes per held-out task), PY (python3), NGPU (the GPUs torch sees), BACKEND (cuda),
# SFT_CONFIG (configs/sft-smollm2.yaml), TRAIN_SET (more key=value overrides for every arm),
# EVAL_AGENT (the agent options of the evaluations; keep them equal to the training config's).
# CPU smoke run of the whole pipeline (tiny model, interpreter):
#   ROOT=runs/exp-cpu SEEDS=0 STEPS=2 SAMPLES=1 BACKEND=interpreter SFT_CONFIG=configs/sft-tiny-cpu.yaml \
#   TRAIN_SET="rollout_engine=null group_size=2 tasks_per_step=2 agent.max_response_tokens=48 agent.context_budget=2048" \
#   EVAL_AGENT="--max-turns 2 --context-budget 2048 --max-response-tokens 48" scripts/experiment_atrl_vs_grpo.sh all
# Arm a of seed k trains on GPU (a + k) mod NGPU, so with 2 GPUs each GPU holds one run of each arm.
# All runs share per-GPU timing locks ($ATRL_GPU_LOCK_DIR): no kernel is timed while another runs.
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT=${ROOT:-runs/exp}
ARMS=${ARMS:-atrl grpo}
SEEDS=${SEEDS:-0 1}
STEPS=${STEPS:-8}
SAMPLES=${SAMPLES:-4}
PY=${PY:-python3}
BACKEND=${BACKEND:-cuda}
SFT_CONFIG=${SFT_CONFIG:-configs/sft-smollm2.yaml}
TRAIN_SET=${TRAIN_SET:-}
NGPU=${NGPU:-$($PY -c 'import torch; print(max(1, torch.cuda.device_count()))')}
TRAIN_CONFIG=configs/experiment-atrl-vs-grpo.yaml
SPLIT=configs/split-builtin.yaml
mkdir -p "$ROOT"
export ATRL_GPU_LOCK_DIR=${ATRL_GPU_LOCK_DIR:-$(cd "$ROOT" && pwd)/.gpu-locks}

# the agent settings of the training config, for the evaluations
read -r -a EVAL_AGENT <<< "${EVAL_AGENT:---max-turns 3 --context-budget 3072 --max-response-tokens 1024}"
ENGINE=(--engine static)
[ "$BACKEND" = cuda ] || ENGINE=()

# stopping the script (Ctrl-C, `timeout`) stops the runs it started; re-running the phase resumes them
trap 'status=$?; kill $(jobs -p) 2>/dev/null || true; exit $status' EXIT
trap 'exit 130' INT TERM

wait_all() {  # wait for every pid given; fail (after all have ended) if any failed
    local failed=0
    for pid in "$@"; do wait "$pid" || failed=1; done
    return $failed
}

sft() {
    echo "[sft] -> $ROOT/sft"
    CUDA_VISIBLE_DEVICES=0 $PY -m atrl sft --config "$SFT_CONFIG" --out "$ROOT/sft" \
        > "$ROOT/sft.log" 2>&1 || { tail -20 "$ROOT/sft.log"; return 1; }
    tail -2 "$ROOT/sft.log"
}

train() {
    [ -d "$ROOT/sft/model" ] || { echo "no $ROOT/sft/model: run the sft phase first" >&2; return 2; }
    local pids=() k=0 a extra=()
    for kv in $TRAIN_SET; do extra+=(--set "$kv"); done
    for seed in $SEEDS; do
        a=0
        for arm in $ARMS; do
            local gpu=$(( (a + k) % NGPU )) run="$ROOT/$arm-s$seed"
            echo "[train] $arm seed $seed on GPU $gpu -> $run"
            CUDA_VISIBLE_DEVICES=$gpu $PY -m atrl train --config "$TRAIN_CONFIG" \
                --set "model=hf:$ROOT/sft/model" --set "estimator=$arm" --set "seed=$seed" \
                --set "steps=$STEPS" --set "backend=$BACKEND" "${extra[@]}" --out "$run" >> "$run.log" 2>&1 &
            pids+=($!)
            a=$((a + 1))
        done
        k=$((k + 1))
    done
    wait_all "${pids[@]}" || { for f in "$ROOT"/*-s*.log; do echo "== $f"; tail -5 "$f"; done; return 1; }
}

common_step() {  # the newest checkpoint step that every run has
    $PY - "$ROOT" $ARMS -- $SEEDS <<'PY'
import sys
from pathlib import Path
root, rest = Path(sys.argv[1]), sys.argv[2:]
arms, seeds = rest[: rest.index("--")], rest[rest.index("--") + 1 :]
steps = []
for arm in arms:
    for seed in seeds:
        found = sorted(int(p.name[5:]) for p in (root / f"{arm}-s{seed}" / "checkpoints").glob("step_*") if (p / "model").is_dir())
        steps.append(set(found))
common = set.intersection(*steps) if steps else set()
if not common:
    sys.exit("no checkpoint step is shared by every run: run (or resume) the train phase")
print(max(common))
PY
}

evaluate() {
    local step names=() models=() pids=() i=0
    step=$(common_step)
    echo "[eval] checkpoints at step $step"
    names+=(sft); models+=("$ROOT/sft/model")
    for seed in $SEEDS; do
        for arm in $ARMS; do
            names+=("$arm-s$seed"); models+=("$ROOT/$arm-s$seed/checkpoints/$(printf 'step_%06d' "$step")/model")
        done
    done
    echo "$step" > "$ROOT/eval_step.txt"
    for i in "${!names[@]}"; do
        local out="$ROOT/eval-${names[$i]}" gpu=$(( i % NGPU ))
        echo "[eval] ${names[$i]} on GPU $gpu -> $out"
        CUDA_VISIBLE_DEVICES=$gpu $PY -m atrl eval --split "$SPLIT" --split-part heldout --level 1 \
            --policy "hf:${models[$i]}" "${ENGINE[@]}" --samples "$SAMPLES" "${EVAL_AGENT[@]}" \
            --backend "$BACKEND" --out "$out" > "$out.log" 2>&1 &
        pids+=($!)
    done
    wait_all "${pids[@]}" || { for f in "$ROOT"/eval-*.log; do echo "== $f"; tail -5 "$f"; done; return 1; }
}

summary() {
    $PY benchmarks/experiment_summary.py --runs "$ROOT" --out "$ROOT/summary"
}

case "${1:-}" in
    sft) sft ;;
    train) train ;;
    eval) evaluate ;;
    summary) summary ;;
    all) sft && train && evaluate && summary ;;
    *) sed -n '2,22p' "$0"; exit 2 ;;
esac
