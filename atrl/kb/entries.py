"""Knowledge-base entries: the record, front-matter parsing and validation, loading, chunking.

An entry is a markdown file `entries/<platform>/<id>.md` shipped in the package, starting with
YAML front matter between two `---` lines:

    id: cuda-tl-dot            # equals the file name without `.md`
    platform: cuda             # cuda | interpreter | ascend | any (equals the folder name)
    kind: guide                # guide | pitfall | error-fix | example
    title: tl.dot rules ...
    tags: [matmul, tl.dot]
    classes: ["correctness:precision"]   # error-fix entries only: failure-class keys they fix

Example entries are not files: `atrl.kb.examples` builds them from the builtin suite's
reference solutions. Long entries are split into chunks at markdown headings (outside code
fences); every chunk keeps its entry's id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from atrl.errors import UsageError

ENTRIES_DIR = Path(__file__).parent / "entries"
PLATFORMS: tuple[str, ...] = ("cuda", "interpreter", "ascend", "any")
KINDS: tuple[str, ...] = ("guide", "pitfall", "error-fix", "example")
_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]*(/[a-z0-9_.-]+)?$")
_HEADING = re.compile(r"^#{1,6}\s")


class EntryError(UsageError):
    """A malformed entry file. The message names the file and what is wrong with it."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        super().__init__(f"{path}: {problem}", "fix the entry's front matter (see atrl/kb/entries.py)")


@dataclass(frozen=True)
class Entry:
    """One knowledge-base document. `body` is the markdown after the front matter;
    `task_id` is set on example entries (the task whose solution they show)."""

    id: str
    platform: str
    kind: str
    title: str
    tags: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    body: str = ""
    task_id: str | None = None
    source: str = ""  # the file it came from, or "builtin:<task id>" for examples

    def text(self) -> str:
        """The whole entry as shown to the model: a title line, then the body."""
        return f"## {self.title}\n{self.body.strip()}\n"


@dataclass(frozen=True)
class Chunk:
    """A part of an entry (a heading and its section). `index` counts from 0 within the entry."""

    entry_id: str
    index: int
    text: str
    search_text: str = field(repr=False, default="")


def parse_entry(text: str, path: str) -> Entry:
    """Parse one entry file's text. Raises `EntryError` (naming `path`) when the front matter is
    missing, is not YAML, or has missing/invalid fields."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise EntryError(path, "no front matter: the file must start with a '---' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise EntryError(path, "front matter is not closed by a '---' line") from None
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise EntryError(path, f"front matter is not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(meta, dict):
        raise EntryError(path, "front matter must be a mapping of fields")
    body = "\n".join(lines[end + 1:]).strip()
    return _entry_from_meta(meta, body, path)


def _entry_from_meta(meta: dict, body: str, path: str) -> Entry:
    for key in ("id", "platform", "kind", "title"):
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise EntryError(path, f"field {key!r} is missing or not a string")
    unknown = set(meta) - {"id", "platform", "kind", "title", "tags", "classes"}
    if unknown:
        raise EntryError(path, f"unknown fields {sorted(unknown)}")
    if not _ID_PATTERN.match(meta["id"]):
        raise EntryError(path, f"id {meta['id']!r} must be lower-case letters, digits, '-', '_' or '.'")
    if meta["platform"] not in PLATFORMS:
        raise EntryError(path, f"platform {meta['platform']!r} is not one of {', '.join(PLATFORMS)}")
    if meta["kind"] not in KINDS:
        raise EntryError(path, f"kind {meta['kind']!r} is not one of {', '.join(KINDS)}")
    tags, classes = meta.get("tags", []), meta.get("classes", [])
    for key, value in (("tags", tags), ("classes", classes)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise EntryError(path, f"field {key!r} must be a list of strings")
    if meta["kind"] == "error-fix" and not classes:
        raise EntryError(path, "an error-fix entry needs 'classes': the failure-class keys it fixes")
    if meta["kind"] != "error-fix" and classes:
        raise EntryError(path, "only error-fix entries may list 'classes'")
    if not body:
        raise EntryError(path, "the entry has no body")
    return Entry(id=meta["id"], platform=meta["platform"], kind=meta["kind"], title=meta["title"].strip(),
                 tags=tuple(tags), classes=tuple(classes), body=body, source=path)


def load_entries(root: Path = ENTRIES_DIR) -> list[Entry]:
    """Every `<platform>/<id>.md` under `root`, sorted by id. Raises `EntryError` for a malformed
    file, a file whose id or platform disagrees with its path, or a duplicate id."""
    entries: dict[str, Entry] = {}
    for path in sorted(root.glob("*/*.md")):
        name = f"{path.parent.name}/{path.name}"
        entry = parse_entry(path.read_text(encoding="utf-8"), name)
        if entry.id != path.stem:
            raise EntryError(name, f"id {entry.id!r} differs from the file name {path.stem!r}")
        if entry.platform != path.parent.name:
            raise EntryError(name, f"platform {entry.platform!r} differs from its folder {path.parent.name!r}")
        if entry.id in entries:
            raise EntryError(name, f"duplicate id {entry.id!r} (also in {entries[entry.id].source})")
        entries[entry.id] = entry
    return [entries[key] for key in sorted(entries)]


def split_sections(body: str) -> list[str]:
    """The body cut before every markdown heading that is not inside a ``` code fence;
    text before the first heading is its own section. Empty sections are dropped."""
    sections: list[list[str]] = [[]]
    in_fence = False
    for line in body.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and _HEADING.match(line) and any(s.strip() for s in sections[-1]):
            sections.append([])
        sections[-1].append(line)
    return [text for text in ("\n".join(s).strip() for s in sections) if text]


def chunk_entry(entry: Entry) -> list[Chunk]:
    """The entry's chunks: one per section of its body, each shown under the entry's title.
    `search_text` adds the title, id, tags and failure classes (what BM25 indexes)."""
    meta = " ".join([entry.title, entry.id, *entry.tags, *entry.classes])
    chunks = []
    for index, section in enumerate(split_sections(entry.body)):
        text = f"## {entry.title}\n{section}\n"
        chunks.append(Chunk(entry.id, index, text, search_text=f"{meta}\n{section}"))
    return chunks
