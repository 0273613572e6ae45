"""`atrl kb list/search/show` through `atrl.cli.main`."""

from __future__ import annotations

import json

from atrl.cli import main


def test_list_filters_by_platform_and_kind(capsys) -> None:
    assert main(["kb", "list", "--platform", "cuda", "--kind", "error-fix", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["kind"] == "error-fix" and r["platform"] in ("cuda", "any") for r in rows)


def test_search_prints_json_hits_best_first(capsys) -> None:
    assert main(["kb", "search", "precision downgrade tf32 input_precision", "--k", "2", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 2 and hits[0]["entry_id"] == "fix-precision"
    assert hits[0]["score"] >= hits[1]["score"]


def test_search_hides_an_excluded_tasks_example(capsys) -> None:
    assert main(["kb", "search", "softmax", "--k", "20", "--json", "--exclude-task", "builtin/softmax"]) == 0
    assert "example/softmax" not in {h["entry_id"] for h in json.loads(capsys.readouterr().out)}


def test_show_prints_the_entry(capsys) -> None:
    assert main(["kb", "show", "cuda-tl-dot"]) == 0
    out = capsys.readouterr().out
    assert "platform: cuda" in out and "input_precision" in out


def test_unknown_id_or_platform_exits_2(capsys) -> None:
    assert main(["kb", "show", "no-such-entry"]) == 2
    assert main(["kb", "search", "x", "--platform", "tpu"]) == 2
    assert main(["kb", "list", "--kind", "poem"]) == 2
    assert "unknown platform" in capsys.readouterr().err


def test_the_cli_does_not_import_bm25s_until_a_kb_command_runs():
    import subprocess
    import sys

    code = "import sys, atrl.cli; print('bm25s' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
