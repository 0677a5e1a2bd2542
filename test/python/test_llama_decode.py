"""ism.models.llama's decode model: checkpoint directories (config.json and
model.safetensors, or shards), the configurations the step's kernels take,
the step's kernels shipped in the package, and on a GPU (skipped without
torch or one) greedy generation with DecodeModel, fused and one launch an
operation, with and without a CUDA graph, checked teacher-forced against
PyTorch models of the same weights (bench/decode_generate.py)."""

import filecmp
import json
import os
import sys

import numpy as np
import pytest

from conftest import ROOT
from ism.models import decode_modules, llama

SMALL = llama.LlamaConfig(256, 4, 2, 600, 2, 1024)


def test_checkpoint_directory_round_trip(tmp_path):
    llama.write_checkpoint(str(tmp_path), SMALL, seed=2)
    config, tensors = llama.read_checkpoint(str(tmp_path))
    assert config == SMALL
    assert tensors["model.embed_tokens.weight"].shape == (1024, 256)
    assert tensors["model.layers.1.mlp.down_proj.weight"].shape == (256, 600)
    # Norms near 1, projections N(0, 1 / fan_in): not zeros.
    wq = tensors["model.layers.0.self_attn.q_proj.weight"]
    f = (wq.astype(np.uint32) << 16).view(np.float32)
    assert 0.8 < f.std() * 256 ** 0.5 < 1.2


def test_sharded_checkpoint(tmp_path):
    llama.write_checkpoint(str(tmp_path), SMALL, seed=2)
    _, whole = llama.read_checkpoint(str(tmp_path))
    names = sorted(whole)
    halves = {"model-00001-of-00002.safetensors": names[:7],
              "model-00002-of-00002.safetensors": names[7:]}
    for shard, part in halves.items():
        llama.write_safetensors(str(tmp_path / shard),
                                {n: whole[n] for n in part})
    with open(tmp_path / "model.safetensors.index.json", "w") as f:
        json.dump({"weight_map": {n: s for s, part in halves.items()
                                  for n in part}}, f)
    os.remove(tmp_path / "model.safetensors")
    _, sharded = llama.read_checkpoint(str(tmp_path))
    assert sorted(sharded) == names
    for n in names:
        np.testing.assert_array_equal(sharded[n], whole[n])


def test_checkpoint_directory_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no config.json"):
        llama.read_checkpoint(str(tmp_path))
    llama.write_checkpoint(str(tmp_path), SMALL)
    os.remove(tmp_path / "model.safetensors")
    with pytest.raises(FileNotFoundError, match="neither model.safetensors "
                       "nor model.safetensors.index.json"):
        llama.read_checkpoint(str(tmp_path))


def test_configurations_the_step_cannot_run():
    llama.check_decode_config(llama.LLAMA_3_2_1B, 8192)
    llama.check_decode_config(SMALL, 1)
    with pytest.raises(ValueError, match=r"head_dim 128 \(the attention "
                       r"kernel takes 64\); hidden_size 4096 \(at most 2048\)"
                       r"; intermediate_size 14336 \(at most 8192\)"):
        llama.check_decode_config(llama.LLAMA_3_1_8B, 2048)
    with pytest.raises(ValueError, match="vocab_size 1000 "):
        llama.check_decode_config(llama.LlamaConfig(256, 4, 2, 600, 2, 1000),
                                  64)
    with pytest.raises(ValueError, match="max_ctx 0"):
        llama.check_decode_config(SMALL, 0)
    # Before it needs torch or a GPU.
    with pytest.raises(ValueError, match="cannot run this model"):
        llama.DecodeModel(llama.LLAMA_3_1_8B, {})


def test_from_checkpoint_checks_the_configuration_first(tmp_path):
    big = llama.LlamaConfig(4096, 32, 8, 600, 1, 1024)
    llama.write_checkpoint(str(tmp_path), big)
    with pytest.raises(ValueError, match=r"hidden_size 4096 \(at most 2048\)"):
        llama.DecodeModel.from_checkpoint(str(tmp_path), max_ctx=16)


def test_package_carries_the_examples_kernels():
    d = decode_modules.KERNEL_DIRS[0]
    names = ("decode_rope_append.mlir", "decode_gqa_attention.mlir",
             "decode_mlp.mlir", "decode_argmax.mlir")
    for name in names:
        assert decode_modules.kernel_file(name) == os.path.join(d, name)
        assert filecmp.cmp(os.path.join(d, name),
                           os.path.join(ROOT, "examples", name),
                           shallow=False), name
    with pytest.raises(FileNotFoundError, match="decode kernel file "
                       "nothing.mlir is in none of"):
        decode_modules.kernel_file("nothing.mlir")


def test_step_module_is_the_bench_step():
    """bench/decode_step.py times the package's module."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import decode_step
    assert decode_step.step_module is not None
    assert (decode_step.step_module(2, sample=True) ==
            decode_modules.step_module(2, sample=True))


# ---- on a GPU ------------------------------------------------------------

def _torch_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    return torch


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    path = tmp_path_factory.mktemp("ckpt")
    llama.write_checkpoint(str(path), SMALL, seed=5)
    return llama.read_checkpoint(str(path))


@pytest.mark.parametrize("coschedule", ["fused", "sequential"])
def test_greedy_generation_matches_pytorch(checkpoint, coschedule):
    torch = _torch_gpu()
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import decode_generate
    config, tensors = checkpoint
    prompt, n, max_ctx = [3, 900, 41], 40, 64
    model = llama.DecodeModel(config, tensors, max_ctx=max_ctx,
                              coschedule=coschedule)
    logits = []
    tokens = model.generate(prompt, n, logits=logits)
    assert len(tokens) == n and len(logits) == len(prompt) + n - 1
    assert model.position == len(prompt) + n - 1
    figures, failures = decode_generate.compare(
        torch, config, tensors, max_ctx, prompt, tokens, logits)
    assert not failures, failures
    assert figures["exact"] + figures["near_ties"] == n
    assert figures["exact"] >= n - 4
    # The same tokens again from position 0, and from a CUDA graph.
    model.reset()
    assert model.generate(prompt, n) == tokens
    model.reset()
    assert model.generate(prompt, n, graph=True) == tokens
    # A step's logits are the last generate's next step's.
    model.reset()
    model.generate(prompt[:2], 1)
    np.testing.assert_array_equal(model.step(prompt[2]).cpu().numpy(),
                                  logits[2].cpu().numpy())


def test_tied_embeddings(checkpoint):
    """Without lm_head.weight (Llama-3.2-1B's checkpoints) the LM head is
    the embedding table, one tensor on the GPU."""
    torch = _torch_gpu()
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import decode_generate
    config, tensors = checkpoint
    tied = {k: v for k, v in tensors.items() if k != "lm_head.weight"}
    prompt, n, max_ctx = [7, 8], 12, 32
    model = llama.DecodeModel(config, tied, max_ctx=max_ctx)
    assert model.lm_head is model.embed
    logits = []
    tokens = model.generate(prompt, n, logits=logits)
    _, failures = decode_generate.compare(torch, config, tied, max_ctx,
                                          prompt, tokens, logits)
    assert not failures, failures


def test_generate_errors(checkpoint):
    _torch_gpu()
    config, tensors = checkpoint
    model = llama.DecodeModel(config, tensors, max_ctx=8)
    with pytest.raises(ValueError, match="a prompt of at least one token"):
        model.generate([], 4)
    with pytest.raises(ValueError, match=r"token 1024 is outside the "
                       r"vocabulary \(0 .. 1023\)"):
        model.generate([1, 1024], 4)
    with pytest.raises(ValueError, match="10 steps from position 0 pass "
                       "max_ctx 8"):
        model.generate([1, 2, 3], 8)
    with pytest.raises(ValueError, match="n must be at least 1"):
        model.generate([1], 0)
    bad = dict(tensors)
    bad["model.norm.weight"] = bad["model.norm.weight"][:100]
    with pytest.raises(ValueError, match=r"model.norm.weight is \[100\]"):
        llama.DecodeModel(config, bad, max_ctx=8)


def test_api_reference_covers_the_models():
    """scripts/gen-python-api.py documents ism.models' public names."""
    import subprocess
    import ism
    env = dict(os.environ, PYTHONPATH=os.path.dirname(
        os.path.dirname(ism.__file__)))
    p = subprocess.run([sys.executable, os.path.join(
        ROOT, "scripts", "gen-python-api.py")], capture_output=True,
        text=True, env=env)
    assert p.returncode == 0, p.stderr
    for name in ("## `ism.models.llama`",
                 "### `ism.models.llama.DecodeModel`",
                 "#### `DecodeModel.generate`",
                 "### `ism.models.llama.read_checkpoint`",
                 "### `ism.models.decode_modules.step_module`"):
        assert name in p.stdout, name
