"""Llama-family decoder models for ism's decode steps: their configuration,
their weights in a Hugging Face safetensors checkpoint, and RoPE tables.

Weights are NumPy arrays; bf16 tensors are their bit patterns as uint16, the
form ``ism.run``/``ism.interpret`` take for bf16 buffers. The layer's
decode step itself (one ordered region of ten launches) is built by
``bench/decode_layer.py`` from the examples' kernels; ``layer_arguments``
gives a checkpoint layer's weights in that module's argument order.

    cfg = llama.LLAMA_3_2_1B
    tensors = llama.read_safetensors("model.safetensors")
    wn_attn, wq, wk, wv, wo, wn_mlp, wg, wu, wd = llama.layer_arguments(
        tensors, cfg, layer=0)
    cos, sin = llama.rope_tables(cfg, max_ctx=4096)
"""

import json
import math
import struct
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

import numpy as np


@dataclass(frozen=True)
class LlamaConfig:
    """The shapes of a Llama-family decoder (the fields of its Hugging Face
    config.json that a decode step needs)."""
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    intermediate_size: int
    num_hidden_layers: int
    vocab_size: int
    rms_norm_eps: float = 1e-5
    rope_theta: float = 500000.0
    # Llama 3's "llama3" frequency scaling ({} for none): factor,
    # low_freq_factor, high_freq_factor, original_max_position_embeddings.
    rope_scaling: Dict[str, float] = field(default_factory=dict)

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    def __post_init__(self):
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size {self.hidden_size} is not a multiple of "
                f"num_attention_heads {self.num_attention_heads}")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(
                f"num_attention_heads {self.num_attention_heads} is not a "
                f"multiple of num_key_value_heads {self.num_key_value_heads}")

    @staticmethod
    def from_hf(config: dict) -> "LlamaConfig":
        """From a Hugging Face config.json's dict."""
        scaling = config.get("rope_scaling") or {}
        if scaling and scaling.get("rope_type", scaling.get("type")) != "llama3":
            raise ValueError(f"rope_scaling {scaling}: only 'llama3' is "
                             f"supported")
        keep = ("factor", "low_freq_factor", "high_freq_factor",
                "original_max_position_embeddings")
        return LlamaConfig(
            hidden_size=config["hidden_size"],
            num_attention_heads=config["num_attention_heads"],
            num_key_value_heads=config.get("num_key_value_heads",
                                           config["num_attention_heads"]),
            intermediate_size=config["intermediate_size"],
            num_hidden_layers=config["num_hidden_layers"],
            vocab_size=config["vocab_size"],
            rms_norm_eps=config.get("rms_norm_eps", 1e-5),
            rope_theta=config.get("rope_theta", 10000.0),
            rope_scaling={k: float(scaling[k]) for k in keep if k in scaling})


_LLAMA3_SCALING = {"factor": 32.0, "low_freq_factor": 1.0,
                   "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192.0}
LLAMA_3_2_1B = LlamaConfig(2048, 32, 8, 8192, 16, 128256, 1e-5, 500000.0,
                           _LLAMA3_SCALING)
LLAMA_3_1_8B = LlamaConfig(4096, 32, 8, 14336, 32, 128256, 1e-5, 500000.0,
                           {**_LLAMA3_SCALING, "factor": 8.0})


def rope_frequencies(config: LlamaConfig) -> np.ndarray:
    """The head_dim / 2 inverse frequencies, with Llama 3's scaling when the
    configuration has it (as transformers' _compute_llama3_parameters)."""
    half = config.head_dim // 2
    inv = config.rope_theta ** (-np.arange(half, dtype=np.float64) / half)
    s = config.rope_scaling
    if not s:
        return inv
    low = s["original_max_position_embeddings"] / s["low_freq_factor"]
    high = s["original_max_position_embeddings"] / s["high_freq_factor"]
    wavelen = 2 * math.pi / inv
    smooth = (s["original_max_position_embeddings"] / wavelen -
              s["low_freq_factor"]) / (s["high_freq_factor"] -
                                       s["low_freq_factor"])
    scaled = np.where(wavelen > low, inv / s["factor"], inv)
    mid = (wavelen <= low) & (wavelen >= high)
    return np.where(mid, (1 - smooth) * inv / s["factor"] + smooth * inv,
                    scaled)


def rope_tables(config: LlamaConfig, max_ctx: int) -> Tuple[np.ndarray,
                                                              np.ndarray]:
    """cos and sin, max_ctx x head_dim / 2 float32: the tables
    examples/decode_rope_append.mlir rotates by (rotate-half form)."""
    angles = np.arange(max_ctx)[:, None] * rope_frequencies(config)[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


# safetensors: an 8-byte little-endian header length, a JSON header
# {name: {dtype, shape, data_offsets: [begin, end]}} (offsets into the data
# after it; an optional "__metadata__"), then the data.
_DTYPES = {"BF16": np.uint16, "F16": np.float16, "F32": np.float32,
           "F64": np.float64, "I32": np.int32, "I64": np.int64,
           "U8": np.uint8, "I8": np.int8}


def read_safetensors(path: str) -> Dict[str, np.ndarray]:
    """Every tensor of a safetensors file (BF16 ones as uint16 bits), as
    writable arrays over one buffer."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: not a safetensors file (shorter than "
                             f"its 8-byte header length)")
        (n,) = struct.unpack("<Q", raw)
        header = f.read(n)
        if len(header) != n:
            raise ValueError(f"{path}: the header is {n} bytes but the file "
                             f"ends after {len(header)}")
        try:
            meta = json.loads(header)
        except ValueError as e:
            raise ValueError(f"{path}: the header is not JSON ({e})") from None
        # Writable (the arrays can be run on in place), one buffer for all.
        data = bytearray(f.read())
    tensors = {}
    for name, info in meta.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info.get("dtype"))
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has dtype "
                             f"{info.get('dtype')!r}, not one of "
                             f"{', '.join(_DTYPES)}")
        begin, end = info["data_offsets"]
        shape = tuple(info["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        if end - begin != count * np.dtype(dtype).itemsize or end > len(data):
            raise ValueError(f"{path}: tensor {name} ({info['dtype']} "
                             f"{list(shape)}) has bytes {begin}..{end} of "
                             f"{len(data)}")
        tensors[name] = np.frombuffer(data, dtype, count, begin).reshape(shape)
    return tensors


def write_safetensors(path: str, tensors: Dict[str, np.ndarray],
                      bf16: Optional[set] = None) -> None:
    """Writes `tensors` as a safetensors file; uint16 arrays (and the names
    in `bf16`, when given) are written as BF16."""
    names = {v: k for k, v in _DTYPES.items() if k != "BF16"}
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        if array.dtype == np.uint16 and (bf16 is None or name in bf16):
            dtype = "BF16"
        elif array.dtype.type in names:
            dtype = names[array.dtype.type]
        else:
            raise ValueError(f"tensor {name}: dtype {array.dtype} has no "
                             f"safetensors name")
        blob = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def layer_names(layer: int) -> Tuple[str, ...]:
    """A layer's weights in the Hugging Face layout, in the decode layer
    module's argument order: attention norm, q, k, v, o, MLP norm, gate,
    up, down."""
    p = f"model.layers.{layer}."
    return (p + "input_layernorm.weight", p + "self_attn.q_proj.weight",
            p + "self_attn.k_proj.weight", p + "self_attn.v_proj.weight",
            p + "self_attn.o_proj.weight",
            p + "post_attention_layernorm.weight", p + "mlp.gate_proj.weight",
            p + "mlp.up_proj.weight", p + "mlp.down_proj.weight")


def layer_shapes(config: LlamaConfig) -> Tuple[Tuple[int, ...], ...]:
    """The shapes of a layer's weights, in layer_names' order."""
    h, f = config.hidden_size, config.intermediate_size
    kv = config.num_key_value_heads * config.head_dim
    return ((h,), (h, h), (kv, h), (kv, h), (h, h), (h,), (f, h), (f, h),
            (h, f))


def layer_arguments(tensors: Dict[str, np.ndarray], config: LlamaConfig,
                    layer: int) -> Tuple[np.ndarray, ...]:
    """Layer `layer`'s weights from a checkpoint's tensors, checked against
    `config`, in the decode layer module's argument order."""
    out = []
    for name, shape in zip(layer_names(layer), layer_shapes(config)):
        if name not in tensors:
            raise KeyError(f"the checkpoint has no {name}")
        t = tensors[name]
        if tuple(t.shape) != shape:
            raise ValueError(f"{name} is {list(t.shape)}; this configuration "
                             f"needs {list(shape)}")
        out.append(t)
    return tuple(out)


def random_checkpoint(config: LlamaConfig, path: str, seed: int = 0) -> None:
    """Writes random bf16 weights for `config` in the Hugging Face layout
    (embedding, every layer, final norm, LM head): for tests and
    benchmarks. Projections are N(0, 1 / fan_in), norms near 1."""
    rng = np.random.default_rng(seed)

    def bf16(shape, scale, offset=0.0):
        x = (offset + scale * rng.standard_normal(shape)).astype(np.float32)
        bits = x.view(np.uint32)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    h, v = config.hidden_size, config.vocab_size
    tensors = {"model.embed_tokens.weight": bf16((v, h), 1.0)}
    for layer in range(config.num_hidden_layers):
        for name, shape in zip(layer_names(layer), layer_shapes(config)):
            tensors[name] = (bf16(shape, 0.1, 1.0) if len(shape) == 1 else
                             bf16(shape, shape[1] ** -0.5))
    tensors["model.norm.weight"] = bf16((h,), 0.1, 1.0)
    tensors["lm_head.weight"] = bf16((v, h), h ** -0.5)
    write_safetensors(path, tensors)
