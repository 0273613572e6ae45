"""BM25 retrieval over chunked knowledge-base entries (`bm25s`), filtered by platform.

Platform scopes (which entries a backend's platform sees):
    cuda        → cuda + any
    interpreter → interpreter + cuda + any (the candidate is the same Triton code that later
                  runs on a GPU, so the CUDA programming guides apply; interpreter entries add
                  what differs on the CPU)
    ascend, npu → ascend + any

One index covers every chunk; a search scores all chunks, keeps those of the platform scope
(and of allowed example tasks), takes each entry's best chunk and returns the top k entries.
Ties are broken by entry id, then chunk index, so results are deterministic.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

# bm25s runs a JAX top-k when it is imported and JAX is installed; JAX then preallocates 75% of
# every visible GPU's memory, which starves the policy and the harness. Keep JAX on the CPU
# unless the user chose its platform.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import bm25s  # noqa: E402
import numpy as np

from atrl.errors import UsageError
from atrl.kb.entries import KINDS, Chunk, Entry, chunk_entry, load_entries

PLATFORM_SCOPES: dict[str, tuple[str, ...]] = {
    "cuda": ("cuda", "any"),
    "interpreter": ("interpreter", "cuda", "any"),
    "ascend": ("ascend", "any"),
    "npu": ("ascend", "any"),
}
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the this to was were "
    "will with not no do does you your use using when where which than then there these those".split()
)
_WORD = re.compile(r"[a-z0-9]+(?:[._][a-z0-9]+)*")


def platform_scope(platform: str) -> tuple[str, ...]:
    """Entry platforms visible to `platform`. Raises `UsageError` for an unknown platform."""
    if platform not in PLATFORM_SCOPES:
        raise UsageError(f"unknown platform {platform!r}", f"choose one of {', '.join(PLATFORM_SCOPES)}")
    return PLATFORM_SCOPES[platform]


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens: compounds like `tl.dot` / `layer_norm` are kept and also split
    into their parts; stopwords dropped; a plural `s` stripped."""
    tokens: list[str] = []
    for match in _WORD.findall(text.lower()):
        parts = re.split(r"[._]", match)
        for word in ([match] if len(parts) > 1 else []) + parts:
            if word and word not in STOPWORDS:
                tokens.append(_stem(word))
    return tokens


@dataclass(frozen=True)
class Hit:
    """One retrieved entry: its best-scoring chunk for the query. `score` is BM25 (≥ 0)."""

    entry_id: str
    score: float
    chunk_text: str
    chunk_index: int
    kind: str
    platform: str
    title: str
    task_id: str | None = None

    def to_dict(self) -> dict:
        return {"entry_id": self.entry_id, "score": round(self.score, 6), "kind": self.kind,
                "platform": self.platform, "title": self.title, "chunk_index": self.chunk_index,
                "task_id": self.task_id, "chunk_text": self.chunk_text}


class Retriever:
    """Search over `entries` (default: the shipped entries plus the builtin suite's examples).

    Build once and reuse: construction indexes every chunk; `search` costs one BM25 scoring pass.
    """

    def __init__(self, entries: Sequence[Entry] | None = None) -> None:
        if entries is None:
            from atrl.kb.examples import builtin_examples

            entries = [*load_entries(), *builtin_examples()]
        self.entries: dict[str, Entry] = {}
        for entry in sorted(entries, key=lambda e: e.id):
            if entry.id in self.entries:
                raise UsageError(f"duplicate knowledge-base id {entry.id!r}", "give every entry its own id")
            self.entries[entry.id] = entry
        self.chunks: list[Chunk] = [c for e in self.entries.values() for c in chunk_entry(e)]
        self._chunk_entry = [self.entries[c.entry_id] for c in self.chunks]
        self._bm25 = bm25s.BM25()
        self._bm25.index([tokenize(c.search_text) or ["_empty_"] for c in self.chunks], show_progress=False)
        # Error-fix entries are also ranked among themselves, with their own term statistics, so
        # that adding examples (code full of `tl.arange`, `range`) never reorders the fixes.
        self._fix_chunks = [c for c in self.chunks if self.entries[c.entry_id].kind == "error-fix"]
        self._fix_bm25 = bm25s.BM25()
        if self._fix_chunks:
            self._fix_bm25.index([tokenize(c.search_text) or ["_empty_"] for c in self._fix_chunks],
                                 show_progress=False)

    # ---- lookups ------------------------------------------------------------------------
    def get(self, entry_id: str) -> Entry:
        """The entry with this id. Raises `UsageError` naming close ids when there is none."""
        if entry_id in self.entries:
            return self.entries[entry_id]
        import difflib

        close = difflib.get_close_matches(entry_id, list(self.entries), n=3)
        hint = f"did you mean {', '.join(close)}?" if close else "run `atrl kb list` to see the ids"
        raise UsageError(f"no knowledge-base entry {entry_id!r}", hint)

    def list(self, platform: str | None = None, kind: str | None = None) -> list[Entry]:
        """Entries visible to `platform` (all when None) of `kind` (all when None), sorted by id."""
        if kind is not None and kind not in KINDS:
            raise UsageError(f"unknown kind {kind!r}", f"choose one of {', '.join(KINDS)}")
        scope = platform_scope(platform) if platform is not None else None
        return [e for e in self.entries.values()
                if (scope is None or e.platform in scope) and (kind is None or e.kind == kind)]

    def error_fix_entries(self, error_class: str, platform: str) -> list[Entry]:
        """Error-fix entries of the platform scope that list `error_class`, sorted by id."""
        scope = platform_scope(platform)
        return [e for e in self.entries.values()
                if e.kind == "error-fix" and error_class in e.classes and e.platform in scope]

    def rank_error_fixes(self, query: str, fixes: Sequence[Entry]) -> list[Entry]:
        """`fixes` (error-fix entries) ordered by how well their best chunk matches `query`,
        scored against the error-fix entries alone; ties and unmatched entries by id."""
        tokens = tokenize(query)
        best: dict[str, float] = {}
        if tokens and self._fix_chunks:
            scores = np.asarray(self._fix_bm25.get_scores(tokens), dtype=np.float64)
            for chunk, score in zip(self._fix_chunks, scores, strict=True):
                best[chunk.entry_id] = max(best.get(chunk.entry_id, 0.0), float(score))
        return sorted(fixes, key=lambda e: (-best.get(e.id, 0.0), e.id))

    # ---- search -------------------------------------------------------------------------
    def search(self, query: str, platform: str, k: int = 3, exclude_tasks: Iterable[str] = (),
               allow_example_tasks: Iterable[str] | None = None, kinds: Iterable[str] | None = None,
               exclude_ids: Iterable[str] = ()) -> list[Hit]:
        """The top `k` entries for `query` on `platform`, best first, one hit per entry (its best
        chunk). Examples of tasks in `exclude_tasks` never appear; when `allow_example_tasks` is
        given only examples of those task ids may appear. `kinds` restricts entry kinds;
        `exclude_ids` drops entries by id. Entries with a zero score are not returned."""
        scope = platform_scope(platform)
        excluded, skip_ids = set(exclude_tasks), set(exclude_ids)
        allowed = set(allow_example_tasks) if allow_example_tasks is not None else None
        wanted_kinds = set(kinds) if kinds is not None else None
        tokens = tokenize(query)
        if k <= 0 or not tokens:
            return []
        scores = np.asarray(self._bm25.get_scores(tokens), dtype=np.float64)
        best: dict[str, tuple[float, int]] = {}
        for position in np.flatnonzero(scores > 0):
            entry = self._chunk_entry[position]
            if entry.platform not in scope or entry.id in skip_ids:
                continue
            if wanted_kinds is not None and entry.kind not in wanted_kinds:
                continue
            if entry.task_id is not None and (entry.task_id in excluded
                                              or (allowed is not None and entry.task_id not in allowed)):
                continue
            score = float(scores[position])
            if entry.id not in best or score > best[entry.id][0]:
                best[entry.id] = (score, int(position))
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0], self.chunks[item[1][1]].index))
        hits = []
        for entry_id, (score, position) in ranked[:k]:
            entry, chunk = self.entries[entry_id], self.chunks[position]
            hits.append(Hit(entry_id, score, chunk.text, chunk.index, entry.kind, entry.platform, entry.title,
                            entry.task_id))
        return hits


@lru_cache(maxsize=1)
def default_retriever() -> Retriever:
    """The process-wide retriever over the shipped entries and builtin examples."""
    return Retriever()
