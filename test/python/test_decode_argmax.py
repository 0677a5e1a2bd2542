"""examples/decode_argmax.mlir (greedy sampling: the first index of the
largest logit, reduced on the GPU in two ordered launches) in the reference
interpreter against numpy.argmax: vocabularies of one row, one block,
Llama 3's 128256 and sizes between blocks; ties within a block and across
blocks (the smaller index wins, as numpy's and torch's argmax); all logits
negative (the padding past the end never wins); and wrong shapes as
one-line errors."""

import os

import numpy as np
import pytest

import ism
from test_grouped_gemm import bf16

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "decode_argmax.mlir")


def argmax(m, bits):
    """The token the example picks for bf16 logits `bits` (V/64 x 64)."""
    blocks = -(-bits.shape[0] // 64)
    pm = np.full(blocks, np.nan, np.float32)
    pi = np.full(blocks, -7, np.int32)
    token = np.full(1, -7, np.int32)
    ism.interpret(m, "main", bits, pm, pi, token)
    return int(token[0])


@pytest.mark.parametrize("rows", [1, 64, 65, 2004, 128256 // 64])
def test_matches_numpy(rows):
    rng = np.random.default_rng(rows)
    m = ism.Module.parse_file(EXAMPLE)
    bits, values = bf16(rng.standard_normal((rows, 64)) * 3)
    assert argmax(m, bits) == int(np.argmax(values))


def test_ties_go_to_the_first_index():
    rng = np.random.default_rng(7)
    m = ism.Module.parse_file(EXAMPLE)
    bits, values = bf16(rng.standard_normal((2004, 64)))
    top = np.float64(values.max()) + 1
    flat = values.reshape(-1)
    # the same largest value in three blocks, and twice in one
    for at in (100_000, 9000, 9001, 70_000):
        flat[at] = top
    bits, values = bf16(values)
    assert argmax(m, bits) == 9000 == int(np.argmax(values))
    # equal everywhere: the first
    bits, _ = bf16(np.full((130, 64), 0.5))
    assert argmax(m, bits) == 0


def test_negative_logits_and_the_last_index():
    rng = np.random.default_rng(3)
    m = ism.Module.parse_file(EXAMPLE)
    values = -np.abs(rng.standard_normal((70, 64))) - 1
    values[-1, -1] = -0.5
    bits, values = bf16(values)
    assert argmax(m, bits) == 70 * 64 - 1 == int(np.argmax(values))


def test_wrong_shapes_are_one_line_errors():
    m = ism.Module.parse_file(EXAMPLE)
    bits = np.zeros((200, 64), np.uint16)
    one = np.zeros(1, np.int32)
    with pytest.raises(ism.RunError, match="logits are 200x64, pm has 3 and "
                       "pi 4 entries, token 1: the logits must be V/64 x 64"):
        ism.interpret(m, "main", bits, np.zeros(3, np.float32),
                      np.zeros(4, np.int32), one)
    with pytest.raises(ism.RunError, match="logits are 4097x64"):
        ism.interpret(m, "main", np.zeros((4097, 64), np.uint16),
                      np.zeros(65, np.float32), np.zeros(65, np.int32), one)
    with pytest.raises(ism.RunError, match="logits are 100x32"):
        ism.interpret(m, "main", np.zeros((100, 32), np.uint16),
                      np.zeros(2, np.float32), np.zeros(2, np.int32), one)
