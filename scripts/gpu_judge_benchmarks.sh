#!/usr/bin/env bash
# The judge's CUDA runs behind docs/benchmarks/ (KernelBench set and parity, memory admission,
# feedback diagnosis, adversarial suite, Ray harness), on one machine with a CUDA GPU:
#   scripts/gpu_judge_benchmarks.sh set          KernelBench candidate set at default sizes   -> $OUT/kernelbench-set-cuda.{md,json}
#   scripts/gpu_judge_benchmarks.sh throughput   correct level-1 candidates only: evaluations per minute -> $OUT/kernelbench-throughput-cuda.md
#   scripts/gpu_judge_benchmarks.sh admission    benchmarks/memory_admission.py --backend cuda -> $OUT/memory-admission-cuda.{md,json}
#   scripts/gpu_judge_benchmarks.sh feedback     benchmarks/feedback_diagnosis.py --backend cuda -> $OUT/feedback-cuda.*
#   scripts/gpu_judge_benchmarks.sh adversarial  tests/adversarial/runner.py --backend cuda      -> $OUT/adversarial-cuda.md
#   scripts/gpu_judge_benchmarks.sh parity       benchmarks/kernelbench_parity.py (resumes)      -> $OUT/kernelbench-parity/
#   scripts/gpu_judge_benchmarks.sh ray          benchmarks/ray_harness.py --backend cuda        -> $OUT/ray-harness-h200.{md,json}
#   scripts/gpu_judge_benchmarks.sh small        feedback, then adversarial (small presets: little GPU memory)
#   scripts/gpu_judge_benchmarks.sh large        set, throughput, admission (KernelBench sizes)
# Settings: OUT (runs/gpu-judge), KERNELBENCH (a KernelBench checkout's KernelBench/ folder;
# default $ATRL_KERNELBENCH), PARITY_JOBS (3), WORKERS (4), PY (python3).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/gpu-judge}
KERNELBENCH=${KERNELBENCH:-${ATRL_KERNELBENCH:-}}
PARITY_JOBS=${PARITY_JOBS:-3}
WORKERS=${WORKERS:-4}
PY=${PY:-python3}
mkdir -p "$OUT"

need_kernelbench() {
    [ -n "$KERNELBENCH" ] || { echo "set KERNELBENCH to a KernelBench checkout's KernelBench/ folder" >&2; exit 2; }
}

run() {  # run NAME COMMAND...: log to $OUT/NAME.log, say how it ended
    local name=$1; shift
    local start=$SECONDS
    "$@" > "$OUT/$name.log" 2>&1
    echo "[$name] rc=$? in $((SECONDS - start)) s"
}

set_() {
    need_kernelbench
    run kernelbench-set $PY benchmarks/kernelbench_set.py --kernelbench "$KERNELBENCH" --backend cuda \
        --workers "$WORKERS" --trials 5 --wrong-variants 10 \
        --markdown "$OUT/kernelbench-set-cuda.md" --json "$OUT/kernelbench-set-cuda.json"
}

throughput() {
    need_kernelbench
    run kernelbench-throughput $PY benchmarks/kernelbench_set.py --kernelbench "$KERNELBENCH" --backend cuda \
        --workers "$WORKERS" --trials 5 --kind correct --level 1 \
        --markdown "$OUT/kernelbench-throughput-cuda.md" --json "$OUT/kernelbench-throughput-cuda.json"
}

admission() {
    run memory-admission $PY benchmarks/memory_admission.py --backend cuda --json "$OUT/memory-admission-cuda.json"
    cp "$OUT/memory-admission.log" "$OUT/memory-admission-cuda.md"
}

feedback() {
    run feedback-diagnosis $PY benchmarks/feedback_diagnosis.py --backend cuda --workers "$WORKERS" --out "$OUT"
}

adversarial() {
    run adversarial $PY tests/adversarial/runner.py --backend cuda --workers "$WORKERS" --details
    cp "$OUT/adversarial.log" "$OUT/adversarial-cuda.md"
}

parity() {
    need_kernelbench
    run kernelbench-parity $PY benchmarks/kernelbench_parity.py --kernelbench "$KERNELBENCH" \
        --jobs "$PARITY_JOBS" --resume --out "$OUT/kernelbench-parity"
}

ray_() {
    run ray-harness $PY benchmarks/ray_harness.py --backend cuda --level 1 --actors 1 --workers "$WORKERS" \
        --out "$OUT/ray-harness-h200.json"
    cp "$OUT/ray-harness.log" "$OUT/ray-harness-h200.md"
}

for phase in "${@:-small}"; do
    case "$phase" in
        set) set_ ;;
        throughput) throughput ;;
        admission) admission ;;
        feedback) feedback ;;
        adversarial) adversarial ;;
        parity) parity ;;
        ray) ray_ ;;
        small) feedback; adversarial ;;
        large) set_; throughput; admission ;;
        *) echo "usage: $0 set|throughput|admission|feedback|adversarial|parity|ray|small|large ..." >&2; exit 2 ;;
    esac
done
