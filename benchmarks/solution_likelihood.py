"""How likely does a policy find the tasks' reference solutions? Per-token negative log-likelihood
of each task's reference solution as the answer to the agent's first prompt (the SFT example of
that task: the same prompt, knowledge-base text and response format; `atrl.rl.solution_nll`, which
training logs per step with `solution_nll: true`), under two or more policies,
on the tasks of a split's part. Where RL moves a policy, this says whether it moved towards or
away from known-correct answers, task by task, with no sampling noise.

    python benchmarks/solution_likelihood.py --policy smollm2-135m-triton --policy hf:CKPT/model \
        --split configs/split-builtin.yaml --part train --level 1 [--tasks a,b] [--platform cuda] \
        [--config configs/train-compaction-gpu.yaml] [--device cpu] [--markdown OUT.md]

Measured on the 14 training tasks of the LoRA RL run (docs/benchmarks/train.md): the shipped
adapter gives its training solutions 0.0020 nats per token; the step-22 RL checkpoint 0.0041,
higher on all 14 tasks.
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

import torch
import yaml

from atrl.kb.inject import KnowledgeInjector
from atrl.policy import load_policy
from atrl.rl.config import TrainConfig
from atrl.rl.solution_nll import solution_nll, solution_nll_examples
from atrl.rl.split import read_split, split_tasks
from atrl.tasks.registry import load_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", action="append", required=True, help="repeatable; the first is the baseline")
    parser.add_argument("--split", type=Path, default=Path("configs/split-builtin.yaml"))
    parser.add_argument("--part", default="train", choices=["train", "heldout"])
    parser.add_argument("--level", type=int)
    parser.add_argument("--tasks", help="only these task ids, comma-separated")
    parser.add_argument("--config", type=Path, default=Path("configs/train-compaction-gpu.yaml"),
                        help="a training config: its agent settings and kb_tokens build the prompts")
    parser.add_argument("--platform", default="cuda")
    parser.add_argument("--preset", default="full")
    parser.add_argument("--device", default="cpu",
                        help="cpu (default): fp32 throughout; per-token differences of ~0.001 nats are below bf16's rounding")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    if len(args.policy) < 2:
        parser.error("give at least two --policy to compare")
    split = read_split(args.split)
    tasks = split_tasks(split, args.part, load_suite(split.suite).tasks)
    if args.level is not None:
        tasks = [t for t in tasks if t.level == args.level]
    if args.tasks:
        wanted = set(args.tasks.split(","))
        missing = wanted - {t.id for t in tasks}
        if missing:
            raise SystemExit(f"not in the {args.part} part (level {args.level}): {', '.join(sorted(missing))}")
        tasks = [t for t in tasks if t.id in wanted]
    train_config = TrainConfig(**yaml.safe_load(args.config.read_text()))
    agent, kb_tokens = dict(train_config.agent), train_config.kb_tokens
    train_ids = sorted(t.id for t in split_tasks(split, "train", load_suite(split.suite).tasks))
    results: dict[str, dict[str, float]] = {}
    for spec in args.policy:
        policy = load_policy(spec, device=args.device, dtype=torch.float32, engine=None)
        injector = KnowledgeInjector(args.platform, budget_tokens=kb_tokens,
                                     count_tokens=lambda text, p=policy: len(p.tokenize(text)),
                                     allow_example_tasks=train_ids)
        examples = solution_nll_examples(policy, tasks, agent, args.platform, args.preset, injector)
        skipped = sorted({t.id for t in tasks} - {e.task_id for e in examples})
        if skipped:
            print(f"{spec}: not scored (no solution, or longer than the response limit): {', '.join(skipped)}")
        results[spec] = solution_nll(policy.model, examples, 0, next(policy.model.parameters()).device, False)
        print(f"{spec}: {len(examples)} solutions scored", flush=True)
    base = args.policy[0]
    common = sorted(set.intersection(*(set(r) for r in results.values())))
    header = ["task"] + [f"NLL/token: {spec}" for spec in args.policy]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * len(args.policy)]
    for task_id in common:
        lines.append("| " + " | ".join([task_id] + [f"{results[s][task_id]:.4f}" for s in args.policy]) + " |")
    lines += ["", f"{len(common)} tasks ({args.part} part{'' if args.level is None else f', level {args.level}'}, "
                  f"{args.platform} prompts, preset {args.preset}, kb on):", ""]
    for spec in args.policy[1:]:
        diffs = [results[spec][t] - results[base][t] for t in common]
        mean = statistics.fmean(diffs)
        sd = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
        up = sum(d > 0 for d in diffs)
        lines.append(f"- {spec} minus {base}: mean {mean:+.4f} nats/token (SD {sd:.4f}, "
                     f"SE {sd / math.sqrt(len(diffs)):.4f}); higher on {up} of {len(diffs)} tasks; "
                     f"mean NLL {statistics.fmean(results[base][t] for t in common):.4f} -> "
                     f"{statistics.fmean(results[spec][t] for t in common):.4f}")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
