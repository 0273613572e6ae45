"""The turn journal: every generate call and every judged turn of a lockstep run of episodes,
journaled as it completes, so that a killed run resumes where it stopped.

One JSON object per line (an `atrl.jsonio.Journal`, so a torn last line is ignored):

  {"record": "episodes", "episodes": [[task_id, sample], ...]}
      the first line: the run's episodes, in lockstep order
  {"record": "generations", "call": k, "kind": "turn" | "summary", "episodes": [i, ...],
   "prompts": [digest, ...], "generations": [Generation, ...]}
      one per generate call, written when the call returns (before any judging)
  {"record": "verdict", "call": k, "episode": i, "turn": t, "verdict": Verdict}
      one per judged turn, written as soon as its verdict arrives

Resuming replays: the lockstep loop runs as it would without a journal, except that a journaled
generate call is answered from the journal (no model call) and a journaled verdict replaces the
judging. The loop's schedule depends only on generations and verdicts, so the replay reaches the
state the killed run had, and the remaining generate calls get the same call numbers (hence the
same seeds) and the same batches as in an uninterrupted run. Each replayed call is checked against
the requests the loop makes now (episodes and a digest of each prompt's token ids): a journal
written by another configuration or another version of the prompts is refused, never mixed in.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from atrl.errors import UsageError
from atrl.harness.verdict import Verdict
from atrl.jsonio import Journal, dumps, read_journal, to_jsonable
from atrl.policy.base import Generation, GenerationRequest

EpisodeKey = tuple[str, int]  # (task id, sample)


def prompt_digest(request: GenerationRequest) -> str:
    """A short fingerprint of the exact prompt a request continues (its token ids)."""
    ids = request.prompt_ids if request.prompt_ids is not None else []
    return hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()[:16]


def journaled_episodes(path: str | Path) -> list[EpisodeKey] | None:
    """The episodes of the lockstep run journaled at `path`; None when there is none yet."""
    for record in read_journal(path):
        if record.get("record") == "episodes":
            return [(str(task_id), int(sample)) for task_id, sample in record["episodes"]]
        return None
    return None


def _generation_from_dict(data: dict) -> Generation:
    logprobs = data.get("logprobs")
    return Generation(text=data["text"], token_ids=[int(i) for i in data["token_ids"]],
                      logprobs=None if logprobs is None else [float(x) for x in logprobs],
                      finish_reason=data.get("finish_reason", "stop"))


class TurnJournal:
    """Journal of one lockstep run at `path` over `episodes`, replaying what an earlier, killed
    run of the same episodes journaled there. A file that holds another run's episodes (or none)
    is started afresh."""

    def __init__(self, path: str | Path, episodes: list[EpisodeKey]) -> None:
        self.path = Path(path)
        self.episodes = list(episodes)
        self._generations: dict[int, dict] = {}
        self._verdicts: dict[tuple[int, int], dict] = {}
        self.replayed_turns = 0
        if journaled_episodes(self.path) == self.episodes:
            self._index(read_journal(self.path))
        else:
            self._start_afresh()
        self._journal = Journal(self.path)

    def _start_afresh(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".jsonl.partial")
        header = {"record": "episodes", "episodes": [list(key) for key in self.episodes]}
        partial.write_text(dumps(header) + "\n")
        os.replace(partial, self.path)

    def _index(self, records) -> None:
        for record in records:
            kind = record.get("record")
            if kind == "generations":
                self._generations[int(record["call"])] = record
            elif kind == "verdict":
                self._verdicts[(int(record["call"]), int(record["episode"]))] = record

    # -- replay ------------------------------------------------------------------------------
    def replayed_generations(self, call: int, kind: str, episodes: list[int],
                             requests: list[GenerationRequest]) -> list[Generation] | None:
        """The journaled results of generate call `call`, or None when it was never journaled.
        Raises `UsageError` when the journaled call was made for other requests."""
        record = self._generations.get(call)
        if record is None:
            return None
        digests = [prompt_digest(r) for r in requests]
        if record["kind"] != kind or record["episodes"] != episodes or record["prompts"] != digests:
            raise UsageError(f"{self.path}: generate call {call} was journaled for other prompts than this run makes",
                             "resume with the same options and ATRL version, or use a new --out")
        return [_generation_from_dict(g) for g in record["generations"]]

    def replayed_verdict(self, call: int, episode: int, turn: int) -> Verdict | None:
        """The journaled verdict of `episode`'s turn judged after generate call `call`, or None."""
        record = self._verdicts.get((call, episode))
        if record is None:
            return None
        if int(record["turn"]) != turn:
            raise UsageError(f"{self.path}: the verdict of call {call}, episode {episode} is for turn "
                             f"{record['turn']}, not {turn}", "resume with the same options, or use a new --out")
        self.replayed_turns += 1
        return Verdict.from_dict(record["verdict"])

    # -- journaling --------------------------------------------------------------------------
    def add_generations(self, call: int, kind: str, episodes: list[int], requests: list[GenerationRequest],
                        generations: list[Generation]) -> None:
        self._journal.append({"record": "generations", "call": call, "kind": kind, "episodes": episodes,
                              "prompts": [prompt_digest(r) for r in requests],
                              "generations": [to_jsonable(g) for g in generations]})

    def add_verdict(self, call: int, episode: int, turn: int, verdict: Verdict) -> None:
        self._journal.append({"record": "verdict", "call": call, "episode": episode, "turn": turn,
                              "verdict": to_jsonable(verdict)})

    def close(self) -> None:
        self._journal.close()

    def __enter__(self) -> TurnJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
