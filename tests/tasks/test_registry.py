"""`get_task`: a bare name is a builtin task; a prefix that is no suite is an error naming the suites."""

from __future__ import annotations

import pytest

from atrl.errors import UsageError
from atrl.tasks.registry import SUITES, get_task


def test_bare_name_is_a_builtin_task():
    assert get_task("relu").id == "builtin/relu"


def test_unknown_suite_prefix_is_named_with_the_suites():
    with pytest.raises(UsageError) as info:
        get_task("nosuch/relu")
    message = str(info.value)
    assert "'nosuch'" in message and "builtin/nosuch" not in message
    assert all(suite in message for suite in SUITES)
