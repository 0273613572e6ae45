"""Generation engines on a tiny randomly initialised Llama (CPU, no hub)."""

from __future__ import annotations

import importlib.util
import math

import pytest
import torch

from atrl.errors import UsageError
from atrl.policy.engines import (
    EngineOutput,
    GenerationEngine,
    PlainGenerateEngine,
    StaticCacheEngine,
    make_engine,
)

transformers = pytest.importorskip("transformers")

PAD = 0
RAGGED = [[5, 6, 7, 8, 9, 10, 11], [12, 13], [14, 15, 16, 17], [20, 21, 22, 23, 24, 25, 26]]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    # a tiny model gains nothing from threads, and on a shared CPU they make every op wait
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def tiny_llama() -> transformers.LlamaForCausalLM:
    """A 2-layer Llama with grouped-query attention (4 query heads on 2 key/value heads), seed 0."""
    cfg = transformers.LlamaConfig(
        vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        pad_token_id=PAD, eos_token_id=None, bos_token_id=None,
    )
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def model():
    return tiny_llama()


@pytest.fixture(scope="module")
def static(model):
    return StaticCacheEngine(model, length_bucket=16)


@pytest.fixture(scope="module")
def plain(model):
    return PlainGenerateEngine(model)


def teacher_forced_logprobs(model, prompt: list[int], out: EngineOutput, temperature: float) -> list[float]:
    """Log-probs of `out.token_ids` from one full forward over prompt + generated tokens."""
    ids = torch.tensor([prompt + out.token_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt) - 1 : -1].float()
    logp = torch.log_softmax(logits / temperature if temperature > 0 else logits, dim=-1)
    return logp.gather(-1, torch.tensor(out.token_ids)[:, None]).squeeze(-1).tolist()


def test_static_greedy_equals_plain_generate_on_ragged_left_padded_batch(static, plain):
    want = plain.generate(RAGGED, 16, 0.0, 1.0, None, [], PAD)
    got = static.generate(RAGGED, 16, 0.0, 1.0, None, [], PAD)
    assert [g.token_ids for g in got] == [w.token_ids for w in want]
    assert all(len(g.token_ids) == 16 and g.finish_reason == "length" for g in got)
    for g, w in zip(got, want, strict=True):
        assert g.logprobs == pytest.approx(w.logprobs, abs=1e-4)


@pytest.mark.parametrize("temperature", [0.0, 0.7])
def test_static_logprobs_match_teacher_forced_recomputation(model, static, temperature):
    outs = static.generate(RAGGED, 12, temperature, 1.0, 3, [], PAD)
    for prompt, out in zip(RAGGED, outs, strict=True):
        assert len(out.logprobs) == len(out.token_ids) == 12
        assert out.logprobs == pytest.approx(teacher_forced_logprobs(model, prompt, out, temperature), abs=1e-4)


def test_plain_logprobs_match_teacher_forced_recomputation(model, plain):
    outs = plain.generate(RAGGED, 12, 0.8, 1.0, 5, [], PAD)
    for prompt, out in zip(RAGGED, outs, strict=True):
        assert out.logprobs == pytest.approx(teacher_forced_logprobs(model, prompt, out, 0.8), abs=1e-4)


@pytest.mark.parametrize("engine_name", ["static", "plain"])
def test_eos_stops_one_row_early_while_the_others_continue(static, plain, engine_name):
    engine = {"static": static, "plain": plain}[engine_name]
    free = static.generate(RAGGED, 16, 0.0, 1.0, None, [], PAD)
    # an EOS id the first row produces at step 3 and no other row produces at all
    eos = next(t for t in free[0].token_ids[3:] if all(t not in o.token_ids for o in free[1:]))
    cut = free[0].token_ids.index(eos)
    outs = engine.generate(RAGGED, 16, 0.0, 1.0, None, [eos], PAD)
    assert outs[0].token_ids == free[0].token_ids[: cut + 1]
    assert outs[0].finish_reason == "stop" and len(outs[0].logprobs) == cut + 1
    for out, ref in zip(outs[1:], free[1:], strict=True):
        assert out.token_ids == ref.token_ids and out.finish_reason == "length"


def test_static_stops_decoding_when_every_row_has_hit_eos(static):
    free = static.generate(RAGGED, 16, 0.0, 1.0, None, [], PAD)
    eos = sorted({o.token_ids[1] for o in free})
    outs = static.generate(RAGGED, 16, 0.0, 1.0, None, eos, PAD)
    assert all(o.finish_reason == "stop" and len(o.token_ids) <= 2 for o in outs)


@pytest.mark.parametrize("top_p", [1.0, 0.5])
def test_static_seeded_sampling_is_reproducible_and_seed_dependent(static, top_p):
    a = static.generate(RAGGED, 10, 1.0, top_p, 1234, [], PAD)
    b = static.generate(RAGGED, 10, 1.0, top_p, 1234, [], PAD)
    c = static.generate(RAGGED, 10, 1.0, top_p, 99, [], PAD)
    assert [o.token_ids for o in a] == [o.token_ids for o in b]
    assert [o.logprobs for o in a] == [o.logprobs for o in b]
    assert [o.token_ids for o in a] != [o.token_ids for o in c]


def test_plain_seeded_sampling_is_reproducible(plain):
    a = plain.generate(RAGGED, 10, 1.0, 1.0, 7, [], PAD)
    b = plain.generate(RAGGED, 10, 1.0, 1.0, 7, [], PAD)
    assert [o.token_ids for o in a] == [o.token_ids for o in b]


def test_static_sampling_follows_the_tempered_distribution(model):
    # one prompt repeated: the first sampled token's frequencies approach softmax(logits / T)
    engine = StaticCacheEngine(model, length_bucket=8)
    prompt = [9, 8, 7]
    outs = engine.generate([prompt] * 2000, 1, 0.5, 1.0, 0, [], PAD)
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor([prompt])).logits[0, -1] / 0.5, dim=-1)
    counts = torch.bincount(torch.tensor([o.token_ids[0] for o in outs]), minlength=256).float() / 2000
    top = probs.argsort(descending=True)[:3]
    assert counts[top].tolist() == pytest.approx(probs[top].tolist(), abs=0.04)
    # the reported log-prob is the tempered one of the sampled token
    assert outs[0].logprobs[0] == pytest.approx(math.log(probs[outs[0].token_ids[0]].item()), abs=1e-4)


def test_static_top_p_samples_only_from_the_nucleus(model):
    engine = StaticCacheEngine(model, length_bucket=8)
    prompt = [3, 4, 5]
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor([prompt])).logits[0, -1], dim=-1)
    sorted_p, order = probs.sort(descending=True)
    keep = int((sorted_p.cumsum(0) < 0.3).sum()) + 1
    nucleus = set(order[:keep].tolist())
    outs = engine.generate([prompt] * 300, 1, 1.0, 0.3, 1, [], PAD)
    assert {o.token_ids[0] for o in outs} <= nucleus


def test_static_engine_reuses_its_state_across_calls_of_one_shape(static):
    first = static.generate(RAGGED, 10, 0.0, 1.0, None, [], PAD)
    other = static.generate([[1, 2, 3]], 10, 0.0, 1.0, None, [], PAD)
    again = static.generate(RAGGED, 10, 0.0, 1.0, None, [], PAD)
    assert [o.token_ids for o in again] == [o.token_ids for o in first]
    assert len(other) == 1 and len(other[0].token_ids) == 10


def test_engines_satisfy_the_protocol(static, plain):
    assert isinstance(static, GenerationEngine) and isinstance(plain, GenerationEngine)


def test_make_engine_builds_plain_and_static(model):
    assert isinstance(make_engine("plain", model, None), PlainGenerateEngine)
    assert isinstance(make_engine("static", model, None), StaticCacheEngine)


def test_make_engine_rejects_an_unknown_name(model):
    with pytest.raises(UsageError, match="unknown generation engine 'fast'"):
        make_engine("fast", model, None)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed")
def test_make_engine_vllm_without_vllm_names_the_extra(model):
    with pytest.raises(UsageError, match=r"atrl\[vllm\]"):
        make_engine("vllm", model, None)


@pytest.mark.parametrize(
    ("prompts", "new", "temperature", "top_p"),
    [([], 4, 0.0, 1.0), ([[]], 4, 0.0, 1.0), ([[1]], 0, 0.0, 1.0), ([[1]], 4, -1.0, 1.0), ([[1]], 4, 1.0, 0.0)],
)
def test_static_rejects_bad_requests(static, prompts, new, temperature, top_p):
    with pytest.raises(UsageError):
        static.generate(prompts, new, temperature, top_p, None, [], PAD)


def test_static_engine_refuses_sliding_window_models():
    cfg = transformers.LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=1)
    cfg.layer_types = ["sliding_attention", "full_attention"]
    with pytest.raises(UsageError, match="plain"):
        StaticCacheEngine(transformers.LlamaForCausalLM(cfg))


def test_static_engine_refuses_cuda_graphs_for_a_cpu_model(model):
    with pytest.raises(UsageError, match="cuda_graph=False"):
        StaticCacheEngine(model, cuda_graph=True)


def test_compiled_engine_traces_the_decode_step_and_gives_the_same_tokens(model, static):
    # backend "eager": dynamo traces the forward (cache writes, masks) without inductor's C++ build
    compiled = StaticCacheEngine(model, length_bucket=16, compile="eager")
    assert compiled._decode_forward is not model.forward
    want = static.generate(RAGGED, 12, 0.0, 1.0, None, [], PAD)
    got = compiled.generate(RAGGED, 12, 0.0, 1.0, None, [], PAD)
    assert [g.token_ids for g in got] == [w.token_ids for w in want]
    for g, w in zip(got, want, strict=True):
        assert g.logprobs == pytest.approx(w.logprobs, abs=1e-5)


def test_make_engine_compiled_is_the_static_engine_with_compile(model):
    engine = make_engine("compiled", model, compile="eager")
    assert isinstance(engine, StaticCacheEngine) and engine._decode_forward is not model.forward


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_compiled_engine_on_cuda_matches_the_graph_captured_static_engine():
    gpu_model = tiny_llama().cuda()
    static_gpu = StaticCacheEngine(gpu_model, length_bucket=16)
    compiled = StaticCacheEngine(gpu_model, length_bucket=16, compile=True)
    for _ in range(2):  # the second call replays the captured (compiled) graph
        want = static_gpu.generate(RAGGED, 24, 0.0, 1.0, None, [], PAD)
        got = compiled.generate(RAGGED, 24, 0.0, 1.0, None, [], PAD)
        assert [g.token_ids for g in got] == [w.token_ids for w in want]
        for g, w in zip(got, want, strict=True):
            assert g.logprobs == pytest.approx(w.logprobs, abs=1e-3)


def test_static_engine_runs_decode_steps_on_unexpanded_kv_heads_unless_told_not_to():
    kept, switched = tiny_llama(), tiny_llama()  # same weights, a config each
    StaticCacheEngine(kept, length_bucket=16, gqa_decode=False)
    engine = StaticCacheEngine(switched, length_bucket=16)
    assert kept.config._attn_implementation == "sdpa" and switched.config._attn_implementation == "atrl_sdpa"
    want = StaticCacheEngine(kept, length_bucket=16, gqa_decode=False).generate(RAGGED, 12, 0.0, 1.0, None, [], PAD)
    got = engine.generate(RAGGED, 12, 0.0, 1.0, None, [], PAD)
    assert [g.token_ids for g in got] == [w.token_ids for w in want]
    for g, w in zip(got, want, strict=True):
        assert g.logprobs == pytest.approx(w.logprobs, abs=1e-5)


def _release_then_generate_again(engine) -> None:
    want = engine.generate(RAGGED, 12, 1.0, 1.0, 5, [], PAD)
    assert engine._states
    engine.release()
    assert not engine._states  # caches (and on CUDA their graphs) dropped
    got = engine.generate(RAGGED, 12, 1.0, 1.0, 5, [], PAD)  # built (captured) again: the same tokens
    assert [g.token_ids for g in got] == [w.token_ids for w in want]
    assert len(engine._states) == 1


def test_static_engine_release_drops_its_caches_and_the_next_call_builds_them_again(model):
    _release_then_generate_again(StaticCacheEngine(model, length_bucket=16))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_static_engine_release_on_cuda_frees_the_cache_and_captures_the_graph_again():
    engine = StaticCacheEngine(tiny_llama().cuda(), length_bucket=16)
    engine.generate(RAGGED, 12, 1.0, 1.0, 5, [], PAD)
    torch.cuda.synchronize()
    held = torch.cuda.memory_allocated()
    engine.release()
    assert torch.cuda.memory_allocated() < held
    _release_then_generate_again(engine)
