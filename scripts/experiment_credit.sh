#!/usr/bin/env bash
# The credit experiment (docs/experiments/atrl-vs-grpo.md), one command per phase:
#   scripts/experiment_credit.sh collect        tier 1: START plays SAMPLES episodes of every level-1
#                                               training task with the tier-3 agent settings    -> $ROOT/rollouts
#   scripts/experiment_credit.sh gradients      tier 1: every estimator's gradient on those rollouts (T1_ROLLOUTS:
#                                               default $ROOT/rollouts; the tier-3 start's screen, `scripts/gpu_lora_rl.sh
#                                               screen`, plays the same episodes and serves as well) -> $ROOT/gradients
#   scripts/experiment_credit.sh relay-start    tier 2's warm start: SFT on key-relay demonstrations
#                                               (configs/sft-smollm2-relay.yaml), then the relay rate of
#                                               each of its checkpoints (benchmarks/relay_rate.py, PARALLEL
#                                               at a time)                                      -> $ROOT/relay-sft
#   scripts/experiment_credit.sh relay          tier 2: every arm x spread x seed of the key-relay
#                                               environment, PARALLEL runs at a time on one GPU  -> $ROOT/<arm>-x<spread>-s<seed>
#                                               from RELAY_START, or else from the checkpoint the pre-registered
#                                               rule picks from relay-start's rates (benchmarks/relay_start.py)
#   scripts/experiment_credit.sh relay-summary  per-seed areas under the relay curve over STEPS steps, tests, plot
#                                               (runs short of STEPS are left out and named) -> $ROOT/summary
#   scripts/experiment_credit.sh relay-collect  tier 1's positive control: the relay start (RELAY_START, else the
#                                               rule's pick) plays RELAY_T1_GROUPS groups of SAMPLES episodes of each
#                                               of RELAY_T1_TASKS tasks of the key-relay environment -> $ROOT/relay-rollouts
#   scripts/experiment_credit.sh relay-gradients  every estimator's gradient on those rollouts, one group per
#                                               SAMPLES episodes of a task                     -> $ROOT/relay-gradients
#   scripts/experiment_credit.sh tier3          tier 3: every arm x seed of LoRA RL from T3_START on the real
#                                               harness (configs/experiment-credit-tier3.yaml), on the tasks
#                                               its screen kept (T3_SCREEN), T3_PARALLEL at a time -> $ROOT/t3-<arm>-s<seed>
#   scripts/experiment_credit.sh tier3-eval     the start and each run's checkpoints at T3_EVAL_STEPS on the
#                                               held-out level-1 tasks, T3_SAMPLES episodes each -> $ROOT/t3-eval/
#   scripts/experiment_credit.sh tier3-summary  training areas, zero-return later segments, held-out solved /
#                                               recovery / kept rates and the tests (benchmarks/credit_tier3_summary.py)
#                                               -> $ROOT/t3-summary
#   scripts/experiment_credit.sh t3-bring       each tier-3 run's latest checkpoint (LoRA adapter, optimizer
#                                               and RNG state) with its metrics, in 15 MB parts -> $OUTDIR/t3-<arm>-s<seed>-ckpt.partNN
#                                               (T3_BRING: only the runs named, e.g. "t3-seg-s0 t3-seg-s1"), and the
#                                               adapters of its milestones (T3_EVAL_STEPS) not evaluated yet
#                                               -> $OUTDIR/t3-<arm>-s<seed>-step<N>-milestone.partNN
#   scripts/experiment_credit.sh t3-restore     those parts, carried in (T3_PARTS: a folder; default .rlckpt,
#                                               where scripts/device_setup.sh parks them too), back into each
#                                               run: `tier3` then resumes it at that step
# Tier 3 needs more GPU time than one stretch: end a stretch with `t3-bring` (and `bring`), begin the
# next with `t3-restore` (the parts carried in .rlckpt/ over as many calls as the 64 MiB limit needs).
# Phases run in the order given (`relay-start relay relay-summary`: all of tier 2). On the GPU machine,
# which is given back ~30 s after a call ends:
#   scripts/experiment_credit.sh detach PHASE...  run the phases in the background, in a new session
#                                               (log: $ROOT/detached.log)
#   scripts/experiment_credit.sh watch          progress every minute for WATCH_S seconds, or until the
#                                               detached phases end
#   scripts/experiment_credit.sh bring          tier 2's records (rates, choice, each run's metrics, config
#                                               and log, the summary; no weights) -> $OUTDIR/credit-records.tgz,
#                                               and tier 1's per-group gradients in 15 MB parts
# e.g. one call `detach relay-start relay relay-summary` then `WATCH_S=480 OUTDIR=$OUT ... watch bring`,
# and calls issued back to back of `watch bring` alone: every call ends by bringing the records so far,
# since a machine that stops answering mid-call returns nothing of that call.
# Arms: seg (atrl, segment credit), traj (atrl, trajectory credit: same baseline and scale),
# grpo, and the negative controls seg1 / traj1 (max_segments 1: one segment, where the two credits
# coincide). Every phase resumes: finished runs are skipped, unfinished ones continue.
# Settings: ROOT (runs/credit-relay), ARMS ("seg traj"), SPREADS ("0 1.0"), SEEDS ("0 1 2 3 4 5"),
# STEPS (40), PARALLEL (4), PY (python3), TRAIN_SET (more key=value overrides for every run),
# RELAY_START (the arms' start; default: the checkpoint of $ROOT/relay-sft chosen by its relay rate),
# OMP_NUM_THREADS (CPU threads per run; default: the cores shared among PARALLEL, or T3_PARALLEL, runs),
# PYTORCH_CUDA_ALLOC_CONF (expandable_segments:True: runs that share a GPU return what they free), WATCH_S, OUTDIR;
# tier 1: START (hf:runs/sft/model), SAMPLES (8), BACKEND (cuda), COLLECT_SET (more eval --set overrides),
# T1_ROLLOUTS, T1_GROUP_SIZE (groups of that many of a task's samples; default: all of them, one group
# per task: e.g. SAMPLES=64 T1_GROUP_SIZE=8 collect gradients gives 8 groups a task),
# RELAY_T1_TASKS (39: every task of the relay config), RELAY_T1_GROUPS (1), RELAY_T1_CHUNK;
# tier 3: T3_START (hf:runs/repair/lsft/model), T3_SCREEN (runs/repair/screen.ids: the `task_ids=[...]` that
# `scripts/gpu_lora_rl.sh screen` writes), T3_ARMS ("seg traj grpo"), T3_SEEDS ("0 1 2"), T3_STEPS (40),
# T3_PARALLEL (1: on one GPU, runs side by side measured no cheaper a run-step than one alone,
# docs/experiments/atrl-vs-grpo.md), T3_EVAL_STEPS ("10 20 40"), T3_SAMPLES (8), T3_SET (more key=value overrides for every
# run, e.g. harness_memory_gib=30 so that the runs' judges share the GPU by design rather than by luck),
# T3_EVAL_SET (`atrl eval` arguments for tier3-eval, default --set generation_batch=64; later ones win,
# e.g. --max-response-tokens 8).
# CPU smoke run (tiny random model):
#   ROOT=runs/relay-cpu SEEDS=0 STEPS=2 PARALLEL=2 RELAY_START=tiny-random:0 TRAIN_SET="bf16=false \
#     agent.context_budget=1200 agent.max_response_tokens=6 agent.summary_tokens=6 group_size=2 tasks_per_step=2 \
#     agent.platform=interpreter" scripts/experiment_credit.sh relay
#   ROOT=runs/relay-cpu SFT_SET="--set model=tiny-random:0 --set bf16=false" RELAY_RATE_SET="--set bf16=false" \
#     scripts/experiment_credit.sh relay-start        (under a minute; a tiny random model relays nothing)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${ROOT:-runs/credit-relay}
ARMS=${ARMS:-seg traj}
SPREADS=${SPREADS:-0 1.0}
SEEDS=${SEEDS:-0 1 2 3 4 5}
STEPS=${STEPS:-40}
PARALLEL=${PARALLEL:-4}  # a run's update peaks at 20-30 GiB on a GPU: 4 fit an H200, 12 did not
PY=${PY:-python3}
TRAIN_SET=${TRAIN_SET:-}
CONFIG=configs/experiment-credit-relay.yaml
START=${START:-hf:runs/sft/model}
RELAY_START=${RELAY_START:-}
SAMPLES=${SAMPLES:-8}
RELAY_T1_TASKS=${RELAY_T1_TASKS:-39}
RELAY_T1_GROUPS=${RELAY_T1_GROUPS:-1}  # groups per task (more groups than the config's 39 tasks)
RELAY_T1_CHUNK=${RELAY_T1_CHUNK:-}  # tasks played at a time (default: all)
T1_ROLLOUTS=${T1_ROLLOUTS:-$ROOT/rollouts}
BACKEND=${BACKEND:-cuda}
COLLECT_SET=${COLLECT_SET:-}
SFT_SET=${SFT_SET:-}  # more --set overrides of the warm start's SFT (e.g. "--set bf16=false" on a CPU)
RELAY_RATE_SET=${RELAY_RATE_SET:-}  # and of its relay-rate measurement (the same on a CPU)
T3_START=${T3_START:-hf:runs/repair/lsft/model}
T3_SCREEN=${T3_SCREEN:-runs/repair/screen.ids}
T3_ARMS=${T3_ARMS:-seg traj grpo}
T3_SEEDS=${T3_SEEDS:-0 1 2}
T3_STEPS=${T3_STEPS:-40}
T3_PARALLEL=${T3_PARALLEL:-1}
T3_EVAL_STEPS=${T3_EVAL_STEPS:-10 20 40}
T3_SAMPLES=${T3_SAMPLES:-8}
T3_SET=${T3_SET:-}
T3_EVAL_SET=${T3_EVAL_SET:---set generation_batch=64}  # 128 episodes (16 tasks x 8) decode 64 at a time: a GPU the runs share
# the agent of tier 1's collection, tier 3's screen and held-out evaluations: configs/train-compaction-gpu.yaml's
EVAL_AGENT=(--kb --max-turns 2 --turns-per-segment 1 --context-budget 4608 --max-response-tokens 1024
    --temperature 1.0 --set top_p=1.0 --set max_segments=2 --set summary_tokens=128 --set kb_tokens=400)
mkdir -p "$ROOT"

trap 'status=$?; kill $(jobs -p) 2>/dev/null || true; exit $status' EXIT
trap 'exit 130' INT TERM

arm_set() {  # the overrides that make an arm
    case "$1" in
        seg) echo "estimator=atrl credit=segment" ;;
        traj) echo "estimator=atrl credit=trajectory" ;;
        grpo) echo "estimator=grpo credit=trajectory" ;;
        seg1) echo "estimator=atrl credit=segment agent.max_segments=1" ;;
        traj1) echo "estimator=atrl credit=trajectory agent.max_segments=1" ;;
        *) echo "unknown arm $1 (seg, traj, grpo, seg1, traj1)" >&2; return 2 ;;
    esac
}

share_one_gpu() {  # share_one_gpu N: N runs side by side on this machine's cores and its one GPU
    export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( $(nproc) / $1 > 0 ? $(nproc) / $1 : 1 ))}
    export PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}
}

last_step() {  # "; step N: S s (generation, judging, update) ..." from a run's last metrics record
    [ -s "$1/metrics.jsonl" ] || return 0
    $PY - "$1/metrics.jsonl" <<'PYEOF' 2>/dev/null || true
import json, sys
m = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
s = lambda k: f"{m.get(k, 0):.0f}"
peaks = "".join(f", {k} peak {m['gpu_peak_%s_gib' % k]:.1f} GiB" for k in ("rollout", "update") if f"gpu_peak_{k}_gib" in m)
print(f"; step {m['step']}: {s('time_step_s')} s (generation {s('time_generation_s')}, judging "
      f"{s('time_evaluation_s')}, update {s('time_update_s')}){peaks}", end="")
PYEOF
}

done_steps() {  # steps recorded in a run's metrics (a run without checkpoints restarts from step 0)
    local n=0
    [ -f "$1/metrics.jsonl" ] && n=$(grep -c . "$1/metrics.jsonl" || true)
    echo "${n:-0}"
}

one_run() {  # one_run ARM SPREAD SEED
    local run="$ROOT/$1-x$2-s$3" sets=() kv
    for kv in $(arm_set "$1") "key_relay_spread=$2" "seed=$3" "steps=$STEPS" ${RELAY_START:+model=$RELAY_START} $TRAIN_SET; do
        sets+=(--set "$kv")
    done
    $PY -m atrl train --config "$CONFIG" "${sets[@]}" --out "$run" >> "$run.log" 2>&1 \
        || { echo "[relay] FAILED $run (see $run.log)"; tail -5 "$run.log"; return 1; }
    echo "[relay] done $run"
}

relay_start() {  # the warm start and, per checkpoint, its relay rate (the dose is chosen from these)
    local sft="$ROOT/relay-sft" model
    [ -f "$sft/model/config.json" ] || $PY -m atrl sft --config configs/sft-smollm2-relay.yaml $SFT_SET --out "$sft"
    local running=0 failed=0
    for model in "$sft"/checkpoints/step_*/model "$sft/model"; do  # PARALLEL measurements at a time
        [ -f "${model%/model}/relay.json" ] && continue
        $PY benchmarks/relay_rate.py --policy "hf:$model" --tasks 4 --samples 8 ${RELAY_RATE_SET:-} \
            --json "${model%/model}/relay.json" > "${model%/model}/relay.log" 2>&1 &
        running=$((running + 1))
        if [ "$running" -ge "$PARALLEL" ]; then wait -n || failed=1; running=$((running - 1)); fi
    done
    while [ "$running" -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
    grep -h "key relayed" "$sft"/checkpoints/step_*/relay.log "$sft/relay.log" 2>/dev/null || true
    return $failed
}

choose_relay_start() {  # RELAY_START, else the pre-registered rule on relay-start's rates (it says why when it cannot)
    if [ -z "$RELAY_START" ]; then
        RELAY_START=$($PY benchmarks/relay_start.py --sft "$ROOT/relay-sft") || return 2
        echo "[$1] start chosen by its relay rate: $RELAY_START"
    fi
}

relay_collect() {  # tier 1 on the key relay: fixed rollouts of the arms' start, each task's episodes one group
    local out="$ROOT/relay-rollouts"
    [ -f "$out/trajectories.jsonl" ] && { echo "[relay-collect] finished: $out"; return 0; }
    choose_relay_start relay-collect || return 2
    mkdir -p "$out"
    $PY benchmarks/relay_rate.py --policy "$RELAY_START" --tasks "$RELAY_T1_TASKS" \
        --samples $((SAMPLES * RELAY_T1_GROUPS)) ${RELAY_T1_CHUNK:+--chunk "$RELAY_T1_CHUNK"} \
        ${RELAY_RATE_SET:-} --json "$out/rates.json" --trajectories "$out"
}

relay_gradients() {
    choose_relay_start relay-gradients || return 2
    $PY benchmarks/credit_gradients.py --run "$ROOT/relay-rollouts" --model "$RELAY_START" --arms seg,traj,grpo \
        --group-size "$SAMPLES" --out "$ROOT/relay-gradients"
}

relay() {
    choose_relay_start relay || return 2
    share_one_gpu "$PARALLEL"
    for arm in $ARMS; do arm_set "$arm" > /dev/null; done  # unknown arms fail before anything runs
    local failed=0 running=0
    for seed in $SEEDS; do for spread in $SPREADS; do for arm in $ARMS; do
        local run="$ROOT/$arm-x$spread-s$seed"
        if [ "$(done_steps "$run")" -ge "$STEPS" ]; then echo "[relay] finished: $run"; continue; fi
        echo "[relay] $run"
        one_run "$arm" "$spread" "$seed" &
        running=$((running + 1))
        if [ "$running" -ge "$PARALLEL" ]; then wait -n || failed=1; running=$((running - 1)); fi
    done; done; done
    while [ "$running" -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
    return $failed
}

collect() {  # the agent settings of configs/train-compaction-gpu.yaml
    local sets=() kv
    for kv in $COLLECT_SET; do sets+=(--set "$kv"); done
    $PY -m atrl eval --split configs/split-builtin.yaml --split-part train --level 1 --policy "$START" \
        --samples "$SAMPLES" --backend "$BACKEND" "${EVAL_AGENT[@]}" "${sets[@]}" --out "$ROOT/rollouts"
}

t3_run() {  # t3_run ARM SEED
    local run="$ROOT/t3-$1-s$2" sets=() kv
    for kv in $(arm_set "$1") "seed=$2" "steps=$T3_STEPS" "model=$T3_START" "backend=$BACKEND" $T3_SET; do
        sets+=(--set "$kv")
    done
    $PY -m atrl train --config configs/experiment-credit-tier3.yaml --set "$(cat "$T3_SCREEN")" "${sets[@]}" \
        --out "$run" >> "$run.log" 2>&1 || { echo "[tier3] FAILED $run (see $run.log)"; tail -5 "$run.log"; return 1; }
    echo "[tier3] done $run"
}

tier3() {
    [ -f "$T3_SCREEN" ] || { echo "no $T3_SCREEN: screen the start first (ROOT=runs/repair" \
        "SFT_CONFIG=configs/sft-smollm2-lora-repair.yaml scripts/gpu_lora_rl.sh sft screen) or set T3_SCREEN" >&2; return 2; }
    for arm in $T3_ARMS; do arm_set "$arm" > /dev/null; done
    export ATRL_GPU_LOCK_DIR=${ATRL_GPU_LOCK_DIR:-$ROOT/.gpu-locks}  # the runs' judges never time side by side
    share_one_gpu "$T3_PARALLEL"
    local failed=0 running=0 seed arm
    for seed in $T3_SEEDS; do for arm in $T3_ARMS; do
        local run="$ROOT/t3-$arm-s$seed"
        if [ "$(done_steps "$run")" -ge "$T3_STEPS" ]; then echo "[tier3] finished: $run"; continue; fi
        echo "[tier3] $run"
        t3_run "$arm" "$seed" &
        running=$((running + 1))
        if [ "$running" -ge "$T3_PARALLEL" ]; then wait -n || failed=1; running=$((running - 1)); fi
    done; done
    while [ "$running" -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
    return $failed
}

t3_eval_one() {  # t3_eval_one NAME POLICY
    local out="$ROOT/t3-eval/$1"
    [ -f "$out/metrics.json" ] && { echo "[tier3-eval] finished: $out"; return 0; }
    $PY -m atrl eval --split configs/split-builtin.yaml --split-part heldout --level 1 --policy "$2" \
        --samples "$T3_SAMPLES" --backend "$BACKEND" "${EVAL_AGENT[@]}" $T3_EVAL_SET --out "$out" > "$out.log" 2>&1 \
        || { echo "[tier3-eval] FAILED $out (see $out.log)"; tail -5 "$out.log"; return 1; }
    echo "[tier3-eval] done $out"
}

tier3_eval() {  # every checkpoint that exists; the others are named (evaluate again once the runs have them)
    mkdir -p "$ROOT/t3-eval"
    export ATRL_GPU_LOCK_DIR=${ATRL_GPU_LOCK_DIR:-$ROOT/.gpu-locks}
    share_one_gpu "$T3_PARALLEL"
    local names=(start) policies=("$T3_START") seed arm step model
    for seed in $T3_SEEDS; do for arm in $T3_ARMS; do for step in $T3_EVAL_STEPS; do
        model="$ROOT/t3-$arm-s$seed/checkpoints/$(printf 'step_%06d' "$step")/model"
        if [ -d "$model" ]; then names+=("$arm-s$seed-step$step"); policies+=("hf:$model")
        else echo "[tier3-eval] not yet: $model"; fi
    done; done; done
    local failed=0 running=0 i
    for i in "${!names[@]}"; do
        t3_eval_one "${names[$i]}" "${policies[$i]}" &
        running=$((running + 1))
        if [ "$running" -ge "$T3_PARALLEL" ]; then wait -n || failed=1; running=$((running - 1)); fi
    done
    while [ "$running" -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
    return $failed
}

t3_bring() {
    local outdir=${OUTDIR:-$ROOT.out} run latest name step milestone
    mkdir -p "$outdir"
    for run in "$ROOT"/t3-*-s*; do
        [ -d "$run" ] || continue
        # T3_BRING: the runs to bring (names; default all): a device call returns at most 8 files, 64 MiB
        if [ -n "${T3_BRING:-}" ] && [[ " $T3_BRING " != *" $(basename "$run") "* ]]; then continue; fi
        latest=$(cat "$run/checkpoints/latest" 2>/dev/null || true)  # the newest complete checkpoint
        [ -n "$latest" ] || continue
        name=$(basename "$run")
        rm -f "$outdir/$name"-ckpt.part*
        (cd "$run" && tar cf - "checkpoints/$latest" metrics.jsonl) | split -b 15000000 -d - "$outdir/$name-ckpt.part"
        echo "[t3-bring] $name $latest: $(ls "$outdir/$name"-ckpt.part* | wc -l) parts"
        # milestones not evaluated yet exist only here: their adapters come too (evaluated in a later stretch)
        for step in $T3_EVAL_STEPS; do
            milestone=checkpoints/$(printf 'step_%06d' "$step")
            [ -d "$run/$milestone/model" ] && [ "$milestone" != "checkpoints/$latest" ] || continue
            [ -f "$ROOT/t3-eval/${name#t3-}-step$step/metrics.json" ] && continue
            rm -f "$outdir/$name-step$step-milestone.part"*
            (cd "$run" && tar cf - "$milestone/model") | split -b 15000000 -d - "$outdir/$name-step$step-milestone.part"
            echo "[t3-bring] $name step $step (not evaluated yet): $(ls "$outdir/$name-step$step-milestone.part"* | wc -l) parts"
        done
    done
}

t3_restore() {
    local parts=${T3_PARTS:-.rlckpt} prefix name run step
    for prefix in $(ls "$parts"/t3-*-ckpt.part* 2>/dev/null | sed 's/-ckpt\.part[0-9]*$//' | sort -u); do
        name=$(basename "$prefix") run="$ROOT/$(basename "$prefix")"
        step=$(cat "$prefix"-ckpt.part* | tar tf - | awk -F/ '$1 == "checkpoints" {print $2; exit}')
        [ -n "$step" ] || { echo "[t3-restore] $name: its parts hold no checkpoint (all parts carried?)" >&2; return 1; }
        if [ -d "$run/checkpoints/$step" ]; then echo "[t3-restore] $name has $step already"; continue; fi
        mkdir -p "$run"
        cat "$prefix"-ckpt.part* | tar xf - -C "$run" || return 1
        echo "$step" > "$run/checkpoints/latest"  # the marker the trainer resumes from
        echo "[t3-restore] $name <- $step ($(grep -c . "$run/metrics.jsonl") steps of metrics)"
    done
    for prefix in $(ls "$parts"/t3-*-milestone.part* 2>/dev/null | sed 's/\.part[0-9]*$//' | sort -u); do
        name=$(basename "$prefix" | sed 's/-step[0-9]*-milestone$//')
        mkdir -p "$ROOT/$name"
        cat "$prefix".part* | tar xf - -C "$ROOT/$name" || return 1
        echo "[t3-restore] $name <- $(basename "$prefix" | sed 's/.*-\(step[0-9]*\)-milestone$/\1/') (a milestone to evaluate)"
    done
}

watch() {  # finished runs and the phases' last line, every minute, until WATCH_S has passed or the phases ended
    local until=$((SECONDS + ${WATCH_S:-540}))
    while [ "$SECONDS" -lt "$until" ]; do
        local finished=0 run
        for run in "$ROOT"/*-x*-s*/; do
            [ -d "$run" ] && [ "$(done_steps "$run")" -ge "$STEPS" ] && finished=$((finished + 1))
        done
        # the phases' own lines ("[tier3] ..."), not the runs' progress lines that share the log
        echo "[watch] $(date +%H:%M:%S) finished runs: $finished; $(grep -a '^\[' "$ROOT/detached.log" 2>/dev/null | tail -1)"
        for run in "$ROOT"/t3-*-s*/; do  # tier 3: each run's steps so far and what its last one cost
            [ -d "$run" ] && echo "[watch]   $(basename "$run"): $(done_steps "$run") of $T3_STEPS steps$(last_step "$run")"
        done
        kill -0 "$(cat "$ROOT/detached.pid" 2>/dev/null)" 2>/dev/null || { echo "[watch] the detached phases have ended"; tail -5 "$ROOT/detached.log" 2>/dev/null || true; return 0; }
        local left=$((until - SECONDS))
        sleep $((left > 60 ? 60 : (left > 0 ? left : 0)))
    done
}

bring() {  # the records, no weights: small enough to come back from the GPU machine and to commit
    local outdir=${OUTDIR:-$ROOT.out}
    mkdir -p "$outdir"
    (cd "$ROOT" && find . -path '*/trajectories' -prune -o \( -name '*.json' -o \
        -name '*.jsonl' -o -name '*.yaml' -o -name '*.log' -o -name '*.md' -o -name '*.png' \) -print \
        | grep -v -e '/model/' -e 'sft_data.jsonl' -e 'trajectories.jsonl' | tar czf - -T -) \
        > "$outdir/credit-records.tgz"
    echo "[bring] $(tar tzf "$outdir/credit-records.tgz" | wc -l) files -> $outdir/credit-records.tgz"
    # tier 1's per-group gradients (tables recomputed from them on a CPU: benchmarks/credit_gradients.py
    # --from-gradients), in parts of 15 MB (46 MB at 312 groups); join with `cat NAME.partNN > gradients.pt`
    local pt name
    for pt in "$ROOT"/relay-gradients/gradients.pt "$ROOT"/gradients/gradients.pt; do
        [ -f "$pt" ] || continue
        name=$(basename "$(dirname "$pt")")-gradients.pt
        rm -f "$outdir/$name".part*
        split -b 15000000 -d "$pt" "$outdir/$name.part"
        echo "[bring] $pt -> $(ls "$outdir/$name".part* | wc -l) parts ($outdir/$name.partNN)"
    done
}

[ $# -gt 0 ] || { sed -n '2,/^set -euo/{/^set -euo/!p}' "$0"; exit 2; }
if [ "$1" = detach ]; then
    shift
    trap - EXIT  # the phases outlive this call
    setsid nohup "$0" "$@" > "$ROOT/detached.log" 2>&1 < /dev/null &
    echo $! > "$ROOT/detached.pid"
    echo "[detach] $* (pid $(cat "$ROOT/detached.pid"), log $ROOT/detached.log)"
    exit 0
fi
for phase in "$@"; do
    case "$phase" in
        collect) collect ;;
        gradients) $PY benchmarks/credit_gradients.py --run "$T1_ROLLOUTS" --model "$START" \
            ${T1_GROUP_SIZE:+--group-size "$T1_GROUP_SIZE"} --out "$ROOT/gradients" ;;
        relay-start) relay_start ;;
        relay) relay ;;
        relay-collect) relay_collect ;;
        relay-gradients) relay_gradients ;;
        relay-summary) $PY benchmarks/credit_relay_summary.py --runs "$ROOT" --out "$ROOT/summary" --steps "$STEPS" \
            --complete-only ;;
        tier3) tier3 ;;
        tier3-eval) tier3_eval ;;
        t3-bring) t3_bring ;;
        t3-restore) t3_restore ;;
        tier3-summary) $PY benchmarks/credit_tier3_summary.py --runs "$ROOT" --steps "$T3_STEPS" --out "$ROOT/t3-summary" ;;
        watch) watch ;;
        bring) bring ;;
        *) sed -n '2,/^set -euo/{/^set -euo/!p}' "$0"; exit 2 ;;
    esac
done
