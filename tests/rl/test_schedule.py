import math

import pytest

from atrl.rl.schedule import lr_factor


def test_warmup_then_each_decay_matches_hand_computed_values():
    assert lr_factor(0, 10, 2, "cosine", 0.1) == pytest.approx(0.5)
    assert lr_factor(1, 10, 2, "cosine", 0.1) == pytest.approx(1.0)
    assert lr_factor(5, 10, 2, "constant", 0.1) == 1.0
    assert lr_factor(6, 10, 2, "linear", 0.2) == pytest.approx(1 - 0.8 * 0.5)  # halfway through decay
    assert lr_factor(6, 10, 2, "cosine", 0.2) == pytest.approx(0.2 + 0.8 * 0.5 * (1 + math.cos(math.pi * 0.5)))
    assert lr_factor(50, 10, 2, "cosine", 0.2) == pytest.approx(0.2)  # clamped at the floor
