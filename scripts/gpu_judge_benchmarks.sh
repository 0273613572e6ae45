#!/usr/bin/env bash
# The judge's CUDA runs behind docs/benchmarks/ (KernelBench set and parity, memory admission,
# feedback diagnosis, adversarial suite, Ray harness), on one machine with a CUDA GPU:
#   scripts/gpu_judge_benchmarks.sh set          KernelBench candidate set at default sizes   -> $RESULTS/kernelbench-set-cuda.{md,json}
#   scripts/gpu_judge_benchmarks.sh throughput   correct level-1 candidates only: evaluations per minute -> $RESULTS/kernelbench-throughput-cuda.md
#   scripts/gpu_judge_benchmarks.sh admission    benchmarks/memory_admission.py --backend cuda -> $RESULTS/memory-admission-cuda.{md,json}
#   scripts/gpu_judge_benchmarks.sh feedback     benchmarks/feedback_diagnosis.py --backend cuda -> $RESULTS/feedback-cuda.*
#   scripts/gpu_judge_benchmarks.sh adversarial  tests/adversarial/runner.py --backend cuda      -> $RESULTS/adversarial-cuda.md
#   scripts/gpu_judge_benchmarks.sh parity       benchmarks/kernelbench_parity.py (ours from the set run when it exists,
#                                                else ours first; then theirs; resumes) -> $RESULTS/kernelbench-parity/
#   scripts/gpu_judge_benchmarks.sh parity-alone each side alone, one candidate at a time: the harness first
#                                                (--ours-first), then KernelBench's evaluator (--jobs 1); the
#                                                per-candidate wall-time ratio without contention
#                                                -> $RESULTS/kernelbench-parity-alone/
#   scripts/gpu_judge_benchmarks.sh ray          benchmarks/ray_harness.py --backend cuda        -> $RESULTS/ray-harness-h200.{md,json}
#   scripts/gpu_judge_benchmarks.sh gputests     pytest -m gpu tests/harness tests/backends  -> $RESULTS/gpu-tests.log
#   scripts/gpu_judge_benchmarks.sh builtin      the builtin suite's reference solutions at the full preset
#                                                (atrl eval --policy reference)   -> $RESULTS/evalref/ (report.md, metrics.json)
#   scripts/gpu_judge_benchmarks.sh compare      benchmarks/compare_speed.py on 19_ReLU's output size, PyTorch vs fused
#                                                -> $RESULTS/compare-speed-cuda.md
#   scripts/gpu_judge_benchmarks.sh small        feedback, then adversarial (small presets: little GPU memory)
#   scripts/gpu_judge_benchmarks.sh large        set, throughput, admission (KernelBench sizes)
# Settings: RESULTS (runs/gpu-judge; not OUT, which the GPU machine sets to its return folder),
# KERNELBENCH (the root of a KernelBench checkout;
# default $ATRL_KERNELBENCH), PARITY_JOBS (2: KernelBench evaluations at once), PARITY_ONLY (comma-separated
# candidate names for the parity phases; then no wrong variants are added), WORKERS (4), PY (python3), MEMORY_GIB (GiB of the GPU
# this invocation's judge admits jobs against; default its free memory; set it when two invocations
# share one GPU, e.g. 100 for the KernelBench-size phases beside 30 for the small ones).
set -uo pipefail
cd "$(dirname "$0")/.."
RESULTS=${RESULTS:-runs/gpu-judge}
KERNELBENCH=${KERNELBENCH:-${ATRL_KERNELBENCH:-}}
PARITY_JOBS=${PARITY_JOBS:-2}
WORKERS=${WORKERS:-4}
PY=${PY:-python3}
MEMORY=()
[ -n "${MEMORY_GIB:-}" ] && MEMORY=(--memory-gib "$MEMORY_GIB")
ONLY=()
[ -n "${PARITY_ONLY:-}" ] && ONLY=(--only "$PARITY_ONLY" --wrong-variants 0)
mkdir -p "$RESULTS"

need_kernelbench() {
    [ -n "$KERNELBENCH" ] || { echo "set KERNELBENCH to the root of a KernelBench checkout" >&2; exit 2; }
}

run() {  # run NAME COMMAND...: log to $RESULTS/NAME.log, say how it ended
    local name=$1; shift
    local start=$SECONDS
    "$@" > "$RESULTS/$name.log" 2>&1
    echo "[$name] rc=$? in $((SECONDS - start)) s"
}

set_() {
    need_kernelbench
    run kernelbench-set $PY benchmarks/kernelbench_set.py --kernelbench "$KERNELBENCH" --backend cuda \
        --workers "$WORKERS" --trials 5 --wrong-variants 10 "${MEMORY[@]}" \
        --markdown "$RESULTS/kernelbench-set-cuda.md" --json "$RESULTS/kernelbench-set-cuda.json"
}

throughput() {
    need_kernelbench
    run kernelbench-throughput $PY benchmarks/kernelbench_set.py --kernelbench "$KERNELBENCH" --backend cuda \
        --workers "$WORKERS" --trials 5 --kind correct --level 1 "${MEMORY[@]}" \
        --markdown "$RESULTS/kernelbench-throughput-cuda.md" --json "$RESULTS/kernelbench-throughput-cuda.json"
}

admission() {
    run memory-admission $PY benchmarks/memory_admission.py --backend cuda "${MEMORY[@]/--memory-gib/--memory-capacity-gib}" --json "$RESULTS/memory-admission-cuda.json"
    cp "$RESULTS/memory-admission.log" "$RESULTS/memory-admission-cuda.md"
}

feedback() {
    run feedback-diagnosis $PY benchmarks/feedback_diagnosis.py --backend cuda --workers "$WORKERS" --out "$RESULTS"
}

adversarial() {
    run adversarial $PY tests/adversarial/runner.py --backend cuda --workers "$WORKERS" --details "${MEMORY[@]}"
    cp "$RESULTS/adversarial.log" "$RESULTS/adversarial-cuda.md"
}

parity() {
    need_kernelbench
    local ours=(--ours-first)
    [ -f "$RESULTS/kernelbench-set-cuda.json" ] && ours=(--ours-from "$RESULTS/kernelbench-set-cuda.json")
    run kernelbench-parity $PY benchmarks/kernelbench_parity.py --kernelbench "$KERNELBENCH" \
        --jobs "$PARITY_JOBS" "${ours[@]}" "${ONLY[@]}" --resume "${MEMORY[@]}" --out "$RESULTS/kernelbench-parity"
}

parity_alone() {
    need_kernelbench
    run kernelbench-parity-alone $PY benchmarks/kernelbench_parity.py --kernelbench "$KERNELBENCH" \
        --jobs 1 --ours-first "${ONLY[@]}" --resume "${MEMORY[@]}" --out "$RESULTS/kernelbench-parity-alone"
}

ray_() {
    run ray-harness $PY benchmarks/ray_harness.py --backend cuda --level 1 --actors 1 --workers "$WORKERS" "${MEMORY[@]}" \
        --out "$RESULTS/ray-harness-h200.json"
    cp "$RESULTS/ray-harness.log" "$RESULTS/ray-harness-h200.md"
}

gputests() {
    run gpu-tests $PY -m pytest -q -m gpu tests/harness tests/backends
}

builtin() {
    run evalref $PY -m atrl eval --policy reference --with-solution --backend cuda --max-turns 1 \
        --max-response-tokens 4096 --context-budget 16384 --no-kb --out "$RESULTS/evalref"
}

compare_() {
    run compare-speed $PY benchmarks/compare_speed.py --elements 1610612736 --device cuda --repeats 5
    cp "$RESULTS/compare-speed.log" "$RESULTS/compare-speed-cuda.md"
}

for phase in "${@:-small}"; do
    case "$phase" in
        set) set_ ;;
        throughput) throughput ;;
        admission) admission ;;
        feedback) feedback ;;
        adversarial) adversarial ;;
        parity) parity ;;
        parity-alone) parity_alone ;;
        ray) ray_ ;;
        gputests) gputests ;;
        builtin) builtin ;;
        compare) compare_ ;;
        small) feedback; adversarial ;;
        large) set_; throughput; admission ;;
        *) echo "usage: $0 set|throughput|admission|feedback|adversarial|parity|parity-alone|ray|gputests|builtin|compare|small|large ..." >&2; exit 2 ;;
    esac
done
