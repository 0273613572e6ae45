"""Multi-turn episodes with context compaction (ATRL-SPEC, "Episode").

`run_episodes` advances many episodes (tasks × samples) together: each round, every episode
that is ready for a turn contributes one request to ONE `policy.generate` call, the candidates
are judged concurrently by the harness, and then every episode that must compact contributes
one summary request to one more `generate` call. `run_episode_list` can journal every generate
call and every verdict as it completes (`atrl.agent.turn_journal`) and replay them after a kill.

Budget rule (all lengths in the policy's tokens). Let `header`/`closing` be the template's
assistant header and end-of-turn text, and the compaction reserve
`reserve = instruction + header + summary_tokens + closing` (the compaction instruction message,
then the summary with its scaffolding). A turn starts only if

    len(context) + header + max_response_tokens + closing + reserve ≤ context_budget;

otherwise, or after `turns_per_segment` turns, the agent compacts. Feedback (and kb text) after a
verdict is shortened to the room left above the reserve, so the summary always fits and no
context ever exceeds the budget. A fresh segment (system + kb + task + summary + best kernel
with its verdict) that leaves no room for a turn ends the episode with stop reason
`context_budget`.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import asdict

from atrl.agent import prompts
from atrl.agent.config import AgentConfig
from atrl.agent.context import Piece, SegmentContext
from atrl.agent.interfaces import Knowledge, judge_all
from atrl.agent.records import Trajectory, Turn
from atrl.agent.turn_journal import TurnJournal
from atrl.harness.verdict import Verdict
from atrl.jsonio import to_jsonable
from atrl.policy.base import Generation, GenerationRequest, Policy, SamplingParams
from atrl.tasks.task import Task


def cap_generation(policy: Policy, gen: Generation, max_tokens: int) -> Generation:
    """The generation cut to `max_tokens` tokens (a guard for policies whose token counts are
    approximate, e.g. a remote server)."""
    if len(gen.token_ids) <= max_tokens:
        return gen
    ids = list(gen.token_ids[:max_tokens])
    lps = None if gen.logprobs is None else list(gen.logprobs[:max_tokens])
    return Generation(text=policy.detokenize(ids), token_ids=ids, logprobs=lps, finish_reason="length")


class Episode:
    """One episode's state: its trajectory so far, the open segment's context and its phase
    (`"turn"`: ready for a response, `"compact"`: ready for a summary, `"done"`)."""

    def __init__(self, task: Task, sample: int, policy: Policy, config: AgentConfig,
                 knowledge: Knowledge | None) -> None:
        self.task, self.sample, self.policy, self.config = task, sample, policy, config
        self.knowledge = knowledge if config.kb else None
        self.traj = Trajectory(task_id=task.id, sample=sample, policy=policy.name, config=asdict(config))
        self.kb_text = self.knowledge.for_episode(task).strip() if self.knowledge is not None else ""
        self.attempts: list[dict] = []
        self.best_code: str | None = None
        self.best_feedback = ""
        self.phase = "turn"
        self.segment_turns = 0
        self.ctx: SegmentContext
        self._open_segment(summary=None)

    # -- budget ------------------------------------------------------------------------------
    def reserve(self) -> int:
        """Tokens kept free for compaction: instruction message + summary with its scaffolding."""
        instr = [Piece(prompts.compaction_instruction(self.config.summary_tokens), "instruction")]
        return (self.ctx.message_tokens("user", instr) + self.ctx.header_tokens()
                + self.config.summary_tokens + self.ctx.closing_tokens())

    def turn_fits(self) -> bool:
        """The spec's rule: tokens(context) + max_response_tokens + reserve ≤ context_budget,
        with the turn's own header and end-of-turn scaffolding counted in."""
        need = (len(self.ctx) + self.ctx.header_tokens() + self.config.max_response_tokens
                + self.ctx.closing_tokens() + self.reserve())
        return need <= self.config.context_budget

    def _check_budget(self) -> None:
        if len(self.ctx) > self.config.context_budget:
            raise RuntimeError(f"{self.task.id}: context of {len(self.ctx)} tokens exceeds the budget "
                               f"{self.config.context_budget} (agent bug)")

    def _finish(self, reason: str) -> None:
        self.phase = "done"
        self.traj.stop_reason = reason

    # -- segments ----------------------------------------------------------------------------
    def _open_segment(self, summary: str | None) -> None:
        ctx = SegmentContext(self.policy, index=len(self.traj.segments))
        ctx.add_message("system", [Piece(prompts.system_prompt(self.config.platform), "instruction")])
        pieces = []
        if self.kb_text:
            pieces.append(Piece(f"Notes from the knowledge base:\n{self.kb_text}\n\n", "kb"))
        pieces.append(Piece(prompts.task_message(self.task, self.config.task_preset()), "task"))
        if summary is not None:
            pieces.append(Piece(prompts.summary_piece(summary), "summary"))
            pieces.append(Piece(prompts.carried_kernel_piece(self.best_code, self.traj.best_score,
                                                              self.best_feedback), "carried_kernel"))
        ctx.add_message("user", pieces)
        ctx.segment.kb_text = self.kb_text
        self.ctx = ctx
        self.segment_turns = 0
        if len(ctx) > self.config.context_budget or not self.turn_fits():
            self._finish("context_budget")
            return
        self.traj.segments.append(ctx.segment)
        self.phase = "turn"

    # -- a turn ------------------------------------------------------------------------------
    def turn_request(self) -> GenerationRequest:
        turn = len(self.traj.turns)
        prompt = self.ctx.open_assistant("response", turn=turn)
        return GenerationRequest(messages=list(self.ctx.messages[:]), prompt_ids=prompt, task_id=self.task.id,
                                 turn=turn, sample=self.sample, kind="turn")

    def record_response(self, gen: Generation) -> Turn:
        gen = cap_generation(self.policy, gen, self.config.max_response_tokens)
        index = len(self.traj.turns)
        start, end = self.ctx.add_generation(gen, "response", turn=index)
        turn = Turn(index=index, segment=self.ctx.segment.index, response_text=gen.text,
                    response_start=start, response_end=end, finish_reason=gen.finish_reason)
        self.traj.turns.append(turn)
        self.ctx.segment.turns.append(index)
        self.segment_turns += 1
        self._check_budget()
        return turn

    def record_verdict(self, verdict: Verdict) -> None:
        turn = self.traj.turns[-1]
        turn.verdict = to_jsonable(verdict)
        turn.score = float(verdict.score)
        turn.feedback_text = verdict.feedback
        if self.knowledge is not None:
            turn.kb_text = self.knowledge.after_verdict(self.task, verdict).strip()
        if self.traj.best_turn is None or turn.score >= self.traj.best_score:
            self.traj.best_score, self.traj.best_turn = turn.score, turn.index
            self.best_code = prompts.extract_code(turn.response_text)
            self.best_feedback = verdict.feedback
        self.attempts.append({"turn": turn.index, "score": turn.score, "stage": verdict.stage,
                              "error_class": verdict.error_class, "message": verdict.message})
        cut_at = self.config.max_response_tokens if turn.finish_reason == "length" else None
        pieces = [Piece(prompts.feedback_message(turn.index, turn.score, verdict.feedback, cut_at), "feedback")]
        if turn.kb_text:
            pieces.append(Piece(f"\n\nNotes from the knowledge base:\n{turn.kb_text}", "kb"))
        room = self.config.context_budget - self.reserve() - len(self.ctx)
        self.ctx.add_message_within("user", pieces, room, turn=turn.index)
        self._check_budget()
        self._next_phase()

    def _next_phase(self) -> None:
        cfg = self.config
        if cfg.target_score is not None and self.traj.best_score >= cfg.target_score:
            self._finish("target_score")
        elif len(self.traj.turns) >= cfg.max_turns:
            self._finish("max_turns")
        elif self.segment_turns >= cfg.turns_per_segment or not self.turn_fits():
            if len(self.traj.segments) >= cfg.max_segments:
                self._finish("max_segments")
            else:
                self.phase = "compact"
        else:
            self.phase = "turn"

    # -- compaction --------------------------------------------------------------------------
    def summary_request(self) -> GenerationRequest:
        instr = prompts.compaction_instruction(self.config.summary_tokens)
        self.ctx.add_message("user", [Piece(instr, "instruction")])
        prompt = self.ctx.open_assistant("summary")
        return GenerationRequest(messages=list(self.ctx.messages), prompt_ids=prompt, task_id=self.task.id,
                                 turn=len(self.traj.turns) - 1, sample=self.sample, kind="summary")

    def record_summary(self, gen: Generation) -> None:
        gen = cap_generation(self.policy, gen, self.config.summary_tokens)
        self.ctx.add_generation(gen, "summary")
        self._check_budget()
        seg = self.ctx.segment
        text = gen.text.strip()
        if prompts.summary_is_usable(text):
            seg.summary_text = text
        else:
            fallback = prompts.structured_summary(self.attempts, self.traj.best_turn, self.traj.best_score)
            ids = self.policy.tokenize(fallback)[: self.config.summary_tokens]
            seg.summary_text = self.policy.detokenize(ids)
            seg.summary_fallback = True
        self._open_segment(summary=seg.summary_text)


def run_episodes(policy: Policy, harness: object, tasks: list[Task], samples: int, config: AgentConfig,
                 knowledge: Knowledge | None = None,
                 on_trajectory: Callable[[Trajectory], None] | None = None,
                 on_turns: Callable[[int], None] | None = None) -> list[Trajectory]:
    """Run `samples` episodes per task, all advancing together; returns the trajectories in
    task-major order (task 0 samples 0..n-1, task 1 ...). `harness` has `submit(task, response)`
    → Future[Verdict] (or `evaluate_many(pairs, progress)`); `on_trajectory` is called once per
    trajectory as soon as it ends; `on_turns(n)` after each round with the turns judged so far."""
    episodes = [(task, s) for task in tasks for s in range(samples)]
    return run_episode_list(policy, harness, episodes, config, knowledge, on_trajectory, on_turns)


def run_episode_list(policy: Policy, harness: object, episodes: list[tuple[Task, int]], config: AgentConfig,
                     knowledge: Knowledge | None = None,
                     on_trajectory: Callable[[Trajectory], None] | None = None,
                     on_turns: Callable[[int], None] | None = None,
                     journal: TurnJournal | None = None) -> list[Trajectory]:
    """`run_episodes` over explicit (task, sample) episodes, in this order. With a `journal`,
    every generate call and every verdict is journaled as it completes, and whatever the journal
    already holds (from a killed run of the same episodes) is replayed instead of generated or
    judged, so the result equals that of an uninterrupted run."""
    if journal is not None and journal.episodes != [(task.id, s) for task, s in episodes]:
        raise ValueError("the turn journal was opened for other episodes than these")
    running = [Episode(task, s, policy, config, knowledge) for task, s in episodes]
    rounds = _Rounds(policy, harness, config, journal)
    reported: set[int] = set()
    judged = 0

    def report() -> None:
        for i, ep in enumerate(running):
            if ep.phase == "done" and i not in reported:
                reported.add(i)
                if on_trajectory is not None:
                    on_trajectory(ep.traj)

    report()
    while any(ep.phase != "done" for ep in running):
        turning = [i for i, ep in enumerate(running) if ep.phase == "turn"]
        if turning:
            requests = [running[i].turn_request() for i in turning]
            call, gens = rounds.generate("turn", turning, requests, config.max_response_tokens)
            turns = [running[i].record_response(g) for i, g in zip(turning, gens, strict=True)]
            verdicts = rounds.judge(call, [(i, running[i].task, t) for i, t in zip(turning, turns, strict=True)])
            for i, verdict in zip(turning, verdicts, strict=True):
                running[i].record_verdict(verdict)
            judged += len(turning)
            if on_turns is not None:
                on_turns(judged)
        compacting = [i for i, ep in enumerate(running) if ep.phase == "compact"]
        if compacting:
            requests = [running[i].summary_request() for i in compacting]
            _, gens = rounds.generate("summary", compacting, requests, config.summary_tokens)
            for i, g in zip(compacting, gens, strict=True):
                running[i].record_summary(g)
        report()
    return [ep.traj for ep in running]


class _Rounds:
    """The lockstep loop's contact with the policy and the harness: numbered generate calls and
    judging, each answered from the journal when it holds the result and journaled otherwise."""

    def __init__(self, policy: Policy, harness: object, config: AgentConfig, journal: TurnJournal | None) -> None:
        self.policy, self.harness, self.config, self.journal = policy, harness, config, journal
        self.calls = 0  # generate calls made (or replayed) so far; call k samples with seed + k

    def generate(self, kind: str, episodes: list[int], requests: list[GenerationRequest],
                 max_tokens: int) -> tuple[int, list[Generation]]:
        """Generate call number `self.calls` for `episodes`' requests; returns (call, generations)."""
        call = self.calls
        self.calls += 1
        params = self.config.sampling(max_tokens, call)
        if self.journal is None:
            return call, _generate(self.policy, requests, params)
        gens = self.journal.replayed_generations(call, kind, episodes, requests)
        if gens is None:
            gens = _generate(self.policy, requests, params)
            self.journal.add_generations(call, kind, episodes, requests, gens)
        return call, gens

    def judge(self, call: int, turns: list[tuple[int, Task, Turn]]) -> list[Verdict]:
        """Verdicts for (episode, task, turn) in order; with a journal, each new verdict is
        journaled the moment it arrives and journaled ones are not judged again."""
        if self.journal is None:
            return judge_all(self.harness, [(task, turn.response_text) for _, task, turn in turns])
        verdicts: list[Verdict | None] = [self.journal.replayed_verdict(call, i, turn.index) for i, _, turn in turns]
        missing = [k for k, v in enumerate(verdicts) if v is None]

        def arrived(k: int, verdict: Verdict) -> None:
            episode, _, turn = turns[k]
            self.journal.add_verdict(call, episode, turn.index, verdict)
            verdicts[k] = verdict

        judge_each(self.harness, {k: (turns[k][1], turns[k][2].response_text) for k in missing}, arrived)
        complete = [v for v in verdicts if v is not None]
        if len(complete) != len(turns):
            raise RuntimeError(f"the harness gave no verdict for {len(turns) - len(complete)} candidates")
        return complete


def judge_each(harness: object, pairs: dict[int, tuple[Task, str]],
               on_verdict: Callable[[int, Verdict], None]) -> None:
    """Judge every (task, response) pair concurrently; `on_verdict(key, verdict)` is called in the
    caller's thread for each verdict as soon as it arrives (completion order)."""
    if not pairs:
        return
    submit = getattr(harness, "submit", None)
    if submit is None:
        keys = list(pairs)
        for key, verdict in zip(keys, judge_all(harness, [pairs[k] for k in keys]), strict=True):
            on_verdict(key, verdict)
        return
    futures = {submit(task, response): key for key, (task, response) in pairs.items()}
    for future in as_completed(futures):
        on_verdict(futures[future], future.result())


def _generate(policy: Policy, requests: list[GenerationRequest], params: SamplingParams) -> list[Generation]:
    gens = policy.generate(requests, params)
    if len(gens) != len(requests):
        raise RuntimeError(f"policy {policy.name} returned {len(gens)} generations for {len(requests)} requests")
    return gens
