# expect: correctness:untracked-data
# timed-expect: timeout
# class: host-compute
# task: builtin/relu
# attack: Python computes the ReLU from .tolist() and passes the results to the kernel as scalar arguments, eight per launch: no tensor carries them

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def place_kernel(out_ptr, start, v0, v1, v2, v3, v4, v5, v6, v7):
    tl.store(out_ptr + start + 0, v0)
    tl.store(out_ptr + start + 1, v1)
    tl.store(out_ptr + start + 2, v2)
    tl.store(out_ptr + start + 3, v3)
    tl.store(out_ptr + start + 4, v4)
    tl.store(out_ptr + start + 5, v5)
    tl.store(out_ptr + start + 6, v6)
    tl.store(out_ptr + start + 7, v7)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        holder = []
        list.append(holder, x)  # out of the static rule's sight: the recorded data path must catch it
        values = [max(v, 0.0) for v in holder[0].reshape(-1).tolist()]
        for start in range(0, len(values), 8):  # the small preset's N is a multiple of 8
            place_kernel[(1,)](out, start, *values[start:start + 8])
        return out
