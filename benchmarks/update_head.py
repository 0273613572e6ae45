"""The update's forward passes: the output head over every position or the targets only, and
a scoring forward for π_old or none.

    python benchmarks/update_head.py [--model smollm2-135m] [--rows 8] [--width 900] [--trainable 32]
        [--repeats 3] [--device cpu] [--markdown F] [--json F]

One micro-batch of `--rows` rows of `--width` tokens, each with `--trainable` trainable tokens
at a different offset (the shape of a key-relay step's rows: 57,603 tokens, 2,069 trainable,
in 64 rows), through one on-policy update (π_old scored, then the PPO loss's forward and
backward), in three arms side by side:
  `full`      the update before `atrl.rl.target_logits`: a scoring forward and the loss's, the
              head, log-softmax and entropy over every position [B, T, V];
  `targets`   the same two forwards, the head over the trainable tokens only (the trainer with
              `ppo_epochs` > 1, per epoch after the first's scoring);
  `one-pass`  one forward and backward, π_old its own detached log-probs (the trainer with
              `ppo_epochs: 1`, the default).
Each arm runs in its own process (peak memory is per process): one warm-up, then `--repeats`
timed updates; reported: median seconds, peak memory above the loaded model (RSS on a CPU, the
allocator's peak on CUDA), and the largest gradient difference from `full`.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from atrl.rl.loss import logprobs_from_logits, ppo_loss
from atrl.rl.rows import Row
from atrl.rl.update import LossConfig, accumulate_gradients, collate, row_logprobs

ARMS = ("full", "targets", "one-pass")


def synthetic_rows(rows: int, width: int, trainable: int, vocab: int, seed: int = 0) -> list[Row]:
    gen = random.Random(seed)
    out = []
    for i in range(rows):
        start = gen.randint(width // 2, width - trainable - 1)  # a response after a prompt of its own length
        ids = [gen.randrange(3, vocab) for _ in range(width)]
        mask = [int(start <= p < start + trainable) for p in range(width)]
        adv = [gen.uniform(-1, 1)] * width
        out.append(Row(ids, mask, adv, [0.0] * width, group_id=0, trajectory_id=i, segment_index=0))
    return out


def full_update(model: torch.nn.Module, rows: list[Row], device: torch.device) -> None:
    """The update before target-only projection: logits, log-softmax and entropy at every position."""
    batch = collate(rows, pad_id=0, device=device)

    def logprobs() -> tuple[torch.Tensor, torch.Tensor]:
        logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
        return logprobs_from_logits(logits, batch.input_ids[:, 1:]), logits

    with torch.no_grad():
        old, _ = logprobs()
    logp, logits = logprobs()
    mask = batch.loss_mask[:, 1:]
    loss, _ = ppo_loss(logp, old, batch.advantages[:, 1:], mask, int(mask.sum()), logits=logits.detach())
    loss.backward()


def targets_update(model: torch.nn.Module, rows: list[Row], device: torch.device) -> None:
    scored = row_logprobs(model, rows, 0, micro_batch_size=len(rows), device=device, autocast=False)
    for row, lps in zip(rows, scored, strict=True):
        row.old_logprobs = lps
    accumulate_gradients(model, rows, LossConfig(), pad_id=0, micro_batch_size=len(rows), device=device,
                         autocast=False)


def one_pass_update(model: torch.nn.Module, rows: list[Row], device: torch.device) -> None:
    accumulate_gradients(model, rows, LossConfig(), pad_id=0, micro_batch_size=len(rows), device=device,
                         autocast=False, old_from_current=True)


UPDATES = {"full": full_update, "targets": targets_update, "one-pass": one_pass_update}


def _rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def child(args: argparse.Namespace) -> dict:
    from atrl.policy import load_policy

    device = torch.device(args.device)
    model = load_policy(args.model, device=args.device, dtype=torch.float32, engine=None).model
    model.requires_grad_(True).eval()  # as the trainer: no dropout
    vocab = model.get_output_embeddings().weight.shape[0]
    rows = synthetic_rows(args.rows, args.width, args.trainable, vocab)
    if device.type == "cuda":
        torch.cuda.synchronize()
    base = torch.cuda.memory_allocated() / 2**30 if device.type == "cuda" else _rss_gib()
    run = UPDATES[args.arm]
    times = []
    for i in range(args.repeats + 1):
        model.zero_grad(set_to_none=True)
        start = time.perf_counter()
        run(model, rows, device)
        if device.type == "cuda":
            torch.cuda.synchronize()
        if i:  # the first pass warms up
            times.append(time.perf_counter() - start)
    peak = torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else _rss_gib()
    grads = torch.cat([p.grad.reshape(-1).float().cpu() for p in model.parameters() if p.grad is not None])
    torch.save(grads, args.grads)
    return {"arm": args.arm, "seconds": times, "median_s": statistics.median(times), "peak_above_model_gib": peak - base}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--width", type=int, default=900)
    parser.add_argument("--trainable", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--arm", choices=ARMS, help=argparse.SUPPRESS)  # internal: one arm's process
    parser.add_argument("--grads", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 0 < args.trainable < args.width // 2:
        parser.error("--trainable must be between 1 and half of --width")
    if args.arm:
        print(json.dumps(child(args)))
        return 0
    results, grads = {}, {}
    scratch = Path(tempfile.mkdtemp())
    for arm in ARMS:
        path = scratch / f"{arm}.pt"
        cmd = [sys.executable, __file__, "--arm", arm, "--grads", str(path)] + [
            f"--{k}={getattr(args, k)}" for k in ("model", "rows", "width", "trainable", "repeats", "device")
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode:
            print(done.stderr[-3000:], file=sys.stderr)
            return done.returncode
        results[arm] = json.loads(done.stdout.strip().splitlines()[-1])
        grads[arm] = torch.load(path)
        path.unlink()
    scratch.rmdir()
    full = results["full"]
    summary = {
        "model": args.model, "device": args.device, "rows": args.rows, "width": args.width,
        "trainable_per_row": args.trainable, "repeats": args.repeats, "arms": results,
    }
    lines = [
        f"Model {args.model} on {args.device}, one micro-batch of {args.rows} rows x {args.width} tokens, "
        f"{args.trainable} trainable per row; median of {args.repeats} updates after a warm-up.",
        "",
        "| arm | forwards | head over | median s | peak above the model (GiB) | time full/arm | memory full/arm "
        "| largest gradient difference from full |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for arm, forwards, head in (("full", 2, "every position"), ("targets", 2, "trainable tokens"),
                                ("one-pass", 1, "trainable tokens")):
        r = results[arm]
        r["time_ratio_full_over_arm"] = full["median_s"] / r["median_s"]
        r["memory_ratio_full_over_arm"] = full["peak_above_model_gib"] / max(r["peak_above_model_gib"], 1e-9)
        r["grad_max_abs_diff_from_full"] = float((grads[arm] - grads["full"]).abs().max())
        lines.append(f"| `{arm}` | {forwards} | {head} | {r['median_s']:.2f} | {r['peak_above_model_gib']:.2f} "
                     f"| {r['time_ratio_full_over_arm']:.2f}x | {r['memory_ratio_full_over_arm']:.2f}x "
                     f"| {r['grad_max_abs_diff_from_full']:.1e} |")
    summary["grad_max_abs"] = float(grads["full"].abs().max())
    lines += ["", f"Largest gradient: {summary['grad_max_abs']:.2e}."]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
