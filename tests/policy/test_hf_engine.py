"""HFPolicy delegating to a generation engine gives the same tokens and log-probs as its own loop."""

import pytest
import torch

from atrl.errors import UsageError
from atrl.policy.base import GenerationRequest, Message, SamplingParams
from atrl.policy.hf import HFPolicy
from atrl.rl.tiny import build_tiny_model


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tiny")
    build_tiny_model(directory, seed=0)
    return directory


def _requests(policy):
    texts = ["write a relu kernel", "a longer prompt about a softmax kernel over rows"]
    return [GenerationRequest(messages=[Message("user", t)],
                              prompt_ids=policy.tokenize(policy.render([Message("user", t)], True))) for t in texts]


def test_static_engine_matches_the_policy_loop_greedily(tiny_dir):
    torch.set_num_threads(1)
    loop = HFPolicy(tiny_dir, engine=None)
    engine = HFPolicy(tiny_dir, engine="static")
    params = SamplingParams(temperature=0.0, max_tokens=12)
    a = loop.generate(_requests(loop), params)
    b = engine.generate(_requests(engine), params)
    assert [g.token_ids for g in a] == [g.token_ids for g in b]
    assert [g.text for g in a] == [g.text for g in b]
    for x, y in zip(a, b, strict=True):
        assert x.finish_reason == y.finish_reason
        assert x.logprobs == pytest.approx(y.logprobs, abs=1e-4)


def test_unknown_engine_is_a_usage_error(tiny_dir):
    with pytest.raises(UsageError):
        HFPolicy(tiny_dir, engine="warp-drive")


def test_auto_engine_is_static_on_a_gpu_and_the_own_loop_elsewhere(tiny_dir):
    from atrl.policy.hf import auto_engine

    assert auto_engine(torch.device("cuda", 0)) == "static"
    assert auto_engine(torch.device("cpu")) is None
    assert HFPolicy(tiny_dir, device="cpu").engine is None  # the default "auto" keeps the own loop


def test_auto_falls_back_to_the_own_loop_when_the_engine_refuses_the_model(tiny_dir, monkeypatch):
    import atrl.policy.hf as hf

    monkeypatch.setattr(hf, "auto_engine", lambda device: "static")
    monkeypatch.setattr("atrl.policy.engines.make_engine",
                        lambda *a, **k: (_ for _ in ()).throw(UsageError("refused", "use another")))
    assert HFPolicy(tiny_dir, device="cpu").engine is None
    with pytest.raises(UsageError, match="refused"):
        HFPolicy(tiny_dir, engine="static")  # asked for by name: the reason is shown
