"""The verdict cache: keyed by everything that decides a verdict, atomic, skips load-dependent classes."""

from __future__ import annotations

from dataclasses import replace

from atrl.harness.cache import VerdictCache, cache_key, default_cache_dir
from atrl.harness.verdict import CorrectnessStats, Verdict
from atrl.tasks.task import Task

TASK = Task(id="builtin/relu", suite="builtin", name="relu", level=1, source="N = 8\n",
            presets={"small": {"N": 4}})
OPTIONS = {"trials": 5, "timed_calls": 100}


def _key(**kw) -> str:
    args = dict(task=TASK, preset="small", code="code", backend="interpreter", device="cpu",
                harness_version="1", options=OPTIONS)
    args.update(kw)
    return cache_key(**args)


def test_key_changes_with_every_input_that_decides_a_verdict():
    base = _key()
    variants = [_key(code="code2"), _key(preset=None), _key(backend="cuda"), _key(device="H200"),
                _key(harness_version="2"), _key(options={**OPTIONS, "trials": 3}),
                _key(task=replace(TASK, source="N = 8\nM = 1\n")), _key(task=replace(TASK, atol=1e-3)),
                _key(task=replace(TASK, id="builtin/relu2"))]
    assert len({base, *variants}) == len(variants) + 1
    assert _key() == base


def test_round_trip_marks_cached(tmp_path):
    cache = VerdictCache(tmp_path)
    verdict = Verdict(task_id="builtin/relu", candidate_hash="h", backend="interpreter", device="cpu", stage="done",
                      ok=True, correctness=CorrectnessStats(trials=5, passed=5), score=1.0)
    assert cache.get("builtin/relu", "k") is None
    assert cache.put("builtin/relu", "k", verdict)
    hit = cache.get("builtin/relu", "k")
    assert hit is not None and hit.cached and hit.ok and hit.correctness.passed == 5
    assert not verdict.cached
    assert not list(tmp_path.rglob(".tmp-*"))  # the temporary file was renamed into place


def test_timeouts_and_crashes_are_not_stored(tmp_path):
    cache = VerdictCache(tmp_path)
    for error_class in ("timeout", "crash", "out-of-memory", "cuda:error"):
        verdict = Verdict(task_id="t/x", candidate_hash="h", backend="b", device="d", stage="compile", ok=False,
                          error_class=error_class)
        assert not cache.put("t/x", error_class, verdict)
        assert cache.get("t/x", error_class) is None


def test_unreadable_entry_is_a_miss(tmp_path):
    cache = VerdictCache(tmp_path)
    path = tmp_path / "t__x" / "k.json"
    path.parent.mkdir()
    path.write_text('{"task_id": ')
    assert cache.get("t/x", "k") is None


def test_default_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ATRL_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path


def test_key_ignores_constants_the_preset_overrides():
    assert _key(task=replace(TASK, source="N = 9\n")) == _key()
