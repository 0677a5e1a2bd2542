"""Runs the Triton layernorm baseline once (for profiling with ncu)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import triton_kernels as tk  # noqa: E402

rows, cols = 16384, 4096
x = torch.randn(rows, cols, dtype=torch.float16, device="cuda")
w = torch.randn(cols, dtype=torch.float16, device="cuda")
b = torch.randn(cols, dtype=torch.float16, device="cuda")
y = torch.empty_like(x)
for _ in range(3):
    tk.run_layernorm(x, w, b, y, 1e-5)
torch.cuda.synchronize()
