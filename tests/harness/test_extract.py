"""Stage 1: extracting the candidate's code from an LLM response."""

from __future__ import annotations

import pytest

from atrl.harness.extract import extract_code

KERNEL = "import triton\n\n\nclass ModelNew:\n    pass\n"


def test_single_python_block_is_extracted():
    response = f"Here is my kernel:\n```python\n{KERNEL}```\nIt is fast."
    assert extract_code(response) == KERNEL


def test_last_python_block_wins_over_earlier_drafts():
    draft = "class ModelNew:\n    x = 1\n"
    response = f"Draft:\n```python\n{draft}```\nFixed:\n```python\n{KERNEL}```\n"
    assert extract_code(response) == KERNEL


def test_py_tag_and_bare_fence_that_parses_are_accepted():
    assert extract_code(f"```py\n{KERNEL}```") == KERNEL
    assert extract_code(f"```\n{KERNEL}```") == KERNEL


def test_bare_fence_that_does_not_parse_is_skipped():
    response = f"```python\n{KERNEL}```\nOutput:\n```\nspeedup: 2.3x on the GPU!\n```\n"
    assert extract_code(response) == KERNEL


def test_other_language_blocks_are_ignored():
    response = f"```python\n{KERNEL}```\n```bash\nx = 1\n```\n"
    assert extract_code(response) == KERNEL


def test_block_defining_modelnew_is_preferred_over_a_later_usage_snippet():
    usage = "model = ModelNew()\nprint(model)\n"
    response = f"```python\n{KERNEL}```\nUse it like this:\n```python\n{usage}```\n"
    assert extract_code(response) == KERNEL


def test_crlf_line_endings_are_normalised():
    response = "Text\r\n```python\r\nimport triton\r\nx = 1\r\n```\r\n"
    assert extract_code(response) == "import triton\nx = 1\n"


def test_unclosed_final_fence_is_used_when_it_parses():
    response = f"Here:\n```python\n{KERNEL}"
    assert extract_code(response) == KERNEL


def test_unclosed_final_fence_that_is_truncated_falls_back_to_an_earlier_block():
    response = f"```python\n{KERNEL}```\nNow better:\n```python\nclass ModelNew:\n    def forward(self, x"
    assert extract_code(response) == KERNEL


def test_python_block_with_syntax_error_is_kept_for_the_static_stage():
    broken = "class ModelNew:\n    def forward(self, x)\n        return x\n"
    assert extract_code(f"```python\n{broken}```") == broken


def test_indented_block_is_dedented():
    response = "1. The code:\n   ```python\n   x = 1\n   y = 2\n   ```\n"
    assert extract_code(response) == "x = 1\ny = 2\n"


def test_whole_text_is_used_when_it_is_code_without_fences():
    assert extract_code(KERNEL) == KERNEL


def test_prose_without_code_gives_none():
    assert extract_code("I cannot write this kernel, sorry.") is None
    assert extract_code("") is None
    assert extract_code("hello") is None  # parses as an expression but defines nothing


def test_empty_fenced_block_gives_none():
    assert extract_code("```python\n```") is None


@pytest.mark.parametrize("one_line", [
    "from my_kernels import ModelNew",
    "import torch; import triton",
    "for _ in range(1): pass",
])
def test_a_one_line_module_without_fences_is_code(one_line):
    assert extract_code(one_line) == one_line + "\n"


def test_a_file_starting_with_a_byte_order_mark_is_code():
    assert extract_code("\ufeff" + KERNEL) == KERNEL


def test_code_with_an_invalid_escape_is_read_without_printing_a_warning():
    import warnings

    from atrl.harness.static.checks import check_static

    code = 'import re\n\nPATTERN = re.compile("\\s+")\n\n\nclass ModelNew:\n    pass\n'
    response = f"Here it is:\n```python\n{code}```\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert extract_code(response) == code
        check_static(code)
    assert [w for w in caught if issubclass(w.category, (SyntaxWarning, DeprecationWarning))] == []


SPLIT_KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=offs < n), 0.0), mask=offs < n)
"""
SPLIT_MODEL = """class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
"""


def test_an_answer_split_over_blocks_keeps_the_blocks_that_define_what_modelnew_uses():
    original = "class Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
    usage = "y = ModelNew()(torch.randn(4))\nprint(y)\n"
    response = (f"The original:\n```python\n{original}```\nThe kernel:\n```python\n{SPLIT_KERNEL}```\n"
                f"The module:\n```python\n{SPLIT_MODEL}```\nUsage:\n```python\n{usage}```\n")
    code = extract_code(response)
    assert code == SPLIT_KERNEL + "\n" + SPLIT_MODEL  # not the unused Model, not the usage after it
    compile(code, "<candidate>", "exec")


def test_local_names_do_not_pull_in_an_earlier_block_that_defines_them_at_module_level():
    # `y` and `x` are forward's own: the earlier snippet that assigns them at module level stays out
    snippet = "import torch\nx = torch.randn(4)\ny = x.relu()\n"
    whole = SPLIT_KERNEL + "\n" + SPLIT_MODEL
    response = f"Try:\n```python\n{snippet}```\nSolution:\n```python\n{whole}```\n"
    assert extract_code(response) == whole
