"""Build the labelled set of broken kernels that `feedback_diagnosis.py` judges.

Each case is a correct builtin solution (atrl/tasks/builtin/<level>/<task>.solution.py) with ONE
planted cause, written as exact text replacements (each must match exactly once). The manifest
records the task, the planted cause and the expected diagnosis per backend, at the `small` preset
the benchmark judges: the interpreter runs programs one after another, so a read-modify-write race
is *correct* there (expected "correct") and only a GPU shows it. The interpreter backend rounds
the fp32 operands of a default-precision `tl.dot` to TF32 as a GPU does (`emulate_tf32_dot` in
atrl/backends/interpreter.py), so the TF32 cases fail on both backends.

    python benchmarks/plant_diagnosis_set.py   # rewrites tests/harness/diagnosis_set/
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BUILTIN = ROOT / "atrl" / "tasks" / "builtin"
OUT = ROOT / "tests" / "harness" / "diagnosis_set"

ELEMENTWISE_MASK = ("mask = offsets < n_elements", "mask = offsets < n_elements - 1")
ELEMENTWISE_GRID = ("[(triton.cdiv(n, BLOCK),)]", "[(n // BLOCK,)]")
LOAD_X = "x = tl.load(x_ptr + offsets, mask=mask, other=0.0)"
LOAD_X_BF16 = (LOAD_X, LOAD_X.replace("other=0.0)", "other=0.0).to(tl.bfloat16).to(tl.float32)"))
IEEE = (', input_precision="ieee")', ")")


@dataclass
class Case:
    name: str
    task: str  # builtin/<name>
    cause: str  # what was planted, in words
    expected: str  # the diagnosis class on the cuda backend (atrl.harness.feedback.diagnosis.CAUSES)
    edits: tuple[tuple[str, str], ...]
    interpreter: str | None = None  # the interpreter's expectation when it differs ("correct")
    kb_entry: str | None = None

    def source(self) -> str:
        level = next(p for p in ("level1", "level2", "level3") if (BUILTIN / p / f"{self.task}.solution.py").exists())
        text = (BUILTIN / level / f"{self.task}.solution.py").read_text()
        for old, new in self.edits:
            count = text.count(old)
            if count != 1:
                raise SystemExit(f"{self.name}: {old!r} occurs {count} times in {self.task}'s solution (need 1)")
            text = text.replace(old, new)
        return text


KB = {"scale": "fix-wrong-constant", "precision": "fix-precision", "boundary": "fix-tail-mask", "layout": "fix-layout-strides",
      "distribution": "fix-wide-inputs", "nan-inf": "fix-nan", "state": "fix-state-across-calls",
      "race": "fix-racy-reduction"}

STATE_CACHED_INPUT = (
    ("    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        x = x.contiguous()",
     "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
     "        if getattr(self, \"_x\", None) is None:\n            self._x = x.contiguous()\n"
     "        x = self._x"),
)


def cases() -> list[Case]:
    out: list[Case] = []
    for task in ("add", "sigmoid", "tanh", "elu", "gelu_tanh", "leaky_relu", "relu", "axpy"):
        out.append(Case(f"mask_off_by_one_{task}", task, "store mask `offsets < n - 1` drops the last element",
                        "boundary", (ELEMENTWISE_MASK,)))
    for task in ("softplus", "silu", "hardswish", "clamp"):
        out.append(Case(f"grid_too_small_{task}", task, "grid `n // BLOCK` leaves the partial last block unwritten",
                        "boundary", (ELEMENTWISE_GRID,)))
    out.append(Case("grid_too_small_transpose", "transpose", "row grid `n_rows // BLOCK_R` skips the last rows",
                    "boundary", (("triton.cdiv(n_rows, BLOCK_R)", "n_rows // BLOCK_R"),)))
    # precision
    for task in ("matmul", "bmm", "matmul_bt", "matmul_bias_relu", "matmul_bias_gelu"):
        out.append(Case(f"tf32_dot_{task}", task, "tl.dot without input_precision=\"ieee\" (TF32 on the GPU)",
                        "precision", (IEEE,), kb_entry="fix-precision-tf32"))
    out.append(Case("fp16_accumulator_sum_dim", "sum_dim", "the sum is accumulated in float16",
                    "precision", (("acc = tl.zeros((BLOCK_I,), dtype=tl.float32)",
                                   "acc = tl.zeros((BLOCK_I,), dtype=tl.float16)"),
                                  ("acc += tl.sum(tile, axis=0)", "acc += tl.sum(tile, axis=0).to(tl.float16)")),
                    kb_entry="fix-precision-fp16"))
    out.append(Case("fp16_accumulator_mean_dim", "mean_dim", "the row sum is accumulated in float16",
                    "precision", (("acc = tl.zeros((BLOCK,), dtype=tl.float32)",
                                   "acc = tl.zeros((BLOCK,), dtype=tl.float16)"),
                                  ("acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0)",
                                   "acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float16)")),
                    kb_entry="fix-precision-fp16"))
    out.append(Case("fp16_operands_matmul", "matmul", "matmul operands rounded to float16 for tensor cores",
                    "precision", (("acc = tl.dot(a, b, acc", "acc = tl.dot(a.to(tl.float16), b.to(tl.float16), acc"),
                                  IEEE),
                    kb_entry="fix-precision-fp16"))
    out.append(Case("fp16_sum_of_squares_rms_norm", "rms_norm", "the sum of squares is accumulated in float16",
                    "precision", (("        acc += x * x", "        acc += (x * x).to(tl.float16).to(tl.float32)"),),
                    kb_entry="fix-precision-fp16"))
    # a wrong constant: every element off by one factor
    out.append(Case("divisor_off_by_one_mean_dim", "mean_dim", "the mean divides by n_cols - 1",
                    "scale", (("tl.sum(acc, axis=0) / n_cols)", "tl.sum(acc, axis=0) / (n_cols - 1))"),)))
    out.append(Case("sum_for_mean_mean_dim", "mean_dim", "the mean is never divided (a sum)",
                    "scale", (("tl.sum(acc, axis=0) / n_cols)", "tl.sum(acc, axis=0))"),)))
    out.append(Case("rms_over_the_sum_rms_norm", "rms_norm", "the RMS takes the sum of squares, not their mean",
                    "scale", (("tl.sum(acc, axis=0) / n_cols + eps", "tl.sum(acc, axis=0) + eps"),)))
    out.append(Case("missing_half_gelu_tanh", "gelu_tanh", "the 0.5 of GELU is left out",
                    "scale", (("0.5 * x * (1.0 + tanh_u)", "x * (1.0 + tanh_u)"),)))
    for task in ("sigmoid", "tanh", "silu", "gelu_tanh"):
        out.append(Case(f"bf16_cast_{task}", task, "the input is rounded to bfloat16 after loading",
                        "precision", (LOAD_X_BF16,), kb_entry="fix-precision-bf16"))
    # layout
    out.append(Case("wrong_stride_transpose", "transpose", "the load swaps the row and column strides of x",
                    "layout", (("rows[:, None] * stride_xr + cols[None, :] * stride_xc",
                                "rows[:, None] * stride_xc + cols[None, :] * stride_xr"),)))
    out.append(Case("wrong_stride_matmul_a", "matmul", "A's strides passed swapped (reads A transposed)",
                    "layout", (("a.stride(0), a.stride(1)", "a.stride(1), a.stride(0)"),)))
    out.append(Case("wrong_stride_matmul_b", "matmul", "B's strides passed swapped (reads B transposed)",
                    "layout", (("b.stride(0), b.stride(1)", "b.stride(1), b.stride(0)"),)))
    out.append(Case("swapped_axes_matmul_c", "matmul", "C stored with its axes swapped",
                    "layout", (("c.stride(0), c.stride(1)", "c.stride(1), c.stride(0)"),)))
    out.append(Case("swapped_axes_transpose", "transpose", "the store writes x's layout, not the transpose",
                    "layout", (("cols[None, :] * stride_yr + rows[:, None] * stride_yc",
                                "rows[:, None] * stride_yr + cols[None, :] * stride_yc"),)))
    out.append(Case("swapped_axes_permute3d", "permute3d", "the store's last two output strides swapped",
                    "layout", (("offs_j[:, None] * stride_y2 + offs_k[None, :] * stride_y0",
                                "offs_j[:, None] * stride_y0 + offs_k[None, :] * stride_y2"),)))
    out.append(Case("wrong_stride_permute3d", "permute3d", "the load swaps the strides of dims 1 and 2",
                    "layout", (("offs_j[:, None] * stride_x1 + offs_k[None, :] * stride_x2",
                                "offs_j[:, None] * stride_x2 + offs_k[None, :] * stride_x1"),)))
    # distribution
    out.append(Case("positive_only_relu", "relu", "ReLU as the identity (assumes x >= 0)",
                    "distribution", (("tl.maximum(x, 0.0)", "x"),)))
    out.append(Case("positive_only_leaky_relu", "leaky_relu", "leaky ReLU as the identity (assumes x >= 0)",
                    "distribution", (("tl.where(x >= 0.0, x, x * negative_slope)", "x"),)))
    out.append(Case("positive_only_elu", "elu", "ELU as the identity (assumes x > 0)",
                    "distribution", (("tl.where(x > 0.0, x, negative)", "x"),)))
    out.append(Case("positive_only_tanh", "tanh", "abs dropped from the stable tanh (assumes x >= 0)",
                    "distribution", (("e = tl.exp(-2.0 * tl.abs(x))", "e = tl.exp(-2.0 * x)"),)))
    out.append(Case("positive_only_gelu_tanh", "gelu_tanh", "abs dropped from the stable tanh (assumes u >= 0)",
                    "distribution", (("e = tl.exp(-2.0 * tl.abs(u))", "e = tl.exp(-2.0 * u)"),)))
    out.append(Case("positive_only_softplus", "softplus", "max(x, 0) replaced by x (assumes x >= 0)",
                    "distribution", (("soft = tl.maximum(x, 0.0) + tl.log", "soft = x + tl.log"),)))
    out.append(Case("small_only_softplus", "softplus", "softplus linear above 2 instead of 20 (assumes small x)",
                    "distribution", (("(x, y, n, 20.0, BLOCK=BLOCK)", "(x, y, n, 2.0, BLOCK=BLOCK)"),)))
    out.append(Case("lower_bound_dropped_clamp", "clamp", "clamp without its lower bound (assumes x >= lo)",
                    "distribution", (("tl.minimum(tl.maximum(x, lo), hi)", "tl.minimum(x, hi)"),)))
    # NaN / Inf
    out.append(Case("exp_overflow_gelu_tanh", "gelu_tanh", "tanh via exp(+2|u|): overflows to inf/inf for large u",
                    "nan-inf", (("e = tl.exp(-2.0 * tl.abs(u))", "e = tl.exp(2.0 * tl.abs(u))"),
                                ("tanh_abs = (1.0 - e) / (1.0 + e)", "tanh_abs = (e - 1.0) / (e + 1.0)"))))
    out.append(Case("divide_by_block_count_mean_dim", "mean_dim", "divides by n_cols // BLOCK (0 when n < BLOCK)",
                    "nan-inf", (("tl.sum(acc, axis=0) / n_cols)", "tl.sum(acc, axis=0) / (n_cols // BLOCK))"),)))
    out.append(Case("divide_by_block_count_layer_norm", "layer_norm", "mean divides by n_cols // BLOCK (0)",
                    "nan-inf", (("mean = tl.sum(acc, axis=0) / n_cols", "mean = tl.sum(acc, axis=0) / (n_cols // BLOCK)"),)))
    out.append(Case("divide_by_block_count_group_norm", "group_norm", "mean divides by group_size // BLOCK (0)",
                    "nan-inf", (("mean = tl.sum(acc, axis=0) / group_size",
                                 "mean = tl.sum(acc, axis=0) / (group_size // BLOCK)"),)))
    out.append(Case("divide_by_zero_count_kl_div", "kl_div", "the batch mean divides by batch // 32 (0 here)",
                    "nan-inf", (("tl.sum(acc, axis=0) / batch)", "tl.sum(acc, axis=0) / (batch // 32))"),)))
    out.append(Case("divide_by_zero_count_cross_entropy", "cross_entropy", "the mean divides by n // 32 (0 here)",
                    "nan-inf", (("tl.sum(acc, axis=0) / n)", "tl.sum(acc, axis=0) / (n // 32))"),)))
    out.append(Case("divide_by_block_count_mse_loss", "mse_loss", "mean divides by n_partials - 2 (0 here)",
                    "nan-inf", (("tl.sum(acc, axis=0) / n_elements)", "tl.sum(acc, axis=0) / (n_partials - 2))"),)))
    # state across calls
    for task in ("sigmoid", "tanh", "silu", "softplus", "relu"):
        out.append(Case(f"cached_input_{task}", task, "the first call's input is kept on self and reused",
                        "state", STATE_CACHED_INPUT))
    out.append(Case("cached_operand_add", "add", "the first call's y is kept on self and reused",
                    "state", (("        y = y.contiguous()\n",
                               "        if getattr(self, \"_y\", None) is None:\n"
                               "            self._y = y.contiguous()\n        y = self._y\n"),)))
    out.append(Case("cached_weight_matmul", "matmul", "the first call's B is kept on self and reused",
                    "state", (("        M, K = a.shape\n",
                               "        if getattr(self, \"_b\", None) is None:\n            self._b = b\n"
                               "        b = self._b\n        M, K = a.shape\n"),)))
    # races
    for task in ("mse_loss", "smooth_l1_loss"):
        out.append(Case(f"last_writer_{task}", task, "every program stores its partial to partials[0]",
                        "race", (("tl.store(partial_ptr + pid,", "tl.store(partial_ptr,"),
                                 ("partials = torch.empty(n_partials", "partials = torch.zeros(n_partials"))))
        out.append(Case(f"read_modify_write_{task}", task,
                        "partials added into one slot by load+store without atomics",
                        "race", (("tl.store(partial_ptr + pid,", "tl.store(partial_ptr, tl.load(partial_ptr) +"),
                                 ("partials = torch.empty(n_partials", "partials = torch.zeros(n_partials")),
                        interpreter="correct"))
    out.append(Case("read_modify_write_matmul_row_sum", "matmul_row_sum",
                    "N split over programs that add into y by load+store without atomics", "race",
                    (("    pid_m = tl.program_id(0)\n", "    pid_m = tl.program_id(0)\n    pid_n = tl.program_id(1)\n"),
                     ("for n0 in range(0, N, BLOCK_N):", "for n0 in range(pid_n * BLOCK_N, N, 2 * BLOCK_N):"),
                     ("tl.store(y_ptr + offs_m * stride_ym, row_sum, mask=mask_m)",
                      "tl.store(y_ptr + offs_m * stride_ym,\n             tl.load(y_ptr + offs_m * stride_ym, "
                      "mask=mask_m) + row_sum, mask=mask_m)"),
                     ("y = torch.empty((M, 1)", "y = torch.zeros((M, 1)"),
                     ("grid = (triton.cdiv(M, BLOCK_M),)", "grid = (triton.cdiv(M, BLOCK_M), 2)")),
                    interpreter="correct"))
    out.append(Case("last_writer_kl_div", "kl_div", "every program stores its partial to partials[0]",
                    "race", (("tl.store(partial_ptr + pid,", "tl.store(partial_ptr,"),
                             ("partials = torch.empty(n_partials", "partials = torch.zeros(n_partials"))))
    out.append(Case("last_writer_cross_entropy", "cross_entropy", "every row's loss is stored to row_loss[0]",
                    "race", (("tl.store(loss_ptr + row,", "tl.store(loss_ptr,"),
                             ("row_loss = torch.empty(n_rows", "row_loss = torch.zeros(n_rows"))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for case in cases():
        (args.out / f"{case.name}.py").write_text(case.source())
        expected = {"cuda": case.expected, "interpreter": case.interpreter or case.expected}
        manifest.append({"case": case.name, "task": f"builtin/{case.task}", "planted": case.cause,
                         "expected": expected, "kb_entry": case.kb_entry or KB[case.expected]})
    header = ("# Generated by benchmarks/plant_diagnosis_set.py: one planted cause per case.\n"
              "# expected: the diagnosis class per backend at preset small (\"correct\": the fault does not\n"
              "# show there). The cuda expectations are not yet measured.\n")
    (args.out / "manifest.yaml").write_text(header + yaml.safe_dump({"cases": manifest}, sort_keys=False, width=110))
    print(f"{len(manifest)} cases written to {args.out}")


if __name__ == "__main__":
    main()
