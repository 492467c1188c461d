"""Two embedding models as one (embed_model "e5+packaged"): one vector per
chunk whose cosine is the parts' cosines weighted by their scale slopes."""
import json

import numpy as np
import pytest

from citebot.commands import models_main
from citebot.config import Config, ConfigError
from citebot.engine import Engine
from citebot.index.build import ingest
from citebot.index.store import open_index, stamped_settings
from citebot.schema import Scope
from citebot.search import models


class Fixed:
    """An embedder with written-down vectors (what the arithmetic below is worked out on)."""

    def __init__(self, name, table):
        self.name, self.table, self.dim = name, table, 2

    def encode(self, texts, progress=False):
        return np.array([self.table[t] for t in texts], dtype=np.float32)


def test_the_composite_cosine_is_the_slope_weighted_mean_of_the_parts():
    # e5 (slope 6.67): doc (1, 0), query (0.6, 0.8): cosine 0.6.  The other part
    # (not measured, slope 1): doc (2, 0) -- unit (1, 0) -- query (0, 3): cosine 0.
    e5 = Fixed(models.E5_NAME, {"d": [1, 0], "q": [0.6, 0.8]})
    other = Fixed("test/other", {"d": [2, 0], "q": [0, 3]})
    c = models.Composite([e5, other])
    d, q = c.encode(["d"])[0], c.encode_queries(["q"])[0]
    assert c.dim == 4 and c.name == models.E5_NAME + " + test/other"
    assert np.linalg.norm(d) == pytest.approx(1.0) and np.linalg.norm(q) == pytest.approx(1.0)
    # (6.67 * 0.6 + 1 * 0) / (6.67 + 1) = 4.002 / 7.67
    assert float(d @ q) == pytest.approx(4.002 / 7.67, abs=1e-6)
    # On the common scale: the mean of the parts' scaled cosines,
    # ((6.67 * 0.6 - 5.27) + (1 * 0 + 0)) / 2 = -0.634
    a, b = models.cosine_scale(c.name)
    assert (a, b) == pytest.approx((7.67 / 2, -5.27 / 2))
    assert models.on_scale(float(d @ q), (a, b)) == pytest.approx(-0.634, abs=1e-5)


def test_a_composite_passes_the_progress_flag_to_each_part():
    seen = []

    class Told(Fixed):
        def encode(self, texts, progress=False):
            seen.append((self.name, progress))
            return super().encode(texts)
    c = models.Composite([Told(models.E5_NAME, {"d": [1, 0]}), Told("test/other", {"d": [0, 1]})])
    c.encode(["d"], progress=True)
    assert seen == [(models.E5_NAME, True), ("test/other", True)]


def test_a_composite_is_named_stamped_and_read_back_as_typed():
    assert models.parts("e5+packaged") == ["e5", "packaged"]
    assert models.model_name("e5+packaged") == models.E5_NAME + " + " + models.PACKAGED_NAME
    manifest = {"embed_model": models.model_name("e5+packaged")}
    assert stamped_settings(manifest)["embed_model"] == "e5+packaged"  # the rebuild command repeats it
    with pytest.raises(ConfigError, match="joins an empty model"):
        Config(embed_model="e5+")


def test_a_folder_with_a_plus_in_its_name_is_one_model(tmp_path):
    (tmp_path / "a+b").mkdir()
    assert models.parts(str(tmp_path / "a+b")) == [str(tmp_path / "a+b")]
    Config(embed_model=str(tmp_path / "a+b"))  # not refused as a join


def test_ingest_and_search_with_two_real_models(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "returns.md").write_text("# Returns\n\nA tent can be returned within 30 days for a full refund.\n")
    (docs / "bikes.md").write_text("# E-bikes\n\nThe e-bike battery charges in four hours.\n")
    cfg = Config(embed_model="e5+packaged", index=str(tmp_path / "idx"), use_rerank=False, use_sparse=False)
    ingest(docs, cfg)
    index = open_index(cfg)
    assert index.manifest["embed_dim"] == 384 + 384
    assert index.manifest["embed_model"] == models.model_name("e5+packaged")
    _, r = Engine.over(index, cfg).search("how long do I have to send back a tent?", [], Scope())
    assert r.hits[0].chunk.source == "returns.md"  # dense alone (use_sparse off)
    assert models_main(["--json", "--set", "embed_model=e5+packaged"]) == 0
    roles = [(m["role"], m["model"], m["present"]) for m in json.loads(capsys.readouterr().out)]
    assert roles[:2] == [("embedding", "e5", True), ("embedding", "packaged", True)]
