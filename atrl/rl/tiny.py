"""A tiny randomly initialised chat model, built in code, for CPU tests and CI runs.

`build_tiny_model(directory, seed)` writes an HF-native model directory: a 2-layer Llama
(hidden 64, ≈0.1 M parameters) and a byte-level BPE tokenizer (the 256 bytes plus merges trained
on the agent's own prompt texts, so prompts are short; `<|im_start|>`, `<|im_end|>`, `<pad>`)
with a ChatML template, so `HFPolicy(directory)` loads it like
any other model. Nothing is downloaded. The training spec `tiny-random[:SEED]` builds one.
"""

from __future__ import annotations

from pathlib import Path

CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIALS = ("<pad>", "<|im_start|>", "<|im_end|>")


def agent_corpus() -> list[str]:
    """The fixed texts of the agent's prompts (system, compaction, feedback, summaries)."""
    from atrl.agent import prompts

    texts = [prompts.system_prompt(p) for p in ("cuda", "interpreter", "npu")]
    texts += [prompts.compaction_instruction(n) for n in (8, 64, 256)]
    texts += [prompts.feedback_message(t, s, "score") for t in range(4) for s in (0.0, 0.1, 1.0)]
    texts.append(
        prompts.structured_summary([{"turn": 0, "score": 0.0, "stage": "format", "message": "m"}], 0, 0.0)
    )
    texts.append(prompts.carried_kernel_piece(None, 0.0, ""))
    texts.append(
        "Task synthetic/t0 (float32). Here is the reference PyTorch module. Write `ModelNew` "
        "that computes the same with Triton kernels.\n\n```python\n"
    )
    return texts


def build_tiny_tokenizer(
    vocab_size: int = 1024, corpus: list[str] | None = None
):  # -> PreTrainedTokenizerFast
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    core.train_from_iterator(corpus if corpus is not None else agent_corpus(), trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", bos_token="<|im_start|>", eos_token="<|im_end|>"
    )
    tok.chat_template = CHATML_TEMPLATE
    return tok


def build_tiny_model(
    directory: str | Path, seed: int = 0, hidden: int = 64, layers: int = 2, vocab_size: int = 1024
) -> Path:
    """Write a tiny random chat model (weights + tokenizer) to `directory`; returns it."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    directory = Path(directory)
    tokenizer = build_tiny_tokenizer(vocab_size)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
