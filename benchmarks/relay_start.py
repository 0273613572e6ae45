"""Which checkpoint of the relay warm start do the credit experiment's tier-2 arms start from?
The rule fixed before any arm ran (docs/experiments/atrl-vs-grpo.md, Tier 2, "Amended
2026-12-04"): of the SFT run's checkpoints at every third step, in step order, the first whose
key-relay rate (`benchmarks/relay_rate.py`, written next to it as relay.json) lies in 10-50%. If
none does, the step count moves toward the band: when the first of them relays above the band,
the latest earlier checkpoint inside it (the SFT saves every step); when all relay below it, none
(the SFT has no later steps).

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
EVERY = 3  # the checkpoints the rule looks at first (steps 3, 6, 9 of the 9-step SFT)


def measured_checkpoints(sft: Path) -> list[tuple[int, Path, float]]:
    """(step, checkpoint folder, relay rate) of every checkpoint with a relay.json, in step order."""
    found = []
    for relay_json in sft.glob("checkpoints/step_*/relay.json"):
        step = int(re.fullmatch(r"step_(\d+)", relay_json.parent.name).group(1))
        found.append((step, relay_json.parent, float(json.loads(relay_json.read_text())["key_relay_rate"])))
    return sorted(found)


def choose(checkpoints: list[tuple[int, Path, float]], low: float = LOW, high: float = HIGH,
           every: int = EVERY) -> Path | None:
    """The first checkpoint at a multiple of `every` steps whose relay rate lies in [low, high]; if
    none does and the first of them lies above the band, the latest earlier checkpoint inside it."""
    primary = [c for c in checkpoints if c[0] % every == 0]
    chosen = next((folder for _, folder, rate in primary if low <= rate <= high), None)
    if chosen is None and primary and primary[0][2] > high:
        earlier = [c for c in checkpoints if c[0] < primary[0][0]]
        chosen = next((folder for _, folder, rate in reversed(earlier) if low <= rate <= high), None)
    return chosen


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
        {"rule": f"first checkpoint at a multiple of {EVERY} steps with a relay rate in [{LOW}, {HIGH}]; "
                 "if the first is above, the latest earlier one inside", "rates": rates,
         "chosen": chosen.name if chosen else None}, indent=1) + "\n")
    if chosen is None:
        sys.exit(f"no checkpoint's relay rate lies in {LOW:.0%}-{HIGH:.0%} ({rates}): move the SFT's "
                 "step count toward the band (configs/sft-smollm2-relay.yaml: epochs, lr) and measure again")
    print(f"hf:{chosen}/model")


if __name__ == "__main__":
    main()
