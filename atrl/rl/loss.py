"""The PPO clipped objective over token rows (ATRL-SPEC, "Loss").

    ratio_t = exp(logπ_θ(a_t|c_t) − logπ_old(a_t|c_t))          c_t: the row's own context
    ℓ_t     = −min(ratio_t·A_t, clip(ratio_t, 1−ε_low, 1+ε_high)·A_t) + β·KL3_t
    L       = Σ_{trainable t in the micro-batch} ℓ_t / N_step

N_step is the number of trainable tokens of the whole optimizer step (all micro-batches), so
summing the micro-batch losses gives the token mean over the step however the rows are split
(Yu et al. 2025, DAPO: token-level loss; the asymmetric clip ε_high > ε_low is theirs too).
KL3_t = exp(r_t) − r_t − 1 with r_t = logπ_ref − logπ_θ (Schulman's k3 estimator of KL(π_θ‖π_ref)).

π_old is the trainer's own forward under the weights before the update, not the sampler's
log-probs: the two differ (bf16 KV-cache decoding against the trainer's forward, or another
engine), and the ratio must compare like with like. The sampler/trainer mismatch is corrected by
truncated importance sampling (Yao et al. 2025, "Your Efficient RL Framework Secretly Brings You
Off-Policy RL Training"): each token's term is weighted by w_t = min(π_old(a_t)/π_sampler(a_t), C),
a constant (no gradient), since the tokens were drawn from π_sampler.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def logprobs_from_logits(
    logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """log softmax(logits / temperature)[target]: logits [B, T, V], targets [B, T] → [B, T] (float32)."""
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    return logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def entropy_from_logits(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Entropy (nats) of softmax(logits / temperature): [B, T, V] → [B, T]."""
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    return -(logp.exp() * logp).sum(-1)


@dataclass
class LossStats:
    """Sums over the trainable tokens of one micro-batch; add them up over a step, then divide
    by `tokens` for means (`clip_fraction`, `approx_kl`, ...)."""

    tokens: float = 0.0
    clipped: float = 0.0  # tokens whose clipped term was the active one
    approx_kl: float = 0.0  # Σ k3 estimate of KL(π_old ‖ π_θ)
    ref_kl: float = 0.0  # Σ k3 estimate of KL(π_θ ‖ π_ref) (0 without a reference)
    entropy: float = 0.0  # Σ entropy (nats), when logits were given
    ratio: float = 0.0  # Σ ratio
    is_weight: float = 0.0  # Σ truncated importance weight (tokens count 1 when it is off)
    is_truncated: float = 0.0  # tokens whose importance weight hit the cap
    loss: float = 0.0  # Σ of the micro-batch losses: the step's loss once all are added

    def __add__(self, other: LossStats) -> LossStats:
        return LossStats(**{k: getattr(self, k) + getattr(other, k) for k in self.__dataclass_fields__})

    def means(self) -> dict[str, float]:
        n = max(self.tokens, 1.0)
        return {
            "tokens": self.tokens,
            "clip_fraction": self.clipped / n,
            "approx_kl": self.approx_kl / n,
            "ref_kl": self.ref_kl / n,
            "entropy": self.entropy / n,
            "ratio_mean": self.ratio / n,
            "is_weight_mean": self.is_weight / n,
            "is_truncated_fraction": self.is_truncated / n,
            "loss": self.loss,
        }


def ppo_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    total_tokens: int | float,
    clip_low: float = 0.2,
    clip_high: float = 0.28,
    ref_logprobs: torch.Tensor | None = None,
    kl_beta: float = 0.0,
    logits: torch.Tensor | None = None,
    temperature: float = 1.0,
    sampler_logprobs: torch.Tensor | None = None,
    is_cap: float | None = None,
) -> tuple[torch.Tensor, LossStats]:
    """Clipped PPO loss of one micro-batch, normalised by the step's trainable-token count.

    logprobs [B, T] (under π_θ, with grad), old_logprobs [B, T], advantages [B, T], mask [B, T]
    (1 = trainable), total_tokens N_step > 0, ref_logprobs [B, T] for the KL term when
    kl_beta > 0, logits [B, T, V] only for the entropy statistic, sampler_logprobs [B, T] with
    is_cap C for truncated importance sampling (off when either is None); or all of them packed,
    [N] and [N, V] (the trainer's way: `atrl.rl.update`). Returns (loss, stats).
    Masked positions contribute exactly nothing, to the loss or its gradient.
    """
    if total_tokens <= 0:
        raise ValueError("total_tokens must be positive")
    maskf = mask.to(logprobs.dtype)
    keep = mask.bool()
    # Masked positions are zeroed before exp so padding or stale values can never produce inf·0.
    log_ratio = torch.where(keep, logprobs - old_logprobs, torch.zeros_like(logprobs))
    ratio = torch.exp(log_ratio)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high) * advantages
    per_token = -torch.minimum(unclipped, clipped)
    is_weight = torch.ones_like(per_token)
    if sampler_logprobs is not None and is_cap is not None:
        sampler_log_ratio = torch.where(keep, old_logprobs - sampler_logprobs, torch.zeros_like(logprobs))
        is_weight = torch.exp(sampler_log_ratio).clamp(max=is_cap).detach()
        per_token = per_token * is_weight
    ref_kl = torch.zeros_like(per_token)
    if ref_logprobs is not None:
        ref_log_ratio = torch.where(keep, ref_logprobs - logprobs, torch.zeros_like(logprobs))
        ref_kl = torch.exp(ref_log_ratio) - ref_log_ratio - 1.0
        if kl_beta > 0:
            per_token = per_token + kl_beta * ref_kl
    loss = (per_token * maskf).sum() / float(total_tokens)

    with torch.no_grad():
        lr = log_ratio.detach()
        stats = LossStats(
            tokens=float(maskf.sum()),
            clipped=float(((clipped < unclipped).to(maskf.dtype) * maskf).sum()),
            approx_kl=float(((torch.exp(lr) - 1.0 - lr) * maskf).sum()),
            ref_kl=float((ref_kl.detach() * maskf).sum()),
            entropy=float((entropy_from_logits(logits, temperature) * maskf).sum())
            if logits is not None
            else 0.0,
            ratio=float((ratio.detach() * maskf).sum()),
            is_weight=float((is_weight * maskf).sum()),
            is_truncated=float(((is_weight >= is_cap).to(maskf.dtype) * maskf).sum()) if is_cap is not None
            and sampler_logprobs is not None else 0.0,
            loss=float(loss.detach()),
        )
    return loss, stats
