"""bench/gemm.py's reading of the GEMM issue's targets (no GPU): which
shapes count for which target, and when the targets are met or missed."""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import gemm  # noqa: E402


def row(shape, ism, torch, triton, dtype="bf16"):
    return dict(dtype=dtype, shape=shape, ism=ism, torch=torch, triton=triton,
                triton_tma=triton, config="c", tuning_s=0.1, timed=3,
                pruned=0, warm_hit=True, lookup_ms=1.0, rel_err=0.0)


def large(xc, xt):
    """One row per large shape, with these ratios to cuBLAS and Triton."""
    shapes = [s for s in gemm.ISSUE_SHAPES
              if gemm.shape_group("x".join(map(str, s))) == "large"]
    assert len(shapes) == len(xc) == len(xt)
    return [row("x".join(map(str, s)), 100.0, 100.0 / c, 100.0 / t)
            for s, c, t in zip(shapes, xc, xt)]


def test_issue_shapes_and_groups():
    groups = {}
    for s in gemm.ISSUE_SHAPES:
        groups.setdefault(gemm.shape_group("x".join(map(str, s))), []).append(s)
    # squares 2048-8192 (4) and the LLM shapes (8, 4096^3 among them once)
    assert len(groups["large"]) == 11
    assert sorted(groups["skinny"]) == sorted(gemm.SKINNY)
    assert sorted(groups[None]) == [(1024, 1024, 1024), (8192, 1024, 8192)]
    assert len(set(gemm.ISSUE_SHAPES)) == len(gemm.ISSUE_SHAPES) == 21


def test_targets_met():
    rows = large([1.0] * 5 + [0.96, 1.02, 1.05, 0.99, 1.01, 1.03],
                 [1.2] * 6 + [1.0] * 5)
    rows += [row(f"{m}x{n}x{k}", 90.0, 100.0, 50.0)
             for m, n, k in gemm.SKINNY]
    lines, ok = gemm.targets(rows)
    assert ok, lines
    assert "x Triton median 1.20" in lines[0] and "below 1.1 on" in lines[0]
    assert lines[1].endswith("met")


def test_targets_missed_by_one_shape_below_the_floor():
    lines, ok = gemm.targets(large([1.05] * 10 + [0.94], [1.2] * 11))
    assert not ok and "lowest 0.94" in lines[0] and lines[0].endswith("MISSED")


def test_targets_missed_by_the_triton_median():
    lines, ok = gemm.targets(large([1.0] * 11, [1.2] * 5 + [1.05] * 6))
    assert not ok and "x Triton median 1.05" in lines[0]


def test_targets_missed_by_one_skinny_shape():
    rows = [row(f"{m}x{n}x{k}", 95.0, 100.0, 50.0) for m, n, k in gemm.SKINNY]
    rows[3]["ism"] = 89.0
    lines, ok = gemm.targets(rows)
    assert not ok and "lowest 0.89" in lines[0]


def test_targets_per_data_type():
    rows = large([1.0] * 11, [1.2] * 11)
    rows += [dict(r, dtype="f16", ism=90.0) for r in large([1.0] * 11,
                                                          [1.2] * 11)]
    lines, ok = gemm.targets(rows)
    assert not ok
    assert lines[0].startswith("bf16") and lines[0].endswith("met")
    assert lines[1].startswith("f16") and lines[1].endswith("MISSED")
