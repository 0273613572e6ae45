"""Query builders: the text searched for a task (its operators and tags) and for a verdict
(its failure class, stage and message).

Tasks and verdicts are read duck-typed (`source`, `tags`, `name`, `description`; `error_class`,
`stage`, `message`, `feedback`) so the knowledge base needs neither the tasks nor the harness.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from atrl.astnames import dotted_name, parse_source

# Words that steer retrieval toward the right guide for a PyTorch operator (matched on the
# last component of the called name, lower-case).
OPERATOR_HINTS: dict[str, str] = {
    "matmul": "matmul tl.dot", "mm": "matmul tl.dot", "bmm": "bmm matmul tl.dot batched",
    "linear": "linear matmul tl.dot bias", "addmm": "matmul tl.dot bias", "einsum": "matmul tl.dot",
    "softmax": "softmax reduction", "log_softmax": "log_softmax softmax reduction",
    "logsumexp": "logsumexp softmax reduction", "layer_norm": "layer_norm normalization",
    "layernorm": "layer_norm normalization", "rms_norm": "rms_norm normalization",
    "rmsnorm": "rms_norm normalization", "group_norm": "group_norm normalization",
    "groupnorm": "group_norm normalization", "normalize": "l2_norm normalization",
    "conv2d": "conv conv2d", "conv1d": "conv", "max_pool2d": "max_pool2d pooling",
    "maxpool2d": "max_pool2d pooling", "avg_pool1d": "avg_pool1d pooling", "avgpool1d": "avg_pool1d pooling",
    "gelu": "gelu activation", "relu": "relu activation", "silu": "silu activation",
    "sigmoid": "sigmoid activation", "tanh": "tanh activation", "cumsum": "cumsum scan",
    "cumprod": "cumprod scan", "sum": "sum reduction", "mean": "mean reduction", "amax": "max reduction",
    "max": "max reduction", "min": "min reduction", "argmax": "argmax reduction",
    "cross_entropy": "cross_entropy loss log_softmax", "mse_loss": "mse_loss loss reduction",
    "embedding": "embedding gather", "gather": "gather", "index_select": "index_select gather",
    "transpose": "transpose layout", "permute": "permute layout",
    "scaled_dot_product_attention": "attention softmax matmul",
}
_BINOP_WORDS = {ast.MatMult: "matmul tl.dot", ast.Pow: "pow"}


def reference_operators(source: str) -> list[str]:
    """Called names (`torch.softmax`, `F.layer_norm`, `nn.Linear`, `x.sum`) and operator words
    (`@` → matmul) in the reference module, in order of first appearance. Unparsable → []."""
    try:
        tree = parse_source(source)
    except SyntaxError:
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = dotted_name(node.func)
            if name and not name.startswith(("self.", "super")) and name not in ("range", "len"):
                found.append(name)
            elif name and name.startswith("self.") and isinstance(node.func, ast.Attribute):
                found.append(node.func.attr)
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP_WORDS:
            found.append(_BINOP_WORDS[type(node.op)])
    return list(dict.fromkeys(found))


def task_query(task: Any) -> str:
    """Search text for a task: its name, tags, the operators its reference calls (with hint
    words for the known ones) and its description."""
    operators = reference_operators(getattr(task, "source", "") or "")
    hints = []
    for name in operators:
        last = name.rsplit(".", 1)[-1].lower()
        hints.append(OPERATOR_HINTS.get(last, ""))
    name = getattr(task, "name", "") or ""
    parts = [name.replace("_", " "), name, " ".join(getattr(task, "tags", []) or []),
             " ".join(operators), " ".join(h for h in hints if h), getattr(task, "description", "") or ""]
    return " ".join(p for p in parts if p).strip()


_LINE_NOISE = re.compile(r"\b0x[0-9a-f]+\b|\b\d+(\.\d+)?(e[-+]?\d+)?\b", re.IGNORECASE)


def verdict_query(verdict: Any) -> str:
    """Search text for a failed verdict: its error class (twice: it is the strongest signal),
    stage and message (or its feedback when there is no message), numbers removed. The message's
    last line (where the exception is) is repeated: the lines above are mostly the user's code."""
    error_class = getattr(verdict, "error_class", None) or ""
    message = getattr(verdict, "message", "") or getattr(verdict, "feedback", "") or ""
    lines = [line for line in message.strip().splitlines() if line.strip()]
    last = lines[-1] if len(lines) > 1 else ""
    parts = [error_class, error_class, getattr(verdict, "stage", "") or "", message, last, last]
    parts = [_LINE_NOISE.sub(" ", p) for p in parts]
    return " ".join(p for p in parts if p).strip()
