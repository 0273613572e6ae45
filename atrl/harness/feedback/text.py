"""The feedback text the agent reads after each candidate: short, most useful facts first.

`feedback_text(verdict)` is a pure function of the verdict: a headline (stage and failure in
words), the trimmed error message with its line, mismatch statistics, a "Fix:" hint for the
failure class; on success the times, speedup and where the device time goes. A wrong result
with a diagnosis (`atrl.harness.feedback.diagnosis`) leads with its cause, its fix and its evidence
instead of the class's generic hint. At most `MAX_FEEDBACK_CHARS` characters; lower-priority
parts are dropped or trimmed first.
"""

from __future__ import annotations

from atrl.harness.feedback.failures import FAILURE_CLASSES, JUDGE_SIDE_CLASSES, REWARD_HACK_RULES
from atrl.harness.verdict import Verdict

MAX_FEEDBACK_CHARS = 1500
MAX_MESSAGE_CHARS = 700

# One actionable hint per failure class (a class without one gets none).
FIX_HINTS: dict[str, str] = {
    "format:no-code": "put the complete module (imports, kernels, class ModelNew) in one ```python block.",
    "static:syntax": "correct the syntax error on the reported line; send the whole module again.",
    "static:no-modelnew": "define `class ModelNew(nn.Module)` with the same __init__ and forward as Model.",
    "static:no-triton-kernel": "write the computation as a `@triton.jit` kernel.",
    "static:no-launch": "launch your kernel from ModelNew.forward as `kernel[grid](...)`.",
    "static:pytorch-compute": "move that computation into your Triton kernel; in forward use torch only to "
                              "allocate outputs and query shapes.",
    "static:try-except": "remove try/except; let errors surface so they can be fixed.",
    "static:concurrency": "remove threads/processes; use the kernel grid for parallelism.",
    "static:process-or-network": "remove subprocess, os.system, ctypes and sockets.",
    "static:file-access": "remove file reads/writes; keep everything in memory.",
    "static:dynamic-code": "remove exec/eval/compile/importlib; write the code directly.",
    "static:introspection": "remove inspect/gc/sys._getframe/sys.modules.",
    "static:monkeypatch": "do not assign attributes of torch, triton, time or the harness.",
    "static:cuda-stream-or-graph": "launch on the default stream; remove streams, events and graphs.",
    "static:reference-access": "do not use Model or the reference module; reimplement the computation.",
    "static:environment": "remove os.environ / getenv use.",
    "static:host-code-in-kernel": "compute with tl operations inside the kernel, or decorate the helper with "
                                  "@triton.jit; never touch `.handle`.",
    "compile:error": "fix the error at the reported line; check imports and tensor shapes in forward.",
    "compile:triton": "fix the kernel: use tl.* operations only, tl.constexpr block sizes that are powers "
                      "of 2, and matching dtypes in tl.load/tl.store.",
    "static:ascend-cuda-only": "remove GPU-only code: no inline assembly or tl.extra.cuda, and allocate on the "
                               "inputs' device instead of \"cuda\".",
    "static:ascend-dtype": "compute in tl.float32 (or fp16/bf16) inside kernels and cast at the store.",
    "static:ascend-dot": "call tl.dot without tf32 precision or max_num_imprecise_acc.",
    "static:ascend-grid": "launch at most 65535 programs (about the AI-core count) and loop inside the kernel.",
    "static:ascend-buffer": "use blocks of at most 192 KB (e.g. 8192 fp32) and loop over sub-blocks in the kernel.",
    "compile:lowering": "rewrite the construct the Ascend compiler points at: fp16/bf16/fp32 math only "
                        "(no fp64 or fp8), plain tl.* operations, no CUDA-only helpers or inline assembly.",
    "compile:grid-limit": "launch at most 65535 programs (about the AI-core count) and loop over the "
                          "blocks inside the kernel.",
    "compile:signature": "give ModelNew.__init__ and forward exactly the reference's parameters.",
    "correctness:runtime-error": "the kernel failed on later inputs: check masks, strides and grid for all sizes.",
    "correctness:shape": "return a tensor of the reference's output shape.",
    "correctness:dtype": "return the reference's output dtype (cast inside the kernel's store).",
    "correctness:mismatch": "check the masks, strides and index arithmetic at the first mismatching index; "
                            "accumulate in float32.",
    "correctness:nan": "guard divisions and exp/log against overflow; use a max-subtraction for softmax-like ops.",
    "correctness:precision": "compute and accumulate in the task's dtype or wider (no fp16/bf16/TF32 for fp32 tasks; "
                             "use allow_tf32=False / input_precision='ieee' in tl.dot).",
    "correctness:wide-inputs": "the kernel must be right for any input values, including negatives and large "
                               "magnitudes.",
    "correctness:input-mutation": "write results to a new output tensor and leave the inputs unchanged, unless the "
                                  "reference updates its inputs in place: then store the same values into them.",
    "correctness:no-launch": "forward must launch your Triton kernel on every call.",
    "correctness:timed-output": "compute the result fresh on every call; no caching across calls.",
    "correctness:output-type": "return a tensor (or a tuple of tensors) like the reference.",
    "correctness:pytorch-compute": "move the named op into your Triton kernel; in forward use torch only to allocate, "
                                   "view and copy tensors.",
    "correctness:low-triton-share": "keep at most the named heavy op (conv/matmul) in PyTorch and fuse everything "
                                    "around it into Triton kernels, or write that op in Triton too.",
    "correctness:untracked-data": "compute the result on the device in Triton kernels; no numpy, .tolist(), "
                                  "torch.from_numpy or Python loops over tensor values.",
    "correctness:no-triton-output": "write every output with your Triton kernel on every call; do not return "
                                    "cached tensors, module state or copies of the inputs.",
    "correctness:cached-output": "compute the output fresh on every call; never key results on data_ptr(), id() "
                                 "or shapes.",
    "correctness:tampering": "leave torch, the reference and the harness as they are: no patched functions or "
                             "methods, global hooks, modes or tracers; compute the output in your Triton kernel.",
    "timeout": "remove endless loops; make sure the grid and loop bounds are finite and not far too large.",
    "crash": "look for out-of-bounds pointers: every tl.load/tl.store needs a mask for the tail.",
    "out-of-memory": "allocate only the outputs you need; do not grow lists or buffers across calls.",
    "cuda:error": "an illegal memory access: mask every tl.load/tl.store and check the pointer offsets.",
    "device-busy": "nothing to fix in the kernel: the judge's GPU was busy with other work; submit it again.",
    "task:reference-error": "nothing to fix in the kernel: the task's reference failed here; judge the task at its "
                            "written size (--preset full) or install the package it imports.",
    "profile:error": "timing failed: forward must be re-runnable with the same inputs.",
}

_STAGE_WORDS = {
    "format": "no code found", "static": "rejected before running", "compile": "failed to compile/run",
    "correctness": "checked against the reference", "profile": "failed while being timed",
}
# What went wrong, where the stage alone would mislead (a timeout in the correctness stage is no wrong result)
_ERROR_WORDS = {
    "timeout": "ran out of time", "crash": "the process died", "out-of-memory": "ran out of memory",
    "correctness:runtime-error": "raised an error",
    **{error: "wrong result" for error in ("correctness:shape", "correctness:dtype", "correctness:mismatch",
                                           "correctness:nan", "correctness:precision", "correctness:wide-inputs",
                                           "correctness:input-mutation", "correctness:timed-output",
                                           "correctness:output-type", "correctness:cached-output")},
}


def _headline(verdict: Verdict) -> str:
    if verdict.ok:
        return "CORRECT." if verdict.timing is None else "CORRECT and timed."
    error = verdict.error_class or "unknown"
    meaning = FAILURE_CLASSES.get(error, error)
    where = f" (line {verdict.line})" if verdict.line is not None else ""
    stage = _ERROR_WORDS.get(error) or _STAGE_WORDS.get(verdict.stage, verdict.stage)
    hack = " This is a disallowed shortcut." if verdict.reward_hack or error in REWARD_HACK_RULES else ""
    if verdict.diagnosis:
        meaning = f"likely cause: {verdict.diagnosis['summary']}"
    if error in JUDGE_SIDE_CLASSES:
        return f"NOT JUDGED: {error} — {meaning}."
    return f"FAILED at {verdict.stage} ({stage}): {error} — {meaning}{where}.{hack}"


def _collapse_repeats(message: str) -> str:
    """Fold runs of identical lines (deep recursion tracebacks) into one line and a count."""
    out: list[str] = []
    count = 0
    for line in message.splitlines() + [None]:  # type: ignore[list-item]
        if out and line == out[-1]:
            count += 1
            continue
        if count:
            out.append(f"  [previous line repeated {count} more times]")
            count = 0
        if line is not None:
            out.append(line)
    return "\n".join(out)


def _trim(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Keep the end of a long message (the error is usually last), on whole lines where possible."""
    message = _collapse_repeats(message.strip())
    if len(message) <= limit:
        return message
    tail = message[-limit:]
    newline = tail.find("\n")
    if 0 <= newline < limit // 2:
        tail = tail[newline + 1:]
    return "…" + tail


def _fmt(value: float | None, spec: str = ".3g") -> str:
    return "n/a" if value is None else format(value, spec)


def _correctness_lines(verdict: Verdict) -> list[str]:
    stats = verdict.correctness
    if stats is None:
        return []
    lines = []
    # the judge's message often states the errors already: say them once
    if not verdict.ok and stats.max_abs_error is not None and "max abs" not in verdict.message:
        where = f", first at index {stats.first_mismatch_index}" if stats.first_mismatch_index else ""
        share = f", {stats.mismatch_fraction:.1%} of elements differ" if stats.mismatch_fraction is not None else ""
        lines.append(f"Errors: max abs {_fmt(stats.max_abs_error)}, max rel {_fmt(stats.max_rel_error)}{share}{where}.")
    if stats.relative_error_vs_fp64 is not None and not verdict.ok:
        lines.append(f"Relative error vs float64 reference: {_fmt(stats.relative_error_vs_fp64)}.")
    if stats.trials:
        lines.append(f"Trials passed: {stats.passed_text()}.")
    if stats.triton_share is not None and stats.triton_share < 1:
        lines.append(f"Triton share of the work: {stats.triton_share:.0%} (the rest of the reference's bytes moved "
                     "by PyTorch ops on the path to the output).")
    if stats.skipped:
        lines.append("Skipped: " + "; ".join(stats.skipped) + ".")
    return lines


def _timing_lines(verdict: Verdict) -> list[str]:
    timing = verdict.timing
    if timing is None:
        return ["Not timed on this backend (correctness only)."] if verdict.ok else []
    lines = [f"Time: {timing.candidate_ms:.4g} ms vs reference {timing.reference_ms:.4g} ms → "
             f"speedup {timing.speedup:.2f}x."]
    if timing.speedup_vs_compile is not None and timing.compile_reference_ms is not None:
        lines.append(f"torch.compile reference {timing.compile_reference_ms:.4g} ms → "
                     f"{timing.speedup_vs_compile:.2f}x vs compiled.")
    if timing.kernels:
        top = ", ".join(f"{k.get('share', 0):.0%} in {'' if k.get('triton') else 'non-Triton '}`{k.get('name')}`"
                        for k in timing.kernels[:3])
        lines.append(f"Device time: {top}.")
    if timing.coverage is not None:
        lines.append(f"Coverage: {timing.coverage:.0%} of device time in your Triton kernels.")
    if timing.speedup < 1:
        lines.append("Slower than PyTorch: fuse work into fewer kernels, tune BLOCK sizes and num_warps.")
    return lines


def feedback_text(verdict: Verdict, max_chars: int = MAX_FEEDBACK_CHARS) -> str:
    """The text the agent sees for `verdict`, at most `max_chars` characters.

    Order: headline, error message, correctness statistics, fix hint, timing, flags, the
    definitions the harness ignored (the candidate's own Model, get_inputs, ... and __main__ block).
    """
    parts = [_headline(verdict)]
    diagnosis = verdict.diagnosis if not verdict.ok else None
    if diagnosis:
        parts.append(f"Fix: {diagnosis['fix']}.")
        if diagnosis["evidence"] not in verdict.message:  # a timeout's message states it already
            parts.append(f"Evidence: {diagnosis['evidence']}.")
    if not verdict.ok and verdict.message:
        parts.append(_trim(verdict.message))
    parts.extend(_correctness_lines(verdict))
    if not verdict.ok and not diagnosis and verdict.error_class in FIX_HINTS:
        parts.append("Fix: " + FIX_HINTS[verdict.error_class])
    parts.extend(_timing_lines(verdict))
    parts.extend(f"Flag: {flag}" for flag in verdict.flags)
    if verdict.ignored_definitions:
        parts.append("Ignored definitions (the task's own are used): " + ", ".join(verdict.ignored_definitions))
    text = "\n".join(parts)
    while len(text) > max_chars and len(parts) > 1:
        parts.pop()  # drop the least important facts first
        text = "\n".join(parts)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
