"""LoRA adapters as policies: `hf:DIR` where DIR holds a peft adapter (`adapter_config.json`).

An adapter trained by `atrl sft`/`atrl train` records the policy spec of the model it adapts in
`atrl_base.json` beside it (e.g. `smollm2-135m`, whose GGUF file has no `config.json` that peft's
own `base_model_name_or_path` could point at). Loading resolves that spec, loads the base,
applies the adapter and merges it, so generation runs at the base model's speed. The base
model's config (`base_config.json`) and tokenizer files, when saved beside the adapter, are read
from there instead of from the base.
"""

from __future__ import annotations

import json
from pathlib import Path

from atrl.errors import UsageError

BASE_SPEC_FILE = "atrl_base.json"


BASE_CONFIG_FILE = "base_config.json"


def write_base_config(adapter_dir: Path, config) -> None:
    """The base model's transformers config beside an adapter, so loading it over a GGUF base does
    not parse the GGUF file's metadata for the config (~5 s for SmolLM2-135M on 2 cores)."""
    config.to_json_file(str(Path(adapter_dir) / BASE_CONFIG_FILE))


def base_config_file(adapter_dir: Path) -> Path | None:
    """The base config saved beside an adapter, when it was written by this major version of
    transformers (config formats change between majors, e.g. rope settings in 5.x); else None,
    and the config is read from the base model itself."""
    import transformers

    path = Path(adapter_dir) / BASE_CONFIG_FILE
    if not path.is_file():
        return None
    written_by = str(json.loads(path.read_text()).get("transformers_version", ""))
    return path if written_by.split(".")[0] == transformers.__version__.split(".")[0] else None


def is_adapter_dir(path: Path) -> bool:
    return path.is_dir() and (path / "adapter_config.json").exists()


def write_base_spec(adapter_dir: Path, base_spec: str) -> None:
    (Path(adapter_dir) / BASE_SPEC_FILE).write_text(json.dumps({"policy": base_spec}) + "\n")


def read_base_spec(adapter_dir: Path) -> str | None:
    """The policy spec recorded beside an adapter, or None when it has none."""
    path = Path(adapter_dir) / BASE_SPEC_FILE
    if not path.exists():
        return None
    return str(json.loads(path.read_text())["policy"])


def start_adapter(spec: str) -> Path | None:
    """The LoRA adapter directory a policy spec starts from (`smollm2-135m-triton`: the shipped
    one; `hf:DIR` where DIR is an adapter), or None when the spec names no adapter."""
    if spec == "smollm2-135m-triton":
        from atrl.policy.hf import shipped_adapter_dir

        return shipped_adapter_dir()
    if spec.startswith("hf:"):
        path = Path(spec[3:]).expanduser()
        return path if is_adapter_dir(path) else None
    return None


def base_policy_spec(adapter_dir: Path) -> str:
    """The policy spec of the model `adapter_dir` adapts: its `atrl_base.json`, else `hf:` and the
    base path peft recorded (what a continued adapter records as its own base)."""
    spec = read_base_spec(adapter_dir)
    return spec if spec is not None else f"hf:{adapter_base_path(adapter_dir)}"


def adapter_base_path(adapter_dir: Path) -> Path:
    """The model file or directory the adapter adapts: from `atrl_base.json` (`smollm2-135m` or
    `hf:PATH`), else peft's `base_model_name_or_path` when that is a local model directory."""
    spec = read_base_spec(adapter_dir)
    if spec is not None:
        if spec == "smollm2-135m":
            from atrl.policy.hf import smollm2_gguf_path

            return smollm2_gguf_path()
        if spec.startswith("hf:"):
            base = Path(spec[3:]).expanduser()
            if base.exists():
                return base
            raise UsageError(
                f"the base model of adapter {adapter_dir} ({spec}, from {BASE_SPEC_FILE}) is not found "
                "(a relative path is read from the current directory)",
                f"run from the directory the training ran in, or edit {adapter_dir / BASE_SPEC_FILE}",
            )
        raise UsageError(f"adapter {adapter_dir}: base spec {spec!r} in {BASE_SPEC_FILE} is not a local model",
                         f"write smollm2-135m or hf:PATH into {adapter_dir / BASE_SPEC_FILE}")
    config = json.loads((adapter_dir / "adapter_config.json").read_text())
    base = Path(str(config.get("base_model_name_or_path") or "")).expanduser()
    if str(base) and (base / "config.json").exists():
        return base
    raise UsageError(
        f"adapter {adapter_dir} names no loadable base model (no {BASE_SPEC_FILE}; "
        f"base_model_name_or_path={config.get('base_model_name_or_path')!r} is no model directory)",
        f'write {{"policy": "smollm2-135m"}} (or "hf:PATH") into {adapter_dir / BASE_SPEC_FILE}',
    )


# Files that hold a tokenizer's vocabulary; `tokenizer_config.json` alone (an adapter saved with
# only its small files) cannot build one, so the base model's tokenizer is used instead.
VOCABULARY_FILES = ("tokenizer.json", "vocab.json", "tokenizer.model")


def has_tokenizer(directory: Path) -> bool:
    return any((directory / name).exists() for name in VOCABULARY_FILES)
