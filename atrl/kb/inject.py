"""What the agent puts into its context from the knowledge base: `KnowledgeInjector`.

`for_episode(task)`: the best-matching guide section for the task's operators and tags, a
worked example of the task's family (never the task's own solution), a note specific to the
platform (interpreter/ascend), then further guide sections. `after_verdict(task, verdict)`: the
error-fix entry of the verdict's failure class first, then what retrieval adds for its message;
"" when the verdict is ok. Both return at most `budget_tokens` tokens as measured by
`count_tokens`; the agent records the exact returned text.

Platform mapping: see `atrl.kb.retriever.PLATFORM_SCOPES` (interpreter sees cuda guides too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from atrl.kb.budget import approx_tokens, pack
from atrl.kb.queries import task_query, verdict_query
from atrl.kb.retriever import Retriever, default_retriever, platform_scope

GUIDE_KINDS = ("guide", "pitfall")


class KnowledgeInjector:
    """Knowledge-base text for one platform, within a token budget.

    platform: the backend's platform ("cuda" | "interpreter" | "ascend" | "npu").
    budget_tokens: the most tokens either method returns. count_tokens: the policy's counter
    (default: about 4 characters per token). exclude_tasks: task ids whose examples never appear
    (the task passed to a method is always excluded too). allow_example_tasks: when given, only
    these task ids' examples may appear (e.g. the training split). k: entries retrieved per query.
    retriever: the index to use (default: the shared one over the shipped entries).
    """

    def __init__(self, platform: str, budget_tokens: int = 600, count_tokens: Callable[[str], int] | None = None,
                 exclude_tasks: Iterable[str] = (), allow_example_tasks: Iterable[str] | None = None,
                 k: int = 3, retriever: Retriever | None = None) -> None:
        platform_scope(platform)  # validates the name
        self.platform = platform
        self.budget_tokens = budget_tokens
        self.count_tokens = count_tokens or approx_tokens
        self.exclude_tasks = tuple(exclude_tasks)
        self.allow_example_tasks = tuple(allow_example_tasks) if allow_example_tasks is not None else None
        self.k = k
        self.retriever = retriever or default_retriever()

    def _excluded(self, task: Any) -> tuple[str, ...]:
        own = getattr(task, "id", None)
        return self.exclude_tasks + ((own,) if own else ())

    def _search(self, query: str, task: Any, k: int, **options: Any):
        return self.retriever.search(query, self.platform, k=k, exclude_tasks=self._excluded(task),
                                     allow_example_tasks=self.allow_example_tasks, **options)

    def for_episode(self, task: Any) -> str:
        """Guides and one worked example for `task` (never its own solution), ≤ the budget."""
        query = task_query(task)
        guides = self._search(query, task, self.k, kinds=GUIDE_KINDS)
        examples = self._search(query, task, 1, kinds=("example",))
        pieces = [h.chunk_text for h in guides[:1]]
        pieces += [self.retriever.get(h.entry_id).text() for h in examples]
        seen = {h.entry_id for h in guides}
        if self.platform != "cuda":
            own = [h for h in self._search(query, task, len(self.retriever.entries), kinds=GUIDE_KINDS)
                   if h.platform == platform_scope(self.platform)[0]]
            pieces += [h.chunk_text for h in own[:1] if h.entry_id not in seen]
        pieces += [h.chunk_text for h in guides[1:]]
        return pack(pieces, self.budget_tokens, self.count_tokens)[0]

    def verdict_fixes(self, verdict: Any, query: str | None = None) -> list[Any]:
        """The error-fix entries for a failed verdict, best first: the entry its diagnosis names
        (a wrong result whose cause the harness read from the error's shape), then the entries of
        its failure class, ordered by how well they match the message when there are several."""
        query = verdict_query(verdict) if query is None else query
        error_class = getattr(verdict, "error_class", None) or ""
        fixes = self.retriever.error_fix_entries(error_class, self.platform)
        if len(fixes) > 1:  # several entries fix this class: the message decides their order
            fixes = self.retriever.rank_error_fixes(query, fixes)
        diagnosis = getattr(verdict, "diagnosis", None) or {}
        named = diagnosis.get("kb_entry")
        if named and named in self.retriever.entries:
            fixes = [self.retriever.get(named)] + [e for e in fixes if e.id != named]
        return fixes

    def after_verdict(self, task: Any, verdict: Any) -> str:
        """The error-fix entry for the verdict's failure class, then retrieved sections for its
        message, ≤ the budget; "" when the verdict is ok."""
        if getattr(verdict, "ok", False):
            return ""
        query = verdict_query(verdict)
        fixes = self.verdict_fixes(verdict, query)
        pieces = [e.text() for e in fixes[:1]]
        extra = self._search(query, task, self.k, exclude_ids=[e.id for e in fixes[:1]])
        pieces += [h.chunk_text for h in extra]
        return pack(pieces, self.budget_tokens, self.count_tokens)[0]
