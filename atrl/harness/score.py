"""The harness score of a verdict: the number the reward is built from (HARNESS-SPEC "Score").

Defaults: 0 for a format, static or compile failure (and for any static reward hack); 0.1 when
the candidate compiled but is not accepted (incorrect, or failed in the profile stage); when
correct, `1.0 + min(speedup, 3)` on a timed backend and `1.0` where nothing is timed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from atrl.harness.verdict import Verdict


@dataclass(frozen=True)
class ScoreConfig:
    """Score per outcome. Every field has a default from the spec."""

    failed: float = 0.0  # format, static or compile failure; also every reward hack
    incorrect: float = 0.1  # compiled, but not accepted (wrong, or failed while being timed)
    correct: float = 1.0  # correct; on a timed backend the capped speedup is added
    speedup_cap: float = 3.0  # speedup bonus = min(speedup, speedup_cap)


def score_verdict(verdict: Verdict, config: ScoreConfig = ScoreConfig()) -> float:
    """Score of one verdict under `config`.

    Only an accepted verdict (`ok`) counts as correct: a candidate that compiled but then failed
    anywhere later — a wrong timed output, low coverage, a timeout or crash while being timed —
    scores `incorrect`, since its correctness was not fully established. A correct verdict
    without a usable speedup (untimed backend) scores `correct` with no bonus.
    """
    if verdict.reward_hack or not verdict.compiled:
        return config.failed
    if not verdict.ok:
        return config.incorrect
    speedup = verdict.speedup
    if speedup is None or not math.isfinite(speedup) or speedup < 0:
        return config.correct
    return config.correct + min(speedup, config.speedup_cap)
