"""benchmarks/judge_replay.py reads a run's rollouts (plain or xz) turn by turn and judges each
turn's responses: one row per turn, every response judged, the right verdicts."""

from __future__ import annotations

import json
import lzma
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from judge_replay import replay, responses_by_turn  # noqa: E402

from atrl.tasks.registry import get_task  # noqa: E402


def _episodes(tmp_path: Path, xz: bool) -> Path:
    relu = get_task("builtin/relu")
    episodes = [{"task_id": relu.id, "turns": [{"response_text": "no code here"},
                                               {"response_text": f"```python\n{relu.solution}\n```"}]},
                {"task_id": relu.id, "turns": [{"response_text": f"```python\n{relu.solution}\n```"}]}]
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
        turns = responses_by_turn(_episodes(tmp_path, xz))
        assert [len(t) for t in turns] == [2, 1]
        assert turns[0][0] == ("builtin/relu", "no code here")


def test_each_turn_is_judged_and_counted(tmp_path):
    rows = replay(responses_by_turn(_episodes(tmp_path, False)), "interpreter", 1, 1)
    assert [r["responses"] for r in rows] == [2, 1]
    assert rows[0]["classes"] == {"format:no-code": 1, "ok": 1} and rows[1]["classes"] == {"ok": 1}
    assert rows[1]["stage_s"] and all(r["wall_s"] > 0 for r in rows)
