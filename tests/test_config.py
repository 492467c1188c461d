import dataclasses

import pytest

from citebot import config


def test_precedence_flag_env_file_default(tmp_path):
    f = tmp_path / "citebot.toml"
    f.write_text("final_k = 7\nrrf_k = 30\nsparse_k = 11\n")
    env = {"CITEBOT_FINAL_K": "6", "CITEBOT_RRF_K": "20"}
    cfg = config.load({"final_k": "4", "index": None}, env=env, file=f)
    assert cfg.final_k == 4  # flag beats env
    assert cfg.rrf_k == 20  # env beats file
    assert cfg.sparse_k == 11  # file beats default
    assert cfg.dense_k == config.Config().dense_k


def test_unknown_key_and_bad_value_name_the_key(tmp_path):
    with pytest.raises(config.ConfigError, match="CITEBOT_FINAL_KK"):
        config.load(env={"CITEBOT_FINAL_KK": "3"})
    with pytest.raises(config.ConfigError, match="use_rerank"):
        config.load(env={"CITEBOT_USE_RERANK": "maybe"})
    f = tmp_path / "c.toml"
    f.write_text("rerank_poool = 3\n")
    with pytest.raises(config.ConfigError, match="rerank_poool"):
        config.load(env={}, file=f)
    with pytest.raises(config.ConfigError, match="rerank_pool"):
        config.load({"rerank_pool": "2", "final_k": "5"}, env={})
    with pytest.raises(config.ConfigError, match="final_k"):
        config.load({"final_k": "0"}, env={})
    # IVF_FLAT behind a scope filter found a fraction of the hits; it is not offered.
    with pytest.raises(config.ConfigError, match="milvus_index must be FLAT, HNSW or AUTOINDEX"):
        config.load({"milvus_index": "IVF_FLAT"}, env={})


def test_booleans_and_frozen():
    cfg = config.load({"use_dense": "off"}, env={"CITEBOT_USE_RERANK": "0"})
    assert cfg.use_dense is False and cfg.use_rerank is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.final_k = 3  # frozen


def test_refusal_sentence_is_exact():
    assert config.REFUSAL == "I don't know based on the available documents."


def test_every_key_says_where_its_value_came_from(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text("sparse_k = 11\nrrf_k = 30\n")
    cfg, src = config.resolve({"final_k": "4", "index": str(tmp_path / "i")}, env={"CITEBOT_RRF_K": "20"}, file=f)
    assert (cfg.final_k, cfg.rrf_k, cfg.sparse_k, cfg.dense_k) == (4, 20, 11, 50)
    assert src["final_k"] == "flag --set final_k" and src["index"] == "flag --index"
    assert src["rrf_k"] == "env CITEBOT_RRF_K" and src["sparse_k"] == f"file {f}"
    assert src["dense_k"] == "default" and set(src) == set(config.FIELDS)


def test_config_command_prints_each_source(tmp_path):
    import json
    import subprocess
    import sys

    from conftest import ROOT
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CITEBOT_FINAL_K": "9"}
    r = subprocess.run([sys.executable, str(ROOT / "config.py"), "--set", "rrf_k=30", "--json"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["final_k"] == {"value": 9, "from": "env CITEBOT_FINAL_K"}
    assert data["rrf_k"] == {"value": 30, "from": "flag --set rrf_k"}
    assert data["dense_k"] == {"value": 50, "from": "default"}
    r = subprocess.run([sys.executable, str(ROOT / "config.py"), "--set", "rrf_k=zero"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 2 and "rrf_k" in r.stderr


def test_switching_expansion_off_needs_no_synonym_file(tmp_path):
    # The error for a missing synonyms file says "--set use_expansion=false for none": that must work.
    f = tmp_path / "c.toml"
    f.write_text(f'synonyms = "{tmp_path / "gone.json"}"\n')
    with pytest.raises(config.ConfigError, match="use_expansion=false"):
        config.load(env={}, file=f)
    cfg = config.load({"use_expansion": "false"}, env={}, file=f)
    assert cfg.use_expansion is False
    with pytest.raises(config.ConfigError, match="synonyms"):  # switched on again, the file is checked
        cfg.replace(use_expansion=True)


@pytest.mark.parametrize("key", ["embed_model", "rerank_model", "model", "milvus_uri", "data_dir", "index"])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_name_is_a_usage_error_naming_the_key(key, value):
    # Taken, "" was the current folder (data_dir, embed_model) or failed at run time with exit 1.
    with pytest.raises(config.ConfigError, match=key):
        config.load({key: value}, env={})


def test_a_milvus_lite_file_must_end_in_db():
    # pymilvus refuses any other file name; found at run time it read as a lock held by another process.
    with pytest.raises(config.ConfigError, match="milvus_uri"):
        config.load({"milvus_uri": "/tmp/folder"}, env={})
    assert config.load({"milvus_uri": "http://host:19530"}, env={}).milvus_uri == "http://host:19530"


@pytest.mark.parametrize("key", ["min_coverage", "dedup_overlap", "gate_threshold"])
def test_a_share_or_a_probability_below_zero_is_a_usage_error(key):
    # -0.5 was taken and meant nothing a share or a probability can mean.
    with pytest.raises(config.ConfigError, match=f"{key} must be between 0 and 1, got -0.5"):
        config.load({key: "-0.5"}, env={})
    assert config.load({"min_cosine": "-0.5"}, env={}).min_cosine == -0.5  # a cosine may be negative


def test_a_config_with_no_retrieval_channel_on_is_refused_saying_what_to_set():
    # Both accepted before: "no hits" for every question, or every fused score 0.
    with pytest.raises(config.ConfigError, match="use_sparse and use_dense are both false, so nothing would be "
                                                 "searched; set use_sparse=true or use_dense=true"):
        config.load({"use_sparse": "false", "use_dense": "false"}, env={})
    with pytest.raises(config.ConfigError, match="use_dense is false and weight_sparse is 0, so every score would "
                                                 r"be 0; set weight_sparse above 0 \(the default is 1\) or use_dense=true"):
        config.load({"weight_sparse": "0", "use_dense": "false"}, env={})
    with pytest.raises(config.ConfigError, match="use_sparse is false and weight_dense is 0"):
        config.load({"use_sparse": "false"}, env={"CITEBOT_WEIGHT_DENSE": "0"})
    # One channel on with a weight above 0 is a configuration (the ablation's bm25 and dense rows).
    assert config.load({"weight_dense": "0"}, env={}).use_sparse
    assert not config.load({"use_sparse": "false"}, env={}).use_sparse


def test_a_tilde_in_a_path_from_a_file_or_the_environment_is_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "syn.json").write_text("[]")
    f = tmp_path / "c.toml"
    f.write_text('index = "~/idx"\ndata_dir = "~/data"\nmilvus_uri = "~/m.db"\n')
    # It was kept as written, and an ingest made a folder named "~" in the current one.
    cfg = config.load(env={"CITEBOT_SYNONYMS": "~/syn.json", "CITEBOT_CONFIG": "~/c.toml"})
    assert (cfg.index, cfg.data_dir, cfg.synonyms, cfg.milvus_uri) == (
        f"{tmp_path}/idx", f"{tmp_path}/data", f"{tmp_path}/syn.json", f"{tmp_path}/m.db")
    assert config.load({"index": "~/flag"}, env={}).index == f"{tmp_path}/flag"
    assert config.load({"milvus_uri": "http://host:19530"}, env={}).milvus_uri == "http://host:19530"
