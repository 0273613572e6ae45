"""Static anti-cheat rules that hold under every PyTorch-compute policy (HARNESS-SPEC, stage 2).

`check_safety(tree, aliases)` walks the whole module (except `if __name__ == "__main__":` bodies,
which never run on import) and returns one `Violation` per offending construct: forbidden imports
and qualified names (after alias resolution), dangerous builtins, dunder walks, `try`, monkeypatching
assignments, tensor subclasses, and references to the reference module.

Imports are an allowlist: torch, triton, numpy (data and host-side shape arithmetic only; numpy
compute on tensors is caught by the compute rule), math, typing, dataclasses, functools and a few
other pure-Python standard modules. `os` and `sys` may be imported but only `os.path` and harmless
`sys` attributes may be used. Anything else is rejected as possible reference or harness access.
"""

from __future__ import annotations

import ast

from atrl.harness.static_common import Aliases, Violation, live_nodes, matches, violation

ALLOWED_IMPORT_ROOTS = frozenset(
    {
        "torch", "triton", "numpy", "math", "typing", "typing_extensions", "dataclasses", "functools",
        "itertools", "operator", "collections", "enum", "abc", "__future__", "os", "sys", "time",
        "random", "warnings", "copy", "numbers", "contextlib", "types", "statistics", "string", "re",
    }
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
    ("torch.Tensor._make_subclass", "static:monkeypatch", "return plain torch tensors"),
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


def check_safety(tree: ast.Module, aliases: Aliases) -> list[Violation]:
    """All policy-independent violations in `tree` (unsorted)."""
    found: list[Violation] = []
    defined = _defined_names(tree)
    attribute_bases = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in live_nodes(tree):
        if isinstance(node, ast.Name) and id(node) not in attribute_bases and node.id in aliases.modules \
                and isinstance(node.ctx, ast.Load):
            found.append(violation("static:dynamic-code", node, f"module `{node.id}` used as a value",
                                   f"use its attributes directly (`{node.id}.name`)"))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.extend(_check_import(node))
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            found.append(violation("static:try-except", node, "`try` block",
                                   "remove it and let errors surface (no silent fallbacks)"))
        elif isinstance(node, ast.Name):
            found.extend(_check_name(node, defined))
        elif isinstance(node, ast.Attribute):
            found.extend(_check_attribute(node, aliases))
        elif isinstance(node, ast.Call):
            found.extend(_check_call(node, aliases))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            found.extend(_check_assignment(node, aliases))
        elif isinstance(node, ast.ClassDef):
            found.extend(_check_class(node, aliases))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name in REFERENCE_NAMES:
                found.append(violation("static:reference-access", node, f"defines `{node.name}`",
                                       "define only ModelNew and its kernels and helpers"))
        if isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.AsyncFor, ast.AsyncWith)):
            found.append(violation("static:concurrency", node, "async code",
                                   "write forward as a plain function that launches kernels"))
    return found


def _defined_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _check_import(node: ast.Import | ast.ImportFrom) -> list[Violation]:
    if isinstance(node, ast.ImportFrom) and node.level:
        return [violation("static:reference-access", node, "relative import",
                          "import only torch, triton and standard modules")]
    if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names) \
            and node.module not in STAR_IMPORTABLE:
        return [violation("static:dynamic-code", node, f"`from {node.module} import *`",
                          "import the names you use explicitly")]
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    else:
        modules = [f"{node.module}.{alias.name}" if alias.name != "*" else node.module or ""
                   for alias in node.names]  # fmt: skip
    found: list[Violation] = []
    for module in modules:
        ruled = forbidden_rule(module)
        if ruled is not None:
            found.append(violation(ruled[0], node, f"import of `{module}`", ruled[1]))
        elif module.split(".")[0] not in ALLOWED_IMPORT_ROOTS:
            found.append(violation("static:reference-access", node, f"import of `{module}`",
                                   "import only torch, triton, numpy, math and standard helpers "
                                   "(the reference module and the harness are off limits)"))
    return found


def _check_name(node: ast.Name, defined: set[str]) -> list[Violation]:
    if node.id in REFERENCE_NAMES:
        return [violation("static:reference-access", node, f"reference to `{node.id}`",
                          "do not use the reference model or its input functions")]
    if node.id in ALWAYS:
        rule, instead = ALWAYS[node.id]
        return [violation(rule, node, f"`{node.id}`", instead)]
    if node.id in BUILTINS and node.id not in defined:
        rule, instead = BUILTINS[node.id]
        return [violation(rule, node, f"`{node.id}`", instead)]
    if node.id == "__name__" and not isinstance(node.ctx, ast.Load):
        return [violation("static:dynamic-code", node, "assignment to `__name__`", "leave module names alone")]
    return []


def _check_attribute(node: ast.Attribute, aliases: Aliases) -> list[Violation]:
    if node.attr.startswith("__") and node.attr.endswith("__") and node.attr not in ALLOWED_DUNDERS:
        return [violation("static:dynamic-code", node, f"dunder attribute `.{node.attr}`",
                          "use the object's public attributes")]
    if node.attr in FRAME_ATTRIBUTES:
        return [violation("static:introspection", node, f"frame attribute `.{node.attr}`",
                          "do not inspect the caller's frames")]
    name = aliases.qualname(node)
    # Report a forbidden chain once, at its outermost forbidden prefix: `os.environ.get` is reported
    # at `os.environ`, so skip this node when its parent chain would already be reported.
    if name is None or forbidden_rule(name) is None:
        return []
    base = aliases.qualname(node.value)
    if base is not None and forbidden_rule(base) is not None:
        return []
    rule, instead = forbidden_rule(name)  # type: ignore[misc]
    return [violation(rule, node, f"use of `{name}`", instead)]


def _check_call(node: ast.Call, aliases: Aliases) -> list[Violation]:
    func = node.func
    found: list[Violation] = []
    if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "delattr", "hasattr"):
        target = node.args[0] if node.args else None
        literal = len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(
            node.args[1].value, str)
        on_module = target is not None and aliases.is_module_object(target)
        if func.id in ("setattr", "delattr") and on_module:
            found.append(violation("static:monkeypatch", node, f"`{func.id}` on a module",
                                   "do not modify torch, triton or other modules"))
        elif (on_module and not (literal and func.id == "hasattr")) or (not literal and func.id != "hasattr"):
            found.append(violation("static:dynamic-code", node, f"`{func.id}` with a computed name or on a module",
                                   "access attributes directly by name"))
        elif literal and str(node.args[1].value).startswith("__"):  # type: ignore[attr-defined]
            found.append(violation("static:dynamic-code", node, f"`{func.id}` of a dunder attribute",
                                   "use the object's public attributes"))
    if isinstance(func, ast.Attribute) and func.attr == "tofile":
        found.append(violation("static:file-access", node, "`.tofile()`", "keep all data in tensors"))
    if isinstance(func, ast.Attribute) and func.attr in ("as_subclass", "_make_subclass", "_make_wrapper_subclass"):
        found.append(violation("static:monkeypatch", node, f"`.{func.attr}()` (tensor subclass)",
                               "return plain torch tensors"))
    return found


def _assigned_targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        targets: list[ast.expr] = []
        for target in node.targets:
            targets.extend(_flatten(target))
        return targets
    if isinstance(node, ast.Delete):
        return [t for target in node.targets for t in _flatten(target)]
    return _flatten(node.target)  # type: ignore[attr-defined]


def _flatten(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [t for elt in target.elts for t in _flatten(elt)]
    if isinstance(target, ast.Starred):
        return _flatten(target.value)
    return [target]


def _check_assignment(node: ast.AST, aliases: Aliases) -> list[Violation]:
    found: list[Violation] = []
    for target in _assigned_targets(node):
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Attribute):
            root = target.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            name = aliases.qualname(target.value)
            if name is not None and not (isinstance(root, ast.Name) and root.id == "self"):
                found.append(violation("static:monkeypatch", target, f"assignment to `{name}.{target.attr}`",
                                       "do not modify torch, triton, time or other modules"))
    return found


def _check_class(node: ast.ClassDef, aliases: Aliases) -> list[Violation]:
    found: list[Violation] = []
    for base in node.bases:
        name = aliases.qualname(base)
        if name is not None and (matches(name, "torch.Tensor") or matches(name, "torch.nn.Parameter")):
            found.append(violation("static:monkeypatch", node, f"class `{node.name}` subclasses `{name}`",
                                   "return plain torch tensors"))
    for keyword in node.keywords:
        if keyword.arg == "metaclass":
            found.append(violation("static:dynamic-code", node, f"metaclass on `{node.name}`",
                                   "use a plain class"))
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name in SUBCLASS_HOOKS:
                found.append(violation("static:monkeypatch", stmt, f"`{stmt.name}` hook",
                                       "return plain torch tensors"))
            elif stmt.name in ("__exit__", "__aexit__"):
                found.append(violation("static:try-except", stmt, f"`{stmt.name}` (a context manager can swallow errors)",
                                       "let errors surface"))
    return found
