#!/usr/bin/env bash
# Run on the GPU machine from the repository root (see scripts/device_prepare.sh).
#   bash scripts/device_setup.sh partNN   — first calls: park the model's part NN outside the work tree
#   source scripts/device_setup.sh        — last call (the last part and .m/sha256 carried): install the
#                                           carried wheels, park the last part, join the model parts,
#                                           check the checksum, export PYTHONPATH and ATRL_SMOLLM2_GGUF;
#                                           later calls (no parts carried) export them for the joined model
#   stable_tree                           — after sourcing: enter a copy of the tree that later calls keep
#                                           (for background jobs; see the end of this file)
#   restore_checkpoint RUN [RECORDS]      — after sourcing: a checkpoint carried in parts (.rlckpt/) into RUN
export ATRL_PARK="$HOME/atrl-model"  # (exported: restore_checkpoint runs in child scripts too)
park=$ATRL_PARK
mkdir -p "$park"
# Ray's wheel parts (scripts/device_prepare.sh ray), parked as they come; installed once all are there
if [ -d .rayp ]; then
    mkdir -p "$park/ray"
    cp .rayp/* "$park/ray/"
    parked=$(ls "$park/ray" | grep -c '^part[0-9][0-9]$' || true)
    if [ "$parked" -eq "$(cat "$park/ray/count")" ] && [ -d .rayw ] && [ ! -d /tmp/raysite/ray ]; then
        wheel=".rayw/$(cat "$park/ray/name")"
        cat "$park/ray"/part[0-9][0-9] > "$wheel"
        if [ "$(sha256sum "$wheel" | cut -c1-64)" != "$(cat "$park/ray/sha256")" ]; then
            echo "ray wheel checksum mismatch" >&2
        else
            python3 -m pip install -q --no-index --no-cache-dir --find-links .rayw --target /tmp/raysite "ray==2.60.0" \
                && echo "ray installed under /tmp/raysite"
        fi
    fi
fi
# A training checkpoint brought back from an earlier stretch (`tar cf - step_N | split -b 15000000
# -d - ckpt.part`), carried in `.rlckpt/` over one or more calls: parked as its parts come
if [ -d .rlckpt ]; then
    mkdir -p "$park/rlckpt" && cp .rlckpt/*.part[0-9]* "$park/rlckpt/" && echo "parked $(ls "$park/rlckpt" | wc -l) checkpoint parts"
fi
# restore_checkpoint RUN [RECORDS]: join the parked parts into RUN/checkpoints/ (the trainer resumes
# from it with the same command); RECORDS: a metrics.jsonl of the run to continue (kept up to the
# checkpoint's step by the trainer)
restore_checkpoint() {
    mkdir -p "$1/checkpoints"
    local step
    step=$(cat "$ATRL_PARK"/rlckpt/*ckpt.part* | tar tf - | awk -F/ 'NR == 1 {print $1}')
    cat "$ATRL_PARK"/rlckpt/*ckpt.part* | tar xf - -C "$1/checkpoints" || return 1
    echo "$step" > "$1/checkpoints/latest"  # the marker the trainer resumes from
    [ -n "${2:-}" ] && [ ! -f "$1/metrics.jsonl" ] && cp "$2" "$1/metrics.jsonl"
    echo "restored $(ls "$1/checkpoints")"
}
export -f restore_checkpoint  # for scripts run from this shell (scripts/gpu_rl_diagnosis.sh resume)
if [[ "${1:-}" == part[0-9][0-9] ]]; then
    cp ".m/$1" "$park/$1" && echo "parked $1 ($(stat -c %s "$park/$1") bytes)"
    exit 0
fi
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || return 1
fi
export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
if [ -f .m/sha256 ]; then
    for part in .m/part[0-9][0-9]; do [ -f "$part" ] && cp "$part" "$park/"; done  # parts carried with the checksum
    cat "$park"/part[0-9][0-9] > "$park/smollm2.gguf"
    if [ "$(sha256sum "$park/smollm2.gguf" | cut -c1-64)" != "$(cat .m/sha256)" ]; then
        echo "model checksum mismatch: parked $(ls "$park" | grep -c '^part') parts; the machine may have been given back between the calls (run them again)" >&2
        return 1
    fi
    export ATRL_SMOLLM2_GGUF="$park/smollm2.gguf"
    echo "model ready: $ATRL_SMOLLM2_GGUF"
elif [ -f "$park/smollm2.gguf" ]; then  # a later call on the same machine: the model is already joined
    export ATRL_SMOLLM2_GGUF="$park/smollm2.gguf"
    echo "model ready: $ATRL_SMOLLM2_GGUF"
fi
# The GPU machine replaces the working tree on every call (carried folders not named again are
# removed), and its $OUT is emptied at every call's start. Long background jobs therefore run
# from a copy made once: `stable_tree` copies the tree to $ATRL_RUN_DIR on its first use and
# enters it; later calls enter the same copy, where the jobs' results (runs/) keep growing.
export ATRL_RUN_DIR="$HOME/atrl-run"
stable_tree() {
    if [ ! -d "$ATRL_RUN_DIR" ]; then
        cp -a . "$ATRL_RUN_DIR" && echo "copied the tree to $ATRL_RUN_DIR"
    fi
    cd "$ATRL_RUN_DIR" && export PYTHONPATH="/tmp/site:$ATRL_RUN_DIR"
}
