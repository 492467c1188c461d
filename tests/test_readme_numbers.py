"""The README's golden-set tables are the numbers a fresh run gives: change
what they measure and this fails until the README is re-measured (the
command sits in the comment above each table)."""
import re

import pytest

from citebot import config
from citebot.engine import Engine
from citebot.index.store import open_index
from citebot.measurement import evaluate, report
from citebot.search.models import Models

from conftest import ROOT


def block(name: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(rf"<!-- {name}: [^\n]*-->\n(.*?)\n<!-- /{name} -->", text, re.S)
    assert m, f"README has no {name} block"
    return m.group(1).strip()


@pytest.mark.parametrize("name,split", [("golden-all", None), ("golden-report", "report")])
def test_readme_golden_table_is_a_fresh_run(sample_index_e5, e5_embedder, name, split):
    cfg = config.Config(index=sample_index_e5.index)  # the bot's defaults, its default model included
    assert cfg.embed_model == "e5"
    engine = Engine(open_index(cfg), cfg, Models(e5_embedder))
    result = evaluate.evaluate(cfg, ROOT / "golden.json", answers=True, split=split, engine=engine)
    assert report.markdown_table(result) == block(name)
