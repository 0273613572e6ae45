"""The data of the static anti-cheat rules: allowed import roots, forbidden qualified names with the
rule each breaks (and what to do instead), forbidden builtins and names, and `forbidden_rule`, which
classifies one fully qualified name. Used by `safety` (every policy) and the compute rule."""

from __future__ import annotations

from atrl.harness.static.common import matches

ALLOWED_IMPORT_ROOTS = frozenset(
    {
        "torch", "triton", "numpy", "math", "typing", "typing_extensions", "dataclasses", "functools",
        "itertools", "operator", "collections", "enum", "abc", "__future__", "os", "sys", "time",
        "random", "warnings", "copy", "numbers", "contextlib", "types", "statistics", "string", "re",
        # tensor rearrangement, imported by KernelBench's level-3 Mamba2 references (so by their
        # whole-file echoes); what its calls compute reaches the dispatcher, which the run-time
        # provenance check records like any PyTorch op
        "einops",
    }
)  # fmt: skip

_DISPATCH_GUARDS = (
    "DisableTorchFunction", "DisableTorchFunctionSubclass", "ExcludeDispatchKeyGuard", "_DisableFuncTorch",
    "_DisablePythonDispatcher", "_DisableTorchDispatch", "_ExcludeDispatchKeyGuard", "_ForceDispatchKeyGuard",
    "_IncludeDispatchKeyGuard", "_PreserveDispatchKeyGuard", "_SetExcludeDispatchKeyGuard",
    "_dispatch_tls_set_dispatch_key_excluded", "_dispatch_tls_set_dispatch_key_included", "_set_dispatch_mode",
    "_unset_dispatch_mode", "_pop_torch_dispatch_stack", "_push_on_torch_dispatch_stack",
    "_pop_torch_function_stack", "_push_on_torch_function_stack", "_set_torch_function_state",
)  # fmt: skip
_DISPATCH_INSTEAD = "let PyTorch dispatch normally: the harness records what it computes"
_DISPATCH_HELPER_MODULES = (
    "torch.utils._mode_utils", "torch.sparse._semi_structured_ops", "torch.utils._debug_mode", "torch._dispatch",
    "torch._subclasses", "torch._functorch", "torch._higher_order_ops", "torch.fx.experimental.proxy_tensor",
)  # fmt: skip

# Qualified-name prefixes and the rule each breaks; the first matching entry wins, so the
# specific entries (`os.path`, `contextlib.suppress`) come before their module.
FORBIDDEN: list[tuple[str, str, str]] = [
    # (prefix, rule, what to do instead)
    ("os.path", "", ""),
    ("os.environ", "static:environment", "pass configuration as constants in the code"),
    ("os.environb", "static:environment", "pass configuration as constants in the code"),
    ("os.getenv", "static:environment", "pass configuration as constants in the code"),
    ("os.getenvb", "static:environment", "pass configuration as constants in the code"),
    ("os.putenv", "static:environment", "pass configuration as constants in the code"),
    ("os.unsetenv", "static:environment", "pass configuration as constants in the code"),
    ("contextlib.suppress", "static:try-except", "let errors surface instead of suppressing them"),
    ("sys._getframe", "static:introspection", "do not inspect the caller's frames"),
    ("sys._current_frames", "static:introspection", "do not inspect the caller's frames"),
    ("sys.modules", "static:introspection", "import what you need explicitly"),
    ("sys.settrace", "static:introspection", "do not trace the harness"),
    ("sys.setprofile", "static:introspection", "do not trace the harness"),
    ("sys.gettrace", "static:introspection", "do not trace the harness"),
    ("sys.getprofile", "static:introspection", "do not trace the harness"),
    ("sys.meta_path", "static:introspection", "do not hook imports"),
    ("sys.path_hooks", "static:introspection", "do not hook imports"),
    ("sys.path", "static:introspection", "do not change the import path"),
    ("sys.addaudithook", "static:introspection", "do not hook the interpreter"),
    ("sys.exit", "static:process-or-network", "return the output tensor from forward"),
    ("types.FunctionType", "static:dynamic-code", "write the function in the source"),
    ("types.CodeType", "static:dynamic-code", "write the function in the source"),
    ("types.ModuleType", "static:dynamic-code", "write the code in the source"),
    ("types.new_class", "static:dynamic-code", "write the class in the source"),
    ("io.open", "static:file-access", "keep all data in tensors"),
    ("io.FileIO", "static:file-access", "keep all data in tensors"),
    ("codecs.open", "static:file-access", "keep all data in tensors"),
    ("threading", "static:concurrency", "launch Triton kernels from the calling thread"),
    ("_thread", "static:concurrency", "launch Triton kernels from the calling thread"),
    ("multiprocessing", "static:concurrency", "launch Triton kernels from the calling thread"),
    ("concurrent", "static:concurrency", "launch Triton kernels from the calling thread"),
    ("asyncio", "static:concurrency", "launch Triton kernels from the calling thread"),
    ("torch.multiprocessing", "static:concurrency", "launch Triton kernels from the calling thread"),
    ("sched", "static:concurrency", "launch Triton kernels from the calling thread"),
    ("subprocess", "static:process-or-network", "do everything inside forward with Triton kernels"),
    ("socket", "static:process-or-network", "no network access is available"),
    ("socketserver", "static:process-or-network", "no network access is available"),
    ("ssl", "static:process-or-network", "no network access is available"),
    ("select", "static:process-or-network", "no network access is available"),
    ("selectors", "static:process-or-network", "no network access is available"),
    ("urllib", "static:process-or-network", "no network access is available"),
    ("http", "static:process-or-network", "no network access is available"),
    ("requests", "static:process-or-network", "no network access is available"),
    ("httpx", "static:process-or-network", "no network access is available"),
    ("aiohttp", "static:process-or-network", "no network access is available"),
    ("ftplib", "static:process-or-network", "no network access is available"),
    ("smtplib", "static:process-or-network", "no network access is available"),
    ("xmlrpc", "static:process-or-network", "no network access is available"),
    ("webbrowser", "static:process-or-network", "no network access is available"),
    ("ctypes", "static:process-or-network", "write the computation as a Triton kernel"),
    ("cffi", "static:process-or-network", "write the computation as a Triton kernel"),
    ("signal", "static:process-or-network", "do not handle or send signals"),
    ("pty", "static:process-or-network", "do not start processes"),
    ("resource", "static:process-or-network", "do not change process limits"),
    ("torch.hub", "static:process-or-network", "no downloads are available"),
    ("torch.utils.cpp_extension", "static:process-or-network", "write the computation as a Triton kernel"),
    ("torch.ops.load_library", "static:process-or-network", "write the computation as a Triton kernel"),
    ("torch.distributed", "static:process-or-network", "run on the one device you are given"),
    ("pathlib", "static:file-access", "keep all data in tensors"),
    ("shutil", "static:file-access", "keep all data in tensors"),
    ("tempfile", "static:file-access", "keep all data in tensors"),
    ("pickle", "static:file-access", "keep all data in tensors"),
    ("_pickle", "static:file-access", "keep all data in tensors"),
    ("shelve", "static:file-access", "keep all data in tensors"),
    ("marshal", "static:file-access", "keep all data in tensors"),
    ("dbm", "static:file-access", "keep all data in tensors"),
    ("sqlite3", "static:file-access", "keep all data in tensors"),
    ("glob", "static:file-access", "keep all data in tensors"),
    ("fileinput", "static:file-access", "keep all data in tensors"),
    ("zipfile", "static:file-access", "keep all data in tensors"),
    ("tarfile", "static:file-access", "keep all data in tensors"),
    ("gzip", "static:file-access", "keep all data in tensors"),
    ("bz2", "static:file-access", "keep all data in tensors"),
    ("lzma", "static:file-access", "keep all data in tensors"),
    ("linecache", "static:file-access", "keep all data in tensors"),
    ("mmap", "static:file-access", "keep all data in tensors"),
    ("torch.save", "static:file-access", "keep all data in tensors"),
    ("torch.load", "static:file-access", "keep all data in tensors"),
    ("torch.from_file", "static:file-access", "keep all data in tensors"),
    ("numpy.save", "static:file-access", "keep all data in tensors"),
    ("numpy.savez", "static:file-access", "keep all data in tensors"),
    ("numpy.savez_compressed", "static:file-access", "keep all data in tensors"),
    ("numpy.savetxt", "static:file-access", "keep all data in tensors"),
    ("numpy.load", "static:file-access", "keep all data in tensors"),
    ("numpy.loadtxt", "static:file-access", "keep all data in tensors"),
    ("numpy.genfromtxt", "static:file-access", "keep all data in tensors"),
    ("numpy.fromfile", "static:file-access", "keep all data in tensors"),
    ("numpy.memmap", "static:file-access", "keep all data in tensors"),
    ("importlib", "static:dynamic-code", "import modules with plain import statements"),
    ("builtins", "static:dynamic-code", "use the builtins directly"),
    ("runpy", "static:dynamic-code", "write the code in the source"),
    ("code", "static:dynamic-code", "write the code in the source"),
    ("codeop", "static:dynamic-code", "write the code in the source"),
    ("pkgutil", "static:dynamic-code", "import modules with plain import statements"),
    ("zipimport", "static:dynamic-code", "import modules with plain import statements"),
    ("inspect", "static:introspection", "do not inspect the harness or the caller"),
    ("gc", "static:introspection", "do not search the heap for objects"),
    ("traceback", "static:introspection", "let errors surface"),
    ("weakref", "static:introspection", "do not search for objects"),
    ("tracemalloc", "static:introspection", "do not inspect the harness"),
    ("dis", "static:introspection", "do not inspect the harness"),
    ("faulthandler", "static:introspection", "do not inspect the harness"),
    ("pdb", "static:introspection", "do not inspect the harness"),
    ("bdb", "static:introspection", "do not inspect the harness"),
    ("torch.profiler", "static:introspection", "the harness profiles the candidate itself"),
    ("torch.autograd.profiler", "static:introspection", "the harness profiles the candidate itself"),
    ("atrl", "static:monkeypatch", "the candidate must not touch the harness"),
    ("torch.manual_seed", "static:monkeypatch", "do not change the random state"),
    ("torch.seed", "static:monkeypatch", "do not change the random state"),
    ("torch.set_rng_state", "static:monkeypatch", "do not change the random state"),
    ("torch.random", "static:monkeypatch", "do not change the random state"),
    ("torch.cuda.manual_seed", "static:monkeypatch", "do not change the random state"),
    ("torch.cuda.manual_seed_all", "static:monkeypatch", "do not change the random state"),
    ("torch.cuda.seed", "static:monkeypatch", "do not change the random state"),
    ("torch.cuda.seed_all", "static:monkeypatch", "do not change the random state"),
    ("torch.cuda.set_rng_state", "static:monkeypatch", "do not change the random state"),
    ("torch.cuda.set_rng_state_all", "static:monkeypatch", "do not change the random state"),
    ("random.seed", "static:monkeypatch", "do not change the random state"),
    ("random.setstate", "static:monkeypatch", "do not change the random state"),
    ("numpy.random.seed", "static:monkeypatch", "do not change the random state"),
    ("numpy.random.set_state", "static:monkeypatch", "do not change the random state"),
    ("torch.use_deterministic_algorithms", "static:monkeypatch", "do not change global torch settings"),
    ("torch.set_default_dtype", "static:monkeypatch", "do not change global torch settings"),
    ("torch.set_default_tensor_type", "static:monkeypatch", "do not change global torch settings"),
    ("torch.set_default_device", "static:monkeypatch", "do not change global torch settings"),
    ("torch.set_float32_matmul_precision", "static:monkeypatch", "do not change global torch settings"),
    ("torch.set_flush_denormal", "static:monkeypatch", "do not change global torch settings"),
    ("torch.set_num_threads", "static:monkeypatch", "do not change global torch settings"),
    ("torch.set_num_interop_threads", "static:monkeypatch", "do not change global torch settings"),
    ("torch.backends", "static:monkeypatch", "do not change global torch settings"),
    ("torch.library", "static:monkeypatch", "do not register or override torch operators"),
    ("torch.overrides", "static:monkeypatch", "do not override torch functions"),
    # switching off or replacing the dispatch modes through which the harness records what PyTorch
    # computes (`_DISPATCH_GUARDS` below, under torch._C)
    ("torch.utils._python_dispatch", "static:monkeypatch", _DISPATCH_INSTEAD),
    *(("torch._C." + name, "static:monkeypatch", _DISPATCH_INSTEAD) for name in _DISPATCH_GUARDS),
    # torch's private helpers that wrap those guards (`no_dispatch`, `_disable_current_modes`, mode
    # pops and dispatch-key exclusions)
    *((module, "static:monkeypatch", _DISPATCH_INSTEAD) for module in _DISPATCH_HELPER_MODULES),
    ("torch.Tensor._make_subclass", "static:monkeypatch", "return plain torch tensors"),
    # attribute access by strings, past the checks on names (`methodcaller("__subclasses__")`)
    ("operator.attrgetter", "static:introspection", "use attributes by name in the code"),
    ("operator.methodcaller", "static:introspection", "call methods by name in the code"),
    ("torch.cuda.set_per_process_memory_fraction", "static:monkeypatch", "do not change global torch settings"),
    ("torch.cuda.Stream", "static:cuda-stream-or-graph", "launch on the current stream"),
    ("torch.cuda.ExternalStream", "static:cuda-stream-or-graph", "launch on the current stream"),
    ("torch.cuda.stream", "static:cuda-stream-or-graph", "launch on the current stream"),
    ("torch.cuda.streams", "static:cuda-stream-or-graph", "launch on the current stream"),
    ("torch.cuda.StreamContext", "static:cuda-stream-or-graph", "launch on the current stream"),
    ("torch.cuda.set_stream", "static:cuda-stream-or-graph", "launch on the current stream"),
    ("torch.cuda.Event", "static:cuda-stream-or-graph", "the harness times the candidate itself"),
    ("torch.cuda.graph", "static:cuda-stream-or-graph", "launch kernels directly, without graph capture"),
    ("torch.cuda.graphs", "static:cuda-stream-or-graph", "launch kernels directly, without graph capture"),
    ("torch.cuda.CUDAGraph", "static:cuda-stream-or-graph", "launch kernels directly, without graph capture"),
    ("torch.cuda.graph_pool_handle", "static:cuda-stream-or-graph", "launch kernels directly"),
    ("torch.cuda.make_graphed_callables", "static:cuda-stream-or-graph", "launch kernels directly"),
    ("torch.Stream", "static:cuda-stream-or-graph", "launch on the current stream"),
    ("torch.Event", "static:cuda-stream-or-graph", "the harness times the candidate itself"),
    ("torch.npu.Stream", "static:cuda-stream-or-graph", "launch on the current stream"),
    ("torch.npu.stream", "static:cuda-stream-or-graph", "launch on the current stream"),
    ("torch.npu.Event", "static:cuda-stream-or-graph", "the harness times the candidate itself"),
    ("torch.npu.graph", "static:cuda-stream-or-graph", "launch kernels directly, without graph capture"),
    ("torch.npu.NPUGraph", "static:cuda-stream-or-graph", "launch kernels directly, without graph capture"),
    ("torch.compile", "static:cuda-stream-or-graph", "write the computation as Triton kernels"),
    ("torch.jit", "static:cuda-stream-or-graph", "write the computation as Triton kernels"),
    ("torch._dynamo", "static:cuda-stream-or-graph", "write the computation as Triton kernels"),
    ("torch._inductor", "static:cuda-stream-or-graph", "write the computation as Triton kernels"),
]  # fmt: skip

_OS_PROCESS = ("system", "popen", "fork", "forkpty", "kill", "killpg", "_exit", "abort", "startfile",
               "exec", "spawn", "posix_spawn", "wait", "setsid", "nice")  # fmt: skip
_OS_FILES = ("open", "fdopen", "remove", "unlink", "rename", "renames", "replace", "rmdir", "removedirs",
             "mkdir", "makedirs", "write", "read", "truncate", "ftruncate", "listdir", "scandir", "walk",
             "chdir", "chmod", "chown", "link", "symlink", "mkfifo", "pipe", "dup", "dup2", "sendfile",
             "utime", "stat", "lstat", "access")  # fmt: skip

# Builtins that may not be called or referenced (unless the candidate defines a name of its own).
BUILTINS: dict[str, tuple[str, str]] = {
    "exec": ("static:dynamic-code", "write the code in the source"),
    "eval": ("static:dynamic-code", "write the code in the source"),
    "compile": ("static:dynamic-code", "write the code in the source"),
    "open": ("static:file-access", "keep all data in tensors"),
    "breakpoint": ("static:introspection", "remove debugging hooks"),
    "exit": ("static:process-or-network", "return the output tensor from forward"),
    "quit": ("static:process-or-network", "return the output tensor from forward"),
}
# Names rejected whatever the candidate defines.
ALWAYS: dict[str, tuple[str, str]] = {
    "__import__": ("static:dynamic-code", "import modules with plain import statements"),
    "__builtins__": ("static:dynamic-code", "use the builtins directly"),
    "globals": ("static:dynamic-code", "refer to names directly"),
    "locals": ("static:dynamic-code", "refer to names directly"),
    "vars": ("static:dynamic-code", "refer to attributes directly"),
    "__loader__": ("static:dynamic-code", "import modules with plain import statements"),
    "__spec__": ("static:dynamic-code", "import modules with plain import statements"),
}
STAR_IMPORTABLE = frozenset({"math", "typing", "triton.language"})
REFERENCE_NAMES = frozenset({"Model", "get_inputs", "get_init_inputs", "get_input_groups", "reference"})
ALLOWED_DUNDERS = frozenset({"__init__", "__name__", "__doc__", "__future__"})
FRAME_ATTRIBUTES = frozenset({"f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame",
                              "tb_next", "gi_frame", "cr_frame", "ag_frame", "co_code"})  # fmt: skip
SUBCLASS_HOOKS = frozenset({"__torch_function__", "__torch_dispatch__"})
# Routes by which code runs, or tensor memory is read or written, where the harness's recorder cannot
# see it: hooks the launcher calls with the kernel's arguments, NumPy views of tensor memory,
# element-wise Python callbacks, and the accessors of the recorder's own dispatch stack. No kernel
# needs them; found anywhere, whatever the object.
HIDDEN_COMPUTE_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "add_pre_run_hook": ("static:monkeypatch", "compute inside the kernel, not in a hook the launcher runs"),
    "pre_run_hooks": ("static:monkeypatch", "compute inside the kernel, not in a hook the launcher runs"),
    "from_dlpack": ("static:pytorch-compute", "read tensors inside Triton kernels (tl.load), not through NumPy views"),
    "apply_": ("static:pytorch-compute", "compute element-wise inside a Triton kernel"),
    "map_": ("static:pytorch-compute", "compute element-wise inside a Triton kernel"),
    "map2_": ("static:pytorch-compute", "compute element-wise inside a Triton kernel"),
    "_get_dispatch_stack_at": ("static:monkeypatch", _DISPATCH_INSTEAD),
    "_len_torch_dispatch_stack": ("static:monkeypatch", _DISPATCH_INSTEAD),
}


# Modules of the judging process re-exported as attributes of others (`torch.sys`,
# `torch.nn.modules.module.sys`): through them a candidate reaches `sys.modules` and the harness.
REEXPORTED_MODULE_ATTRIBUTES = frozenset({"sys", "os", "builtins", "importlib", "gc", "inspect", "ctypes",
                                          "subprocess"})  # fmt: skip


def forbidden_rule(qualname: str) -> tuple[str, str] | None:
    """(rule, what to do instead) for a forbidden qualified name, or None when it is allowed."""
    if matches(qualname, "os") and qualname != "os":
        attr = qualname.split(".")[1]
        if attr == "path":
            return None
        if attr.startswith(_OS_PROCESS):
            return "static:process-or-network", "do everything inside forward with Triton kernels"
        if attr in _OS_FILES:
            return "static:file-access", "keep all data in tensors"
    for prefix, rule, instead in FORBIDDEN:
        if matches(qualname, prefix):
            return (rule, instead) if rule else None
    if matches(qualname, "os") and qualname != "os":
        return "static:environment", "only os.path may be used from os"
    return None
