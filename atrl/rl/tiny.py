"""A tiny randomly initialised chat model, built in code, for CPU tests and CI runs.

`build_tiny_model(directory, seed)` writes an HF-native model directory: a 2-layer Llama
(hidden 64, ≈0.1 M parameters) and a byte-level tokenizer (256 byte tokens, no merges, plus
`<|im_start|>`, `<|im_end|>`, `<pad>`) with a ChatML template, so `HFPolicy(directory)` loads it like
any other model. Nothing is downloaded. The training spec `tiny-random[:SEED]` builds one.
"""

from __future__ import annotations

from pathlib import Path

CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIALS = ("<pad>", "<|im_start|>", "<|im_end|>")


def build_tiny_tokenizer():  # -> transformers.PreTrainedTokenizerFast
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {tok: i for i, tok in enumerate(SPECIALS)}
    vocab.update({ch: len(SPECIALS) + i for i, ch in enumerate(alphabet)})
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    core.add_special_tokens(list(SPECIALS))
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", bos_token="<|im_start|>", eos_token="<|im_end|>"
    )
    tok.chat_template = CHATML_TEMPLATE
    return tok


def build_tiny_model(directory: str | Path, seed: int = 0, hidden: int = 64, layers: int = 2) -> Path:
    """Write a tiny random chat model (weights + tokenizer) to `directory`; returns it."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    directory = Path(directory)
    tokenizer = build_tiny_tokenizer()
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
