"""The append-only context of one segment, in the policy's own tokens.

A segment's context is a chat (`messages`) and, in parallel, its token ids: each new message adds
exactly the text the policy's chat template adds for it (the *delta*: rendered conversation with
the message minus rendered conversation without it), tokenized with `policy.tokenize`. A message
may hold several typed pieces (e.g. kb text then the task); the template's scaffolding before the
content takes the first piece's type and the scaffolding after it the last piece's type. A sampled
response is appended as the policy generated it (its own token ids and log-probs), between the
template's assistant header and end-of-turn text, which take the response's (or summary's) type
but have no log-prob: a token is trained only where its type is trainable *and* it has a log-prob
(`Segment.trainable_mask`).
"""

from __future__ import annotations

from dataclasses import dataclass

from atrl.agent.records import Segment, Span
from atrl.errors import UsageError
from atrl.policy.base import Generation, Message, Policy

_SENTINEL = "\u2063ATRL-SENTINEL\u2063"


@dataclass
class Piece:
    """Part of one message's content with its token type."""

    text: str
    type: str


def closing_text(policy: Policy) -> str:
    """The text `policy`'s template adds after an assistant message's content (e.g. `<|im_end|>\\n`)."""
    probe = [Message("system", "s"), Message("user", "u"), Message("assistant", _SENTINEL)]
    rendered = policy.render(probe, add_generation_prompt=False)
    at = rendered.rfind(_SENTINEL)
    return rendered[at + len(_SENTINEL):] if at >= 0 else ""


class SegmentContext:
    """Builds one segment: `messages` (what chat-level policies see) and `segment.token_ids`
    (what token-level policies continue), kept in step. Lengths are in the policy's tokens."""

    def __init__(self, policy: Policy, index: int) -> None:
        self.policy = policy
        self.messages: list[Message] = []
        self.segment = Segment(index=index)

    # -- sizes -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.segment.token_ids)

    def header_text(self) -> str:
        """The text the template adds to open an assistant message after the current chat."""
        with_prompt = self.policy.render(self.messages, add_generation_prompt=True)
        without = self.policy.render(self.messages, add_generation_prompt=False) if self.messages else ""
        if not with_prompt.startswith(without):
            raise UsageError(f"the chat template of {self.policy.name} is not append-only",
                             "use a policy whose template renders a conversation as a prefix of its continuation")
        return with_prompt[len(without):]

    def closing_text(self) -> str:
        """The text the template adds after an assistant message's content (e.g. `<|im_end|>\\n`)."""
        return closing_text(self.policy)

    def header_tokens(self) -> int:
        return len(self.policy.tokenize(self.header_text()))

    def closing_tokens(self) -> int:
        return len(self.policy.tokenize(self.closing_text()))

    def message_tokens(self, role: str, pieces: list[Piece]) -> int:
        """How many tokens `add_message(role, pieces)` would append now."""
        return sum(len(ids) for ids, _ in self._message_delta(role, pieces))

    # -- appending ---------------------------------------------------------------------------
    def _append(self, ids: list[int], type_: str, logprobs: list[float] | None = None,
                turn: int | None = None) -> tuple[int, int]:
        seg = self.segment
        start = len(seg.token_ids)
        seg.token_ids.extend(ids)
        seg.token_types.extend([type_] * len(ids))
        seg.logprobs.extend(logprobs if logprobs is not None else [None] * len(ids))
        end = len(seg.token_ids)
        if end > start:
            last = seg.spans[-1] if seg.spans else None
            if last is not None and last.type == type_ and last.end == start and last.turn == turn:
                last.end = end
            else:
                seg.spans.append(Span(type=type_, start=start, end=end, turn=turn))
        return start, end

    def _message_delta(self, role: str, pieces: list[Piece]) -> list[tuple[list[int], str]]:
        before = self.policy.render(self.messages, add_generation_prompt=False) if self.messages else ""
        content = "".join(p.text for p in pieces)
        after = self.policy.render(self.messages + [Message(role, content)], add_generation_prompt=False)
        if not after.startswith(before):
            raise UsageError(f"the chat template of {self.policy.name} is not append-only",
                             "use a policy whose template renders a conversation as a prefix of its continuation")
        delta = after[len(before):]
        tok = self.policy.tokenize
        at = delta.find(content) if content else -1
        if at < 0:  # the template rewrote the content: type the whole delta as the first piece
            return [(tok(delta), pieces[0].type)]
        out = [(tok(delta[:at]), pieces[0].type)]
        out += [(tok(p.text), p.type) for p in pieces]
        out.append((tok(delta[at + len(content):]), pieces[-1].type))
        return out

    def add_message(self, role: str, pieces: list[Piece], turn: int | None = None) -> None:
        """Append a non-sampled message made of typed pieces."""
        pieces = [p for p in pieces if p.text] or pieces[:1]
        for ids, type_ in self._message_delta(role, pieces):
            self._append(ids, type_, turn=turn)
        self.messages.append(Message(role, "".join(p.text for p in pieces)))

    def add_message_within(self, role: str, pieces: list[Piece], max_tokens: int, turn: int | None = None) -> bool:
        """Append the message cut to at most `max_tokens` tokens: later pieces are dropped first,
        then the last kept piece is shortened. Returns False (appending nothing) when not even the
        template scaffolding with one token of content fits."""
        pieces = [p for p in pieces if p.text]
        if not pieces:
            return False
        if self.message_tokens(role, pieces) <= max_tokens:
            self.add_message(role, pieces, turn)
            return True
        scaffold = self.message_tokens(role, [Piece("x", pieces[0].type)]) - len(self.policy.tokenize("x"))
        room = max_tokens - scaffold
        kept: list[Piece] = []
        for p in pieces:
            ids = self.policy.tokenize(p.text)
            if len(ids) <= room:
                kept.append(p)
                room -= len(ids)
                continue
            if room > 0:
                kept.append(Piece(self.policy.detokenize(ids[:room]), p.type))
            break
        while kept and self.message_tokens(role, kept) > max_tokens:
            last = kept[-1]
            ids = self.policy.tokenize(last.text)
            kept[-1] = Piece(self.policy.detokenize(ids[: max(0, len(ids) - 1)]), last.type)
            if not kept[-1].text:
                kept.pop()
        if not kept:
            return False
        self.add_message(role, kept, turn)
        return True

    def open_assistant(self, type_: str, turn: int | None = None) -> list[int]:
        """Append the assistant header (typed `type_`, no log-probs); returns the prompt ids."""
        self._append(self.policy.tokenize(self.header_text()), type_, turn=turn)
        return list(self.segment.token_ids)

    def add_generation(self, gen: Generation, type_: str, turn: int | None = None) -> tuple[int, int]:
        """Append the sampled tokens and the template's end-of-turn text; returns the sampled
        tokens' [start, end) positions."""
        start, end = self._append(list(gen.token_ids), type_, self._logprobs(gen), turn)
        closing = self.policy.tokenize(self.closing_text())
        if gen.token_ids and closing and gen.token_ids[-1] == closing[0]:
            closing = closing[1:]  # the policy already sampled the end-of-turn token
        self._append(closing, type_, turn=turn)
        self.messages.append(Message("assistant", gen.text))
        return start, end

    @staticmethod
    def _logprobs(gen: Generation) -> list[float | None]:
        if gen.logprobs is not None and len(gen.logprobs) == len(gen.token_ids):
            return [float(x) for x in gen.logprobs]
        return [None] * len(gen.token_ids)
