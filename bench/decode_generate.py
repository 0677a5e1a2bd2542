#!/usr/bin/env python3
"""Greedy generation with ism.models.llama.DecodeModel against PyTorch.

A random checkpoint in the Hugging Face layout (config.json and
model.safetensors, ism.models.llama.write_checkpoint) is read back with
llama.read_checkpoint and run two ways with the same weights:

  ism       DecodeModel: one compiled step a token (embedding, every layer,
            LM head, argmax; token and position on the GPU), fused into one
            persistent kernel or one launch an operation, each with and
            without a CUDA graph of the step;
  PyTorch   the same model written here (Hugging Face's LlamaForCausalLM
            arithmetic: bf16 weights and activations, RMSNorm in float32,
            rotate-half RoPE, SDPA with grouped-query heads), in bf16 and
            in float32 (the exact model, up to float32 rounding).

The check is teacher-forced: ism generates `--tokens` tokens on its own,
and both PyTorch models are fed the same token sequence, so that every
step compares logits from the same state. At every step:

  - ism's logits are within bf16 tolerance of the float32 model: their
    largest error is at most twice PyTorch bf16's own at that step, plus
    0.02 (ism rounds its activations to bf16 at other points than PyTorch
    does, so the two bf16 models differ by about as much as each differs
    from float32);
  - ism's token is the float32 model's argmax, or a near tie: its
    float32 logit is within that same tolerance of the largest.

Free-running, PyTorch bf16 also generates on its own from the same prompt;
the first step where its tokens and ism's part (if any) is reported, with
the float32 model's gap between the two tokens there (random weights have
close logits: a gap below bf16's noise decides nothing about either).

    python3 bench/decode_generate.py [--config small|1b] [--tokens N]
        [--ways fused,fused-graph,...] [--out DIR]

Prints one line a way (tokens, exact and near-tie matches, largest logit
error, steady-state us a token and tokens/s) and writes the rows to
DIR/decode_generate.json. Exits 1 when a check fails. Needs PyTorch and a
GPU, and the ism package (the wheel) importable.
"""

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WAYS = ("fused", "fused-graph", "per-op", "per-op-graph")


def torch_model(torch, config, tensors, max_ctx, dtype):
    """A step function token -> logits (float32) of the model in `dtype`,
    with its own KV cache, Hugging Face's arithmetic."""
    import numpy as np
    from ism.models import llama
    import torch.nn.functional as F
    dev = "cuda"

    def put(a):
        t = torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).to(dev)
        return t.view(torch.bfloat16).to(dtype)
    embed = put(tensors["model.embed_tokens.weight"])
    lm = put(tensors.get("lm_head.weight",
                         tensors["model.embed_tokens.weight"]))
    wnf = put(tensors["model.norm.weight"])
    layers = [[put(t) for t in llama.layer_arguments(tensors, config, l)]
              for l in range(config.num_hidden_layers)]
    hq, hkv, d = (config.num_attention_heads, config.num_key_value_heads,
                  config.head_dim)
    caches = [(torch.zeros(hkv, max_ctx, d, dtype=dtype, device=dev),
               torch.zeros(hkv, max_ctx, d, dtype=dtype, device=dev))
              for _ in layers]
    cos, sin = llama.rope_tables(config, max_ctx)
    cos = torch.from_numpy(np.concatenate([cos, cos], 1)).to(dev)
    sin = torch.from_numpy(np.concatenate([sin, sin], 1)).to(dev)
    eps = config.rms_norm_eps
    state = {"pos": 0}

    def norm(x, w):
        v = x.float()
        v = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps)
        return w * v.to(dtype)

    def rope(t, p):
        t1, t2 = t[..., :d // 2], t[..., d // 2:]
        rot = torch.cat([-t2, t1], -1)
        return (t.float() * cos[p] + rot.float() * sin[p]).to(dtype)

    @torch.no_grad()
    def step(token):
        p = state["pos"]
        x = embed[token].view(1, -1)
        for (wn1, wq, wk, wv, wo, wn2, wg, wu, wd), (kc, vc) in zip(layers,
                                                                   caches):
            h = norm(x, wn1)
            q = rope(F.linear(h, wq).view(hq, d), p)
            kc[:, p] = rope(F.linear(h, wk).view(hkv, d), p)
            vc[:, p] = F.linear(h, wv).view(hkv, d)
            o = F.scaled_dot_product_attention(
                q.view(1, hq, 1, d), kc[:, :p + 1].unsqueeze(0),
                vc[:, :p + 1].unsqueeze(0), scale=d ** -0.5, enable_gqa=True)
            x = x + F.linear(o.reshape(1, hq * d), wo)
            h = norm(x, wn2)
            x = x + F.linear(F.silu(F.linear(h, wg)) * F.linear(h, wu), wd)
        state["pos"] = p + 1
        return F.linear(norm(x, wnf), lm).float().view(-1)
    return step


def reference_logits(torch, config, tensors, max_ctx, fed, cache=None):
    """The bf16 and float32 PyTorch models' logits for each token of `fed`
    in turn, as (bf16, float32) pairs; kept in `cache` by the sequence
    (ways that sample the same tokens share one reference run)."""
    key = tuple(fed)
    if cache is not None and key in cache:
        return cache[key]
    ref16 = torch_model(torch, config, tensors, max_ctx, torch.bfloat16)
    ref32 = torch_model(torch, config, tensors, max_ctx, torch.float32)
    pairs = [(ref16(t), ref32(t)) for t in fed]
    if cache is not None:
        cache[key] = pairs
    return pairs


def compare(torch, config, tensors, max_ctx, prompt, tokens, logits,
            cache=None):
    """Teacher-forced comparison of ism's `tokens` and `logits` (one a step)
    with the bf16 and float32 PyTorch models: a dict of figures and a list
    of failures."""
    fed = list(prompt) + tokens[:-1]
    refs = reference_logits(torch, config, tensors, max_ctx, fed, cache)
    exact = near = 0
    worst = worst16 = 0.0
    failures = []
    for i, (l16, l32) in enumerate(refs):
        mine = logits[i]
        e16 = (l16 - l32).abs().max().item()
        err = (mine - l32).abs().max().item()
        tol = 2 * e16 + 0.02
        worst, worst16 = max(worst, err), max(worst16, e16)
        if err > tol:
            failures.append(f"step {i}: logits off the float32 model by "
                            f"{err:.4f} (PyTorch bf16: {e16:.4f})")
        if i < len(prompt) - 1:
            continue
        tok = tokens[i - len(prompt) + 1]
        best = int(l32.argmax())
        if tok == best:
            exact += 1
        elif l32[best] - l32[tok] <= tol:
            near += 1
        else:
            failures.append(f"step {i}: token {tok}, the float32 model's is "
                            f"{best} by {float(l32[best] - l32[tok]):.4f}")
    return dict(exact=exact, near_ties=near, max_logit_err=worst,
                torch_bf16_max_logit_err=worst16), failures


def torch_greedy(torch, config, tensors, max_ctx, prompt, n):
    """PyTorch bf16's own `n` greedy tokens from `prompt`, and the float32
    model's logits at each of those steps (fed the same tokens)."""
    ref16 = torch_model(torch, config, tensors, max_ctx, torch.bfloat16)
    ref32 = torch_model(torch, config, tensors, max_ctx, torch.float32)
    for t in prompt[:-1]:
        ref16(t), ref32(t)
    t, tokens, logits32 = prompt[-1], [], []
    for _ in range(n):
        l16, l32 = ref16(t), ref32(t)
        t = int(l16.argmax())
        tokens.append(t)
        logits32.append(l32)
    return tokens, logits32


def first_divergence(theirs, logits32, tokens):
    """Where PyTorch's greedy tokens part from ism's `tokens` (None if
    nowhere), and the float32 model's gaps there: ism's token's and
    PyTorch's below the largest logit."""
    for i, (a, b) in enumerate(zip(theirs, tokens)):
        if a != b:
            l32 = logits32[i]
            return i, float(l32.max() - l32[b]), float(l32.max() - l32[a])
    return None, 0.0, 0.0


def time_tokens(torch, model, prompt, n, graph):
    """Steady-state us a token: `n` steps after the prompt, timed with CUDA
    events (the Python launch overhead included when not graphed)."""
    model.reset()
    model.generate(prompt, 2, graph=graph)
    start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    start.record()
    model.generate([int(model.token.item())], n, graph=graph)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", choices=("small", "1b"), default="small")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--ways", default=",".join(WAYS))
    ap.add_argument("--out", default="decode-generate-out")
    ap.add_argument("--checkpoint", help="a checkpoint directory to use "
                    "instead of random weights")
    opts = ap.parse_args()
    ways = opts.ways.split(",")
    bad = [w for w in ways if w not in WAYS]
    if bad:
        ap.error(f"unknown way {bad[0]} (ways: {', '.join(WAYS)})")
    if opts.tokens < 1:
        ap.error(f"--tokens must be at least 1, got {opts.tokens}")
    import torch
    from ism.models import llama
    if not torch.cuda.is_available():
        sys.exit("decode_generate: no CUDA GPU")
    if opts.config == "1b":
        config = llama.LLAMA_3_2_1B
    else:
        config = llama.LlamaConfig(256, 4, 2, 600, 2, 1024)
    prompt = [1, 17, 300]
    max_ctx = len(prompt) + opts.tokens + 64
    with tempfile.TemporaryDirectory() as tmp:
        path = opts.checkpoint
        if path is None:
            path = os.path.join(tmp, "ckpt")
            t0 = time.time()
            llama.write_checkpoint(path, config, seed=1)
            print(f"random checkpoint: {time.time() - t0:.1f} s", flush=True)
        config, tensors = llama.read_checkpoint(path)
    rows, failed, cache = [], False, {}
    theirs, logits32 = torch_greedy(torch, config, tensors, max_ctx, prompt,
                                    opts.tokens)
    for way in ways:
        model = llama.DecodeModel(
            config, tensors, max_ctx=max_ctx,
            coschedule="fused" if way.startswith("fused") else "sequential")
        graph = way.endswith("graph")
        logits = []
        tokens = model.generate(prompt, opts.tokens, graph=graph,
                                logits=logits)
        figures, failures = compare(torch, config, tensors, max_ctx, prompt,
                                    tokens, logits, cache)
        part, gap_ism, gap_torch = first_divergence(theirs, logits32, tokens)
        us = time_tokens(torch, model, prompt, min(opts.tokens, 64), graph)
        rows.append(dict(way=way, config=opts.config, tokens=opts.tokens,
                         first_divergence=part, us_per_token=us,
                         tokens_per_s=1e6 / us, failures=failures,
                         **figures))
        for f in failures[:5]:
            print(f"FAILED {way}: {f}")
        failed |= bool(failures)
        if part is not None:
            print(f"{way}: PyTorch bf16 free-running parts from ism at token "
                  f"{part} (float32 gaps: ism's token {gap_ism:.4f} below "
                  f"the top, PyTorch bf16's {gap_torch:.4f})")
        del model
    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "decode_generate.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print(f"greedy generation, {opts.config} config, {opts.tokens} tokens "
          f"after a {len(prompt)}-token prompt, teacher-forced check "
          f"against PyTorch float32")
    print(f"{'way':>13} {'exact':>5} {'ties':>4} {'err':>7} {'bf16 err':>8} "
          f"{'free':>5} {'us/tok':>7} {'tok/s':>6}")
    for r in rows:
        free = "all" if r["first_divergence"] is None else str(
            r["first_divergence"])
        print(f"{r['way']:>13} {r['exact']:>5} {r['near_ties']:>4} "
              f"{r['max_logit_err']:>7.4f} "
              f"{r['torch_bf16_max_logit_err']:>8.4f} {free:>5} "
              f"{r['us_per_token']:>7.1f} {r['tokens_per_s']:>6.0f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
