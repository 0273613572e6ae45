# class: integer inputs
# task: builtin/embedding
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(idx_ptr, w_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    token = tl.program_id(0)
    row = tl.load(idx_ptr + token)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    tl.store(out_ptr + token * D + cols, tl.load(w_ptr + row * D + cols, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_embeddings: int, embed_dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_embeddings, embed_dim))

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        flat = indices.reshape(-1).contiguous()
        d = self.weight.shape[1]
        out = torch.empty((flat.numel(), d), device=indices.device, dtype=self.weight.dtype)
        embedding_kernel[(flat.numel(),)](flat, self.weight, out, d, BLOCK_D=triton.next_power_of_2(d))
        return out.view(*indices.shape, d)
