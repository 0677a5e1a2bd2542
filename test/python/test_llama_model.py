"""ism.models.llama: configurations (Hugging Face config.json), RoPE tables
with Llama 3's frequency scaling, safetensors checkpoints (the format
checked by parsing the file here), a layer's weights in the decode layer's
argument order, and a random checkpoint's layer run through the decode
layer module (bench/decode_layer.py) in the interpreter against a float64
NumPy layer with the same weights."""

import json
import math
import os
import struct
import sys

import numpy as np
import pytest

import ism
from conftest import ROOT
from ism.models import llama
from test_decode_rope_append import as_float
from test_grouped_gemm import bf16
from test_decode_layer import reference

sys.path.insert(0, os.path.join(ROOT, "bench"))
import decode_layer  # noqa: E402

HF_1B = {"hidden_size": 2048, "num_attention_heads": 32,
         "num_key_value_heads": 8, "intermediate_size": 8192,
         "num_hidden_layers": 16, "vocab_size": 128256,
         "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
         "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0,
                          "low_freq_factor": 1.0,
                          "original_max_position_embeddings": 8192,
                          "rope_type": "llama3"}}


def test_config_from_hf_is_llama_3_2_1b():
    assert llama.LlamaConfig.from_hf(HF_1B) == llama.LLAMA_3_2_1B
    assert llama.LLAMA_3_2_1B.head_dim == 64
    assert llama.LLAMA_3_1_8B.head_dim == 128


def test_config_errors():
    with pytest.raises(ValueError, match="not a multiple of "
                       "num_key_value_heads 5"):
        llama.LlamaConfig(256, 4, 5, 600, 1, 10)
    with pytest.raises(ValueError, match="only 'llama3' is supported"):
        llama.LlamaConfig.from_hf({**HF_1B, "rope_scaling": {
            "rope_type": "yarn", "factor": 4.0}})


def test_rope_frequencies_scale_only_the_long_wavelengths():
    plain = llama.LlamaConfig(256, 4, 2, 600, 1, 10, rope_theta=500000.0)
    half = plain.head_dim // 2
    inv = 500000.0 ** (-np.arange(half) / half)
    np.testing.assert_allclose(llama.rope_frequencies(plain), inv)
    scaled = llama.rope_frequencies(llama.LLAMA_3_2_1B)
    wavelen = 2 * math.pi / inv
    short, long_ = wavelen < 8192 / 4, wavelen > 8192 / 1
    np.testing.assert_allclose(scaled[short], inv[short])
    np.testing.assert_allclose(scaled[long_], inv[long_] / 32)
    mid = ~short & ~long_
    assert np.all((scaled[mid] < inv[mid]) & (scaled[mid] > inv[mid] / 32))
    cos, sin = llama.rope_tables(llama.LLAMA_3_2_1B, 10)
    assert cos.shape == sin.shape == (10, 32) and cos.dtype == np.float32
    np.testing.assert_allclose(cos[3], np.cos(3 * scaled), rtol=1e-6)


def test_safetensors_round_trip_and_format(tmp_path):
    rng = np.random.default_rng(0)
    tensors = {"a.weight": rng.integers(0, 2**16, (3, 5), dtype=np.uint16),
               "b": rng.standard_normal(7).astype(np.float32),
               "c": np.arange(4, dtype=np.int32).reshape(2, 2)}
    path = tmp_path / "m.safetensors"
    llama.write_safetensors(str(path), tensors)
    back = llama.read_safetensors(str(path))
    assert set(back) == set(tensors)
    for k in tensors:
        assert back[k].dtype == tensors[k].dtype
        np.testing.assert_array_equal(back[k], tensors[k])
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    assert header["a.weight"] == {"dtype": "BF16", "shape": [3, 5],
                                  "data_offsets": [0, 30]}
    assert header["b"]["dtype"] == "F32" and header["c"]["dtype"] == "I32"
    begin, end = header["b"]["data_offsets"]
    np.testing.assert_array_equal(
        np.frombuffer(raw[8 + n + begin:8 + n + end], np.float32),
        tensors["b"])


def test_safetensors_errors(tmp_path):
    bad = tmp_path / "short.safetensors"
    bad.write_bytes(b"\x01\x02")
    with pytest.raises(ValueError, match="not a safetensors file"):
        llama.read_safetensors(str(bad))
    odd = tmp_path / "odd.safetensors"
    head = json.dumps({"x": {"dtype": "F8_E4M3", "shape": [1],
                             "data_offsets": [0, 1]}}).encode()
    odd.write_bytes(struct.pack("<Q", len(head)) + head + b"\0")
    with pytest.raises(ValueError, match="tensor x has dtype 'F8_E4M3'"):
        llama.read_safetensors(str(odd))
    cut = tmp_path / "cut.safetensors"
    head = json.dumps({"x": {"dtype": "F32", "shape": [4],
                             "data_offsets": [0, 16]}}).encode()
    cut.write_bytes(struct.pack("<Q", len(head)) + head + b"\0" * 8)
    with pytest.raises(ValueError, match=r"tensor x \(F32 \[4\]\) has bytes "
                       r"0..16 of 8"):
        llama.read_safetensors(str(cut))


def test_checkpoint_layer_through_the_decode_layer(tmp_path):
    cfg = llama.LlamaConfig(256, 4, 2, 600, 2, 50, rope_theta=10000.0)
    path = tmp_path / "model.safetensors"
    llama.random_checkpoint(cfg, str(path), seed=3)
    tensors = llama.read_safetensors(str(path))
    assert tensors["model.embed_tokens.weight"].shape == (50, 256)
    assert tensors["lm_head.weight"].dtype == np.uint16
    weights = llama.layer_arguments(tensors, cfg, layer=1)
    ctx, pos, scale = 40, 21, 0.125
    cos, sin = llama.rope_tables(cfg, ctx)
    rng = np.random.default_rng(4)
    x, x64 = bf16(rng.standard_normal((1, 256)))
    kc, kc64 = bf16(rng.standard_normal((2, ctx, 64)))
    vc, vc64 = bf16(rng.standard_normal((2, ctx, 64)))
    y = np.full((1, 256), 0x7FC0, np.uint16)
    wn1, wq, wk, wv, wo, wn2, wg, wu, wd = weights
    m = ism.Module.parse(decode_layer.layer_module())
    ism.interpret(m, "main", x, wn1, wq, wk, wv, wo, wn2, wg, wu, wd, cos,
                  sin, np.array([pos], np.int32), kc, vc, y,
                  np.float32(cfg.rms_norm_eps), np.float32(scale))
    w64 = [as_float(w) for w in weights]
    ref, _, _ = reference(x64, *w64, cos, sin, pos, kc64, vc64, scale)
    np.testing.assert_allclose(as_float(y)[0], ref, rtol=3e-2,
                               atol=3e-2 * np.abs(ref).max())


def test_layer_arguments_errors(tmp_path):
    cfg = llama.LlamaConfig(256, 4, 2, 600, 1, 10)
    path = tmp_path / "m.safetensors"
    llama.random_checkpoint(cfg, str(path))
    tensors = llama.read_safetensors(str(path))
    with pytest.raises(KeyError, match="model.layers.1.input_layernorm"):
        llama.layer_arguments(tensors, cfg, layer=1)
    wrong = llama.LlamaConfig(256, 4, 1, 600, 1, 10)
    with pytest.raises(ValueError, match=r"k_proj.weight is \[128, 256\]; "
                       r"this configuration needs \[64, 256\]"):
        llama.layer_arguments(tensors, wrong, layer=0)
