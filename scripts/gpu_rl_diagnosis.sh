#!/usr/bin/env bash
# The arms of docs/experiments/rl-decline.md, side by side on one GPU, in the background
# (run from the stable tree: `source scripts/device_setup.sh && stable_tree` first):
#   scripts/gpu_rl_diagnosis.sh start   detach arm P (advantages permuted within groups, lr 1e-4)
#                                       and arm S (lr 2e-5), both from the shipped adapter with the
#                                       recorded run's settings, 7 harness workers each, one GPU lock;
#                                       ARMS="P" (or "S") starts only that one
#   scripts/gpu_rl_diagnosis.sh resume  also detach the recorded run's continuation to step 30 from
#                                       the carried step-22 checkpoint (.rlckpt/), as runs/diag/R
#   scripts/gpu_rl_diagnosis.sh watch   their steps as they finish (WATCH_S seconds)
#   scripts/gpu_rl_diagnosis.sh score   each arm's latest checkpoint against the start: per-token NLL of
#                                       the 14 tasks' reference solutions (benchmarks/solution_likelihood.py,
#                                       fp32 on the CPU) -> ARM/nll.md
#   scripts/gpu_rl_diagnosis.sh bring   each arm's records (metrics, config, log, trajectories) ->
#                                       $OUTDIR; checkpoints only with BRING_CHECKPOINT=1
# Side by side, arms take longer per step than one after another (measured 2026-12-04: 105-185 s
# per step each against 57 s alone; they queue for the GPU lock of the timing stage): run one at a time.
# Phases run in the order given, e.g. `ARMS=P scripts/gpu_rl_diagnosis.sh start resume`. The GPU
# machine is given back ~30 s after a call ends, and the runs with it: end every watching call with
# `bring` (`WATCH_S=480 OUTDIR=$OUT scripts/gpu_rl_diagnosis.sh watch bring`), so that what ran
# so far comes back even if the next call finds a fresh machine.
# CPU smoke run of an arm (one tiny step on the interpreter):
#   DIAG=runs/diag-smoke STEPS=1 WORKERS=2 BACKEND=interpreter ARMS=P EXTRA_DIAG="--set group_size=2 \
#     --set tasks_per_step=1 --set agent.max_response_tokens=16 --set agent.summary_tokens=8 --set bf16=false \
#     --set agent.platform=interpreter" scripts/gpu_rl_diagnosis.sh start
# and of R's continuation (`resume`, with restore_checkpoint defined and the parts parked under
# $ATRL_PARK/rlckpt): the same with STEPS=23 resumes the step-22 checkpoint and runs step 23 (ran on
# the CPU: the recorded metrics kept to step 22, step 23 appended)
set -euo pipefail
cd "$(dirname "$0")/.."
DIAG=${DIAG:-runs/diag}
OUTDIR=${OUTDIR:-$DIAG.out}
TASKS="task_ids=[builtin/argmax_dim,builtin/bmm,builtin/cross_entropy,builtin/embedding,builtin/gelu_tanh,\
builtin/layer_norm,builtin/log_softmax,builtin/matmul,builtin/matmul_bt,builtin/matvec,builtin/mse_loss,\
builtin/rms_norm,builtin/sum_dim,builtin/transpose]"  # the shipped adapter's screen (docs/benchmarks/train.md)
# micro_batch_tokens halves the update's logits memory (one run alone held 61 GB; three share the
# GPU); the step's loss and gradient do not depend on the micro-batch split (ATRL-SPEC invariant 10)
COMMON="--set harness_timed_calls=20 --set harness_stage_timeouts.compile=30 \
--set harness_stage_timeouts.correctness=30 --set save_every=4 --set micro_batch_tokens=8192 \
--set solution_nll=true ${EXTRA_DIAG:-}"  # EXTRA_DIAG: more --set overrides (a CPU smoke run)
export PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}
export ATRL_GPU_LOCK_DIR=${ATRL_GPU_LOCK_DIR:-$(realpath -m "$DIAG/.gpu-locks")}  # no arm's timing overlaps another's candidates
export START=smollm2-135m-triton STEPS=${STEPS:-30} WORKERS=${WORKERS:-7}

arm() {  # arm NAME LR EXTRA...
    local name=$1 lr=$2; shift 2
    mkdir -p "$DIAG/$name"
    echo "$TASKS" > "$DIAG/$name/screen.ids"
    ROOT="$DIAG/$name" RL_LR=$lr EXTRA_RL="$COMMON $*" scripts/gpu_lora_rl.sh detach rl
}

[ $# -gt 0 ] || { echo "usage: $0 start|resume|watch|score|bring ..." >&2; exit 2; }
for phase in "$@"; do
    case "$phase" in
        start)
            for name in ${ARMS:-P S}; do
                case "$name" in
                    P) arm P 1e-4 --set advantage_control=permute ;;
                    S) arm S 2e-5 ;;
                    *) echo "ARMS names P and S only, not $name" >&2; exit 2 ;;
                esac
            done ;;
        resume)
            mkdir -p "$DIAG/R/rl"
            restore_checkpoint "$DIAG/R/rl" docs/benchmarks/train-mechanics/rl-lora-30.metrics.jsonl
            arm R 1e-4 ;;
        watch)
            WATCH_ROOTS="$(ls -d "$DIAG"/*/ | tr '\n' ' ')" ROOT="$DIAG" scripts/gpu_lora_rl.sh watch || true ;;  # a watch that fails must not stop a `bring` after it
        score)
            ids=${TASKS#task_ids=[}
            for root in "$DIAG"/*/; do
                latest=$(ls -d "$root"rl/checkpoints/step_* 2>/dev/null | sort -V | tail -1 || true)
                [ -n "$latest" ] || continue
                echo "${root%/} $(basename "$latest"): $(${PY:-python3} benchmarks/solution_likelihood.py --policy "$START" \
                    --policy "hf:$latest/model" --part train --level 1 --tasks "${ids%]}" --markdown "$root/nll.md" 2>&1 | tail -1)"
            done ;;
        bring)
            for root in "$DIAG"/*/; do
                [ -f "$root/rl/metrics.jsonl" ] || continue
                ROOT=${root%/} OUTDIR=$OUTDIR BRING_CHECKPOINT=${BRING_CHECKPOINT:-0} scripts/gpu_lora_rl.sh bring > /dev/null
            done
            ls -la "$OUTDIR" ;;
        *) echo "usage: $0 start|resume|watch|score|bring ... (phases run in the order given)" >&2; exit 2 ;;
    esac
done
