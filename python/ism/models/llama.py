"""Llama-family decoder models for ism's decode steps: their configuration,
their weights in a Hugging Face safetensors checkpoint, and RoPE tables.

Weights are NumPy arrays; bf16 tensors are their bit patterns as uint16, the
form ``ism.run``/``ism.interpret`` take for bf16 buffers. A whole decode
step's module text comes from ``ism.models.decode_modules``;
``layer_arguments`` gives a checkpoint layer's weights in its argument
order, and ``DecodeModel`` runs it on torch CUDA tensors (greedy decoding,
one launch a step or a CUDA graph).

    cfg = llama.LLAMA_3_2_1B
    tensors = llama.read_safetensors("model.safetensors")
    wn_attn, wq, wk, wv, wo, wn_mlp, wg, wu, wd = llama.layer_arguments(
        tensors, cfg, layer=0)
    cos, sin = llama.rope_tables(cfg, max_ctx=4096)

    config, tensors = llama.read_checkpoint("path/to/Llama-3.2-1B")
    model = llama.DecodeModel(config, tensors, max_ctx=2048)
    tokens = model.generate([128000, 791], 32, graph=True)
"""

import json
import math
import os
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
        x = rng.standard_normal(shape, dtype=np.float32)
        x *= np.float32(scale)
        x += np.float32(offset)
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


def read_checkpoint(path: str) -> Tuple[LlamaConfig, Dict[str, np.ndarray]]:
    """A Hugging Face checkpoint directory: its config.json and its weights
    (model.safetensors, or the shards model.safetensors.index.json names)."""
    config_path = os.path.join(path, "config.json")
    if not os.path.isfile(config_path):
        raise FileNotFoundError(f"{path}: no config.json (a Hugging Face "
                                f"checkpoint directory has config.json and "
                                f"model.safetensors)")
    with open(config_path) as f:
        config = LlamaConfig.from_hf(json.load(f))
    single = os.path.join(path, "model.safetensors")
    index = os.path.join(path, "model.safetensors.index.json")
    if os.path.isfile(single):
        return config, read_safetensors(single)
    if not os.path.isfile(index):
        raise FileNotFoundError(f"{path}: neither model.safetensors nor "
                                f"model.safetensors.index.json")
    with open(index) as f:
        shards = sorted(set(json.load(f)["weight_map"].values()))
    tensors: Dict[str, np.ndarray] = {}
    for shard in shards:
        tensors.update(read_safetensors(os.path.join(path, shard)))
    return config, tensors


def write_checkpoint(path: str, config: LlamaConfig, seed: int = 0) -> None:
    """A random checkpoint directory for `config` (config.json and
    model.safetensors, random_checkpoint's weights): for tests and
    benchmarks."""
    os.makedirs(path, exist_ok=True)
    hf = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
          "hidden_size": config.hidden_size,
          "num_attention_heads": config.num_attention_heads,
          "num_key_value_heads": config.num_key_value_heads,
          "intermediate_size": config.intermediate_size,
          "num_hidden_layers": config.num_hidden_layers,
          "vocab_size": config.vocab_size,
          "rms_norm_eps": config.rms_norm_eps,
          "rope_theta": config.rope_theta, "torch_dtype": "bfloat16",
          "tie_word_embeddings": False,
          "rope_scaling": ({**config.rope_scaling, "rope_type": "llama3"}
                           if config.rope_scaling else None)}
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(hf, f, indent=2)
    random_checkpoint(config, os.path.join(path, "model.safetensors"), seed)


# What the step's kernels cover (bench/decode_step.py, examples/decode_*).
_MAX_HIDDEN, _MAX_FFN, _MAX_VOCAB = 2048, 8192, 64 * 64 * 64


def check_decode_config(config: LlamaConfig, max_ctx: int) -> None:
    """Raises ValueError naming what the decode step's kernels cannot do
    for `config`: head_dim 64, hidden_size <= 2048, intermediate_size <=
    8192, a vocabulary of a multiple of 64 up to 262144."""
    problems = []
    if config.head_dim != 64:
        problems.append(f"head_dim {config.head_dim} (the attention kernel "
                        f"takes 64)")
    if config.hidden_size > _MAX_HIDDEN:
        problems.append(f"hidden_size {config.hidden_size} (at most "
                        f"{_MAX_HIDDEN})")
    if config.intermediate_size > _MAX_FFN:
        problems.append(f"intermediate_size {config.intermediate_size} (at "
                        f"most {_MAX_FFN})")
    if config.vocab_size % 64 or config.vocab_size > _MAX_VOCAB:
        problems.append(f"vocab_size {config.vocab_size} (a multiple of 64, "
                        f"at most {_MAX_VOCAB})")
    if max_ctx < 1:
        problems.append(f"max_ctx {max_ctx} (at least 1)")
    if problems:
        raise ValueError("the ism decode step cannot run this model: " +
                         "; ".join(problems))


class DecodeModel:
    """Greedy decoding of a Llama model at batch 1 on a GPU: one compiled
    step (``decode_modules.step_module(layers, sample=True)``: the token's
    embedding, every layer, the final norm, the LM head and the argmax, in
    one ordered ``ism.coschedule``) run on torch CUDA tensors.

    The token and the position live on the GPU: a step reads the token,
    appends its K and V to the caches at the position, and writes the next
    token into the same buffer; the position is advanced by a torch op. A
    step therefore needs no host round trip, and one captured in a CUDA
    graph serves every position (``generate(..., graph=True)``).

    ``coschedule``: "fused" runs the step as one persistent kernel,
    "sequential" one launch per operation (programmatic dependent launch).

        model = llama.DecodeModel.from_checkpoint("Llama-3.2-1B",
                                                  max_ctx=2048)
        tokens = model.generate([128000, 791], 32)
    """

    def __init__(self, config: LlamaConfig, tensors: Dict[str, np.ndarray],
                 *, max_ctx: int = 2048, coschedule: str = "fused",
                 device: Optional[int] = None):
        check_decode_config(config, max_ctx)
        try:
            import torch
        except ImportError:
            raise ImportError("ism.models.llama.DecodeModel runs on torch "
                              "CUDA tensors: install PyTorch") from None
        from .. import compile as ism_compile
        from . import decode_modules
        self.config, self.max_ctx = config, max_ctx
        self._torch = torch
        if device is None:
            device = torch.cuda.current_device()
        self.device = torch.device("cuda", device)

        def put(a: np.ndarray):
            a = np.ascontiguousarray(a)
            if a.dtype != np.uint16:
                raise ValueError(f"weights must be bf16 (uint16 bits), got "
                                 f"{a.dtype}")
            return torch.from_numpy(a.view(np.int16)).to(
                self.device).view(torch.bfloat16)

        def get(name: str):
            if name not in tensors:
                raise KeyError(f"the checkpoint has no {name}")
            return tensors[name]
        h, v = config.hidden_size, config.vocab_size
        embed = get("model.embed_tokens.weight")
        # Tied embeddings (Llama-3.2-1B): no lm_head.weight.
        lm_head = tensors.get("lm_head.weight", embed)
        for name, t in (("model.embed_tokens.weight", embed),
                        ("lm_head.weight", lm_head),
                        ("model.norm.weight", get("model.norm.weight"))):
            want = (h,) if name == "model.norm.weight" else (v, h)
            if tuple(t.shape) != want:
                raise ValueError(f"{name} is {list(t.shape)}; this "
                                 f"configuration needs {list(want)}")
        self.embed = put(embed)
        # (tied: the same tensor on the GPU, not a second copy)
        self.lm_head = self.embed if lm_head is embed else put(lm_head)
        self.norm = put(get("model.norm.weight"))
        kv = config.num_key_value_heads
        self.layers = []
        for layer in range(config.num_hidden_layers):
            ws = [put(t) for t in layer_arguments(tensors, config, layer)]
            caches = [torch.zeros(kv, max_ctx, 64, dtype=torch.bfloat16,
                                  device=self.device) for _ in range(2)]
            self.layers.append(ws + caches)
        cos, sin = rope_tables(config, max_ctx)
        self.cos = torch.from_numpy(cos).to(self.device)
        self.sin = torch.from_numpy(sin).to(self.device)
        self.pos = torch.zeros(1, dtype=torch.int32, device=self.device)
        self.token = torch.zeros(1, dtype=torch.int32, device=self.device)
        self.logits = torch.empty(v // 64, 64, dtype=torch.bfloat16,
                                  device=self.device)
        self.program = ism_compile(
            decode_modules.step_module(config.num_hidden_layers,
                                       sample=True),
            coschedule=coschedule, device=self.device.index)
        self._args = ([self.embed, self.token] +
                      [t for ws in self.layers for t in ws] +
                      [self.cos, self.sin, self.pos, self.norm,
                       self.lm_head, self.logits, config.rms_norm_eps,
                       config.head_dim ** -0.5])
        self._position = 0
        self._graph = None

    @classmethod
    def from_checkpoint(cls, path: str, **options) -> "DecodeModel":
        """The model of a Hugging Face checkpoint directory
        (read_checkpoint); `options` as the constructor's."""
        config, tensors = read_checkpoint(path)
        return cls(config, tensors, **options)

    @property
    def position(self) -> int:
        """The position the next step's token takes (tokens so far)."""
        return self._position

    def reset(self) -> None:
        """Starts a new sequence at position 0 (the caches' rows past the
        position are never read)."""
        self.pos.zero_()
        self._position = 0

    def _run(self) -> None:
        if self._position >= self.max_ctx:
            raise ValueError(f"the sequence is full: max_ctx {self.max_ctx} "
                             f"tokens")
        if self._graph is not None:
            self._graph.replay()
        else:
            self.program(*self._args)
            self.pos.add_(1)
        self._position += 1

    def step(self, token: Optional[int] = None):
        """Runs one step on `token` (None: the token the previous step
        sampled) and returns its logits (a new float32 tensor of
        vocab_size); the next token is then in ``self.token``."""
        if token is not None:
            self.token.fill_(int(token))
        self._run()
        return self.logits.view(-1).float()

    def capture(self) -> None:
        """Captures one step (and the position's advance) in a CUDA graph:
        later steps replay it."""
        torch = self._torch
        if self._graph is not None:
            return
        # Load the kernels outside the capture, on a side stream (as
        # torch.cuda.graph wants). The warm-up step writes only the token
        # (put back) and the caches' row at the position, which the step
        # at that position writes again before reading it.
        token = self.token.clone()
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            self.program(*self._args)
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        # Captured on the stream of the warm-up, which holds the step's
        # temporaries and the fused kernel's counters (made on a stream's
        # first call, which a capture cannot do).
        with torch.cuda.graph(graph, stream=side):
            self.program(*self._args)
            self.pos.add_(1)
        self.token.copy_(token)
        self._graph = graph

    def generate(self, prompt, n: int, *, graph: bool = False,
                 logits: Optional[list] = None):
        """Greedy decoding: runs the prompt's tokens from the current
        position, then `n` - 1 steps more on the tokens sampled; returns
        the `n` tokens sampled (the first from the prompt's last step).
        With `graph`, the steps replay a CUDA graph; `logits`, a list,
        receives each step's logits (float32, vocab_size) in order."""
        torch = self._torch
        prompt = [int(t) for t in prompt]
        if not prompt:
            raise ValueError("generate needs a prompt of at least one token")
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n}")
        bad = [t for t in prompt if not 0 <= t < self.config.vocab_size]
        if bad:
            raise ValueError(f"token {bad[0]} is outside the vocabulary "
                             f"(0 .. {self.config.vocab_size - 1})")
        steps = len(prompt) + n - 1
        if self._position + steps > self.max_ctx:
            raise ValueError(f"{steps} steps from position {self._position} "
                             f"pass max_ctx {self.max_ctx}")
        if graph:
            self.capture()
        out = torch.empty(n, dtype=torch.int32, device=self.device)
        for i in range(steps):
            if i < len(prompt):
                self.token.fill_(prompt[i])
            self._run()
            if logits is not None:
                logits.append(self.logits.view(-1).float())
            if i >= len(prompt) - 1:
                out[i - len(prompt) + 1].copy_(self.token[0])
        return out.tolist()
