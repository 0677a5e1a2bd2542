"""docs/figures holds what the docs show: every file there is referenced by a
page (docs/**/*.md or README.md), and every figure a page references exists
(scripts/check-doc-figures.py, which scripts/docs.sh also runs)."""

import importlib.util
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def checker():
    spec = importlib.util.spec_from_file_location(
        "check_doc_figures", os.path.join(ROOT, "scripts",
                                          "check-doc-figures.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_figure_is_referenced_and_every_reference_exists():
    assert checker().problems() == []


def test_the_check_finds_an_unreferenced_file_and_a_missing_one(tmp_path,
                                                                monkeypatch):
    check = checker()
    docs = tmp_path / "docs"
    (docs / "figures" / "a").mkdir(parents=True)
    (docs / "figures" / "a" / "shown.png").write_bytes(b"")
    (docs / "figures" / "a" / "orphan.csv").write_text("")
    (docs / "page.md").write_text("![x](figures/a/shown.png) and "
                                  "`docs/figures/a/gone.log`.\n")
    (tmp_path / "README.md").write_text("")
    monkeypatch.setattr(check, "ROOT", str(tmp_path))
    monkeypatch.setattr(check, "DOCS", str(docs))
    monkeypatch.setattr(check, "FIGURES", str(docs / "figures"))
    assert check.problems() == [
        "docs/figures/a/orphan.csv: no page references it",
        "docs/figures/a/gone.log: referenced by docs/page.md but missing"]
