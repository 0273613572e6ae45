"""benchmarks/judge_replay.py reads a run's rollouts (plain or xz, through judge_sharing's reader)
turn by turn and judges each turn's responses: one row per turn, every response judged, the right
verdicts."""

from __future__ import annotations

import json
import lzma
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from judge_replay import replay  # noqa: E402
from judge_sharing import responses_by_turn  # noqa: E402

from atrl.tasks.registry import get_task  # noqa: E402


def _episodes(tmp_path: Path, xz: bool) -> Path:
    relu = get_task("builtin/relu")
    def turn(index: int, text: str) -> dict:
        return {"index": index, "segment": index, "response_text": text, "response_start": 0, "response_end": 1}

    answer = f"```python\n{relu.solution}\n```"
    episodes = [{"task_id": relu.id, "sample": 0, "policy": "p", "turns": [turn(0, "no code here"), turn(1, answer)]},
                {"task_id": relu.id, "sample": 1, "policy": "p", "turns": [turn(0, answer)]}]
    text = "".join(json.dumps(e) + "\n" for e in episodes)
    path = tmp_path / ("t.jsonl.xz" if xz else "t.jsonl")
    if xz:
        with lzma.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path


def test_turns_are_grouped_by_index_from_plain_and_xz_files(tmp_path):
    for xz in (False, True):
        turns = responses_by_turn([_episodes(tmp_path, xz)])
        assert [len(t) for t in turns] == [2, 1]
        assert turns[0][0] == ("builtin/relu", "no code here")


def test_each_turn_is_judged_and_counted(tmp_path):
    rows = replay(responses_by_turn([_episodes(tmp_path, False)]), "interpreter", 1, 1)
    assert [r["responses"] for r in rows] == [2, 1]
    assert rows[0]["classes"] == {"format:no-code": 1, "ok": 1} and rows[1]["classes"] == {"ok": 1}
    assert rows[1]["stage_s"] and all(r["wall_s"] > 0 for r in rows)
