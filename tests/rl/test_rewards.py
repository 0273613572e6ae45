"""Best-so-far, segment rewards and returns against hand-computed values."""

from __future__ import annotations

import pytest

from atrl.rl.rewards import best_so_far, segment_returns, segment_rewards, unit_of_turns, unit_returns


def test_best_so_far_is_running_max_per_segment():
    assert best_so_far([0.1, 0.0, 1.0, 0.5], [0, 0, 1, 2]) == [0.1, 1.0, 1.0]


def test_best_so_far_carries_forward_through_segments_without_turns():
    assert best_so_far([1.0], [1], num_segments=3) == [0.0, 1.0, 1.0]


def test_best_so_far_starts_from_zero():
    assert best_so_far([-1.0], [0]) == [0.0]


def test_best_so_far_rejects_mismatched_lengths():
    with pytest.raises(ValueError):
        best_so_far([1.0, 2.0], [0])


def test_segment_rewards_are_increments_that_sum_to_outcome():
    r = segment_rewards([0.1, 1.0, 1.0])
    assert r == pytest.approx([0.1, 0.9, 0.0])
    assert sum(r) == pytest.approx(1.0)


def test_segment_returns_discount_and_pad_with_zeros():
    assert segment_returns([0.1, 0.9, 0.0], gamma=0.5, length=5) == pytest.approx([0.55, 0.9, 0.0, 0.0, 0.0])


def test_segment_returns_rejects_padding_shorter_than_rewards():
    with pytest.raises(ValueError):
        segment_returns([1.0, 2.0], 1.0, length=1)


def test_turn_credit_makes_every_turn_a_unit_and_trajectory_credit_one_unit():
    assert unit_of_turns([0, 0, 1], 2, "turn") == ([0, 1, 2], 3)
    assert unit_of_turns([0, 0, 1], 2, "trajectory") == ([0, 0, 0], 1)
    assert unit_of_turns([0, 0, 1], 2, "segment") == ([0, 0, 1], 2)
    with pytest.raises(ValueError):
        unit_of_turns([0], 1, "episode")


def test_unit_returns_per_credit_mode():
    scores, seg = [0.1, 1.0, 0.5], [0, 0, 1]
    assert unit_returns(scores, seg, 2, "segment", 0.5) == (1.0, pytest.approx([1.0, 0.0]))
    assert unit_returns(scores, seg, 2, "turn", 0.5) == (1.0, pytest.approx([0.1 + 0.45, 0.9, 0.0]))
    assert unit_returns(scores, seg, 2, "trajectory", 0.5) == (1.0, pytest.approx([1.0]))


def test_the_harness_reward_is_judged_with_the_configured_timing_and_stage_limits():
    from atrl.rl.config import make_config
    from atrl.rl.trainer import _make_reward_source

    config = make_config({"backend": "interpreter", "harness_workers": 1, "harness_timed_calls": 7,
                          "harness_stage_timeouts": {"compile": 11, "correctness": 12}})
    harness = _make_reward_source(config)
    try:
        assert harness.options.timed_calls == 7
        assert (harness.stage_timeouts.compile, harness.stage_timeouts.correctness) == (11.0, 12.0)
    finally:
        harness.close()


def test_the_rewards_judge_admits_against_the_configured_memory_so_a_trainer_keeps_its_own():
    from atrl.harness.distributed.judge_actor import JudgeActor, JudgeSpec
    from atrl.rl.config import make_config
    from atrl.rl.trainer import _make_reward_source

    harness = _make_reward_source(make_config({"backend": "interpreter", "harness_workers": 1,
                                               "harness_memory_gib": 1.5}))
    try:
        assert harness.memory_capacity == 3 << 29
    finally:
        harness.close()
    unset = _make_reward_source(make_config({"backend": "interpreter", "harness_workers": 1}))
    try:
        assert unset.memory_capacity is None  # the device's free memory, as before
    finally:
        unset.close()
    actor = JudgeActor(JudgeSpec(backend="interpreter", workers=1, memory_capacity=3 << 29))  # a Ray judge
    try:
        assert actor._pool.memory_capacity == 3 << 29
        assert actor.describe().spec.comparable()["memory_capacity"] == 3 << 29
    finally:
        actor.close()


def test_a_stage_limit_for_an_unknown_stage_is_refused():
    import pytest

    from atrl.errors import UsageError
    from atrl.rl.config import make_config

    with pytest.raises(UsageError, match="harness_stage_timeouts"):
        make_config({"harness_stage_timeouts": {"compiel": 5}})


def test_the_task_message_shows_the_sizes_the_rewards_judge_runs():
    # A prompt showing one size while the harness judges another teaches nothing true: the
    # agent's preset goes to the harness, and without one the prompt takes the harness's.
    from atrl.rl.config import make_config
    from atrl.rl.trainer import _make_reward_source, prompt_preset

    # the agent's own preset; then the agent names the cuda platform (prompt default: full sizes)
    # while the harness interprets (small sizes)
    for agent, expected in (({"preset": "full"}, "full"), ({"platform": "cuda"}, "small")):
        config = make_config({"backend": "interpreter", "harness_workers": 1, "agent": agent})
        with _make_reward_source(config) as harness:
            assert harness.preset == expected and prompt_preset(config, harness) == expected
    synthetic = make_config({"reward": "synthetic"})
    assert prompt_preset(synthetic, object()) is None
