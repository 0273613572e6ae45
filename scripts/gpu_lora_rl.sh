#!/usr/bin/env bash
# LoRA warm start, task screening and 30+ steps of LoRA RL on one GPU (docs/benchmarks/train.md,
# "RL that learns"; the shipped default adapter, docs/default-adapter.md):
#   scripts/gpu_lora_rl.sh sft      LoRA SFT ($SFT_CONFIG)                              -> $ROOT/lsft
#   scripts/gpu_lora_rl.sh screen   the SFT start on the level-1 training tasks, SCREEN_SAMPLES
#                                   episodes each with the RL agent settings; keeps tasks solved in
#                                   10-70% of episodes                                  -> $ROOT/screen
#   scripts/gpu_lora_rl.sh branch   the screen's second turns re-sampled from each episode's own context
#                                   (its summary, its feedback): BRANCH_AFTER_FAILED (8) samples after a
#                                   failed first turn, BRANCH_AFTER_OK (1) after a right one, judged
#                                                                                       -> $ROOT/branch
#   scripts/gpu_lora_rl.sh sft2     START fine-tuned ($SFT2_CONFIG) on its own right second turns: the
#                                   branches' and the screen's (rejection sampling) -> $ROOT/lsft2
#   scripts/gpu_lora_rl.sh screen2  the screen again, of $ROOT/lsft2/model            -> $ROOT/screen2
#   scripts/gpu_lora_rl.sh rl       STEPS steps of LoRA RL on the kept tasks            -> $ROOT/rl
#   scripts/gpu_lora_rl.sh all      the three in order
#   scripts/gpu_lora_rl.sh collect  metrics, configs, logs, both adapters (bf16) and the screens' and
#                                   branches' trajectories (rollouts.txz)            -> $OUTDIR
#   scripts/gpu_lora_rl.sh detach PHASE...  (first) run the phases in the background, in a new session, so
#                                   that they outlive the device call (back-to-back calls keep the
#                                   machine); log in $ROOT/detached.log
#   scripts/gpu_lora_rl.sh watch    print each new step's metrics until WATCH_S seconds have passed
#                                   or the detached runs have ended (WATCH_ROOTS: several run folders)
#   scripts/gpu_lora_rl.sh bring    the RL run's latest checkpoint in parts of 15 MB and its records
#                                   (metrics, config, log, trajectories) -> $OUTDIR/NAME-* (NAME: the
#                                   last part of ROOT; to resume in a later stretch: carry the parts
#                                   in .rlckpt/, scripts/device_setup.sh parks them)
# Several phases may be named in one call (`screen rl`); they run in order, stopping at a failure.
# Every phase resumes or is skipped when done. Settings: ROOT (runs/gpu-lora), STEPS (30),
# SCREEN_SAMPLES (8), RL_LR (1e-4), WORKERS (10), BACKEND (cuda), PY (python3), OUTDIR ($ROOT/out),
# SFT_CONFIG (configs/sft-smollm2-lora.yaml; configs/sft-smollm2-lora-repair.yaml adds second-turn
# examples: screen's report then says how often the second turn repairs and keeps);
# START (hf:$ROOT/lsft/model): the policy that screen and rl start from; an adapter
# (e.g. smollm2-135m-triton, the shipped default) is continued by rl rather than stacked on;
# EXTRA_SFT, EXTRA_SCREEN, EXTRA_RL: more arguments for each phase's command (a CPU smoke run).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${ROOT:-runs/gpu-lora}
STEPS=${STEPS:-30}
SCREEN_SAMPLES=${SCREEN_SAMPLES:-8}
RL_LR=${RL_LR:-1e-4}
BACKEND=${BACKEND:-cuda}
WORKERS=${WORKERS:-10}
PY=${PY:-python3}
OUTDIR=${OUTDIR:-$ROOT/out}
START=${START:-hf:$ROOT/lsft/model}
CONFIG=configs/train-compaction-gpu.yaml
SFT_CONFIG=${SFT_CONFIG:-configs/sft-smollm2-lora.yaml}
SFT2_CONFIG=${SFT2_CONFIG:-configs/sft-smollm2-lora-own-turns.yaml}
BRANCH_AFTER_FAILED=${BRANCH_AFTER_FAILED:-8}
BRANCH_AFTER_OK=${BRANCH_AFTER_OK:-1}
mkdir -p "$ROOT"
export ATRL_GPU_LOCK_DIR=${ATRL_GPU_LOCK_DIR:-$ROOT/.gpu-locks}

sft() {
    [ -f "$ROOT/lsft/model/config.json" ] && { echo "[sft] done"; return 0; }
    echo "[sft] -> $ROOT/lsft"
    $PY -m atrl sft --config "$SFT_CONFIG" --out "$ROOT/lsft" ${EXTRA_SFT:-} > "$ROOT/lsft.log" 2>&1 \
        || { tail -20 "$ROOT/lsft.log"; return 1; }
}

screen_of() {  # START NAME: the policy on the RL run's agent settings (configs/train-compaction-gpu.yaml),
              # SCREEN_SAMPLES episodes per task -> $ROOT/NAME, the kept ids in $ROOT/NAME.ids
    local start=$1 name=$2
    [ -f "$ROOT/$name.ids" ] && { echo "[$name] done: $(cat "$ROOT/$name.ids")"; return 0; }
    echo "[$name] -> $ROOT/$name"
    $PY -m atrl eval --split configs/split-builtin.yaml --split-part train --level 1 \
        --policy "$start" --samples "$SCREEN_SAMPLES" --backend "$BACKEND" --kb \
        --max-turns 2 --turns-per-segment 1 --context-budget 4608 --max-response-tokens 1024 \
        --temperature 1.0 --set top_p=1.0 --set max_segments=2 --set summary_tokens=128 --set kb_tokens=400 \
        --set workers="$WORKERS" ${EXTRA_SCREEN:-} --out "$ROOT/$name" > "$ROOT/$name.log" 2>&1 || { tail -20 "$ROOT/$name.log"; return 1; }
    local ids
    ids=$($PY -m atrl tasks screen "$ROOT/$name" --low 0.1 --high 0.7 2>>"$ROOT/$name.log" | tail -1)
    if [ "$ids" = "task_ids=[]" ]; then  # nothing in the band: every task with some signal
        ids=$($PY -m atrl tasks screen "$ROOT/$name" --low 0.01 --high 0.99 2>>"$ROOT/$name.log" | tail -1)
    fi
    [ "$ids" = "task_ids=[]" ] && ids="task_ids=[]"  # none solved at all: the whole level-1 training part
    echo "$ids" > "$ROOT/$name.ids"
    echo "[$name] $ids"
}

screen() { screen_of "$START" screen; }

branch() {  # the screen's second turns re-sampled from each episode's own context, judged -> $ROOT/branch
    [ -f "$ROOT/branch.done" ] && { echo "[branch] done"; return 0; }
    echo "[branch] -> $ROOT/branch"
    $PY -m atrl branch "$ROOT/screen" --policy "$START" --out "$ROOT/branch" --backend "$BACKEND" \
        --workers "$WORKERS" --samples-after-failed "$BRANCH_AFTER_FAILED" --samples-after-ok "$BRANCH_AFTER_OK" \
        ${EXTRA_BRANCH:-} > "$ROOT/branch.log" 2>&1 || { tail -20 "$ROOT/branch.log"; return 1; }
    touch "$ROOT/branch.done"
    tail -12 "$ROOT/branch.log"
}

sft2() {  # START fine-tuned on its own right later turns (the branches' and the screen's) -> $ROOT/lsft2
    [ -f "$ROOT/lsft2/model/config.json" ] && { echo "[sft2] done"; return 0; }
    echo "[sft2] -> $ROOT/lsft2"
    $PY -m atrl sft --config "$SFT2_CONFIG" --set "model=$START" --set "trajectories=[$ROOT/branch,$ROOT/screen]" \
        --out "$ROOT/lsft2" ${EXTRA_SFT2:-} > "$ROOT/lsft2.log" 2>&1 || { tail -20 "$ROOT/lsft2.log"; return 1; }
    grep -h '^examples' "$ROOT/lsft2.log" || true
}

screen2() { screen_of "hf:$ROOT/lsft2/model" screen2; }

rl() {
    echo "[rl] $STEPS steps -> $ROOT/rl"
    $PY -m atrl train --config "$CONFIG" --set "model=$START" --set "$(cat "$ROOT/screen.ids")" \
        --set lora=true --set lora_r=16 --set lora_alpha=32 --set "lr=$RL_LR" --set "steps=$STEPS" \
        --set harness_workers="$WORKERS" --set "backend=$BACKEND" ${EXTRA_RL:-} --out "$ROOT/rl" > "$ROOT/rl.log" 2>&1 || { tail -20 "$ROOT/rl.log"; return 1; }
}

collect() {  # adapters as bf16 safetensors (an fp32 rank-16 adapter is over 16 MiB)
    mkdir -p "$OUTDIR"
    for run in lsft lsft2 rl; do
        local adapter
        adapter=$(ls -d "$ROOT/$run"/checkpoints/*/model 2>/dev/null | sort -V | tail -1 || true)
        [ -n "$adapter" ] && $PY - "$adapter" "$OUTDIR/$run-adapter.tgz" <<'PYEOF'
import sys, tarfile, tempfile, shutil, pathlib
import torch
from safetensors.torch import load_file, save_file
src, dst = pathlib.Path(sys.argv[1]), sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    for f in src.iterdir():
        if f.name == "adapter_model.safetensors":
            save_file({k: v.to(torch.bfloat16).contiguous() for k, v in load_file(f).items()}, f"{tmp}/{f.name}")
        elif f.is_file() and f.stat().st_size < 1_000_000:
            shutil.copy(f, tmp)
    with tarfile.open(dst, "w:gz") as tar:
        tar.add(tmp, arcname="adapter")
PYEOF
    done
    (cd "$ROOT" && tar czf "$OUTDIR/records.tgz" --ignore-failed-read $(ls -d *.log screen*.ids */metrics.jsonl */config.yaml screen*/episodes.jsonl screen*/*.md branch/branches.jsonl 2>/dev/null))
    # the rollouts a later stage is built from (token ids: ~25 MB a screen, ~1 MB xz-compressed)
    local rollouts
    rollouts=$(cd "$ROOT" && ls screen*/trajectories.jsonl branch/trajectories.jsonl 2>/dev/null || true)
    [ -n "$rollouts" ] && (cd "$ROOT" && tar cJf "$OUTDIR/rollouts.txz" $rollouts)
    ls -la "$OUTDIR"
}

detach() {
    setsid nohup "$0" "$@" > "$ROOT/detached.log" 2>&1 < /dev/null &
    echo $! > "$ROOT/detached.pid"
    echo "[detach] $* (pid $(cat "$ROOT/detached.pid"))"
}

watch() {  # progress of the detached runs of $ROOT (or of each folder in WATCH_ROOTS): one line per finished step
    local until=$((SECONDS + ${WATCH_S:-500})) roots=(${WATCH_ROOTS:-$ROOT})
    declare -A seen
    while [ $SECONDS -lt $until ]; do
        local running=0 root lines
        for root in "${roots[@]}"; do
            lines=$(cat "$root/rl/metrics.jsonl" 2>/dev/null | wc -l || true)
            if [ "$lines" -gt "${seen[$root]:-0}" ]; then
                tail -n $((lines - ${seen[$root]:-0})) "$root/rl/metrics.jsonl" | ROOT_NAME="$root" $PY -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    keys = ("step", "reward_mean", "episode_solved_rate", "entropy", "truncated_responses", "time_generation_s",
            "time_evaluation_s", "time_update_s", "judge_device_wait_s", "judge_cached_fraction")
    print(os.environ["ROOT_NAME"], " ".join(f"{k}={m[k]:.3g}" if isinstance(m.get(k), float) else f"{k}={m.get(k)}"
                                            for k in keys), flush=True)'
                seen[$root]=$lines
            fi
            kill -0 "$(cat "$root/detached.pid" 2>/dev/null)" 2>/dev/null && running=$((running + 1))
        done
        [ "$running" -eq 0 ] && { echo "[watch] no detached run is running"; for root in "${roots[@]}"; do tail -3 "$root/detached.log"; done; return 0; }
        sleep 5
    done
}

bring() {  # the latest checkpoint in 15 MB parts (BRING_CHECKPOINT=0: none) and records.tgz (metrics,
           # config, log, the step trajectories while they fit in 15 MB) -> $OUTDIR
    mkdir -p "$OUTDIR"
    local latest name
    name=$(basename "$ROOT")
    latest=$(ls -d "$ROOT"/rl/checkpoints/step_* 2>/dev/null | sort -V | tail -1 || true)
    if [ -n "$latest" ] && [ "${BRING_CHECKPOINT:-1}" != 0 ]; then
        (cd "$(dirname "$latest")" && tar cf - "$(basename "$latest")") | split -b 15000000 -d - "$OUTDIR/$name-ckpt.part"
        echo "[bring] $(basename "$latest") in $(ls "$OUTDIR/$name"-ckpt.part* | wc -l) parts"
    fi
    local items=(rl/metrics.jsonl rl/config.yaml rl.log nll.md)
    (cd "$ROOT" && tar czf "$OUTDIR/$name-records.tgz" --ignore-failed-read "${items[@]}" rl/trajectories 2>/dev/null)
    if [ "$(stat -c %s "$OUTDIR/$name-records.tgz")" -gt 15000000 ]; then
        echo "[bring] the trajectories do not fit in 15 MB: records without them"
        (cd "$ROOT" && tar czf "$OUTDIR/$name-records.tgz" --ignore-failed-read "${items[@]}" 2>/dev/null)
    fi
    ls -la "$OUTDIR"
}

if [ "${1:-}" = detach ]; then
    shift
    detach "$@"
    exit 0
fi
for phase in "${@:-all}"; do
    case "$phase" in
        sft) sft ;;
        screen) screen ;;
        branch) branch ;;
        sft2) sft2 ;;
        screen2) screen2 ;;
        rl) rl ;;
        collect) collect ;;
        watch) watch ;;
        bring) bring ;;
        all) sft && screen && rl ;;
        *) echo "usage: $0 sft|screen|branch|sft2|screen2|rl|all|collect|detach PHASE...|watch|bring ..." >&2; exit 2 ;;
    esac
done
