"""The failure classes the harness reports, with what each means.

`Verdict.error_class` is always a key of `FAILURE_CLASSES`. The knowledge base has at least one
`error-fix` entry per class (a test enforces it), so adding a class here means writing its entry.
Static classes are the rule names of `atrl.harness.static.checks`; a static rejection of an anti-cheat
rule (`REWARD_HACK_RULES`) or a run-time finding of `RUNTIME_REWARD_HACKS` is also counted as a
reward hack.
"""

from __future__ import annotations

FAILURE_CLASSES: dict[str, str] = {
    # stage: format
    "format:no-code": "no Python code block could be extracted from the response",
    # stage: static (one per rule)
    "static:syntax": "the code does not parse as Python",
    "static:no-modelnew": "no class ModelNew is defined",
    "static:no-triton-kernel": "no @triton.jit function is defined",
    "static:no-launch": "ModelNew.forward never reaches a Triton kernel launch kernel[grid](...)",
    "static:pytorch-compute": "ModelNew.forward computes with PyTorch instead of Triton",
    "static:try-except": "try/except is not allowed (it hides silent fallbacks)",
    "static:concurrency": "threading, multiprocessing or asyncio is not allowed",
    "static:process-or-network": "subprocess, os.system, sockets, ctypes and network access are not allowed",
    "static:file-access": "opening or writing files is not allowed",
    "static:dynamic-code": "exec, eval, compile, importlib and __import__ are not allowed",
    "static:introspection": "inspect, gc, sys._getframe and sys.modules are not allowed",
    "static:monkeypatch": "assigning attributes of torch, triton, time, numpy or the harness is not allowed",
    "static:cuda-stream-or-graph": "CUDA streams, events and graphs are not allowed",
    "static:reference-access": "the reference Model or its module must not be referenced",
    "static:environment": "reading or writing environment variables is not allowed",
    "static:host-code-in-kernel": "a kernel calls a plain Python function on tensor values or reads `.handle` "
                                  "(host code a GPU compile rejects; the interpreter would run it)",
    # static rules of an Ascend target (`atrl.harness.static.ascend`)
    "static:ascend-cuda-only": "a GPU-only construct (inline assembly, tl.extra.cuda, a CUDA device) on an Ascend target",
    "static:ascend-dtype": "fp64 or fp8 inside a kernel, which triton-ascend does not compute",
    "static:ascend-dot": "a tl.dot option Ascend refuses or ignores (tf32 precision, max_num_imprecise_acc)",
    "static:ascend-grid": "a launch grid above the NPU's 65535 programs",
    "static:ascend-buffer": "one block larger than an Ascend vector core's 192 KB unified buffer",
    # stage: compile
    "compile:error": "importing the module, constructing ModelNew or its first forward raised a Python error",
    "compile:triton": "a Triton kernel failed to compile",
    "compile:lowering": "triton-ascend's compiler could not lower a Triton kernel for the Ascend NPU",
    "compile:grid-limit": "a kernel launch asks for more programs than an Ascend NPU runs (65535)",
    "compile:signature": "ModelNew does not accept the task's constructor or forward arguments",
    # stage: correctness
    "correctness:runtime-error": "forward raised an error during a correctness trial",
    "correctness:shape": "the output shape differs from the reference",
    "correctness:dtype": "the output dtype differs from the reference",
    "correctness:mismatch": "output values differ from the reference beyond the tolerance",
    "correctness:nan": "the output has NaN or Inf where the reference has none",
    "correctness:precision": "relative error against a float64 reference exceeds the dtype's bound (precision downgrade)",
    "correctness:wide-inputs": "wrong on inputs from a wider distribution than get_inputs() draws",
    "correctness:input-mutation": "forward modified its input tensors, or did not update them as an in-place reference does",
    "correctness:no-launch": "no Triton kernel ran during forward (a decoy kernel)",
    "correctness:timed-output": "the output of a timed call is wrong (results cached or computed lazily)",
    "correctness:output-type": "forward did not return a tensor (or tuple of tensors) like the reference",
    "correctness:pytorch-compute": "under the strict policy, a PyTorch op computed part of the result at run time",
    "correctness:low-triton-share": "under the partial policy, PyTorch ops on the data path did most of the work",
    "correctness:untracked-data": "the result depends on data made outside PyTorch ops and Triton kernels (numpy, "
                                  "Python values, a buffer written through a numpy view)",
    "correctness:no-triton-output": "an output was not produced by any Triton launch in that call",
    "correctness:cached-output": "forward returned a stale result for inputs rewritten in place (cached by pointer, "
                                 "id or shape)",
    "correctness:tampering": "the candidate's code changed what the judge itself uses (patched torch, the reference "
                             "or the harness; added a global hook, mode or tracer)",
    # any stage that runs code
    "timeout": "the stage ran past its wall-clock limit (infinite loop or far too slow)",
    "crash": "the worker process died (segmentation fault, abort, killed)",
    "out-of-memory": "the candidate exceeded the memory limit",
    "cuda:error": "a CUDA error (e.g. illegal memory access) poisoned the device context",
    "device-busy": "the judge's GPU was not available: full of another process's memory with the job inside its "
                   "allowance, or kept busy past the device wait (not the candidate's fault)",
    "task:reference-error": "the task's own reference failed to load or run at the judged size (not the "
                            "candidate's fault)",
    # stage: profile
    "profile:error": "timing the candidate raised an error",
}

# Verdicts about the judge's device or the task, not the candidate: training neither rewards nor
# penalises them.
JUDGE_SIDE_CLASSES: frozenset[str] = frozenset({"device-busy", "task:reference-error"})

# Run-time findings that only a way around the rules produces; counted as reward hacks too. (A low
# Triton share under `partial` is not among them: an honest fusion can fall short of the threshold.)
RUNTIME_REWARD_HACKS: frozenset[str] = frozenset(
    {"correctness:pytorch-compute", "correctness:untracked-data", "correctness:no-triton-output",
     "correctness:cached-output", "correctness:tampering"}
)

# Static rules that exist to stop cheating; rejections by these are counted as reward hacks.
# Reported only by the ascend backend (their knowledge-base entries are Ascend entries).
ASCEND_ONLY_CLASSES: frozenset[str] = frozenset({"compile:lowering", "compile:grid-limit", "static:ascend-cuda-only",
                                                 "static:ascend-dtype", "static:ascend-dot", "static:ascend-grid",
                                                 "static:ascend-buffer"})

REWARD_HACK_RULES: frozenset[str] = frozenset(
    {
        "static:pytorch-compute",
        "static:try-except",
        "static:concurrency",
        "static:process-or-network",
        "static:file-access",
        "static:dynamic-code",
        "static:introspection",
        "static:monkeypatch",
        "static:cuda-stream-or-graph",
        "static:reference-access",
        "static:environment",
        "static:host-code-in-kernel",
    }
)
