"""bench/decode_step.py's module (a whole decode step: N decoder layers and
the final norm + LM head as one ordered region) in the reference
interpreter against float64 NumPy layers at a small configuration, and the
shape of its fused kernel: launches of the same kernel share one program,
and a step of 16 layers fits a kernel's parameter space."""

import os
import re
import sys

import numpy as np
import pytest

import ism
from conftest import ROOT
from test_grouped_gemm import bf16
from test_decode_rope_append import as_float, tables
from test_decode_layer import EPS, norm, reference, rounded

sys.path.insert(0, os.path.join(ROOT, "bench"))
import decode_step  # noqa: E402


def random_weights(rng, layers, hdim, hkv, ffn, ctx, vocab):
    """Each layer's weights and caches (bf16 bits for the module, float64
    for NumPy: `args` flat in the module's order, `refs` a list a layer),
    weight matrices scaled by 1 / sqrt(their row length), then the final
    norm's and the LM head's weights as (bits, float64)."""
    def w(rows, cols):
        return bf16(rng.standard_normal((rows, cols)) / np.sqrt(cols))

    def wn():
        return bf16(1 + 0.1 * rng.standard_normal(hdim))
    args, refs = [], []
    for _ in range(layers):
        ws = [wn(), w(hdim, hdim), w(hkv * 64, hdim), w(hkv * 64, hdim),
              w(hdim, hdim), wn(), w(ffn, hdim), w(ffn, hdim), w(hdim, ffn),
              bf16(rng.standard_normal((hkv, ctx, 64))),
              bf16(rng.standard_normal((hkv, ctx, 64)))]
        args += [a for a, _ in ws]
        refs.append([r for _, r in ws])
    return args, refs, wn(), w(vocab, hdim)


def test_two_layers_and_the_head_match_numpy():
    rng = np.random.default_rng(5)
    layers, hdim, hkv, ffn, ctx, vocab, pos = 2, 256, 2, 600, 100, 256, 41
    m = ism.Module.parse(decode_step.step_module(layers))
    x, x64 = bf16(rng.standard_normal((1, hdim)))
    args, refs, (wnf, wnf64), (wlm, wlm64) = random_weights(
        rng, layers, hdim, hkv, ffn, ctx, vocab)
    cos, sin = tables(ctx)
    logits = np.full((vocab // 64, 64), 0x7FC0, np.uint16)
    ism.interpret(m, "main", x, *args, cos, sin, np.array([pos], np.int32),
                  wnf, wlm, logits, np.float32(EPS), np.float32(0.125))
    r = x64
    for l, (wn1, wq, wk, wv, wo, wn2, wg, wu, wd, kc, vc) in enumerate(refs):
        y, kc, vc = reference(r, wn1, wq, wk, wv, wo, wn2, wg, wu, wd, cos,
                              sin, pos, kc, vc, 0.125)
        r = rounded(y)[None, :]
        # each layer appended to its own cache (the layers after the first
        # from a residual stream that took the kernels' bf16 roundings)
        tol = 2e-2 if l == 0 else 6e-2
        np.testing.assert_allclose(as_float(args[11 * l + 9]), kc, rtol=tol,
                                   atol=tol)
        np.testing.assert_allclose(as_float(args[11 * l + 10]), vc, rtol=tol,
                                   atol=tol)
        untouched = np.arange(ctx) != pos
        np.testing.assert_array_equal(as_float(args[11 * l + 9])[:, untouched],
                                      kc[:, untouched])
    ref = wlm64 @ norm(r[0], wnf64)
    np.testing.assert_allclose(as_float(logits).reshape(-1), ref, rtol=4e-2,
                               atol=4e-2 * np.abs(ref).max())


def test_sampled_steps_follow_their_own_logits():
    """The step with sampling (decode_step.step_module(..., sample=True)):
    from a token's embedding to the next token, three steps in a row on the
    caches they append to. Each step's logits match float64 NumPy layers
    run from the same state (the embedding of the token the step before
    wrote, the caches as the step found them); its token is the first index
    of the largest of its own logits, and NumPy's own argmax wherever the
    top two logits are not within the tolerance of each other."""
    rng = np.random.default_rng(11)
    layers, hdim, hkv, ffn, ctx, vocab = 2, 256, 2, 600, 100, 4160
    m = ism.Module.parse(decode_step.step_module(layers, sample=True))
    embed, embed64 = bf16(rng.standard_normal((vocab, hdim)))
    args, refs, (wnf, wnf64), (wlm, wlm64) = random_weights(
        rng, layers, hdim, hkv, ffn, ctx, vocab)
    cos, sin = tables(ctx)
    token = np.array([1234], np.int32)
    seen = []
    for pos in (30, 31, 32):
        caches = [(as_float(args[11 * l + 9]), as_float(args[11 * l + 10]))
                  for l in range(layers)]
        r = embed64[token[0]][None, :]
        logits = np.full((vocab // 64, 64), 0x7FC0, np.uint16)
        ism.interpret(m, "main", embed, token, *args, cos, sin,
                      np.array([pos], np.int32), wnf, wlm, logits,
                      np.float32(EPS), np.float32(0.125))
        for ws, (kc, vc) in zip(refs, caches):
            y, _, _ = reference(r, *ws[:9], cos, sin, pos, kc, vc, 0.125)
            r = rounded(y)[None, :]
        ref = wlm64 @ norm(r[0], wnf64)
        got = as_float(logits).reshape(-1)
        atol = 4e-2 * np.abs(ref).max()
        np.testing.assert_allclose(got, ref, rtol=4e-2, atol=atol)
        assert token[0] == np.argmax(got)
        top = np.sort(ref)[-2:]
        if top[1] - top[0] > 2 * atol:
            assert token[0] == np.argmax(ref)
        seen.append(int(token[0]))
    # (the tokens come from the logits, not from what the buffer held)
    assert seen[0] != 1234 and len(seen) == 3


def test_a_sampled_step_states_its_limits():
    m = ism.Module.parse(decode_step.step_module(1, sample=True))
    text = str(m)
    assert "ism.launch @embed" in text and "ism.launch @argmax_final" in text
    with pytest.raises(ism.RunError, match="the vocabulary has 262208 rows "
                       r"\(embedding table: 262208\) and token 1 elements: "
                       "greedy sampling takes at most 262144 logits"):
        hdim, hkv, ffn, ctx, vocab = 64, 1, 64, 8, 262208
        z = np.zeros
        ism.interpret(
            m, "main", z((vocab, hdim), np.uint16), z(1, np.int32),
            z(hdim, np.uint16), z((hdim, hdim), np.uint16),
            z((64 * hkv, hdim), np.uint16), z((64 * hkv, hdim), np.uint16),
            z((hdim, hdim), np.uint16), z(hdim, np.uint16),
            z((ffn, hdim), np.uint16), z((ffn, hdim), np.uint16),
            z((hdim, ffn), np.uint16), z((hkv, ctx, 64), np.uint16),
            z((hkv, ctx, 64), np.uint16), z((ctx, 32), np.float32),
            z((ctx, 32), np.float32), z(1, np.int32), z(hdim, np.uint16),
            z((vocab, hdim), np.uint16), z((vocab // 64, 64), np.uint16),
            np.float32(EPS), np.float32(0.125))


def test_a_step_shares_programs_and_fits_the_parameter_space():
    text = decode_step.step_module(16)
    assert text.count("ism.launch @") == 161
    ptx = ism.to_ptx(ism.Module.parse(text), chip="sm_90a")
    assert ptx.count(".entry ") == 1
    assert ".entry proj__rope__copy_row__decode__o_proj__gate_up__down__head__x161(" \
        in ptx
    # Launches of the same kernel share one program: 16 layers' kernel is
    # not much larger than 2 layers' (1.4x: the picks among more launches;
    # one program per launch would make it about 7x).
    two = ism.to_ptx(ism.Module.parse(decode_step.step_module(2)),
                     chip="sm_90a")
    assert len(ptx) < 2 * len(two)
    # (a kernel's parameters have at most 32764 bytes; one per launch
    # argument, 161 launches' worth, would be about 46 KiB)
    params = ptx[ptx.index(".entry "):ptx.index(")", ptx.index(".entry "))]
    sizes = re.findall(r"\.param \.[busf](\d+)", params)
    assert 0 < sum(int(bits) // 8 for bits in sizes) <= 32764


def test_layers_must_be_positive(capsys):
    with pytest.raises(SystemExit):
        sys.argv = ["decode_step.py", "write", "/dev/null", "--layers", "0"]
        decode_step.main()
    assert "--layers must be at least 1, got 0" in capsys.readouterr().err


def test_an_unwritable_path_is_named(capsys, tmp_path):
    path = str(tmp_path / "missing" / "step.mlir")
    with pytest.raises(SystemExit):
        sys.argv = ["decode_step.py", "write", path, "--layers", "1"]
        decode_step.main()
    assert f"cannot write {path}: No such file or directory" in \
        capsys.readouterr().err


def test_write_sample(tmp_path):
    path = str(tmp_path / "step.mlir")
    sys.argv = ["decode_step.py", "write", path, "--layers", "2", "--sample"]
    assert decode_step.main() == 0
    text = open(path).read()
    assert text == decode_step.step_module(2, sample=True)
    assert text.count("ism.launch @") == 2 * 10 + 4
    assert "func.func @main(%embed: memref<?x?xbf16>, %token: memref<?xi32>" \
        in text
