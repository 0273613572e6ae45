"""A small deterministic tokenizer and chat template for policies without a model.

`replay`, `reference` and (without a local tokenizer) `openai` count tokens with it, so context
budgets, token types and append-only contexts work without any model files.

Tokens: the text is split into word and punctuation-run pieces (each with the whitespace before
it) and trailing whitespace; each piece's
UTF-8 bytes are cut into chunks of at most 4 bytes, and a chunk's id is
`(len(chunk) << 32) | int.from_bytes(chunk, "big")` — stable across processes and invertible.
English text comes out at roughly one token per 3–4 characters. The chat-template markers
`<|im_start|>` and `<|im_end|>` are single special tokens with ids 1 and 2.

Chat template (ChatML): each message is `<|im_start|>{role}\\n{content}<|im_end|>\\n`; the generation
prompt is `<|im_start|>assistant\\n`.
"""

from __future__ import annotations

import re

from atrl.policy.base import Message

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
SPECIAL_TOKENS: dict[str, int] = {IM_START: 1, IM_END: 2}
_SPECIAL_BY_ID = {v: k for k, v in SPECIAL_TOKENS.items()}
_SPECIAL_RE = re.compile("(" + "|".join(re.escape(s) for s in SPECIAL_TOKENS) + ")")
_PIECE_RE = re.compile(r"\s*\w+|\s*[^\w\s]+|\s+")
CHUNK_BYTES = 4


def tokenize(text: str) -> list[int]:
    """Token ids of `text` (no special tokens added; markers in the text become special ids)."""
    ids: list[int] = []
    for part in _SPECIAL_RE.split(text):
        if not part:
            continue
        if part in SPECIAL_TOKENS:
            ids.append(SPECIAL_TOKENS[part])
            continue
        for piece in _PIECE_RE.findall(part):
            raw = piece.encode("utf-8")
            for i in range(0, len(raw), CHUNK_BYTES):
                chunk = raw[i : i + CHUNK_BYTES]
                ids.append((len(chunk) << 32) | int.from_bytes(chunk, "big"))
    return ids


def detokenize(ids: list[int]) -> str:
    """The text of `ids`; `detokenize(tokenize(t)) == t` for every string `t`."""
    out: list[str] = []
    pending = bytearray()
    for tid in ids:
        if tid in _SPECIAL_BY_ID:
            out.append(pending.decode("utf-8", errors="replace"))
            pending.clear()
            out.append(_SPECIAL_BY_ID[tid])
            continue
        length = tid >> 32
        if not 1 <= length <= CHUNK_BYTES:
            raise ValueError(f"token id {tid} is not a simple-tokenizer id")
        pending += (tid & 0xFFFFFFFF).to_bytes(length, "big")
    out.append(pending.decode("utf-8", errors="replace"))
    return "".join(out)


def render_chatml(messages: list[Message], add_generation_prompt: bool) -> str:
    """The ChatML text of `messages` (plus the assistant header when asked)."""
    text = "".join(f"{IM_START}{m.role}\n{m.content}{IM_END}\n" for m in messages)
    return text + (f"{IM_START}assistant\n" if add_generation_prompt else "")


class SimpleTokenizerMixin:
    """`render`/`tokenize`/`detokenize` of the Policy interface through this module."""

    eos_id: int = SPECIAL_TOKENS[IM_END]

    def render(self, messages: list[Message], add_generation_prompt: bool) -> str:
        return render_chatml(messages, add_generation_prompt)

    def tokenize(self, text: str) -> list[int]:
        return tokenize(text)

    def detokenize(self, ids: list[int]) -> str:
        return detokenize(ids)
