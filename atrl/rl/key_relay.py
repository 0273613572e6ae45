"""A synthetic environment whose credit structure is known: relay a key across a compaction.

The credit experiment's second tier (docs/experiments/atrl-vs-grpo.md). One object is both the
reward source and the knowledge hook of a training run (`reward: key_relay`):

- After every verdict, the knowledge hook shows a fresh random key, derived from the step, the task
  and the judged response (so each episode gets its own). It appears only in that turn's feedback
  message (`after_verdict`), never in the text every segment starts with (`for_episode`) nor in the
  verdict's feedback, which the agent carries into the next segment beside the best answer. After
  a compaction, only the policy's own summary can carry the key on.
- A response without an issued key scores `spread · u`, `u` uniform in [0, 1) drawn from a hash of
  the step, the task and the response: the first attempt's sub-score, noise the policy cannot
  learn. A response that holds a key issued this step for its task scores the sub-score of the
  response the key was issued to, plus `bonus`.

With best-so-far rewards (B_k = the best score up to turn k) an episode of two one-turn segments
has B_1 = spread·u_1 and, when its second answer relays the key, B_2 = B_1 + bonus: segment credit
gives the second segment exactly the bonus, while trajectory credit gives every token B_2, noise
included. `spread` is the dose of that noise; `spread: 0` is the negative control. (A second answer
without the key scores its own noise, so B_2 = max(u_1, u_2)·spread: a small leak into segment
credit, spread/6 on average, that the environment cannot avoid without knowing turn numbers.)

Keys derive from (seed, step, task, response), so a resumed run issues the same keys; the trainer
calls `begin_step(step)` before each rollout.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from concurrent.futures import Future

from atrl.agent.records import Trajectory
from atrl.harness.verdict import Verdict, candidate_hash
from atrl.tasks.task import Task

KEY_ALPHABET = "bcdfghjkmnpqrstvwxz"  # consonants: a key is never an English word


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()


class KeyRelay:
    """Reward source and knowledge hook of the key-relay environment (see the module doc)."""

    def __init__(self, spread: float = 0.5, bonus: float = 1.0, key_length: int = 4, seed: int = 0) -> None:
        if spread < 0 or bonus <= 0 or key_length < 2:
            raise ValueError("key relay needs spread >= 0, bonus > 0 and key_length >= 2")
        self.spread, self.bonus, self.key_length, self.seed = spread, bonus, key_length, seed
        self.step = 0
        self.issued: dict[tuple[str, str], float] = {}  # (task id, key) -> score of the response it was issued to

    # -- the step ---------------------------------------------------------------------------
    def begin_step(self, step: int) -> None:
        """Forget the last step's keys: only keys issued in this step earn the bonus."""
        self.step = step
        self.issued.clear()

    def key_for(self, task_id: str, response: str, step: int | None = None) -> str:
        """The key shown after `response` was judged."""
        return self._key(task_id, candidate_hash(response), self.step if step is None else step)

    def _key(self, task_id: str, response_hash: str, step: int) -> str:
        digest = _digest("key", self.seed, step, task_id, response_hash)
        return "".join(KEY_ALPHABET[b % len(KEY_ALPHABET)] for b in digest[: self.key_length])

    def noise(self, task_id: str, response: str) -> float:
        """`u` in [0, 1) for this response of this step: a fixed function the policy cannot exploit."""
        return int.from_bytes(_digest("noise", self.seed, self.step, task_id, response)[:8], "big") / 2**64

    # -- the reward source ------------------------------------------------------------------
    def relayed_base(self, task_id: str, response: str) -> float | None:
        """The sub-score carried by the key this response relays, or None when it relays none."""
        for (task, key), base in self.issued.items():
            if task == task_id and key in response:
                return base
        return None

    def score(self, task_id: str, response: str) -> float:
        return self._score(task_id, response, self.relayed_base(task_id, response))

    def _score(self, task_id: str, response: str, base: float | None) -> float:
        return self.spread * self.noise(task_id, response) if base is None else base + self.bonus

    def submit(self, task: Task, response: str) -> Future[Verdict]:
        base = self.relayed_base(task.id, response)
        relayed = base is not None
        score = self._score(task.id, response, base)
        verdict = Verdict(
            task_id=task.id,
            candidate_hash=candidate_hash(response),
            backend="key_relay",
            device="cpu",
            stage="done" if relayed else "correctness",
            ok=relayed,
            score=score,
            # carried into the next segment beside the best answer: it must not name the key
            feedback=f"score {score:.3f}: " + ("the key you were given was reproduced" if relayed
                                              else "no key reproduced"),
        )
        done: Future[Verdict] = Future()
        done.set_result(verdict)
        return done

    def close(self) -> None:
        """Nothing to release."""

    # -- the knowledge hook -----------------------------------------------------------------
    def for_episode(self, task: Task) -> str:
        return ""

    def after_verdict(self, task: Task, verdict: Verdict) -> str:
        key = self._key(task.id, verdict.candidate_hash, self.step)
        self.issued[(task.id, key)] = float(verdict.score)
        return (f"Key for your next answer: {key}. Write it in your next answer. "
                "When the context is summarised, only your summary keeps it.")


def relay_metrics(relay: KeyRelay, trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """Of the episodes that reached a second segment: the share whose first summary holds the key
    issued after the first segment's last answer (`key_in_summary_rate`) and whose answers there
    reproduce it (`key_relay_rate`, the endpoint); `key_leak_rate`: the share of first-segment
    answers that hold it (should be 0)."""
    reached, in_summary, relayed, leaked, first_answers = 0, 0, 0, 0, 0
    for traj in trajectories:
        first = [t for t in traj.turns if t.segment == 0]
        later = [t for t in traj.turns if t.segment >= 1]
        if not first:
            continue
        key = relay.key_for(traj.task_id, first[-1].response_text)
        first_answers += len(first)
        leaked += sum(key in t.response_text for t in first)
        if not later:
            continue
        reached += 1
        in_summary += key in (traj.segments[0].summary_text or "")
        relayed += any(key in t.response_text for t in later)
    share = (lambda n: n / reached) if reached else (lambda n: 0.0)
    return {
        "key_relay_episodes": float(reached),
        "key_in_summary_rate": share(in_summary),
        "key_relay_rate": share(relayed),
        "key_leak_rate": leaked / first_answers if first_answers else 0.0,
    }
