"""bench/plot_decode.py draws the decode benchmarks' committed results
(docs/figures/decode/*.json) into a PNG, and a wrong call says how to call
it."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

pytest.importorskip("matplotlib")

SCRIPT = os.path.join(ROOT, "bench", "plot_decode.py")
FIGURES = os.path.join(ROOT, "docs", "figures", "decode")


def test_plots_the_committed_results(tmp_path):
    out = tmp_path / "decode.png"
    r = subprocess.run([sys.executable, SCRIPT,
                        os.path.join(FIGURES, "decode_mlp.json"),
                        os.path.join(FIGURES, "decode_layer.json"), str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_wrong_arguments_print_the_usage():
    r = subprocess.run([sys.executable, SCRIPT, "one.json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert "plot_decode.py DECODE_MLP.json DECODE_LAYER.json OUT.png" in r.stderr
