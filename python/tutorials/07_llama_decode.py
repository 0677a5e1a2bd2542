"""Tutorial 7: greedy decoding of a Llama model, one step a launch.

A decode step of a Llama model at batch 1 is a chain of small dependent
kernels: per layer an RMSNorm and the Q, K, V projections, RoPE and the
KV-cache append, attention over the cache, the output projection, the MLP;
then the final norm, the LM head and the argmax. `ism.models` writes the
whole step as one ordered `ism.coschedule` region of the examples' tile
programs (`examples/decode_*.mlir`) and runs it on torch tensors with
`llama.DecodeModel`. The CPU part writes a small random checkpoint in the
Hugging Face layout, reads it back and runs three steps in the float64
interpreter against a NumPy Llama; the GPU part generates tokens with the
step fused into one persistent kernel and launched one operation at a time,
with and without a CUDA graph, and times them.

    PYTHONPATH=build/python_packages python3 python/tutorials/07_llama_decode.py

The page that explains it: docs/guide/07-llama-decode.md.
"""

import tempfile

import numpy as np

import ism
from ism.models import decode_modules, llama

# A small Llama: hidden size 256 (4 query heads of 64, 2 KV heads), FFN
# 600, 2 layers, a vocabulary of 1024.
CONFIG = llama.LlamaConfig(hidden_size=256, num_attention_heads=4,
                           num_key_value_heads=2, intermediate_size=600,
                           num_hidden_layers=2, vocab_size=1024)


def f64(bits):
    """bf16 bit patterns (uint16) -> float64."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32).astype(
        np.float64)


def numpy_step(config, tensors, caches, token, pos, cos, sin):
    """The model's logits for `token` at `pos` in float64 (the caches, one
    (K, V) pair of Hkv x max_ctx x 64 arrays a layer, get its K and V)."""
    def norm(v, w):
        return v / np.sqrt((v * v).mean() + config.rms_norm_eps) * w

    def rope(t):                                       # rotate-half form
        t1, t2 = t[:, :32], t[:, 32:]
        c, s = cos[pos], sin[pos]
        return np.concatenate([t1 * c - t2 * s, t2 * c + t1 * s], 1)
    hq, hkv = config.num_attention_heads, config.num_key_value_heads
    x = f64(tensors["model.embed_tokens.weight"][token])
    for layer, (kc, vc) in enumerate(caches):
        wn1, wq, wk, wv, wo, wn2, wg, wu, wd = (
            f64(t) for t in llama.layer_arguments(tensors, config, layer))
        h = norm(x, wn1)
        q = rope((wq @ h).reshape(hq, 64))
        kc[:, pos] = rope((wk @ h).reshape(hkv, 64))
        vc[:, pos] = (wv @ h).reshape(hkv, 64)
        o = np.empty((hq, 64))
        for head in range(hq):
            g = head // (hq // hkv)
            s = kc[g, :pos + 1] @ q[head] / 8.0        # scale 1 / sqrt(64)
            p = np.exp(s - s.max())
            o[head] = p @ vc[g, :pos + 1] / p.sum()
        x = x + wo @ o.reshape(-1)
        h = norm(x, wn2)
        g, u = wg @ h, wu @ h
        x = x + wd @ (g / (1 + np.exp(-g)) * u)
    return f64(tensors["lm_head.weight"]) @ norm(
        x, f64(tensors["model.norm.weight"]))


def cpu():
    # --8<-- [start:cpu]
    with tempfile.TemporaryDirectory() as path:
        llama.write_checkpoint(path, CONFIG, seed=0)   # config.json + safetensors
        config, tensors = llama.read_checkpoint(path)

    # The step as ism IR: one ordered region from a token to the next.
    text = decode_modules.step_module(config.num_hidden_layers, sample=True)
    m = ism.Module.parse(text)
    print(f"the step: {text.count('ism.launch ')} launches in one ordered "
          f"ism.coschedule")
    ptx = ism.to_ptx(m, chip="sm_90a")
    fused = [l.split()[-1].rstrip("(") for l in ptx.splitlines()
             if ".entry" in l]
    assert len(fused) == 1                           # the whole step
    print(f"one kernel: {fused[0][:60]}... ({len(fused[0])} characters)")

    # Three steps in the interpreter, on the arguments DecodeModel passes:
    # the embedding table and the token, each layer's weights and KV
    # caches, RoPE tables, the position, the final norm, the LM head, the
    # logits, eps and the attention scale.
    max_ctx, hkv = 16, config.num_key_value_heads
    caches = [[np.zeros((hkv, max_ctx, 64), np.uint16) for _ in range(2)]
              for _ in range(config.num_hidden_layers)]
    cos, sin = llama.rope_tables(config, max_ctx)
    token = np.array([17], np.int32)
    logits = np.zeros((config.vocab_size // 64, 64), np.uint16)
    ref_caches = [(np.zeros((hkv, max_ctx, 64)), np.zeros((hkv, max_ctx, 64)))
                  for _ in caches]
    worst = 0.0
    for pos in range(3):
        ref = numpy_step(config, tensors, ref_caches, int(token[0]), pos,
                         cos, sin)
        layers = [a for l in range(config.num_hidden_layers) for a in
                  llama.layer_arguments(tensors, config, l) + tuple(caches[l])]
        ism.interpret(m, "main", tensors["model.embed_tokens.weight"], token,
                      *layers, cos, sin, np.array([pos], np.int32),
                      tensors["model.norm.weight"], tensors["lm_head.weight"],
                      logits, np.float32(config.rms_norm_eps),
                      np.float32(0.125))
        got = f64(logits).reshape(-1)
        err = np.abs(got - ref).max() / np.abs(ref).max()
        worst = max(worst, err)
        # The step wrote the next token: the first index of its largest logit.
        assert token[0] == np.argmax(got)
        print(f"step {pos}: next token {token[0]}, logits within "
              f"{err:.1e} of float64 NumPy (of the largest)")
    assert worst < 1e-2
    # --8<-- [end:cpu]
    return dict(fused=fused, error=worst, token=int(token[0]))


def gpu():
    # --8<-- [start:gpu]
    import torch

    with tempfile.TemporaryDirectory() as path:
        llama.write_checkpoint(path, CONFIG, seed=0)
        config, tensors = llama.read_checkpoint(path)
    prompt, n = [17, 300, 5], 48
    results = {}
    for way in ("fused", "sequential"):
        model = llama.DecodeModel(config, tensors, max_ctx=128, coschedule=way)
        for graph in (False, True):
            model.reset()
            start, end = (torch.cuda.Event(enable_timing=True)
                          for _ in range(2))
            start.record()
            tokens = model.generate(prompt, n, graph=graph)
            end.record()
            end.synchronize()
            us = start.elapsed_time(end) * 1e3 / (len(prompt) + n - 1)
            name = way + (", CUDA graph" if graph else "")
            results[name] = tokens
            print(f"{name}: {us:.0f} us a token, first tokens {tokens[:8]}")
    # The same tokens every way.
    assert all(t == results["fused"] for t in results.values())
    # --8<-- [end:gpu]
    return results


def have_gpu():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


if __name__ == "__main__":
    cpu()
    if have_gpu():
        gpu()
    else:
        print("no CUDA GPU with PyTorch here: the GPU part is skipped")
