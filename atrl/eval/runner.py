"""`atrl eval`: run the agent on a task selection, journaling every judged turn and every
finished episode.

Run directory layout (`--out DIR`):
  config.yaml        the run's full configuration
  turns.jsonl        every generate call and every verdict as it completes (`atrl.agent.turn_journal`)
  episodes.jsonl     one `EpisodeSummary` per finished episode (append-only journal)
  trajectories.jsonl the full `Trajectory` of each finished episode (append-only journal)
  report.md, metrics.json, *.png   written at the end by `atrl.eval.report.write_report`

Re-running with the same DIR resumes: finished episodes are kept, and the unfinished ones replay
what `turns.jsonl` holds (no model call, no judging) and continue from there, so the results
equal those of an uninterrupted run. A kill loses at most the generate call or the verdicts in
flight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from atrl.agent.config import AgentConfig
from atrl.agent.turn_journal import EpisodeKey, TurnJournal, journaled_episodes
from atrl.errors import UsageError
from atrl.eval.config import DEFAULT_TASKS, EvalConfig
from atrl.eval.episodes import summarize_trajectory
from atrl.eval.report import EPISODES_FILE, load_episodes, write_report
from atrl.jsonio import Journal
from atrl.tasks.registry import get_task, load_suite
from atrl.tasks.task import Task

TRAJECTORIES_FILE = "trajectories.jsonl"
TURNS_FILE = "turns.jsonl"


@dataclass
class EvalResult:
    run_dir: Path
    report: Path
    episodes_run: int  # episodes journaled by this call
    episodes_skipped: int  # episodes finished by an earlier call, kept as they were
    turns_replayed: int = 0  # judged turns of unfinished episodes taken from turns.jsonl instead of re-run


def select_tasks(config: EvalConfig) -> list[Task]:
    """The tasks of the run: a split's part, explicit ids, or the suite; then level-filtered,
    skipped tasks left out."""
    if config.split:
        from atrl.rl.split import tasks_for

        tasks = [t for t in tasks_for(config.split, config.split_part)
                 if config.level is None or t.level == config.level]
    elif config.tasks:
        return [get_task(t if "/" in t else f"{config.suite}/{t}", config.path) for t in config.tasks]
    else:
        loaded = load_suite(config.suite, config.path, config.level)
        tasks = sorted((t for t in loaded.tasks if not t.skipped), key=lambda t: t.id)
    if config.with_solution:
        tasks = [t for t in tasks if t.solution is not None]
    if config.limit is not None:
        tasks = tasks[: config.limit]
    if not tasks:
        raise UsageError("the selection holds no runnable task", "check --suite, --level and --tasks")
    return tasks


def default_config() -> EvalConfig:
    """The README's main job: the default model on a few builtin level-1 tasks."""
    return EvalConfig(tasks=list(DEFAULT_TASKS))


def agent_config_for(config: EvalConfig, platform: str, preset: str | None, timed: bool = True) -> AgentConfig:
    """The agent's settings for this run. Without --target-score an episode on an untimed backend
    stops at its first correct turn: a correct kernel's score there is the highest there is."""
    from atrl.harness.score import ScoreConfig

    target = config.target_score
    if target is None and not timed:
        target = ScoreConfig().correct
    return AgentConfig(
        max_turns=config.max_turns,
        turns_per_segment=config.turns_per_segment,
        max_segments=config.max_segments,
        context_budget=config.context_budget,
        max_response_tokens=config.max_response_tokens,
        summary_tokens=config.summary_tokens,
        target_score=target,
        kb=config.kb,
        temperature=config.temperature,
        top_p=config.top_p,
        seed=config.seed,
        platform=platform,
        preset=preset,
    )


def prepare_run_dir(config: EvalConfig, out: Path) -> set[tuple[str, int]]:
    """Create or resume `out`; return the (task, sample) keys already finished."""
    out.mkdir(parents=True, exist_ok=True)
    saved_path = out / "config.yaml"
    if saved_path.exists():
        saved = yaml.safe_load(saved_path.read_text()) or {}
        config.check_resumable(saved)
    saved_path.write_text(config.dump())
    if not (out / EPISODES_FILE).exists():
        return set()
    finished = {ep.key for ep in load_episodes(out)}
    _keep_finished_trajectories(out / TRAJECTORIES_FILE, finished)
    return finished


def _keep_finished_trajectories(path: Path, finished: set[tuple[str, int]]) -> None:
    """A run killed between writing an episode's trajectory and its summary leaves a trajectory
    whose episode runs again on resume; drop such records (and any repeat) so every finished
    (task, sample) has exactly one trajectory. Rewritten atomically, only when something goes."""
    import os

    from atrl.jsonio import dumps, read_journal

    kept, seen, dropped = [], set(), False
    for record in read_journal(path):
        key = (record.get("task_id"), record.get("sample"))
        if key in finished and key not in seen:
            seen.add(key)
            kept.append(record)
        else:
            dropped = True
    if not dropped:
        return
    partial = path.with_suffix(".jsonl.partial")
    partial.write_text("".join(dumps(r) + "\n" for r in kept))
    os.replace(partial, path)


def lockstep_episodes(turns_path: Path, pending: list[EpisodeKey], selected: list[EpisodeKey]) -> list[EpisodeKey]:
    """The episodes to run together: those of the journaled lockstep run when it covers every
    pending episode and holds only `selected` ones (finished episodes are replayed too, so every
    generate call gets the batch and the seed it had), else the pending episodes alone (a fresh
    journal)."""
    journaled = journaled_episodes(turns_path)
    if journaled is not None and set(pending) <= set(journaled) <= set(selected):
        return journaled
    return pending


def _make_harness(config: EvalConfig):
    """The run's harness: local worker processes, or the Ray fleet `config.harness` names."""
    from atrl.backends import default_backend_for_suite
    from atrl.harness.select import gib_bytes, make_harness

    return make_harness(config.harness, fleet=config.fleet, fleet_actors=config.fleet_actors,
                        fleet_resource=config.fleet_resource,
                        backend=default_backend_for_suite(config.suite, config.backend), workers=config.workers,
                        trials=config.trials, timed_calls=config.timed_calls, preset=config.preset,
                        use_cache=config.use_cache, memory_capacity=gib_bytes(config.memory_gib))


def _judging_backend(config: EvalConfig, harness):
    """The backend the verdicts come from: the Ray fleet's (its nodes hold the devices), else this
    machine's `config.backend`."""
    from atrl.harness.select import parse_harness

    if parse_harness(config.harness).ray:
        return harness.backend
    from atrl.backends import default_backend_for_suite, resolve_backend

    return resolve_backend(default_backend_for_suite(config.suite, config.backend))


def _load_policy(config: EvalConfig, tasks: list):
    from atrl.policy import load_policy, parse_policy_spec

    spec = parse_policy_spec(config.policy)
    # the options only an hf policy takes: (how the user sets it, the policy's argument, the value)
    hf_only = [(name, arg, value) for name, arg, value in (("--engine", "engine", config.engine),
                                                           ("generation_batch", "max_batch", config.generation_batch))
               if value is not None]
    if hf_only and not spec.is_hf:
        names = " and ".join(name for name, _, _ in hf_only)
        raise UsageError(f"{names} applies to hf policies, not {config.policy!r}",
                         f"drop {names}, or use --policy hf:DIR / smollm2-135m-triton")
    options: dict[str, object] = {arg: value for _, arg, value in hf_only}
    if spec.kind == "reference":  # the run's own tasks: a suite given by --path is not found by id alone
        options["tasks"] = tasks
    return load_policy(config.policy, **options)


def _knowledge(config: EvalConfig, platform: str, policy):
    """The knowledge-base injector of the run, or None without --kb."""
    if not config.kb:
        return None
    from atrl.kb.inject import KnowledgeInjector

    allowed = None
    if config.split:
        from atrl.rl.split import read_split

        allowed = read_split(config.split).ids("train")  # never show held-out solutions
    return KnowledgeInjector(platform=platform, budget_tokens=config.kb_tokens,
                             count_tokens=lambda text: len(policy.tokenize(text)), allow_example_tasks=allowed)


def run_eval(
    config: EvalConfig,
    out: str | Path,
    on_episode: Callable[[int, int], None] | None = None,
    policy=None,
    on_turns: Callable[[int, int], None] | None = None,
) -> EvalResult:
    """Run (or resume) an eval and write its report. `on_episode(done, total)` reports progress,
    `on_turns(judged, most)` the turns judged so far against the most this run can take;
    `policy` overrides `config.policy` with an already-loaded policy (tests, notebooks)."""
    from atrl.agent.episode import run_episode_list

    out = Path(out)
    tasks = select_tasks(config)
    finished = prepare_run_dir(config, out)
    selected = [(t.id, s) for t in tasks for s in range(config.samples)]
    pending = [key for key in selected if key not in finished]
    total = len(selected)
    skipped = total - len(pending)
    done = skipped
    replayed = 0
    if on_episode:
        on_episode(done, total)
    if pending:
        by_id = {t.id: t for t in tasks}
        levels = {t.id: t.level for t in tasks}
        lockstep = lockstep_episodes(out / TURNS_FILE, pending, selected)
        # the harness first: on Ray, the backend (and its default preset) is the fleet's
        with _make_harness(config) as harness:
            backend = _judging_backend(config, harness)
            policy = policy if policy is not None else _load_policy(config, tasks)
            knowledge = _knowledge(config, backend.platform, policy)
            agent_config = agent_config_for(config, backend.platform, config.preset or backend.default_preset,
                                            timed=backend.timed)
            with Journal(out / EPISODES_FILE) as episodes, Journal(out / TRAJECTORIES_FILE) as trajectories, \
                    TurnJournal(out / TURNS_FILE, lockstep) as turn_journal:

                def record(trajectory) -> None:
                    nonlocal done
                    if (trajectory.task_id, trajectory.sample) in finished:
                        return  # replayed only to reproduce the lockstep batches; journaled by an earlier call
                    trajectories.append(trajectory)
                    episodes.append(summarize_trajectory(trajectory, levels[trajectory.task_id],
                                                         getattr(backend, "label", backend.name), backend.timed))
                    done += 1
                    if on_episode:
                        on_episode(done, total)

                most_turns = len(lockstep) * config.max_turns
                if on_turns:
                    on_turns(0, most_turns)
                run_episode_list(policy, harness, [(by_id[task_id], s) for task_id, s in lockstep], agent_config,
                                 knowledge=knowledge, on_trajectory=record,
                                 on_turns=(lambda n: on_turns(n, most_turns)) if on_turns else None,
                                 journal=turn_journal)
                replayed = turn_journal.replayed_turns
    report = write_report(out)
    return EvalResult(run_dir=out, report=report, episodes_run=done - skipped, episodes_skipped=skipped,
                      turns_replayed=replayed)
