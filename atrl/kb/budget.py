"""Token budgets: the default token counter and packing texts so the result never exceeds a budget.

Counts are in tokens of whatever `count_tokens` measures (the policy's tokenizer in the agent).
Token counts of concatenations are not sums of parts, so every check measures the whole text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

TokenCounter = Callable[[str], int]
SEPARATOR = "\n"
ELLIPSIS = "[…]"
MIN_TRIMMED_LINES = 3  # a trimmed piece shorter than this is not worth showing


def approx_tokens(text: str) -> int:
    """About 4 characters per token (rounded up): the default when no tokenizer is given."""
    return -(-len(text) // 4)


def _trimmed(lines: list[str], n: int) -> str:
    return "\n".join(lines[:n] + [ELLIPSIS])


def pack(pieces: Iterable[str], budget: int, count_tokens: TokenCounter = approx_tokens,
         allow_trim: bool = True) -> tuple[str, list[int]]:
    """Join `pieces` in order (separated by a newline) while the joined text stays within
    `budget` tokens. A piece that does not fit whole is cut to its first lines plus an ellipsis
    line when `allow_trim` and at least `MIN_TRIMMED_LINES` lines fit; otherwise it is skipped.

    Returns (text, indices of the pieces used, whole or trimmed). `count_tokens(text) <= budget`
    always holds for the returned text (empty when nothing fits)."""
    text, used = "", []
    for index, piece in enumerate(pieces):
        piece = piece.strip("\n")
        if not piece:
            continue
        prefix = text + SEPARATOR if text else ""
        if count_tokens(prefix + piece) <= budget:
            text = prefix + piece
            used.append(index)
            continue
        if not allow_trim:
            continue
        lines = piece.splitlines()
        lo, hi = 0, len(lines) - 1  # largest n with the trimmed text inside the budget
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count_tokens(prefix + _trimmed(lines, mid)) <= budget:
                lo = mid
            else:
                hi = mid - 1
        # counters need not be monotonic on prefixes: step down until it really fits
        while lo >= MIN_TRIMMED_LINES and count_tokens(prefix + _trimmed(lines, lo)) > budget:
            lo -= 1
        if lo >= MIN_TRIMMED_LINES:
            text = prefix + _trimmed(lines, lo)
            used.append(index)
    return text, used
