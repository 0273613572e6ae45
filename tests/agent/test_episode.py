"""Episodes with compaction, driven by replayed responses and a marker-scoring fake harness."""

from __future__ import annotations

from atrl.agent import prompts
from atrl.agent.config import AgentConfig
from atrl.agent.episode import run_episodes
from atrl.policy.replay import ReplayPolicy
from atrl.policy.simple_tokenizer import tokenize

BIG = 100_000


def turns(task_id: str, n: int, attempt_text, good_at: int | None = None) -> list[dict]:
    return [{"task_id": task_id, "turn": i, "response": attempt_text(i, good=i == good_at)} for i in range(n)]


def test_compaction_fires_every_turns_per_segment(task, harness, write_replay, attempt_text):
    recs = turns(task.id, 5, attempt_text)
    recs += [{"task_id": task.id, "turn": t, "kind": "summary", "response": f"Summary after turn {t}."} for t in (1, 3)]
    policy = ReplayPolicy(write_replay(recs))
    cfg = AgentConfig(max_turns=5, turns_per_segment=2, max_segments=10, context_budget=BIG,
                      max_response_tokens=200, summary_tokens=50)
    (traj,) = run_episodes(policy, harness, [task], 1, cfg)
    assert [s.turns for s in traj.segments] == [[0, 1], [2, 3], [4]]
    assert [s.summary_text for s in traj.segments] == ["Summary after turn 1.", "Summary after turn 3.", None]
    assert traj.stop_reason == "max_turns"
    assert traj.compactions == 2


def _measure(task, harness, write_replay, attempt_text, n_turns):
    """Token counts of a run without compaction: fresh context, per-turn growth, scaffolding."""
    policy = ReplayPolicy(write_replay(turns(task.id, n_turns, attempt_text)))
    cfg = AgentConfig(max_turns=n_turns, turns_per_segment=100, context_budget=BIG, max_response_tokens=200,
                      summary_tokens=40)
    (traj,) = run_episodes(policy, harness, [task], 1, cfg)
    header = len(tokenize("<|im_start|>assistant\n"))
    starts = [traj.turns[i].response_start - header for i in range(n_turns)]
    return starts, policy


def test_compaction_fires_exactly_when_the_budget_rule_says(task, harness, write_replay, attempt_text):
    starts, _ = _measure(task, harness, write_replay, attempt_text, 6)
    header = len(tokenize("<|im_start|>assistant\n"))
    closing = len(tokenize("<|im_end|>\n"))
    summary_tokens, max_resp = 40, 200
    # the instruction message: template scaffolding and content are tokenized as separate pieces
    instr = sum(len(tokenize(t)) for t in ("<|im_start|>user\n", prompts.compaction_instruction(summary_tokens),
                                           "<|im_end|>\n"))
    reserve = instr + header + summary_tokens + closing
    # room for exactly three turns: turn i starts iff starts[i] + header + max_resp + closing + reserve <= budget
    budget = starts[2] + header + max_resp + closing + reserve
    assert starts[3] + header + max_resp + closing + reserve > budget
    recs = turns(task.id, 6, attempt_text) + [{"task_id": task.id, "turn": 2, "kind": "summary", "response": "S."}]
    cfg = AgentConfig(max_turns=6, turns_per_segment=100, max_segments=2, context_budget=budget,
                      max_response_tokens=max_resp, summary_tokens=summary_tokens)
    (traj,) = run_episodes(ReplayPolicy(write_replay(recs, "b.jsonl")), harness, [task], 1, cfg)
    assert traj.segments[0].turns == [0, 1, 2]
    assert traj.segments[0].summary_text == "S."
    # one token less and the third turn no longer fits
    cfg.context_budget = budget - 1
    (traj,) = run_episodes(ReplayPolicy(write_replay(recs, "c.jsonl")), harness, [task], 1, cfg)
    assert traj.segments[0].turns == [0, 1]


def test_next_segment_starts_from_system_kb_task_summary_best_kernel(task, harness, knowledge, write_replay,
                                                                      attempt_text):
    recs = turns(task.id, 3, attempt_text)
    recs.append({"task_id": task.id, "turn": 1, "kind": "summary", "response": "Tried two kernels; mismatch."})
    cfg = AgentConfig(max_turns=3, turns_per_segment=2, context_budget=BIG, max_response_tokens=300)
    (traj,) = run_episodes(ReplayPolicy(write_replay(recs)), harness, [task], 1, cfg, knowledge=knowledge)
    seg = traj.segments[1]
    types = [sp.type for sp in seg.spans]
    assert types[:6] == ["instruction", "kb", "task", "summary", "carried_kernel", "response"]
    text = {sp.type: ReplayPolicy.detokenize(None, seg.token_ids[sp.start:sp.end]) for sp in seg.spans[:5]}
    assert knowledge.for_episode(task) in text["kb"]
    assert "class Model" in text["task"]
    assert "Tried two kernels; mismatch." in text["summary"]
    assert "# attempt_1" in text["carried_kernel"] and "# attempt_0" not in text["carried_kernel"] and "Incorrect: max abs error" in text["carried_kernel"]
    assert seg.kb_text == knowledge.for_episode(task)
    assert traj.best_turn == 2  # every attempt scores 0.1; ties go to the latest


def test_structured_fallback_replaces_an_empty_summary(task, harness, write_replay, attempt_text):
    recs = turns(task.id, 3, attempt_text)  # no summary lines: the replayed summary is empty
    cfg = AgentConfig(max_turns=3, turns_per_segment=2, context_budget=BIG, max_response_tokens=300)
    (traj,) = run_episodes(ReplayPolicy(write_replay(recs)), harness, [task], 1, cfg)
    seg0 = traj.segments[0]
    assert seg0.summary_fallback is True
    assert seg0.summary_text.startswith("Attempts so far: 2.")
    assert "correctness:mismatch" in seg0.summary_text
    carried = [sp for sp in traj.segments[1].spans if sp.type == "summary"][0]
    assert "Attempts so far: 2." in ReplayPolicy.detokenize(None, traj.segments[1].token_ids[carried.start:carried.end])


def test_token_records_cover_every_token_with_contiguous_typed_spans(task, harness, knowledge, write_replay,
                                                                    attempt_text):
    cfg = AgentConfig(max_turns=5, turns_per_segment=2, context_budget=BIG, max_response_tokens=300)
    (traj,) = run_episodes(ReplayPolicy(write_replay(turns(task.id, 5, attempt_text))), harness, [task], 1, cfg,
                           knowledge=knowledge)
    assert len(traj.segments) == 3
    for seg in traj.segments:
        assert len(seg.token_ids) == len(seg.token_types) == len(seg.logprobs)
        pos = 0
        for sp in seg.spans:
            assert sp.start == pos and sp.end > sp.start
            assert set(seg.token_types[sp.start:sp.end]) == {sp.type}
            pos = sp.end
        assert pos == len(seg.token_ids)
        assert set(seg.token_types) <= {"instruction", "kb", "task", "response", "summary", "feedback",
                                        "carried_kernel"}
    for turn in traj.turns:
        seg = traj.segments[turn.segment]
        assert seg.token_types[turn.response_start:turn.response_end] == ["response"] * (
            turn.response_end - turn.response_start)
        assert ReplayPolicy.detokenize(None, seg.token_ids[turn.response_start:turn.response_end - 1]) == \
            turn.response_text


def test_every_prompt_is_a_prefix_of_its_segment_final_context(task, harness, write_replay, attempt_text):
    base = ReplayPolicy(write_replay(turns(task.id, 7, attempt_text)))
    prompts_seen: list[tuple[str, int, list[int]]] = []

    class Recording(ReplayPolicy):
        def __init__(self) -> None:
            self.__dict__.update(base.__dict__)

        def generate(self, requests, params):
            prompts_seen.extend((r.kind, r.turn, list(r.prompt_ids)) for r in requests)
            return super().generate(requests, params)

    cfg = AgentConfig(max_turns=7, turns_per_segment=3, context_budget=BIG, max_response_tokens=300)
    (traj,) = run_episodes(Recording(), harness, [task], 1, cfg)
    assert len(prompts_seen) == 7 + 2
    for kind, turn, ids in prompts_seen:
        seg = traj.segments[traj.turns[turn].segment]
        assert seg.token_ids[: len(ids)] == ids, (kind, turn)
        if kind == "turn":
            assert len(ids) == traj.turns[turn].response_start


def test_no_context_ever_exceeds_the_budget(task, harness, knowledge, write_replay, attempt_text):
    long = {"task_id": task.id, "turn": 0, "response": attempt_text(0) + " padding" * 400}
    recs = [long] + turns(task.id, 8, attempt_text)[1:]
    for budget in (1400, 1600, 2000, 3000):
        cfg = AgentConfig(max_turns=8, turns_per_segment=8, max_segments=8, context_budget=budget,
                          max_response_tokens=250, summary_tokens=60)
        (traj,) = run_episodes(ReplayPolicy(write_replay(recs, f"{budget}.jsonl")), harness, [task], 1, cfg,
                               knowledge=knowledge)
        assert traj.segments, budget
        assert all(len(s.token_ids) <= budget for s in traj.segments)
        assert traj.turns[0].finish_reason == "length"
        assert len(traj.turns) == 8 and (traj.compactions >= 1) == (budget < 3000)



def test_the_policy_is_told_when_its_answer_was_cut_at_the_token_limit(task, harness, write_replay, attempt_text):
    long = {"task_id": task.id, "turn": 0, "response": attempt_text(0) + " padding" * 400}
    recs = [long] + turns(task.id, 2, attempt_text)[1:]
    cfg = AgentConfig(max_turns=2, turns_per_segment=2, context_budget=BIG, max_response_tokens=250)
    (traj,) = run_episodes(ReplayPolicy(write_replay(recs, "cut.jsonl")), harness, [task], 1, cfg)
    assert [t.finish_reason for t in traj.turns] == ["length", "stop"]
    from atrl.policy.simple_tokenizer import detokenize

    context = detokenize(traj.segments[0].token_ids)
    note = "Your answer was cut at the limit of 250 tokens"
    assert context.count(note) == 1  # after the cut answer, not after the complete one
    assert context.index(note) < context.index("Result of attempt 2")


def test_a_fresh_context_that_cannot_fit_a_turn_ends_the_episode(task, harness, write_replay, attempt_text):
    cfg = AgentConfig(max_turns=3, context_budget=600, max_response_tokens=200)
    (traj,) = run_episodes(ReplayPolicy(write_replay(turns(task.id, 3, attempt_text))), harness, [task], 1, cfg)
    assert traj.stop_reason == "context_budget"
    assert traj.segments == [] and traj.turns == []


def test_target_score_ends_the_episode(task, harness, write_replay, attempt_text):
    cfg = AgentConfig(max_turns=6, target_score=1.0, context_budget=BIG, max_response_tokens=300)
    recs = turns(task.id, 6, attempt_text, good_at=2)
    (traj,) = run_episodes(ReplayPolicy(write_replay(recs)), harness, [task], 1, cfg)
    assert traj.stop_reason == "target_score" and len(traj.turns) == 3
    assert traj.best_score == 1.0 and traj.best_turn == 2


def test_max_segments_ends_the_episode_instead_of_compacting(task, harness, write_replay, attempt_text):
    cfg = AgentConfig(max_turns=9, turns_per_segment=2, max_segments=2, context_budget=BIG, max_response_tokens=300)
    (traj,) = run_episodes(ReplayPolicy(write_replay(turns(task.id, 9, attempt_text))), harness, [task], 1, cfg)
    assert traj.stop_reason == "max_segments"
    assert [s.turns for s in traj.segments] == [[0, 1], [2, 3]]
    assert traj.segments[-1].summary_text is None


def test_all_active_episodes_share_one_generate_call_per_round(harness, knowledge, write_replay, attempt_text,
                                                              make_task):
    tasks = [make_task("relu"), make_task("gelu")]
    recs = [r for t in tasks for r in turns(t.id, 4, attempt_text, good_at=1 if t.name == "gelu" else None)]
    base = ReplayPolicy(write_replay(recs))
    calls: list[tuple[str, int]] = []

    class Counting(ReplayPolicy):
        def __init__(self) -> None:
            self.__dict__.update(base.__dict__)

        def generate(self, requests, params):
            calls.append((requests[0].kind, len(requests)))
            assert len({r.kind for r in requests}) == 1
            return super().generate(requests, params)

    cfg = AgentConfig(max_turns=4, turns_per_segment=2, target_score=1.0, context_budget=BIG, max_response_tokens=300)
    done = []
    trajs = run_episodes(Counting(), harness, tasks, 3, cfg, knowledge=knowledge, on_trajectory=done.append)
    assert [(t.task_id, t.sample) for t in trajs] == [(tasks[i].id, s) for i in range(2) for s in range(3)]
    # round 1: six turns; round 2: six turns, then the three relu episodes compact (gelu hit the target)
    assert calls == [("turn", 6), ("turn", 6), ("summary", 3), ("turn", 3), ("turn", 3)]
    assert len(harness.submitted) == 6 + 6 + 3 + 3
    assert sorted(id(t) for t in done) == sorted(id(t) for t in trajs)
    assert {t.stop_reason for t in trajs if t.task_id == "builtin/gelu"} == {"target_score"}


def test_kb_text_after_a_verdict_is_recorded_and_typed_kb(task, harness, knowledge, write_replay, attempt_text):
    cfg = AgentConfig(max_turns=2, context_budget=BIG, max_response_tokens=300)
    (traj,) = run_episodes(ReplayPolicy(write_replay(turns(task.id, 2, attempt_text))), harness, [task], 1, cfg,
                           knowledge=knowledge)
    seg = traj.segments[0]
    assert traj.turns[0].kb_text == "Hint for correctness:mismatch: check the offsets."
    kb_after = [sp for sp in seg.spans if sp.type == "kb" and sp.turn == 0]
    assert len(kb_after) == 1
    assert "check the offsets" in ReplayPolicy.detokenize(None, seg.token_ids[kb_after[0].start:kb_after[0].end])
    cfg.kb = False
    (traj,) = run_episodes(ReplayPolicy(write_replay(turns(task.id, 2, attempt_text), "x.jsonl")), harness, [task],
                           1, cfg, knowledge=knowledge)
    assert "kb" not in traj.segments[0].token_types and traj.turns[0].kb_text == ""


def test_only_sampled_tokens_are_trainable(task, harness, write_replay, attempt_text):
    from atrl.agent.records import Segment

    cfg = AgentConfig(max_turns=1, context_budget=BIG, max_response_tokens=300)
    (traj,) = run_episodes(ReplayPolicy(write_replay(turns(task.id, 1, attempt_text))), harness, [task], 1, cfg)
    assert not any(traj.segments[0].trainable_mask())  # replay has no log-probs
    seg = Segment(index=0, token_ids=[1, 2, 3, 4], token_types=["task", "response", "response", "summary"],
                  logprobs=[None, None, -0.5, -0.25])
    assert seg.trainable_mask() == [False, False, True, True]
