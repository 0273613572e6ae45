"""KnowledgeInjector: budgets never exceeded, own solution never shown, error-fix entry first."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from atrl.harness.feedback.failures import ASCEND_ONLY_CLASSES, FAILURE_CLASSES
from atrl.kb.budget import approx_tokens, pack
from atrl.kb.inject import KnowledgeInjector
from atrl.kb.retriever import default_retriever
from atrl.tasks.registry import load_suite

TASKS = load_suite("builtin").tasks
SOLVED = [t for t in TASKS if t.solution]


def _verdict(error_class: str, message: str = "", ok: bool = False) -> SimpleNamespace:
    stage = error_class.split(":")[0] if ":" in error_class else "correctness"
    return SimpleNamespace(ok=ok, error_class=None if ok else error_class, stage=stage, message=message,
                           feedback="")


def _word_count(text: str) -> int:
    return len(text.split())


@pytest.mark.parametrize("task", SOLVED, ids=lambda t: t.name)
def test_for_episode_never_shows_the_tasks_own_solution(task) -> None:
    injector = KnowledgeInjector("cuda", budget_tokens=4000, exclude_tasks=[task.id])
    text = injector.for_episode(task)
    assert f"example/{task.name}" not in text and f"Example: {task.name} (" not in text
    assert task.solution.strip() not in text
    # the task itself is excluded even when the caller forgot to list it
    assert task.solution.strip() not in KnowledgeInjector("cuda", budget_tokens=4000).for_episode(task)


def test_for_episode_includes_a_worked_example_of_the_family() -> None:
    task = next(t for t in TASKS if t.name == "softmax")
    text = KnowledgeInjector("cuda", budget_tokens=4000).for_episode(task)
    assert "## Example: " in text and "softmax" in text.split("## Example: ")[1].splitlines()[0]


def test_example_allowlist_restricts_examples_to_listed_tasks() -> None:
    task = next(t for t in TASKS if t.name == "log_softmax")
    allowed = ["builtin/relu"]
    text = KnowledgeInjector("cuda", budget_tokens=4000, allow_example_tasks=allowed).for_episode(task)
    shown = {line.split("(")[0].removeprefix("## Example: ").strip()
             for line in text.splitlines() if line.startswith("## Example: ")}
    assert shown <= {"relu"}


def test_token_budget_is_never_exceeded() -> None:
    rng = random.Random(0)
    classes = sorted(FAILURE_CLASSES)
    counters = [approx_tokens, _word_count, len]
    for trial in range(60):
        budget = rng.choice([0, 1, 10, 40, 80, 150, 300, 600, 1200])
        count = counters[trial % len(counters)]
        platform = ["cuda", "interpreter", "ascend"][trial % 3]
        injector = KnowledgeInjector(platform, budget_tokens=budget, count_tokens=count)
        task = rng.choice(TASKS)
        assert count(injector.for_episode(task)) <= budget
        verdict = _verdict(rng.choice(classes), rng.choice(["", "IndexError: out of range", "at 3:4: arange"]))
        assert count(injector.after_verdict(task, verdict)) <= budget


def test_pack_never_exceeds_the_budget_for_any_pieces() -> None:
    rng = random.Random(1)
    words = "mask tl.dot block grid stride\nline".split(" ")
    for _ in range(200):
        pieces = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 80))) for _ in range(rng.randint(0, 5))]
        budget = rng.randint(0, 120)
        text, used = pack(pieces, budget)
        assert approx_tokens(text) <= budget
        assert all(0 <= i < len(pieces) for i in used)


def test_after_verdict_puts_the_classes_error_fix_entry_first() -> None:
    retriever = default_retriever()
    task = TASKS[0]
    for error_class in sorted(FAILURE_CLASSES):
        platform = "ascend" if error_class in ASCEND_ONLY_CLASSES else "cuda"
        injector = KnowledgeInjector(platform, budget_tokens=5000)
        text = injector.after_verdict(task, _verdict(error_class))
        titles = {f"## {e.title}" for e in retriever.error_fix_entries(error_class, platform)}
        assert text.splitlines()[0] in titles, error_class


def test_after_verdict_picks_the_matching_entry_among_several_for_a_class() -> None:
    verdict = _verdict("compile:triton", "at 10:11: arange's range must be a power of 2")
    text = KnowledgeInjector("cuda", budget_tokens=2000).after_verdict(TASKS[0], verdict)
    assert text.startswith("## tl.arange needs a power-of-2 constexpr range")


def test_after_verdict_leads_with_the_entry_the_diagnosis_names() -> None:
    verdict = _verdict("correctness:mismatch", "output differs beyond atol=0.0001: 100% of elements mismatched")
    verdict.diagnosis = {"cause": "precision", "kb_entry": "fix-precision-tf32"}
    text = KnowledgeInjector("cuda", budget_tokens=2000).after_verdict(TASKS[0], verdict)
    assert text.startswith("## TF32 in tl.dot")
    verdict.diagnosis = {"cause": "precision", "kb_entry": "no-such-entry"}  # unknown ids fall back to the class
    assert KnowledgeInjector("cuda").verdict_fixes(verdict)[0].id != "no-such-entry"


def test_after_verdict_is_empty_for_an_ok_verdict() -> None:
    assert KnowledgeInjector("cuda").after_verdict(TASKS[0], _verdict("", ok=True)) == ""


def test_interpreter_platform_can_show_cuda_guides_but_cuda_never_shows_interpreter_entries() -> None:
    task = next(t for t in TASKS if t.name == "matmul")
    retriever = default_retriever()
    interp_titles = {f"## {e.title}" for e in retriever.list() if e.platform == "interpreter"}
    cuda_text = KnowledgeInjector("cuda", budget_tokens=5000).for_episode(task)
    assert not any(title in cuda_text for title in interp_titles)
    interp_text = KnowledgeInjector("interpreter", budget_tokens=5000).for_episode(task)
    assert any(title in interp_text for title in interp_titles)
    assert "tl.dot" in interp_text
