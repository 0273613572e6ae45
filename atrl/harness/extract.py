"""Stage 1 (extract): pull the candidate's Python source out of an LLM response.

`extract_code(response)` returns the source text, or `None` (the harness reports `format:no-code`).
Choice, in order:
  1. the fenced code blocks (```python, ```py, ```python3, or a bare ``` / ~~~ fence whose content
     parses); an unclosed final fence counts when the text after it parses (truncated responses);
     among them the last one that defines `ModelNew`, else the last one. A python-tagged closed block
     is kept even if it does not parse, so the static stage can report the syntax error and its line.
     When the chosen block uses module-level names it does not define (an answer that gives the
     kernel in one block and `ModelNew` in the next), the earlier blocks that define them are put
     before it, in their order, and so on for the names those use;
  2. else the whole response, if it parses as Python and holds a statement other than a bare
     expression (a def, class, assignment, import, loop, ...): a one-line module such as
     `from kernels import ModelNew` is code, while a one-word answer that happens to parse is not.
A leading byte-order mark (files saved by some editors) is ignored.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from dataclasses import dataclass

from atrl.astnames import parse_source, symbol_table

_PYTHON_TAGS = frozenset({"python", "py", "python3", "py3"})
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*?)[ \t]*$")
_MODELNEW = re.compile(r"^\s*class\s+ModelNew\b", re.MULTILINE)


@dataclass
class _Block:
    tag: str  # first word of the fence's info string, lower-cased ("" for a bare fence)
    body: str
    closed: bool


def _parses(source: str) -> bool:
    try:
        parse_source(source)
    except (SyntaxError, ValueError):
        return False
    return True


def _is_module_code(source: str) -> bool:
    """True when `source` parses and holds a statement that is not a bare expression: prose
    rarely parses at all, and when it does ("hello", "Done.") it is an expression."""
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return False
    return any(not isinstance(node, (ast.Expr, ast.Pass)) for node in tree.body)


def _fenced_blocks(text: str) -> list[_Block]:
    """Every fenced block in order; a closing fence uses the opening's character, at least as long."""
    blocks: list[_Block] = []
    opening: re.Match[str] | None = None
    body: list[str] = []
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if opening is None:
            if match is not None:
                opening, body = match, []
            continue
        fence = opening.group("fence")
        if match is not None and not match.group("info") and match.group("fence")[0] == fence[0] \
                and len(match.group("fence")) >= len(fence):
            blocks.append(_Block(_tag(opening), "\n".join(body), closed=True))
            opening = None
        else:
            body.append(line)
    if opening is not None:
        blocks.append(_Block(_tag(opening), "\n".join(body), closed=False))
    return blocks


def _tag(opening: re.Match[str]) -> str:
    words = opening.group("info").split()
    return words[0].lower().lstrip("{.") if words else ""


def _normalise(code: str) -> str:
    return textwrap.dedent(code).strip("\n") + "\n"


def _is_candidate(block: _Block) -> bool:
    code = _normalise(block.body)
    if not code.strip():
        return False
    if block.tag in _PYTHON_TAGS and block.closed:
        return True
    if block.tag in _PYTHON_TAGS or block.tag == "":
        return _parses(code)
    return False


_BUILTINS = frozenset(dir(builtins))


def _names(code: str) -> tuple[set[str], set[str]] | None:
    """(module-level names `code` defines, module-level names it uses without defining), or None
    when it does not parse."""
    try:
        table = symbol_table(code, "<candidate>")
    except (SyntaxError, ValueError):
        return None
    defined = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    used = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    scopes = list(table.get_children())
    while scopes:
        scope = scopes.pop()
        used |= {s.get_name() for s in scope.get_symbols() if s.is_global() and s.is_referenced()}
        scopes += scope.get_children()
    return defined, used - defined - _BUILTINS


def _with_earlier_definitions(blocks: list[str], chosen: int) -> str:
    """`blocks[chosen]`, preceded by the earlier blocks that define the names it is missing."""
    names = _names(blocks[chosen])
    if names is None or not names[1]:
        return blocks[chosen]
    missing, kept = set(names[1]), []
    for block in reversed(blocks[:chosen]):
        found = _names(block)
        if found is None or not found[0] & missing:
            continue
        kept.insert(0, block)
        missing = (missing - found[0]) | found[1]
    return "\n".join([*kept, blocks[chosen]])


def extract_code(response: str) -> str | None:
    """The candidate source in `response` (see the module docstring for the rules), or None."""
    text = response.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    candidates = [_normalise(b.body) for b in _fenced_blocks(text) if _is_candidate(b)]
    if candidates:
        with_model = [i for i, code in enumerate(candidates) if _MODELNEW.search(code)]
        return _with_earlier_definitions(candidates, (with_model or [len(candidates) - 1])[-1])
    whole = _normalise(text)
    if whole.strip() and _is_module_code(whole):
        return whole
    return None
