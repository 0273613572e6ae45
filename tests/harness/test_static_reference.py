"""The reference-name rule (KernelBench semantics for definitions): defining `Model`, `get_inputs`,
`get_init_inputs`, helpers, tests and a `__main__` block is allowed; *using* a reference name from
code that ModelNew reaches or that runs at import is `static:reference-access`."""

from __future__ import annotations

import pytest
from whole_file import load

from atrl.harness.static.checks import check_static, ignored_definitions

RULE = "static:reference-access"
POLICIES = ["strict", "partial"]
ACCEPTED = load("accepted")
REJECTED = load("rejected")

KERNEL = """\
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


def launch(x):
    y = torch.empty_like(x)
    relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y

"""
MODEL = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return torch.relu(x)

"""
MODEL_NEW = """
class ModelNew(nn.Module):
    def forward(self, x):
        return launch(x)
"""


def reference_lines(code: str, policy: str = "partial") -> list[int]:
    return [v.line for v in check_static(code, compute_policy=policy) if v.rule == RULE]


def line_of(code: str, marker: str) -> int:
    return next(n for n, text in enumerate(code.splitlines(), 1) if marker in text)


# --- whole files as LLMs write them ------------------------------------------------------------------
def test_there_are_enough_whole_files_of_each_kind():
    assert len(ACCEPTED) >= 6 and len(REJECTED) >= 6


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("case", ACCEPTED, ids=[c.name for c in ACCEPTED])
def test_whole_file_answer_passes_the_static_stage(case, policy):
    assert check_static(case.source, compute_policy=policy) == []


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("case", REJECTED, ids=[c.name for c in REJECTED])
def test_use_of_a_reference_name_is_rejected_first_on_its_line(case, policy):
    violations = check_static(case.source, compute_policy=policy)
    assert violations, "accepted"
    assert (violations[0].rule, violations[0].line) == (RULE, case.line), violations[0].message


# --- what counts as a use ----------------------------------------------------------------------------
def test_definitions_alone_and_a_main_block_using_them_are_allowed():
    code = KERNEL + MODEL + MODEL_NEW + """
def get_inputs():
    return [torch.randn(16)]


def get_init_inputs():
    return []


def self_test():
    assert torch.allclose(Model()(*get_inputs()), ModelNew()(*get_inputs()))


if __name__ == "__main__":
    self_test()
    print(Model, get_inputs(), get_init_inputs())
"""
    assert check_static(code) == []


@pytest.mark.parametrize("statement", [
    "return get_inputs()[0]",
    "return Model.forward(self, x)",
    "return vars()['get_init_inputs']()",
    "return globals().get('Model')()(x)",
    "return isinstance(x, Model) and launch(x)",
])
def test_use_inside_forward_is_rejected(statement):
    code = KERNEL + MODEL + MODEL_NEW.replace("return launch(x)", f"launch(x)\n        {statement}") + """

def get_inputs():
    return [torch.randn(16)]


def get_init_inputs():
    return []
"""
    assert line_of(code, statement) in reference_lines(code)


def test_a_main_block_nested_in_another_statement_never_runs_either():
    code = KERNEL + MODEL + MODEL_NEW + "\nif True:\n    if __name__ == '__main__':\n" \
        "        print(Model()(torch.ones(4)))\n"
    assert check_static(code) == []


def test_a_reference_name_the_candidate_does_not_define_is_rejected_as_unavailable():
    code = KERNEL + MODEL_NEW.replace("(nn.Module)", "(Model)")
    violations = check_static(code)
    assert violations[0].rule == RULE and "not defined in your code" in violations[0].message


def test_code_that_runs_at_import_may_not_use_them():
    tail = "\nif __name__ != '__main__':\n    EXPECTED = Model()(torch.ones(4))\n"
    code = KERNEL + MODEL + MODEL_NEW + tail
    assert reference_lines(code) == [line_of(code, "EXPECTED = Model()")]


def test_a_lambda_stored_at_import_is_reached():
    code = KERNEL + MODEL + "\nSTEPS = {'finish': lambda t: Model()(t)}\n" + MODEL_NEW
    assert reference_lines(code) == [line_of(code, "STEPS =")]


@pytest.mark.parametrize(("future", "rejected"), [("", True), ("from __future__ import annotations\n", False)])
def test_annotations_count_unless_postponed(future, rejected):
    code = future + KERNEL + MODEL + MODEL_NEW.replace("def forward(self, x):", "def forward(self, x: Model):")
    assert bool(reference_lines(code)) is rejected


def test_a_local_variable_of_a_reference_name_is_not_the_reference():
    code = KERNEL + MODEL_NEW.replace("return launch(x)", "reference = x.contiguous()\n        return launch(reference)")
    assert check_static(code) == []


def test_a_class_body_inside_forward_does_not_make_the_name_local():
    code = KERNEL + MODEL + MODEL_NEW.replace(
        "return launch(x)", "class Shadow:\n            Model = None\n        launch(x)\n        return Model()(x)")
    assert line_of(code, "return Model()(x)") in reference_lines(code)


# --- class ModelNew(Model): the constructor may be inherited, the computation may not -----------------
SUBCLASS = """
class ModelNew(Model):
    def forward(self, x):
        return launch(x) * self.scale
"""


@pytest.mark.parametrize("policy", POLICIES)
def test_modelnew_may_inherit_its_own_models_constructor(policy):
    code = KERNEL + MODEL + SUBCLASS.replace(" * self.scale", "")
    assert check_static(code, compute_policy=policy) == []


def test_the_old_style_super_call_in_the_copied_constructor_is_allowed():
    # `super(Model, self).__init__()` is how many KernelBench files (and their echoes) write it:
    # super(Model, self) looks past Model, so it reaches none of Model's own methods
    model = MODEL.replace("super().__init__()", "super(Model, self).__init__()")
    code = KERNEL + model + SUBCLASS.replace(" * self.scale", "")
    assert check_static(code) == []
    # looking past Model reaches nn.Module's forward, not Model's; ModelNew's own super() still may not
    past = SUBCLASS.replace("return launch(x) * self.scale", "launch(x)\n        return super(ModelNew, self).forward(x)")
    assert line_of(KERNEL + model + past, "super(ModelNew, self).forward") in reference_lines(KERNEL + model + past)


def test_explicit_model_init_and_construction_helpers_are_allowed():
    model = MODEL.replace("self.scale = nn.Parameter(torch.ones(1))", "self.scale = self._make_scale()") + """
    def _make_scale(self):
        return nn.Parameter(torch.ones(1))
"""
    subclass = """
class ModelNew(Model):
    def __init__(self):
        Model.__init__(self)

    def forward(self, x):
        return launch(x)
"""
    assert check_static(KERNEL + model + subclass) == []


@pytest.mark.parametrize(("forward", "marker"), [
    ("launch(x)\n        return super().forward(x)", "super().forward"),
    ("launch(x)\n        proxy = super()\n        return proxy.forward(x)", "proxy.forward"),
    ("launch(x)\n        return self._reference_relu(x)", "self._reference_relu"),
    ("launch(x)\n        return operator.methodcaller('forward', x)(super())", "methodcaller"),
])
def test_running_a_model_method_from_modelnew_is_rejected(forward, marker):
    model = MODEL + "    def _reference_relu(self, x):\n        return torch.relu(x)\n"
    code = "import operator\n" + KERNEL + model + SUBCLASS.replace("return launch(x) * self.scale", forward)
    assert line_of(code, marker) in reference_lines(code)


def test_inheriting_models_forward_is_rejected():
    code = KERNEL + MODEL + "\nclass ModelNew(Model):\n    def __init__(self):\n        super().__init__()\n" \
        "        launch(torch.ones(4))\n"
    violations = check_static(code)
    assert violations[0].rule == RULE and "inherits it" in violations[0].message
    assert violations[0].line == line_of(code, "class ModelNew(Model)")


def test_a_models_init_subclass_hook_runs_at_import():
    model = MODEL + "    def __init_subclass__(cls):\n        cls.cached = torch.relu(torch.ones(4))\n"
    code = KERNEL + model + "\nclass NeverUsed(Model):\n    pass\n\n" + MODEL_NEW
    assert reference_lines(code) == [line_of(code, "class NeverUsed(Model)")]


def test_torch_inside_the_echoed_model_is_not_reported_once_its_use_is():
    code = KERNEL + MODEL + MODEL_NEW.replace("return launch(x)", "launch(x)\n        return Model()(x)")
    rules = {(v.rule, v.line) for v in check_static(code, compute_policy="strict")}
    assert rules == {(RULE, line_of(code, "return Model()(x)"))}


# --- the feedback's list of ignored definitions ------------------------------------------------------
def test_ignored_definitions_lists_the_reference_names_and_the_main_block():
    code = KERNEL + MODEL + MODEL_NEW + "\nget_inputs = lambda: [torch.randn(4)]\n\n\ndef get_init_inputs():\n" \
        "    return []\n\n\nif __name__ == '__main__':\n    pass\n"
    assert ignored_definitions(code) == ["Model", "get_inputs", "get_init_inputs", "__main__ block"]


def test_a_model_serving_as_base_class_is_not_listed_as_ignored():
    assert ignored_definitions(KERNEL + MODEL + SUBCLASS) == []


def test_nothing_is_ignored_in_a_plain_candidate_or_unparsable_code():
    assert ignored_definitions(KERNEL + MODEL_NEW) == []
    assert ignored_definitions("def broken(:\n") == []
