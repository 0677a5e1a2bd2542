"""Triton's tutorial matmul (03-matrix-multiplication), autotuned over its
Hopper configurations: the Triton baseline of bench/gemm.py."""
import torch
import triton
import triton.language as tl


def _configs():
    out = []
    for bm, bn, bk, stages, warps in [
            (128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 4),
            (128, 128, 64, 4, 8), (128, 256, 64, 4, 8), (64, 128, 64, 4, 4),
            (128, 64, 64, 4, 4), (64, 64, 64, 4, 4)]:
        out.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk,
                                  "GROUP_M": 8}, num_stages=stages,
                                 num_warps=warps))
    return out


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
            BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    group = pid // per_group
    first_m = group * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % per_group) % size_m)
    pid_n = (pid % per_group) // size_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_n[None, :] * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * sak
        b_ptrs += BLOCK_K * sbk
    c = acc.to(c_ptr.dtype.element_ty)
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, c,
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def matmul_fn(a, b):
    """A callable computing a @ b into a preallocated output (autotunes on
    its first call)."""
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) *
                         triton.cdiv(N, meta["BLOCK_N"]),)

    def run():
        _matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1),
                      b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    run()
    return run


def _persistent_configs():
    return [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 64,
                           "GROUP_M": 8}, num_stages=s, num_warps=w)
            for bm, bn, s, w in [(128, 256, 3, 8), (128, 256, 4, 8),
                                 (128, 128, 4, 8), (128, 128, 3, 4)]]


@triton.autotune(configs=_persistent_configs(), key=["M", "N", "K"])
@triton.jit
def _matmul_tma_persistent(a_desc, b_desc, c_desc, M, N, K,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                           NUM_SMS: tl.constexpr):
    start = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    per_group = GROUP_M * num_n
    for tile in tl.range(start, num_m * num_n, NUM_SMS, flatten=True):
        group = tile // per_group
        first_m = group * GROUP_M
        size_m = min(num_m - first_m, GROUP_M)
        pid_m = first_m + (tile % size_m)
        pid_n = (tile % per_group) // size_m
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            b = b_desc.load([ki * BLOCK_K, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N],
                     acc.to(c_desc.dtype))


def persistent_matmul_fn(a, b):
    """Triton's persistent TMA matmul (tutorial 09's descriptor variant):
    host tensor descriptors, one program per SM looping over tiles."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    dummy = [1, 1]
    a_desc = TensorDescriptor(a, a.shape, a.stride(), dummy)
    b_desc = TensorDescriptor(b, b.shape, b.stride(), dummy)
    c_desc = TensorDescriptor(c, c.shape, c.stride(), dummy)

    def pre_hook(nargs):
        bm, bn, bk = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
        nargs["a_desc"].block_shape = [bm, bk]
        nargs["b_desc"].block_shape = [bk, bn]
        nargs["c_desc"].block_shape = [bm, bn]

    for cfg in _matmul_tma_persistent.configs:
        cfg.pre_hook = pre_hook
    grid = lambda meta: (min(sms, triton.cdiv(M, meta["BLOCK_M"]) *
                             triton.cdiv(N, meta["BLOCK_N"])),)

    def run():
        _matmul_tma_persistent[grid](a_desc, b_desc, c_desc, M, N, K,
                                     NUM_SMS=sms)
    run()
    return run
