"""Retrieval: platform filtering, example exclusion and allowlists, determinism, query builders."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from atrl.errors import UsageError
from atrl.kb.entries import Entry
from atrl.kb.queries import reference_operators, task_query, verdict_query
from atrl.kb.retriever import Retriever, default_retriever, tokenize


def _entry(id_: str, platform: str, body: str, kind: str = "guide", task_id: str | None = None) -> Entry:
    return Entry(id=id_, platform=platform, kind=kind, title=id_, tags=("shared",), body=body, task_id=task_id)


@pytest.fixture(scope="module")
def small() -> Retriever:
    return Retriever([
        _entry("ascend-ub", "ascend", "# UB\nunified buffer tiling loop grid cores"),
        _entry("cuda-warps", "cuda", "# Warps\nnum_warps tiling loop grid"),
        _entry("interp-print", "interpreter", "# Print\ndebug print tiling loop"),
        _entry("any-mask", "any", "# Mask\nmask tiling loop"),
        _entry("example/a", "any", "# A\nsoftmax tiling loop", kind="example", task_id="builtin/a"),
        _entry("example/b", "any", "# B\nsoftmax tiling", kind="example", task_id="builtin/b"),
    ])


def test_ascend_entries_never_returned_for_cuda_and_vice_versa(small: Retriever) -> None:
    cuda = {h.entry_id for h in small.search("tiling loop grid unified buffer warps", "cuda", k=10)}
    ascend = {h.entry_id for h in small.search("tiling loop grid unified buffer warps", "ascend", k=10)}
    assert "ascend-ub" not in cuda and "cuda-warps" in cuda
    assert "cuda-warps" not in ascend and "ascend-ub" in ascend
    assert "interp-print" not in cuda and "interp-print" not in ascend


def test_interpreter_sees_cuda_interpreter_and_any_entries(small: Retriever) -> None:
    platforms = {h.platform for h in small.search("tiling loop", "interpreter", k=10)}
    assert platforms == {"interpreter", "cuda", "any"}


def test_shipped_ascend_entries_stay_out_of_cuda_results() -> None:
    retriever = default_retriever()
    for query in ("unified buffer 192KB vector core grid", "num_warps ignored int64 npu", "tiling alignment"):
        assert all(h.platform in ("cuda", "any") for h in retriever.search(query, "cuda", k=20))
        assert all(h.platform in ("ascend", "any") for h in retriever.search(query, "ascend", k=20))


def test_excluded_tasks_lose_their_examples(small: Retriever) -> None:
    ids = {h.entry_id for h in small.search("softmax", "cuda", k=10, exclude_tasks=["builtin/a"])}
    assert ids == {"example/b"}


def test_example_allowlist_keeps_only_listed_tasks(small: Retriever) -> None:
    ids = {h.entry_id for h in small.search("softmax tiling", "cuda", k=10, allow_example_tasks=["builtin/a"])}
    assert "example/a" in ids and "example/b" not in ids
    assert "any-mask" in ids  # non-example entries are unaffected


def test_same_query_gives_identical_results_twice_and_on_a_fresh_retriever() -> None:
    queries = ["tiling loop", "softmax", "mask", "correctness:precision tf32 relative error", "arange power of 2"]
    first = [default_retriever().search(q, "interpreter", k=5) for q in queries]
    again = [default_retriever().search(q, "interpreter", k=5) for q in queries]
    fresh = [Retriever().search(q, "interpreter", k=5) for q in queries]
    assert first == again == fresh


def test_ties_are_broken_by_entry_id() -> None:
    retriever = Retriever([_entry(name, "cuda", "# T\nsame words here") for name in ("zeta", "alpha", "mid")])
    assert [h.entry_id for h in retriever.search("same words", "cuda", k=3)] == ["alpha", "mid", "zeta"]


def test_unknown_platform_and_id_are_usage_errors(small: Retriever) -> None:
    with pytest.raises(UsageError, match="platform"):
        small.search("x", "tpu")
    with pytest.raises(UsageError, match="no knowledge-base entry"):
        small.get("missing")


def test_tokenize_keeps_compounds_and_their_parts() -> None:
    tokens = tokenize("Use tl.dot for the layer_norm masks")
    assert {"tl.dot", "tl", "dot", "layer_norm", "layer", "norm", "mask"} <= set(tokens)
    assert "the" not in tokens


def test_reference_operators_finds_calls_layers_and_matmul_operator() -> None:
    source = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.fc = nn.Linear(4, 4)\n"
              "    def forward(self, x, w):\n        return F.layer_norm(torch.softmax(x @ w, -1), (4,)) + self.fc(x)\n")
    ops = reference_operators(source)
    assert {"nn.Linear", "F.layer_norm", "torch.softmax", "matmul tl.dot", "fc"} <= set(ops)


def test_task_query_contains_tags_and_operator_hints() -> None:
    task = SimpleNamespace(name="row_softmax", tags=["softmax"], description="d",
                           source="import torch\ndef f(x):\n    return torch.softmax(x, -1)\n")
    query = task_query(task)
    assert "torch.softmax" in query and "reduction" in query and "softmax" in query


def test_verdict_query_carries_class_stage_and_message_without_numbers() -> None:
    verdict = SimpleNamespace(error_class="correctness:nan", stage="correctness",
                              message="output has NaN/Inf at index 123", feedback="")
    query = verdict_query(verdict)
    assert "correctness:nan" in query and "NaN" in query and "123" not in query


def test_importing_the_retriever_keeps_jax_off_the_gpu():
    # bm25s runs a JAX top-k at import; on a GPU machine JAX would preallocate 75% of each GPU
    import os
    import subprocess
    import sys

    code = "import os; os.environ.pop('JAX_PLATFORMS', None); import atrl.kb.retriever; print(os.environ['JAX_PLATFORMS'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "cpu"
    env = {**os.environ, "JAX_PLATFORMS": "cuda"}
    code = "import os; import atrl.kb.retriever; print(os.environ['JAX_PLATFORMS'])"
    chosen = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert chosen.stdout.strip() == "cuda"  # a user's own choice is kept
