"""Which checkpoint of the relay warm start do the credit experiment's tier-2 arms start from?
The rule fixed before any arm ran (docs/experiments/atrl-vs-grpo.md, Tier 2, "Amended
2026-12-04"): of the SFT run's checkpoints, in step order, the first whose key-relay rate
(`benchmarks/relay_rate.py`, written next to it as relay.json) lies in 10-50%.

    python benchmarks/relay_start.py --sft runs/credit-relay/relay-sft   # prints hf:<checkpoint>/model

Writes the choice and every checkpoint's rate to SFT/choice.json; exits with status 1 and says
why when no checkpoint has been measured or none lies in the band.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

LOW, HIGH = 0.10, 0.50


def measured_checkpoints(sft: Path) -> list[tuple[int, Path, float]]:
    """(step, checkpoint folder, relay rate) of every checkpoint with a relay.json, in step order."""
    found = []
    for relay_json in sft.glob("checkpoints/step_*/relay.json"):
        step = int(re.fullmatch(r"step_(\d+)", relay_json.parent.name).group(1))
        found.append((step, relay_json.parent, float(json.loads(relay_json.read_text())["key_relay_rate"])))
    return sorted(found)


def choose(checkpoints: list[tuple[int, Path, float]], low: float = LOW, high: float = HIGH) -> Path | None:
    """The first checkpoint, in step order, whose relay rate lies in [low, high]."""
    return next((folder for _, folder, rate in checkpoints if low <= rate <= high), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sft", type=Path, required=True, help="the relay warm start's SFT run folder")
    args = parser.parse_args()
    checkpoints = measured_checkpoints(args.sft)
    if not checkpoints:
        sys.exit(f"no measured checkpoint under {args.sft}/checkpoints (step_*/relay.json): "
                 "run `scripts/experiment_credit.sh relay-start` first")
    chosen = choose(checkpoints)
    rates = {folder.name: rate for _, folder, rate in checkpoints}
    (args.sft / "choice.json").write_text(json.dumps(
        {"rule": f"first checkpoint with a relay rate in [{LOW}, {HIGH}]", "rates": rates,
         "chosen": chosen.name if chosen else None}, indent=1) + "\n")
    if chosen is None:
        sys.exit(f"no checkpoint's relay rate lies in {LOW:.0%}-{HIGH:.0%} ({rates}): move the SFT's "
                 "step count toward the band (configs/sft-smollm2-relay.yaml: save_every, batch_size) and measure again")
    print(f"hf:{chosen}/model")


if __name__ == "__main__":
    main()
