"""How often does a policy relay the key? The key-relay environment's rates (`atrl.rl.key_relay`:
the key shown after the first answer, in the summary, in the second answer) for a policy with no
training, on the episode settings of a training config: the pre-flight of the credit experiment's
tier 2 (a start that never relays gives its arms no signal to learn from).

    python benchmarks/relay_rate.py [--config configs/experiment-credit-relay.yaml] [--policy SPEC] \
        [--tasks 4] [--samples 8] [--chunk TASKS] [--set key=value ...] [--json OUT.json] [--trajectories DIR]

`--trajectories DIR` keeps the episodes (DIR/trajectories.jsonl, each task's samples one group):
the fixed rollouts of the credit experiment's tier 1 on this environment
(`benchmarks/credit_gradients.py --run DIR`). `--chunk` plays that many tasks at a time (memory);
each chunk samples with its own seeds.

Measured on a 2-core CPU with SmolLM2-135M-Instruct, the tier's start as first configured
(docs/experiments/atrl-vs-grpo.md, "Tier 2"): 1 of 32 summaries kept the key and 0 of 32 second
answers wrote it; after 3 SFT steps of configs/sft-smollm2-relay.yaml, 20 and 13 of 32.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from atrl.agent.episode import run_episodes
from atrl.agent.trajectory_io import write_trajectories
from atrl.policy import load_policy
from atrl.rl.config import load_config
from atrl.rl.key_relay import KeyRelay, relay_metrics
from atrl.rl.trainer import load_tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/experiment-credit-relay.yaml"))
    parser.add_argument("--policy", help="the policy (default: the config's model)")
    parser.add_argument("--tasks", type=int, default=4, help="tasks drawn from the config's (seeded)")
    parser.add_argument("--samples", type=int, default=8, help="episodes per task")
    parser.add_argument("--device", default=None, help="cpu | cuda (default: the policy's choice)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config overrides")
    parser.add_argument("--chunk", type=int, default=None, help="tasks played at a time (default: all)")
    parser.add_argument("--json", type=Path, help="write the rates and the settings here")
    parser.add_argument("--trajectories", type=Path, help="write the episodes to DIR/trajectories.jsonl")
    args = parser.parse_args()

    config = load_config(args.config, args.set)
    spec = args.policy or config.model
    available = load_tasks(config)
    if not 1 <= args.tasks <= len(available):
        parser.error(f"--tasks {args.tasks}: the config has {len(available)} tasks; give 1 to {len(available)}")
    if args.chunk is not None and args.chunk < 1:
        parser.error(f"--chunk {args.chunk}: give a number of tasks >= 1")
    if args.trajectories is not None and (args.trajectories / "trajectories.jsonl").exists():
        parser.error(f"{args.trajectories}/trajectories.jsonl exists: remove it or choose another --trajectories")
    tasks = random.Random(config.seed).sample(available, args.tasks)
    relay = KeyRelay(config.key_relay_spread, config.key_relay_bonus, config.key_relay_length, config.seed)
    relay.begin_step(1)
    policy = load_policy(spec, **({"device": args.device} if args.device else {}))
    start = time.perf_counter()
    chunk = args.chunk or len(tasks)
    trajectories = []
    for index in range(0, len(tasks), chunk):
        # a chunk's generate call k samples with seed + k: chunks 10,000 apart never share a seed
        agent = config.agent_config(config.seed + 10_000 * (index // chunk))
        trajectories += run_episodes(policy, relay, tasks[index : index + chunk], args.samples, agent, relay)
        if chunk < len(tasks):
            print(f"tasks {min(index + chunk, len(tasks))}/{len(tasks)} ({time.perf_counter() - start:.0f} s)",
                  flush=True)
    rates = relay_metrics(relay, trajectories)
    fallbacks = sum(t.segments[0].summary_fallback for t in trajectories if len(t.segments) > 1)
    result = {"policy": spec, "config": str(args.config), "overrides": args.set, "tasks": [t.id for t in tasks],
              "episodes": len(trajectories), "summary_fallbacks": fallbacks,
              "seconds": round(time.perf_counter() - start, 1), **rates}
    print(f"{spec}: key in summary {rates['key_in_summary_rate']:.1%}, key relayed {rates['key_relay_rate']:.1%} "
          f"of {rates['key_relay_episodes']:.0f} episodes that reached a second segment "
          f"(leaked into first answers {rates['key_leak_rate']:.1%}; {fallbacks} fallback summaries)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if args.trajectories:
        args.trajectories.mkdir(parents=True, exist_ok=True)
        write_trajectories(args.trajectories / "trajectories.jsonl", trajectories)


if __name__ == "__main__":
    main()
