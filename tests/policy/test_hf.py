"""HFPolicy with a tiny random Llama: batching, log-probs that a recomputation reproduces."""

from __future__ import annotations

import pytest
import torch

from atrl.errors import UsageError
from atrl.policy.base import GenerationRequest, Message, SamplingParams

TOL = 1e-4


def requests_of(policy, lengths=(5, 40)) -> list[GenerationRequest]:
    reqs = []
    for i, n in enumerate(lengths):
        text = policy.render([Message("system", "Write Triton."), Message("user", "relu " * n)], True)
        reqs.append(GenerationRequest(messages=[], prompt_ids=policy.tokenize(text), task_id="t", turn=i))
    return reqs


def test_hf_policy_loads_a_model_directory_on_cpu_in_fp32(tiny_policy):
    assert tiny_policy.device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert next(tiny_policy.model.parameters()).dtype == (torch.bfloat16 if torch.cuda.is_available() else torch.float32)
    assert tiny_policy.tokenizer is not None
    assert 2 in tiny_policy.eos_ids  # SmolLM2's <|im_end|>


@pytest.mark.parametrize("temperature", [0.0, 0.7, 1.0])
def test_generation_logprobs_match_score_tokens_recomputation(tiny_policy, temperature):
    reqs = requests_of(tiny_policy)
    gens = tiny_policy.generate(reqs, SamplingParams(temperature=temperature, top_p=0.9, max_tokens=12, seed=3))
    assert len(gens) == 2
    scored = tiny_policy.score_tokens([r.prompt_ids for r in reqs], [g.token_ids for g in gens], temperature)
    for g, s in zip(gens, scored, strict=True):
        assert len(g.token_ids) == len(g.logprobs) == 12 and g.finish_reason == "length"
        assert max(abs(a - b) for a, b in zip(g.logprobs, s, strict=True)) < TOL
        assert all(lp <= 0 for lp in g.logprobs)


def test_greedy_generation_does_not_depend_on_the_batch(tiny_policy):
    params = SamplingParams(temperature=0.0, max_tokens=10)
    short, long = requests_of(tiny_policy)
    alone = tiny_policy.generate([short], params)[0]
    batched = tiny_policy.generate([short, long], params)[0]
    assert alone.token_ids == batched.token_ids
    assert max(abs(a - b) for a, b in zip(alone.logprobs, batched.logprobs, strict=True)) < TOL


def test_seeded_sampling_is_reproducible_and_seeds_differ(tiny_policy):
    reqs = requests_of(tiny_policy)
    a = tiny_policy.generate(reqs, SamplingParams(temperature=1.0, max_tokens=16, seed=7))
    b = tiny_policy.generate(reqs, SamplingParams(temperature=1.0, max_tokens=16, seed=7))
    c = tiny_policy.generate(reqs, SamplingParams(temperature=1.0, max_tokens=16, seed=8))
    assert [g.token_ids for g in a] == [g.token_ids for g in b]
    assert [g.token_ids for g in a] != [g.token_ids for g in c]


def test_generation_stops_at_an_end_of_sequence_token(tiny_policy):
    reqs = requests_of(tiny_policy, lengths=(5,))
    first = tiny_policy.generate(reqs, SamplingParams(temperature=0.0, max_tokens=4))[0].token_ids
    saved = set(tiny_policy.eos_ids)
    tiny_policy.eos_ids.add(first[0])  # the first greedy token now ends the response
    try:
        gen = tiny_policy.generate(reqs, SamplingParams(temperature=0.0, max_tokens=4))[0]
    finally:
        tiny_policy.eos_ids.clear()
        tiny_policy.eos_ids.update(saved)
    assert gen.token_ids == first[:1] and gen.finish_reason == "stop"
    assert gen.text == "" and len(gen.logprobs) == 1


def test_messages_without_prompt_ids_are_rendered_with_the_chat_template(tiny_policy):
    msgs = [Message("system", "Write Triton."), Message("user", "relu")]
    ids = tiny_policy.tokenize(tiny_policy.render(msgs, True))
    params = SamplingParams(temperature=0.0, max_tokens=5)
    a = tiny_policy.generate([GenerationRequest(messages=msgs)], params)[0]
    b = tiny_policy.generate([GenerationRequest(messages=[], prompt_ids=ids)], params)[0]
    assert a.token_ids == b.token_ids


def test_a_missing_model_path_is_a_usage_error(tmp_path):
    from atrl.policy.hf import HFPolicy

    with pytest.raises(UsageError, match="no model at"):
        HFPolicy(tmp_path / "nothing")


class _Spy:
    """Wraps a policy's engine (or its own loop) and records each call's batch size and seed."""

    def __init__(self, policy, monkeypatch):
        self.calls: list[tuple[int, int | None]] = []
        original = type(policy).generate

        def generate(this, requests, params):
            if this.max_batch is None or len(requests) <= this.max_batch:
                self.calls.append((len(requests), params.seed))
            return original(this, requests, params)

        monkeypatch.setattr(type(policy), "generate", generate)


def test_max_batch_decodes_in_equal_chunks_with_their_own_seeds_in_request_order(tiny_policy, monkeypatch):
    reqs = requests_of(tiny_policy, lengths=(5, 40, 9, 17, 3))
    params = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=6, seed=11)
    whole = tiny_policy.generate(reqs, params)
    spy = _Spy(tiny_policy, monkeypatch)
    monkeypatch.setattr(tiny_policy, "max_batch", 2)
    chunked = tiny_policy.generate(reqs, params)
    assert [n for n, _ in spy.calls] == [2, 2, 1]  # ceil(5 / 2) = 3 chunks of at most 2
    seeds = [seed for _, seed in spy.calls]
    assert seeds[0] == 11 and len(set(seeds)) == 3  # no two chunks share a random stream
    assert len(chunked) == 5
    # greedy decoding in chunks gives each request what it gives alone, in the requests' order
    alone = [tiny_policy.generate([reqs[i]], SamplingParams(temperature=0.0, max_tokens=6))[0] for i in range(5)]
    greedy = tiny_policy.generate(reqs, SamplingParams(temperature=0.0, max_tokens=6))
    assert [g.token_ids for g in greedy] == [a.token_ids for a in alone]  # order kept
    monkeypatch.setattr(tiny_policy, "max_batch", 8)  # a batch within the cap is one call, as before
    assert [g.token_ids for g in tiny_policy.generate(reqs, params)] == [g.token_ids for g in whole]


def test_max_batch_below_one_is_refused(tiny_model_dir):
    from atrl.policy.hf import HFPolicy

    with pytest.raises(UsageError, match="max_batch is 0"):
        HFPolicy(tiny_model_dir, max_batch=0)
