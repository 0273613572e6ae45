"""The permuted-advantage control arm: each group's advantages go to other episodes of the group,
with their sizes kept (the update's size without its signal)."""

from __future__ import annotations

import random
from collections import Counter

from rl_builders import make_trajectory, synthetic_tasks, tiny_config

from atrl.rl.rows import Row, build_rows, permuted_within_sizes
from atrl.rl.trainer import Trainer


def _first_advantage_by_trajectory(rows: list[Row]) -> dict[int, float]:
    firsts: dict[int, float] = {}
    for row in rows:
        if row.segment_index == 0:
            firsts[row.trajectory_id] = next(a for a, m in zip(row.advantages, row.loss_mask, strict=True) if m)
    return firsts


def test_permutation_moves_vectors_only_among_trajectories_of_their_length():
    advantages = [[float(i), -float(i)] for i in range(8)] + [[100.0], [200.0], [300.0]]
    permuted = permuted_within_sizes(advantages, random.Random(0))
    assert Counter(map(tuple, permuted)) == Counter(map(tuple, advantages))
    assert all(len(p) == len(a) for p, a in zip(permuted, advantages, strict=True))
    assert permuted[:8] != advantages[:8]  # 8 distinct vectors: the identity has chance 1/8!


def test_build_rows_with_permute_gives_the_group_s_advantages_to_other_episodes():
    group = [make_trajectory([[float(i)], [float(i) + 0.5]], sample=i) for i in range(8)]
    plain = _first_advantage_by_trajectory(build_rows([group], "atrl"))
    permuted = _first_advantage_by_trajectory(build_rows([group], "atrl", permute=random.Random(1)))
    assert sorted(plain.values()) == sorted(permuted.values())
    assert plain != permuted


def test_trainer_with_the_permute_control_permutes_and_without_it_does_not(tmp_path):
    group = [make_trajectory([[float(i)], [float(i) + 0.5]], sample=i, task_id="synthetic/t0") for i in range(4)]
    real = Trainer(tiny_config(tmp_path / "real", group_size=4), tasks=synthetic_tasks())
    control = Trainer(tiny_config(tmp_path / "control", group_size=4, advantage_control="permute"),
                      tasks=synthetic_tasks())
    plain = _first_advantage_by_trajectory(build_rows([group], real.config.estimator))
    assert _first_advantage_by_trajectory(real.rows_for(group)[0]) == plain
    controlled = _first_advantage_by_trajectory(control.rows_for(group)[0])
    assert sorted(controlled.values()) == sorted(plain.values())
    assert controlled != plain
