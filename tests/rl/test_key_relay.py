"""The key-relay environment (the credit experiment's second tier): the key is shown only in the
segment where it is issued, so a second-segment answer earns the bonus only when the policy's own
summary carried it; first-attempt scores are noise of the configured spread; the trainer logs the
relay rate."""

from __future__ import annotations

import re

import pytest
from rl_builders import synthetic_tasks, tiny_config

from atrl.agent.config import AgentConfig
from atrl.agent.episode import run_episodes
from atrl.errors import UsageError
from atrl.policy.replay import scripted_generation
from atrl.policy.simple_tokenizer import SimpleTokenizerMixin
from atrl.rl.key_relay import KEY_ALPHABET, KeyRelay, relay_metrics

KEY_RE = re.compile(rf"Key for your next answer: ([{KEY_ALPHABET}]+)\.")


class KeyCopyingPolicy(SimpleTokenizerMixin):
    """Answers with every key it can see in its context; its summaries copy the keys they see
    when `summaries_keep_keys`, else they omit them."""

    name = "key-copying"

    def __init__(self, summaries_keep_keys: bool) -> None:
        self.summaries_keep_keys = summaries_keep_keys

    def generate(self, requests, params):
        out = []
        for request in requests:
            keys = KEY_RE.findall(" ".join(m.content for m in request.messages))
            keys += re.findall(r"remember ([a-z]+)", " ".join(m.content for m in request.messages))
            if request.kind == "summary":
                text = "I tried one answer." + (f" remember {keys[-1]}" if keys and self.summaries_keep_keys else "")
            else:
                text = "answer " + " ".join(keys) if keys else "answer without a key"
            out.append(scripted_generation(text, params.max_tokens, self.eos_id))
        return out


AGENT = AgentConfig(max_turns=2, turns_per_segment=1, max_segments=2, context_budget=2000,
                    max_response_tokens=40, summary_tokens=40, platform="interpreter", seed=0)


def _episodes(relay: KeyRelay, summaries_keep_keys: bool, step: int = 3):
    relay.begin_step(step)
    return run_episodes(KeyCopyingPolicy(summaries_keep_keys), relay, synthetic_tasks(2), 2, AGENT, relay)


def test_only_the_summary_carries_the_key_into_the_next_segment():
    relay = KeyRelay(spread=0.0, bonus=1.0)
    kept = _episodes(relay, summaries_keep_keys=True)
    lost = _episodes(relay, summaries_keep_keys=False)
    for traj in kept:
        assert [t.segment for t in traj.turns] == [0, 1]
        assert [t.score for t in traj.turns] == [0.0, 1.0]  # the first answer cannot know the key
    # without the key in the summary nothing else in the fresh segment (task, carried answer and
    # its verdict feedback) holds it: the second answer earns nothing
    assert all([t.score for t in traj.turns] == [0.0, 0.0] for traj in lost)
    assert relay_metrics(relay, kept)["key_relay_rate"] == 1.0
    assert relay_metrics(relay, kept)["key_in_summary_rate"] == 1.0
    assert relay_metrics(relay, lost) == {"key_relay_episodes": 4.0, "key_in_summary_rate": 0.0,
                                          "key_relay_rate": 0.0, "key_leak_rate": 0.0}


def test_a_relayed_answer_scores_the_first_sub_score_plus_the_bonus():
    # with best-so-far rewards segment credit then gives the second segment exactly the bonus
    relay = KeyRelay(spread=0.5, bonus=1.0)
    for traj in _episodes(relay, summaries_keep_keys=True):
        first, second = (t.score for t in traj.turns)
        assert 0.0 <= first < 0.5
        assert second == pytest.approx(first + 1.0)


def test_keys_are_fresh_per_step_task_and_episode_and_reproducible():
    relay = KeyRelay(seed=1)
    keys = {(step, task, r): relay.key_for(task, f"answer {r}", step)
            for step in range(10) for task in ("a", "b") for r in range(3)}
    assert len(set(keys.values())) == len(keys)
    assert KeyRelay(seed=1).key_for("a", "answer 2", 7) == keys[(7, "a", 2)]


def test_only_keys_issued_this_step_for_this_task_earn_the_bonus():
    relay = KeyRelay(spread=0.0)
    task = synthetic_tasks(1)[0]
    relay.begin_step(3)
    note = relay.after_verdict(task, relay.submit(task, "first answer").result())
    key = KEY_RE.search(note).group(1)
    assert relay.score(task.id, f"answer {key}") == 1.0
    assert relay.score("synthetic/other", f"answer {key}") == 0.0  # another task's episode
    relay.begin_step(4)
    assert relay.score(task.id, f"answer {key}") == 0.0  # last step's key


def test_first_attempt_scores_have_the_configured_spread():
    relay = KeyRelay(spread=0.5, bonus=1.0)
    relay.begin_step(0)
    scores = [relay.score("a", f"response {i}") for i in range(400)]
    assert 0.0 <= min(scores) and max(scores) < 0.5
    assert 0.2 < sum(scores) / len(scores) < 0.3  # uniform on [0, 0.5): mean 0.25
    assert {KeyRelay(spread=0.0).score("a", f"r{i}") for i in range(50)} == {0.0}


def test_the_verdict_feedback_never_names_the_key():
    relay = KeyRelay()
    task = synthetic_tasks(1)[0]
    relay.begin_step(2)
    first = relay.submit(task, "first answer").result()
    key = KEY_RE.search(relay.after_verdict(task, first)).group(1)
    verdict = relay.submit(task, f"answer {key}").result()
    assert verdict.ok and key not in verdict.feedback  # the feedback is carried beside the best answer
    assert key not in first.feedback and key not in relay.for_episode(task)


def test_trainer_logs_the_relay_rate(tmp_path):
    from atrl.rl.trainer import Trainer

    cfg = tiny_config(tmp_path, reward="key_relay", steps=2)
    records = Trainer(cfg, tasks=synthetic_tasks(2)).run()
    assert all({"key_relay_rate", "key_in_summary_rate", "key_leak_rate"} <= set(r) for r in records)
    assert records[0]["key_relay_episodes"] == 8.0  # every episode of the step reached its second segment
    from atrl.jsonio import read_journal

    shown = [{KEY_RE.search(t["kb_text"]).group(1) for traj in read_journal(tmp_path / "trajectories" / f"step_{s:04d}.jsonl")
              for t in traj["turns"] if traj["task_id"] == "synthetic/t0"} for s in (1, 2)]
    assert shown[0] and shown[1] and not shown[0] & shown[1]  # fresh keys each step


def test_key_relay_refuses_the_knowledge_base(tmp_path):
    from atrl.rl.trainer import Trainer

    with pytest.raises(UsageError, match="own knowledge hook"):
        Trainer(tiny_config(tmp_path, reward="key_relay", kb=True), tasks=synthetic_tasks(2))
