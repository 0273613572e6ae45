"""The KernelBench suite: tasks read from a KernelBench checkout, parsed statically.

Layout: `KernelBench/level<L>/<id>_<Name>.py`, each defining `Model`, `get_inputs()` and
`get_init_inputs()` with module-level size constants. Levels 1-3 load as tasks; level 4 (models
pulled from a model hub) loads flagged `skipped` and `needs-hub`. Tags, flags and the input sizes
of the `small` preset come from the syntax tree (see `infer_tags`, `infer_flags`,
`kernelbench_preset`); only its work bound executes the source, on PyTorch's `meta` device, which
allocates nothing and runs no arithmetic (see `forward_flops`).
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

from atrl.astnames import parse_source
from atrl.errors import TaskLoadError, UsageError
from atrl.tasks.reference_flops import forward_flops
from atrl.tasks.resize import integer_constants
from atrl.tasks.task import Task

SUITE = "kernelbench"
LEVELS = (1, 2, 3, 4)
HUB_LEVEL = 4
# `small`: every constant above this is capped, then input sizes are shrunk to the element budget.
SMALL_MAX_DIM = 256
# `small`: a bound on the reference forward's FLOPs: a 256^3 matmul is 33.5 MFLOP, and the interpreter runs ~14 calls in the 60 s correctness limit.
SMALL_MAX_FLOPS = 2**26
# Levels whose `small` preset gets the work bound: their references run on the meta device in
# milliseconds; level-3 networks take 0.1-55 s per meta forward (LSTMs step by step), paid at every load.
WORK_BOUND_LEVELS = (1, 2)
# Smallest value the element budget shrinks a constant to: keeps spatial sizes above kernel sizes.
MIN_SHRUNK_DIM = 16
# Batch-size constants are shrunk first and down to MIN_BATCH (2: batch-norm needs more than one value).
BATCH_NAMES = ("batch_size", "batch", "bs", "batch_dim", "n_batch")
MIN_BATCH = 2
FILE_RE = re.compile(r"^(\d+)_(.+)\.py$")
REQUIRED = ("Model", "get_inputs", "get_init_inputs")

# tag -> names of the calls (functions, methods, module classes) that imply it.
TAG_TABLE: dict[str, tuple[str, ...]] = {
    "matmul": ("matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "Linear", "linear", "Bilinear", "tensordot"),
    "conv": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "conv1d",
             "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"),
    "norm": ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d",
             "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm", "batch_norm", "layer_norm",
             "group_norm", "instance_norm", "rms_norm", "normalize", "local_response_norm"),
    "softmax": ("softmax", "log_softmax", "Softmax", "LogSoftmax", "softmin", "Softmin"),
    "activation": ("relu", "ReLU", "relu6", "ReLU6", "gelu", "GELU", "sigmoid", "Sigmoid", "tanh", "Tanh", "silu",
                   "SiLU", "mish", "Mish", "elu", "ELU", "selu", "SELU", "hardswish", "Hardswish", "hardsigmoid",
                   "Hardsigmoid", "hardtanh", "Hardtanh", "leaky_relu", "LeakyReLU", "softplus", "Softplus",
                   "softsign", "Softsign", "swish", "prelu", "PReLU"),
    "reduction": ("sum", "mean", "amax", "amin", "argmax", "argmin", "prod", "cumsum", "cumprod", "logsumexp",
                  "var", "std", "norm", "max", "min"),
    "pooling": ("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
                "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool2d", "max_pool1d", "max_pool2d",
                "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
                "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d"),
    "attention": ("scaled_dot_product_attention", "MultiheadAttention", "TransformerEncoderLayer",
                  "TransformerDecoderLayer", "TransformerEncoder"),
    "loss": ("mse_loss", "cross_entropy", "kl_div", "smooth_l1_loss", "huber_loss", "triplet_margin_loss",
             "cosine_similarity", "nll_loss", "binary_cross_entropy", "MSELoss", "CrossEntropyLoss", "KLDivLoss",
             "SmoothL1Loss", "HuberLoss", "TripletMarginLoss", "NLLLoss", "BCELoss", "HingeEmbeddingLoss"),
    "recurrent": ("LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"),
}
# Words in a task's file name that imply a tag the calls may not show (`torch.clamp(1 - p*t).mean()`).
NAME_TAGS: dict[str, str] = {"loss": "loss", "attention": "attention", "matmul": "matmul", "gemm": "matmul"}
DROPOUT_CALLS = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "dropout", "dropout1d",
                 "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
BATCHNORM_MODULES = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm")
CONV3D_CALLS = ("Conv3d", "ConvTranspose3d", "conv3d", "conv_transpose3d")
# Calls whose work PyTorch's FLOP counter measures (matrix products, convolutions, attention, and the
# layers built from them): a task calling none of them counts 0 FLOPs and is not executed.
_WORK_CALLS = frozenset(TAG_TABLE["matmul"] + TAG_TABLE["conv"] + TAG_TABLE["attention"] + TAG_TABLE["recurrent"]
                        + ("Transformer", "TransformerDecoder", "multi_head_attention_forward", "chain_matmul",
                           "multi_dot", "mv", "inner"))
# Calls in get_inputs() that create a tensor whose shape is given by their size arguments.
_SIZED_CALLS = ("rand", "randn", "zeros", "ones", "empty", "full", "randint")


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def infer_tags(tree: ast.AST, name: str) -> list[str]:
    """Tags (in `TAG_TABLE` order) for the operators a task's module calls, plus those its name implies."""
    called = {n for n in (_call_name(c) for c in _calls(tree)) if n}
    tags = [tag for tag, ops in TAG_TABLE.items() if called.intersection(ops)]
    lowered = name.lower()
    for word, tag in NAME_TAGS.items():
        if word in lowered and tag not in tags:
            tags.append(tag)
    return tags


def _is_literal_zero(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in (0, 0.0) and not isinstance(node.value, bool)


def _dropout_prob(call: ast.Call) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == "p":
            return kw.value
    name = _call_name(call) or ""
    # module classes take p first; functions take (input, p)
    position = 0 if name[:1].isupper() else 1
    return call.args[position] if len(call.args) > position else None


def _batchnorm_training(call: ast.Call) -> bool:
    """F.batch_norm(input, mean, var, weight, bias, training, ...) with training not literally False."""
    value = next((kw.value for kw in call.keywords if kw.arg == "training"), None)
    if value is None and len(call.args) > 5:
        value = call.args[5]
    if value is None:
        return False  # F.batch_norm defaults to training=False
    return not (isinstance(value, ast.Constant) and value.value is False)


def infer_flags(tree: ast.AST) -> dict[str, str]:
    """`nondeterministic` (dropout with p not literally 0, batch-norm in training mode) and
    `slow-on-cpu` (3-D convolutions), each with its reason."""
    flags: dict[str, str] = {}
    reasons: list[str] = []
    slow: list[str] = []
    for call in _calls(tree):
        name = _call_name(call) or ""
        if name in DROPOUT_CALLS and not _is_literal_zero(_dropout_prob(call)):
            reasons.append(f"uses {name} (random masks differ between runs)")
        elif name in BATCHNORM_MODULES:
            reasons.append(f"uses {name} in training mode (batch statistics; running stats change on every call)")
        elif name == "batch_norm" and _batchnorm_training(call):
            reasons.append("calls batch_norm with training=True (running stats change on every call)")
        elif name in CONV3D_CALLS:
            slow.append(name)
    if reasons:
        flags["nondeterministic"] = "; ".join(dict.fromkeys(reasons))
    if slow:
        flags["slow-on-cpu"] = f"3-D convolution ({', '.join(dict.fromkeys(slow))}) stays slow on a CPU even when shrunk"
    return flags


# ---- sizes: static evaluation of module constants and of get_inputs() shapes ----------------------

_SAFE_NODES = (ast.Constant, ast.Name, ast.Load, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.List, ast.Add, ast.Sub,
               ast.Mult, ast.FloorDiv, ast.Div, ast.Pow, ast.Mod, ast.LShift, ast.RShift, ast.USub, ast.UAdd,
               ast.Starred)


def _safe_eval(node: ast.expr, env: dict[str, object]) -> object:
    """Evaluate arithmetic on literals and known names; raises ValueError on anything else."""
    for sub in ast.walk(node):
        if not isinstance(sub, _SAFE_NODES):
            raise ValueError(type(sub).__name__)
        if isinstance(sub, ast.Name) and sub.id not in env:
            raise ValueError(sub.id)
    try:
        return eval(compile(ast.Expression(node), "<const>", "eval"), {"__builtins__": {}}, dict(env))
    except Exception as exc:  # arithmetic errors in the file's own expressions
        raise ValueError(str(exc)) from None


def module_constants(tree: ast.Module, values: dict[str, int] | None = None) -> dict[str, object]:
    """Values of the top-level assignments that are arithmetic on literals and earlier constants,
    with `values` substituted for the literal constants they name (as a preset would)."""
    values = values or {}
    env: dict[str, object] = {}
    for stmt in tree.body:
        if not isinstance(stmt, ast.Assign):
            continue
        if len(stmt.targets) > 1:  # chained `H = W = 64`: one constant, named by the first target
            if not all(isinstance(t, ast.Name) for t in stmt.targets):
                continue
            try:
                value = _safe_eval(stmt.value, env)
            except ValueError:
                continue
            for t in stmt.targets:
                env[t.id] = values.get(stmt.targets[0].id, value)  # type: ignore[attr-defined]
            continue
        target = stmt.targets[0]
        names = [target] if isinstance(target, ast.Name) else list(getattr(target, "elts", []))
        if not names or not all(isinstance(n, ast.Name) for n in names):
            continue
        try:
            value = _safe_eval(stmt.value, env)
        except ValueError:
            continue
        if isinstance(target, ast.Name) and isinstance(value, (tuple, list)):
            # elements of a written-out tuple are constants of their own: `SHAPE[0]`
            env[target.id] = type(value)(values.get(f"{target.id}[{i}]", v) for i, v in enumerate(value))
        elif isinstance(target, ast.Name):
            env[target.id] = values.get(target.id, value)
        elif isinstance(value, (tuple, list)) and len(value) == len(names):
            for n, v in zip(names, value, strict=True):
                env[n.id] = values.get(n.id, v)  # type: ignore[attr-defined]
    return env


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == name), None)


def _size_args(call: ast.Call) -> list[ast.expr]:
    name = _call_name(call)
    size = next((kw.value for kw in call.keywords if kw.arg == "size"), None)
    if size is not None:
        return [size]
    if name == "randint":  # randint(high, size) or randint(low, high, size)
        return call.args[2:3] if len(call.args) >= 3 else call.args[1:2]
    if name == "full":
        return call.args[:1]
    return list(call.args)


def _shape_of(args: list[ast.expr], env: dict[str, object]) -> list[int]:
    dims: list[int] = []
    for arg in args:
        if isinstance(arg, ast.Starred):
            value = _safe_eval(arg.value, env)
        else:
            value = _safe_eval(arg, env)
        items = value if isinstance(value, (tuple, list)) else [value]
        for item in items:
            if not isinstance(item, int) or isinstance(item, bool):
                raise ValueError("non-integer size")
            dims.append(item)
    return dims


def input_shapes(tree: ast.Module, values: dict[str, int] | None = None) -> list[list[int]]:
    """Shapes of the tensors `get_inputs()` creates with rand/randn/randint/zeros/ones/empty/full
    whose sizes are arithmetic on module constants (others are left out)."""
    func = _function(tree, "get_inputs")
    if func is None:
        return []
    env = module_constants(tree, values)
    shapes = []
    for call in _calls(func):
        if _call_name(call) not in _SIZED_CALLS:
            continue
        try:
            shapes.append(_shape_of(_size_args(call), env))
        except ValueError:
            continue
    return shapes


def _input_dependencies(tree: ast.Module) -> set[str]:
    """Module-level names the size arguments of get_inputs() depend on, directly or via derived constants."""
    func = _function(tree, "get_inputs")
    if func is None:
        return set()
    used = {n.id for c in _calls(func) if _call_name(c) in _SIZED_CALLS
            for a in _size_args(c) for n in ast.walk(a) if isinstance(n, ast.Name)}
    deps: dict[str, set[str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            rhs = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
            if len(stmt.targets) > 1 and isinstance(stmt.targets[0], ast.Name):
                rhs = rhs | {stmt.targets[0].id}  # chained targets follow the first
            if isinstance(stmt.value, (ast.Tuple, ast.List)) and isinstance(stmt.targets[0], ast.Name):
                rhs = rhs | {f"{stmt.targets[0].id}[{i}]" for i in range(len(stmt.value.elts))}
            for target in stmt.targets:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        deps.setdefault(n.id, set()).update(rhs)
    seen: set[str] = set()
    todo = list(used)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(deps.get(name, ()))
    return seen


def capped(value: int, max_dim: int) -> int:
    """`value` brought to at most `max_dim`, keeping its odd factors 3, 5 and 7 (a channel count of
    480 with groups=3 stays divisible by 3): the small odd part times the largest fitting power of 2."""
    odd = math.gcd(value, 3 * 5 * 7)
    if odd > max_dim:
        return max_dim
    return odd * (1 << (max_dim // odd).bit_length() - 1)


def _is_batch(name: str) -> bool:
    return name.lower() in BATCH_NAMES


def _floor(name: str) -> int:
    return MIN_BATCH if _is_batch(name) else MIN_SHRUNK_DIM


def _may_have_flops(tree: ast.Module) -> bool:
    """Whether the module calls a matrix product, convolution or attention (or uses `@`): the
    only operations `torch.utils.flop_counter` counts."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node) in _WORK_CALLS:
            return True
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.MatMult):
            return True
    return False


def _halve(values: dict[str, int], constants: dict[str, int], shrinkable: set[str]) -> bool:
    """Halve, in `values`, the next constant of `shrinkable` by the `small` rule (see
    `preset_for_source`); False when every one is at its floor."""
    current = {name: values.get(name, constants[name]) for name in shrinkable}
    candidates = [n for n, v in current.items() if v // 2 >= _floor(n)]
    if not candidates:
        return False
    # batch sizes first (they change no geometry), then the largest size
    largest = max(candidates, key=lambda n: (_is_batch(n) and current[n] > MIN_BATCH, current[n], n))
    # sizes equal to it shrink with it: equal sizes are often required to match (square
    # matrices, a batch that broadcasts against a feature dimension)
    for name in candidates:
        if current[name] == current[largest]:
            values[name] = current[name] // 2
    return True


def _fit_work(source: str, constants: dict[str, int], values: dict[str, int], shrinkable: set[str],
              max_flops: int) -> dict[str, int]:
    """`values` halved further (by `_halve`) until the forward's FLOPs are at most `max_flops`, or
    every constant is at its floor; `values` itself where the FLOPs cannot be measured."""
    work = dict(values)
    for _ in range(64):
        flops = forward_flops(source, work)
        if flops is None:
            return values
        if flops <= max_flops or not _halve(work, constants, shrinkable):
            return work
    return work


def preset_for_source(source: str, max_dim: int, max_elements: int | None = None,
                      max_flops: int | None = None) -> dict[str, int]:
    """Constant values that make a KernelBench-format module small.

    1. every literal integer constant above `max_dim` is brought below it by `capped` (derived
       constants follow);
    2. while the tensors `get_inputs()` builds hold more than `max_elements` elements in all
       (default `16 * max_dim**2`), a constant those sizes depend on is halved: a batch size first
       (not below `MIN_BATCH`), else the largest (not below `MIN_SHRUNK_DIM`, so convolution
       inputs stay larger than their kernels); constants of equal value are halved together;
    3. with `max_flops`, the work bound: while one reference forward takes more than `max_flops`
       FLOPs (`forward_flops`: matrix products, convolutions and attention, measured on the
       `meta` device), constants are halved further by the same rule. A task that calls none of
       those operations is not executed; one whose forward cannot run on `meta` keeps the sizes
       of step 2.
    Constants at or below the limits are untouched. Returns name -> new value (empty: no change).
    Never raises for a source that parses.
    """
    tree = parse_source(source)
    budget = max_elements if max_elements is not None else 16 * max_dim * max_dim
    constants = integer_constants(source)
    values = {name: capped(value, max_dim) for name, value in constants.items() if value > max_dim}
    shrinkable = _input_dependencies(tree).intersection(constants)
    for _ in range(64):
        total = sum(math.prod(shape) for shape in input_shapes(tree, values))
        if total <= budget or not _halve(values, constants, shrinkable):
            break
    if max_flops is not None and _may_have_flops(tree):
        values = _fit_work(source, constants, values, shrinkable, max_flops)
    return {name: value for name, value in values.items() if value != constants[name]}


def kernelbench_preset(task: Task, max_dim: int, max_elements: int | None = None,
                       max_flops: int | None = None) -> dict[str, int]:
    """A size preset (constant name -> value) for any single-case task, capped at `max_dim`
    (see `preset_for_source`). Apply it with `task.source_at` or `resize.substitute_constants`."""
    return preset_for_source(task.source, max_dim, max_elements, max_flops=max_flops)


def resolve_preset(task: Task, preset: str | None = None, max_dim: int | None = None) -> tuple[str, dict[str, int]]:
    """The sizes to show or run a task at: (label, constant values).

    `max_dim` makes a preset on the fly (`kernelbench_preset`); `preset` names one of the task's;
    neither: `small` where the task has it, else the source as written. Raises `UsageError` for
    both at once, an unknown preset, or resizing a multi-case task (its sizes are its cases).
    """
    if preset is not None and max_dim is not None:
        raise UsageError("--preset and --max-dim both given", "pass one of them")
    if max_dim is not None:
        if task.multi_case:
            raise UsageError(f"{task.id} takes its sizes from its shape cases", "drop --max-dim")
        if max_dim < 1:
            raise UsageError(f"--max-dim must be positive, not {max_dim}")
        return f"max-dim {max_dim}", kernelbench_preset(task, max_dim)
    if preset is None:
        return ("small", task.presets["small"]) if "small" in task.presets else ("as written", {})
    if preset not in task.presets:
        have = ", ".join(sorted(task.presets)) or "none: its sizes are its shape cases"
        raise UsageError(f"{task.id} has no preset {preset!r}", f"its presets: {have}")
    return preset, task.presets[preset]


def describe(tree: ast.Module, name: str) -> str:
    """The first paragraph of the Model docstring, else of the module docstring, else the file name."""
    model = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == "Model"), None)
    for node in (model, tree):
        doc = ast.get_docstring(node) if node is not None else None
        if doc and doc.strip():
            return " ".join(doc.strip().split("\n\n")[0].split())
    return name.replace("_", " ").strip()


def parse_module(path: Path, required: tuple[str, ...]) -> tuple[str, ast.Module]:
    """Read and parse a task file; `TaskLoadError` if it does not parse or lacks a required definition."""
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskLoadError(str(path), f"cannot be read ({exc})") from None
    try:
        tree = parse_source(source, filename=str(path))
    except SyntaxError as exc:
        raise TaskLoadError(str(path), f"syntax error on line {exc.lineno}: {exc.msg}", "fix the file") from None
    defined = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))}
    missing = [n for n in required if n not in defined]
    if missing:
        raise TaskLoadError(str(path), f"does not define {', '.join(missing)}", f"a task defines {', '.join(required)}")
    return source, tree


def compute_policy_for(level: int) -> str:
    """Level 1 tasks are single operators: the operator is the work, so all of it is Triton's
    (`strict`). Higher levels chain operators, and KernelBench lets PyTorch keep some of them
    (e.g. a convolution with a fused Triton epilogue): `partial`."""
    return "strict" if level == 1 else "partial"


def load_kernelbench_task(path: Path, level: int) -> Task:
    """One KernelBench file as a `Task` (raises `TaskLoadError`)."""
    match = FILE_RE.match(path.name)
    if not match:
        raise TaskLoadError(str(path), "file name is not <id>_<Name>.py")
    source, tree = parse_module(path, REQUIRED)
    name = path.name[: -len(".py")]
    flags = infer_flags(tree)
    presets: dict[str, dict[str, int]] = {"full": {}}
    if level == HUB_LEVEL:
        flags["skipped"] = "level 4 loads pretrained weights from a model hub; not runnable offline"
        flags["needs-hub"] = "downloads model weights and configs at construction time"
    else:
        max_flops = SMALL_MAX_FLOPS if level in WORK_BOUND_LEVELS else None
        presets["small"] = preset_for_source(source, SMALL_MAX_DIM, max_flops=max_flops)
    return Task(
        id=f"{SUITE}/level{level}/{name}",
        suite=SUITE,
        name=name,
        level=level,
        source=source,
        tags=infer_tags(tree, match.group(2)),
        description=describe(tree, match.group(2)),
        presets=presets,
        flags=flags,
        path=str(path),
        compute_policy=compute_policy_for(level),
    )


def _levels_dir(root: Path) -> Path:
    """Accept the repository root or its `KernelBench/` folder."""
    inner = root / "KernelBench"
    return inner if inner.is_dir() and not any(root.glob("level[0-9]*")) else root


def _file_order(path: Path) -> tuple[int, str]:
    match = FILE_RE.match(path.name)
    return (int(match.group(1)) if match else 1 << 30, path.name)


def load_kernelbench(root: Path) -> tuple[list[Task], list[TaskLoadError]]:
    """All tasks of a KernelBench checkout (levels 1-4, level 4 flagged skipped), ordered by level
    then id, and one `TaskLoadError` per file that could not be read (the others still load)."""
    base = _levels_dir(Path(root))
    tasks: list[Task] = []
    errors: list[TaskLoadError] = []
    for level in LEVELS:
        for path in sorted((base / f"level{level}").glob("*.py"), key=_file_order):
            if path.name.startswith("_"):
                continue
            try:
                tasks.append(load_kernelbench_task(path, level))
            except TaskLoadError as exc:
                errors.append(exc)
    return tasks, errors
