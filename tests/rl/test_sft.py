"""Supervised warm start: examples use the agent's prompt format and train only the response;
held-out tasks never enter the data; training lowers the loss and writes a loadable model."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import torch
import yaml

from atrl.agent import prompts
from atrl.agent.config import AgentConfig
from atrl.agent.episode import Episode
from atrl.agent.trajectory_io import write_trajectories
from atrl.errors import UsageError
from atrl.policy.base import Generation, Message
from atrl.rl.sft import build_examples, load_sft_config, plain_model, run_sft
from atrl.rl.sft_data import BuildReport, solution_examples, solution_response, trajectory_examples
from atrl.rl.split import load_split
from atrl.tasks.registry import load_suite
from atrl.tasks.task import Task

SPLIT_FILE = Path(__file__).resolve().parents[2] / "configs" / "split-builtin.yaml"


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models run far faster on one thread than on two contended ones."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from atrl.rl.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


def _policy(directory: Path):
    from atrl.policy.hf import HFPolicy

    return HFPolicy(directory, device="cpu", dtype=torch.float32)


@pytest.fixture(scope="module")
def policy(tiny_dir: Path):
    return _policy(tiny_dir)


@pytest.fixture(scope="module")
def builtin() -> dict[str, Task]:
    return {t.id: t for t in load_suite("builtin").tasks}


def _config(tmp: Path, **extra) -> object:
    values = {
        "model": "tiny-random",
        "split": str(SPLIT_FILE),
        "platforms": ["cuda"],
        "presets": ["small"],
        "kb_variants": [False],
        "agent": {"context_budget": 32768, "max_response_tokens": 16384},
    }
    return load_sft_config(None, [], out_dir=str(tmp), **(values | extra))


def test_solution_example_is_the_agent_prompt_then_plan_and_code_with_only_the_response_trained(
    policy, builtin: dict[str, Task]
) -> None:
    task = builtin["builtin/relu"]
    report = BuildReport()
    [example] = solution_examples(policy, [task], {}, ["cuda"], ["small"], [False], lambda _: None, report)
    prompt = policy.render(
        [
            Message("system", prompts.system_prompt("cuda")),
            Message("user", prompts.task_message(task, "small")),
        ],
        add_generation_prompt=True,
    )
    first = example.loss_mask.index(True)
    assert policy.detokenize(example.token_ids[:first]) == prompt
    trained = [i for i, m in zip(example.token_ids, example.loss_mask, strict=True) if m]
    assert trained == example.token_ids[first : first + len(trained)]  # one contiguous span
    response = solution_response(task)
    assert policy.detokenize(trained) == response + "<|im_end|>"
    assert response.startswith("Plan: one Triton kernel (`relu_kernel`)") and "\n```python\n" in response
    assert prompts.extract_code(response).strip() == task.solution.strip()
    assert policy.detokenize(example.token_ids[first + len(trained) :]) == "\n"  # template tail, untrained


def test_prompt_variants_differ_and_identical_ones_are_kept_once(policy, builtin: dict[str, Task]) -> None:
    task = builtin["builtin/add"]
    report = BuildReport()
    examples = solution_examples(
        policy, [task], {}, ["cuda", "interpreter"], ["small", "full"], [False, False], lambda _: None, report
    )
    assert sorted(e.variant for e in examples) == [
        "cuda/full/nokb",
        "cuda/small/nokb",
        "interpreter/full/nokb",
        "interpreter/small/nokb",
    ]
    assert len({tuple(e.token_ids) for e in examples}) == 4
    assert report.skipped["duplicate"] == 4


def test_heldout_tasks_and_their_solutions_never_appear_in_sft_data(
    policy, builtin: dict[str, Task], tmp_path: Path
) -> None:
    config = _config(tmp_path, kb_variants=[True])
    examples, _ = build_examples(config, policy)
    split = load_split(SPLIT_FILE, list(builtin.values()))
    assert {e.task_id for e in examples} == set(split.train)
    texts = [policy.detokenize(e.token_ids) for e in examples]
    assert sum("Worked example" in t for t in texts) > 0  # kb examples are shown...
    heldout_solutions = [builtin[i].solution.strip() for i in split.heldout if builtin[i].solution]
    assert heldout_solutions
    for text in texts:  # ...but never a held-out task's solution
        assert not any(sol in text for sol in heldout_solutions)


def _episode_with_turn(policy, task: Task, response: str, ok: bool):
    episode = Episode(task, 0, policy, AgentConfig(platform="cuda", kb=False, preset="small"), None)
    episode.turn_request()
    ids = policy.tokenize(response) + policy.tokenize("<|im_end|>")
    turn = episode.record_response(Generation(text=response, token_ids=ids, logprobs=[-0.1] * len(ids)))
    turn.verdict = {"ok": ok}
    return episode.traj, turn


def test_rft_keeps_ok_turns_of_training_tasks_with_the_segment_context_as_prompt(
    policy, builtin: dict[str, Task], tmp_path: Path
) -> None:
    good, good_turn = _episode_with_turn(policy, builtin["builtin/relu"], "fine kernel", ok=True)
    failed, _ = _episode_with_turn(policy, builtin["builtin/add"], "broken kernel", ok=False)
    heldout, _ = _episode_with_turn(policy, builtin["builtin/sigmoid"], "held-out kernel", ok=True)
    write_trajectories(tmp_path / "trajectories.jsonl", [good, failed, heldout, good])
    report = BuildReport()
    train_ids = {"builtin/relu", "builtin/add"}
    [example] = trajectory_examples(policy, [tmp_path / "episodes.jsonl"], train_ids, report)
    seg = good.segments[0]
    assert example.token_ids == seg.token_ids[: good_turn.response_end]
    assert example.loss_mask == [good_turn.response_start <= i for i in range(good_turn.response_end)]
    assert (
        policy.detokenize([t for t, m in zip(example.token_ids, example.loss_mask, strict=True) if m])
        == "fine kernel<|im_end|>"
    )
    assert report.skipped == Counter({"not_training_task": 1, "duplicate_or_over_cap": 1})


def test_config_refuses_heldout_part_and_agent_keys_the_variants_set(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="split_part"):
        load_sft_config(None, ["split_part=heldout"])
    with pytest.raises(UsageError, match="agent"):
        load_sft_config(None, ["agent.platform=cuda"])
    with pytest.raises(UsageError, match="lr_typo"):
        load_sft_config(None, ["lr_typo=1"])
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"lr": 1e-4, "agent": {"context_budget": 4096}}))
    config = load_sft_config(path, ["agent.max_response_tokens=1024"], out_dir="x")
    assert (config.lr, config.agent, config.out_dir) == (
        1e-4,
        {"context_budget": 4096, "max_response_tokens": 1024},
        "x",
    )


def test_plain_model_rebuilds_a_gguf_style_model_that_can_be_saved(tiny_dir: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    model.config.architectures = None
    model.config.quantization_config = {"quant_method": "gguf"}
    rebuilt = plain_model(model)
    assert rebuilt is not model and rebuilt.config.architectures == [type(model).__name__]
    assert getattr(rebuilt.config, "quantization_config", None) is None
    rebuilt.save_pretrained(tmp_path)
    again = AutoModelForCausalLM.from_pretrained(tmp_path)
    for (name, a), (_, b) in zip(model.state_dict().items(), again.state_dict().items(), strict=True):
        assert torch.equal(a, b), name
    plain = AutoModelForCausalLM.from_pretrained(tiny_dir)
    assert plain_model(plain) is plain


TRAIN_SMALL = ["builtin/relu", "builtin/add"]


def _short_task(name: str, op: str) -> Task:
    source = f"class Model(nn.Module):\n    def forward(self, x):\n        return {op}(x)\n"
    solution = (
        f"@triton.jit\ndef {name}_kernel(x_ptr, y_ptr):\n    pass\n\nclass ModelNew(nn.Module):\n    pass\n"
    )
    return Task(
        id=f"builtin/{name}",
        suite="builtin",
        name=name,
        level=1,
        source=source,
        solution=solution,
        description=f"{name}.",
    )


@pytest.fixture(scope="module")
def sft_run(tiny_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """30 steps on 4 short examples (2 tasks × 2 presets), built in the agent's prompt format."""
    tmp = tmp_path_factory.mktemp("sft")
    config = _config(
        tmp / "run",
        batch_size=4,
        micro_batch_size=2,
        lr=3e-3,
        warmup_steps=2,
        schedule="constant",
        max_steps=30,
        save_every=10,
        save_dtype="float32",
    )
    policy = _policy(tiny_dir)
    tasks = [_short_task("relu", "torch.relu"), _short_task("add", "torch.add")]
    examples = solution_examples(
        policy, tasks, {}, ["cuda", "interpreter"], ["small"], [False], lambda _: None, BuildReport()
    )
    result = run_sft(config, policy=policy, examples=examples)
    return config, policy, result, examples


def test_sft_loss_decreases_over_a_few_dozen_steps(sft_run) -> None:
    _, _, result, _ = sft_run
    losses = [
        json.loads(line)["loss"] for line in (result.out_dir / "metrics.jsonl").read_text().splitlines()
    ]
    assert len(losses) == 30 == result.steps
    assert sum(losses[-3:]) / 3 < 0.6 * losses[0]


def test_sft_output_loads_back_as_an_hf_policy_with_the_trained_weights(sft_run) -> None:
    from atrl.policy import load_policy

    _, policy, result, _ = sft_run
    loaded = load_policy(f"hf:{result.model_dir}", device="cpu", dtype=torch.float32)
    for (name, a), (_, b) in zip(
        policy.model.state_dict().items(), loaded.model.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name
    assert loaded.render([Message("user", "u")], True) == policy.render([Message("user", "u")], True)
    saved = yaml.safe_load((result.out_dir / "config.yaml").read_text())
    assert saved["max_steps"] == 30 and saved["split_part"] == "train"
    data = [json.loads(line) for line in (result.out_dir / "sft_data.jsonl").read_text().splitlines()]
    assert sorted(d["task_id"] for d in data) == sorted(TRAIN_SMALL * 2)


def test_sft_resumes_from_its_checkpoint_and_continues_the_step_count(sft_run, tiny_dir: Path) -> None:
    config, _, result, examples = sft_run
    more = config.model_copy(update={"max_steps": 32})
    again = run_sft(more, policy=_policy(tiny_dir), examples=examples)
    steps = [json.loads(line)["step"] for line in (result.out_dir / "metrics.jsonl").read_text().splitlines()]
    assert again.steps == 32 and steps == list(range(1, 33))


def test_repair_examples_train_the_fix_after_real_feedback_and_keeping_a_right_kernel(
    policy, builtin: dict[str, Task]
) -> None:
    from atrl.harness.api import Harness
    from atrl.rl.sft_data import repair_examples

    task = builtin["builtin/relu"]
    report = BuildReport()
    agent = {"context_budget": 32768, "max_response_tokens": 16384, "turns_per_segment": 1}
    with Harness(backend="interpreter", workers=1, trials=1) as harness:
        examples = repair_examples(policy, [task], agent, "cuda", "small", harness.evaluate, None, report)
    by_source = {e.source: e for e in examples}
    assert sorted(by_source) == ["keep", "repair"] and report.kept == Counter({"keep": 1, "repair": 1})
    for source, example in by_source.items():
        first = example.loss_mask.index(True)
        context = policy.detokenize(example.token_ids[:first])
        trained = policy.detokenize([i for i, m in zip(example.token_ids, example.loss_mask, strict=True) if m])
        assert trained == solution_response(task) + "<|im_end|>"  # only the second turn is a target
        assert prompts.extract_code(trained.removesuffix("<|im_end|>")).strip() == task.solution.strip()
        assert "x + 1" not in trained
        if source == "repair":
            # a new segment after the compaction: the wrong kernel carried with its real feedback
            assert "tl.maximum(x, 0.0) + 1" in context and "mismatch" in context.lower(), context[-1500:]
        else:
            assert "tl.maximum(x, 0.0) + 1" not in context and "correct" in context.lower()


def test_a_repair_inside_one_segment_trains_the_fix_only_not_the_wrong_first_answer(
    policy, builtin: dict[str, Task]
) -> None:
    from atrl.harness.api import Harness
    from atrl.rl.sft_data import repair_examples

    task = builtin["builtin/relu"]
    agent = {"context_budget": 32768, "max_response_tokens": 16384, "turns_per_segment": 2}  # no compaction
    with Harness(backend="interpreter", workers=1, trials=1) as harness:
        examples = repair_examples(policy, [task], agent, "cuda", "small", harness.evaluate, None, BuildReport())
    [repair] = [e for e in examples if e.source == "repair"]
    first = repair.loss_mask.index(True)
    assert all(repair.loss_mask[first:])  # one span: the second answer and its end-of-turn token
    assert policy.detokenize(repair.token_ids[first:]) == solution_response(task) + "<|im_end|>"
    assert "tl.maximum(x, 0.0) + 1" in policy.detokenize(repair.token_ids[:first])


def test_relay_demonstrations_train_a_summary_that_keeps_the_key_and_an_answer_that_writes_it(
    policy, builtin: dict[str, Task], tmp_path: Path
) -> None:
    from atrl.rl.key_relay import KEY_ALPHABET
    from atrl.rl.sft_data import relay_demonstrations

    agent = {"context_budget": 4096, "max_response_tokens": 32, "summary_tokens": 32}
    report = BuildReport()
    tasks = [builtin["builtin/relu"], builtin["builtin/add"]]
    examples = relay_demonstrations(policy, tasks, agent, "cuda", "small", 2, report)
    assert report.kept == Counter({"relay": 8}) and not report.skipped
    keys = []
    for summary, answer in zip(examples[::2], examples[1::2], strict=True):
        assert (summary.source, answer.source) == ("relay-summary", "relay-answer")

        def split(example):
            first = example.loss_mask.index(True)
            trained = [i for i, m in zip(example.token_ids, example.loss_mask, strict=True) if m]
            return policy.detokenize(example.token_ids[:first]), policy.detokenize(trained)

        summary_context, summary_target = split(summary)
        answer_context, answer_target = split(answer)
        key = answer_target.removeprefix("Key: ").removesuffix("<|im_end|>")
        assert len(key) == 4 and set(key) <= set(KEY_ALPHABET), answer_target
        keys.append(key)
        # the summary is written where the key was shown, and keeps it; only the summary is trained
        assert f"Key for your next answer: {key}." in summary_context
        assert summary_target.startswith(f"Key for the next answer: {key}.") and "Attempt" not in summary_target
        # the answer's segment starts afresh: the key is in it only inside the carried summary
        assert "Key for your next answer" not in answer_context
        carried = answer_context.split("Summary of your earlier attempts:")
        assert len(carried) == 2 and key not in carried[0] and key in carried[1]
    assert len(set(keys)) == len(keys)  # a fresh key per episode

    config = _config(tmp_path, solutions=False, relay=1, agent=agent)
    built, built_report = build_examples(config, policy)
    assert {e.source for e in built} == {"relay-summary", "relay-answer"} and built_report.kept["solution"] == 0


@pytest.mark.parametrize("path", sorted(Path(__file__).resolve().parents[2].glob("configs/sft-*.yaml")),
                         ids=lambda p: p.name)
def test_every_shipped_sft_config_loads(path: Path) -> None:
    config = load_sft_config(path)
    AgentConfig(**config.agent)
    assert config.trajectories or config.solutions or config.relay  # each has a source of examples


def test_sft_from_a_lora_adapter_continues_it_so_a_checkpoint_adapter_alone_is_the_whole_model(
    tiny_dir: Path, tmp_path: Path
) -> None:
    # stage 1: a LoRA adapter of the tiny model; stage 2 starts from that adapter. The stage-2
    # checkpoint's adapter, loaded by itself over its recorded base, must be the stage-2 model
    # (OUT/model, merged), not the stage-2 update alone on the bare base.
    from atrl.policy import load_policy
    from atrl.policy.adapters import read_base_spec

    tasks = [_short_task("relu", "torch.relu"), _short_task("add", "torch.add")]
    examples = solution_examples(
        _policy(tiny_dir), tasks, {}, ["cuda"], ["small"], [False], lambda _: None, BuildReport()
    )
    lora = {"lora": True, "lora_r": 4, "lora_alpha": 8, "batch_size": 2, "micro_batch_size": 2, "lr": 3e-2,
            "warmup_steps": 0, "schedule": "constant", "max_steps": 3, "save_every": 3, "save_dtype": "float32"}
    first = run_sft(_config(tmp_path / "stage1", model=f"hf:{tiny_dir}", **lora), examples=examples)
    adapter1 = first.out_dir / "checkpoints" / "step_000003" / "model"
    second = run_sft(_config(tmp_path / "stage2", model=f"hf:{adapter1}", **lora), examples=examples)
    adapter2 = second.out_dir / "checkpoints" / "step_000003" / "model"
    assert read_base_spec(adapter2) == f"hf:{tiny_dir}"
    merged = load_policy(f"hf:{second.model_dir}", device="cpu", dtype=torch.float32).model.state_dict()
    alone = load_policy(f"hf:{adapter2}", device="cpu", dtype=torch.float32).model.state_dict()
    base = load_policy(f"hf:{tiny_dir}", device="cpu", dtype=torch.float32).model.state_dict()
    stage1 = load_policy(f"hf:{adapter1}", device="cpu", dtype=torch.float32).model.state_dict()
    changed = [k for k in base if not torch.allclose(base[k], stage1[k])]
    assert changed  # stage 1 moved the weights: losing it would show
    for name, weight in merged.items():
        assert torch.allclose(alone[name], weight, atol=1e-5), name


@pytest.mark.parametrize(("spec", "lora", "continued"), [
    ("smollm2-135m-triton", True, True),  # the shipped adapter, continued (docs/training.md)
    ("smollm2-135m-triton", False, False),  # full fine-tuning: the adapter merged into the weights
    ("smollm2-135m", True, False),  # no adapter to continue
])
def test_sft_loads_the_shipped_adapter_as_a_start_and_continues_it_under_lora(
    spec: str, lora: bool, continued: bool, tiny_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    import atrl.policy
    from atrl.rl.sft import load_start_policy

    asked: list[tuple[str, dict]] = []

    def fake_load_policy(name: str, **options):
        asked.append((name, options))
        return _policy(tiny_dir)

    monkeypatch.setattr(atrl.policy, "load_policy", fake_load_policy)
    load_start_policy(spec, tmp_path, lora)
    assert asked == [(spec, {"dtype": torch.float32, **({"adapter_trainable": True} if continued else {})})]
    with pytest.raises(UsageError, match="sft needs a local model"):
        load_start_policy("openai:gpt-x", tmp_path, lora)
