"""Per-step rollout metrics counted from hand-built trajectories."""

from atrl.agent.records import Segment, Trajectory, Turn
from atrl.rl.metrics import rollout_metrics


def _trajectory(scores: list[float], logprobs: list[list[float | None]], truncated: int = 0) -> Trajectory:
    turns = [Turn(index=i, segment=0, response_text="", response_start=0, response_end=0,
                  finish_reason="length" if i < truncated else "stop", score=s,
                  verdict={"ok": s >= 1.0, "stage": "done" if s >= 1.0 else "compile"})
             for i, s in enumerate(scores)]
    segments = [Segment(index=i, token_ids=[0] * len(lp), token_types=["response"] * len(lp), logprobs=lp)
                for i, lp in enumerate(logprobs)]
    return Trajectory(task_id="t", sample=0, policy="p", segments=segments, turns=turns,
                      best_score=max(scores), best_turn=scores.index(max(scores)))


def test_rollout_metrics_count_rewards_rates_and_sampled_tokens():
    a = _trajectory([0.0, 2.0], [[None, None, -0.1, -0.2], [None, -0.3]], truncated=1)
    b = _trajectory([0.5], [[None, -0.5, -0.6, -0.7]])
    m = rollout_metrics([a, b])
    assert m["episodes"] == 2
    assert m["reward_mean"] == 1.25 and m["reward_max"] == 2.0
    assert m["correct_rate"] == 1 / 3
    assert m["episode_solved_rate"] == 0.5
    assert m["segments_per_episode"] == 1.5
    assert m["truncated_responses"] == 1
    assert m["tokens_generated"] == 6  # tokens with a log-prob: 2 + 1 + 3


def test_rollout_metrics_say_where_the_judging_time_went():
    a = _trajectory([0.0, 2.0], [[None, -0.1], [None, -0.3]])
    b = _trajectory([0.5], [[None, -0.5]])
    a.turns[0].verdict["stage_seconds"] = {"compile": 0.5}
    a.turns[1].verdict.update(stage_seconds={"compile": 0.25, "correctness": 1.0, "profile": 3.0,
                                             "device_wait": 2.0}, timing={"coverage_seconds": 0.75})
    b.turns[0].verdict.update(stage_seconds={}, cached=True)
    m = rollout_metrics([a, b])
    assert m["judge_coverage_s"] == 0.75  # of the profile stage's 3.0 s
    assert (m["judge_compile_s"], m["judge_correctness_s"], m["judge_profile_s"], m["judge_device_wait_s"]) == (
        0.75, 1.0, 3.0, 2.0)
    assert m["judge_cached_fraction"] == 1 / 3


def test_rollout_metrics_count_repaired_and_kept_second_turns():
    lp = [[None, -0.1]]
    episodes = [_trajectory([0.0, 2.0], lp * 2), _trajectory([0.0, 0.1], lp * 2),  # wrong: repaired, not
                _trajectory([1.5, 0.1], lp * 2), _trajectory([1.2, 1.0], lp * 2),  # right: broken, kept
                _trajectory([1.0], lp)]  # one turn: counted in neither
    m = rollout_metrics(episodes)
    assert (m["later_wrong_first"], m["later_repaired"], m["later_right_first"], m["later_kept"]) == (2, 1, 2, 1)


def test_later_segments_with_zero_return_are_counted_by_best_so_far():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from rl_builders import make_trajectory

    episodes = [make_trajectory([[0.5], [1.0]]),  # the second segment improves: G = 0.5
                make_trajectory([[0.5], [0.5]]),  # no better: G = 0
                make_trajectory([[0.5], [0.2]]),  # worse, best-so-far stays: G = 0
                make_trajectory([[0.3]])]         # one segment: none after the first
    m = rollout_metrics(episodes)
    assert (m["later_segments"], m["later_zero_return_segments"]) == (3.0, 2.0)
