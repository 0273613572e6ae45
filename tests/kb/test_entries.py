"""Entry files: every failure class has an error-fix entry; front matter is validated with the file named."""

from __future__ import annotations

from pathlib import Path

import pytest

from atrl.harness.feedback.failures import FAILURE_CLASSES
from atrl.kb.entries import EntryError, chunk_entry, load_entries, parse_entry, split_sections
from atrl.kb.examples import builtin_examples

GOOD = """---
id: demo
platform: cuda
kind: guide
title: Demo
tags: [a, b]
---
# One
text
"""


@pytest.mark.parametrize("error_class", sorted(FAILURE_CLASSES))
def test_every_failure_class_has_an_error_fix_entry(error_class: str) -> None:
    fixes = [e for e in load_entries() if e.kind == "error-fix" and error_class in e.classes]
    assert fixes, f"no error-fix entry lists {error_class}"


def test_error_fix_entries_list_only_known_failure_classes() -> None:
    for entry in load_entries():
        assert set(entry.classes) <= set(FAILURE_CLASSES), entry.id


def test_shipped_entries_cover_every_platform() -> None:
    platforms = {e.platform for e in load_entries()}
    assert platforms == {"cuda", "interpreter", "ascend", "any"}


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize("broken, problem", [
    (GOOD.replace("kind: guide", "kind: essay"), "kind"),
    (GOOD.replace("platform: cuda", "platform: tpu"), "platform"),
    (GOOD.replace("title: Demo\n", ""), "title"),
    (GOOD.replace("tags: [a, b]", "tags: [a, 16]"), "tags"),
    (GOOD.replace("tags: [a, b]", "tags: [a, b"), "YAML"),
    (GOOD.replace("kind: guide", "kind: error-fix"), "classes"),
    (GOOD.split("---\n# One")[0], "closed"),
    ("# no front matter\n", "front matter"),
])
def test_malformed_entry_is_reported_with_its_file_name(tmp_path: Path, broken: str, problem: str) -> None:
    _write(tmp_path, "cuda/demo.md", broken)
    with pytest.raises(EntryError) as err:
        load_entries(tmp_path)
    assert "cuda/demo.md" in str(err.value)
    assert problem in str(err.value)


def test_id_must_match_file_name_and_platform_its_folder(tmp_path: Path) -> None:
    _write(tmp_path, "cuda/other.md", GOOD)
    with pytest.raises(EntryError, match="cuda/other.md.*file name"):
        load_entries(tmp_path)
    (tmp_path / "cuda/other.md").unlink()
    _write(tmp_path, "any/demo.md", GOOD)
    with pytest.raises(EntryError, match="any/demo.md.*folder"):
        load_entries(tmp_path)


def test_valid_entry_parses_its_fields() -> None:
    entry = parse_entry(GOOD, "cuda/demo.md")
    assert (entry.id, entry.platform, entry.kind, entry.title, entry.tags) == ("demo", "cuda", "guide", "Demo",
                                                                               ("a", "b"))


def test_sections_split_at_headings_but_not_inside_code_fences() -> None:
    body = "intro\n# A\na\n```python\n# not a heading\n```\n## B\nb"
    assert split_sections(body) == ["intro", "# A\na\n```python\n# not a heading\n```", "## B\nb"]


def test_chunks_map_back_to_their_entry() -> None:
    entry = next(e for e in load_entries() if e.id == "cuda-tl-dot")
    chunks = chunk_entry(entry)
    assert len(chunks) > 1
    assert all(c.entry_id == "cuda-tl-dot" and c.text.startswith(f"## {entry.title}") for c in chunks)


def test_examples_are_built_from_every_builtin_solution() -> None:
    from atrl.tasks.registry import load_suite

    solved = [t for t in load_suite("builtin").tasks if t.solution]
    examples = {e.id: e for e in builtin_examples()}
    assert set(examples) == {f"example/{t.name}" for t in solved}
    for task in solved:
        example = examples[f"example/{task.name}"]
        assert example.platform == "any" and example.kind == "example" and example.task_id == task.id
        assert set(example.tags) == set(task.tags)
        assert task.solution.strip() in example.body
