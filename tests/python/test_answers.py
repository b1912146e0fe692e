"""crest.vocab / crest.design / crest.dff (the crest command's answers, typed),
their DataFrames, and plots rendered to real files and read back.

Needs CREST_BIN (ctest sets it) and Debian's python3-pandas and python3-matplotlib.
"""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")
import matplotlib.image  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import crest  # noqa: E402


def test_vocab_rows_are_typed_and_the_padded_vocabularies_win():
    rows = crest.vocab(50257, 4096, "h100")
    assert isinstance(rows[0], crest.VocabRow)
    assert rows.baseline == 50257 and rows[-1].vocab == 50257, "unpadded ranks last"
    assert isinstance(rows[0].vocab, int) and isinstance(rows[0].train_us, float)
    assert rows[0].source is crest.Source.PREDICTED
    assert rows[0].speedup > 1.5
    assert rows[0].provenance.startswith("tilewave-2")
    frame = rows.to_pandas()
    assert str(frame["vocab"].dtype) == "int64"
    assert str(frame["train_us"].dtype) == "float64"
    assert list(frame["rank"]) == list(range(1, len(rows) + 1))


def test_design_rows_carry_figures_and_the_broken_configs_their_rule():
    rows = crest.design("h100", hidden=[4096, 4100], heads=32, vocab=32000, seq=4096, layers=32,
                        dp=8, zero=3)
    assert len(rows) == 1 and len(rows.broken) == 1
    assert rows.broken[0]["rule"] == "hidden (4100) must be divisible by heads (32)"
    r = rows[0]
    assert (r.hidden, r.heads, r.kv_heads, r.head_dim, r.d_ff) == (4096, 32, 32, 128, 11008)
    assert r.params == 6738415616 and r.source is crest.Source.PREDICTED
    assert 0 < r.mfu_peak < 1 and r.tokens_per_s_per_gpu > 0
    assert r.fits and 0 < r.memory_gib <= 80 and (r.dp, r.zero) == (8, 3)
    parts = (r.gemm_ms + r.attention_ms + r.other_kernels_ms + r.recompute_ms + r.comm_ms
             + r.optimizer_ms)
    assert abs(parts - r.step_ms) < 1e-6 * r.step_ms, "the parts add up to the step"
    assert any("AdamW" in a for a in rows.assumptions)
    assert "FlashAttention" in rows.attention_note
    post = crest.design("h100", hidden=4096, heads=32, vocab=32000, seq=4096, layers=32, dp=8,
                        zero=3, backward_prefetch="post")[0]
    assert (r.grad_reduce, r.backward_prefetch, post.backward_prefetch) == ("fp32", "pre", "post")
    assert post.comm_ms > r.comm_ms, "BACKWARD_POST exposes the backward's collectives"
    assert post.tokens_per_s_per_gpu < r.tokens_per_s_per_gpu
    kernels = {k: crest.design("h100", hidden=4096, heads=32, vocab=32000, seq=4096, layers=32,
                               dp=8, zero=3, attention=k) for k in ("fused-fa2", "fused-triton")}
    fa2, triton = kernels["fused-fa2"][0], kernels["fused-triton"][0]
    assert kernels["fused-triton"].query["attention"] == "fused-triton"
    assert "in 2022's Triton" in kernels["fused-triton"].attention_note
    # Half FlashAttention-2's throughput: twice its attention core's time.
    assert triton.attention_core_fwd_us == pytest.approx(2 * fa2.attention_core_fwd_us)
    assert triton.tokens_per_s_per_gpu < fa2.tokens_per_s_per_gpu
    searched = crest.design("h100", params="7B", vocab=32000, seq=4096, top=0, dp=8, zero=3)
    assert searched.rank_by == "model_flops_per_s_per_gpu"
    assert len(searched) > 5
    assert all(abs(x.params - 7e9) <= 0.05 * 7e9 for x in searched)


def test_a_refusal_is_an_error_naming_the_field():
    with pytest.raises(crest.CrestCommandError, match="vocab must be positive"):
        crest.vocab(0, 4096, "h100")


def test_answers_through_a_daemon_and_from_its_database_equal_the_local_ones(daemon, tmp_path):
    local = crest.vocab(50257, 4096, "h100", tp=2)
    remote = daemon.vocab(50257, 4096, "h100", tp=2)
    assert remote.answered_by == "crestd at " + daemon.target
    assert [(r.vocab, r.train_us) for r in remote] == [(r.vocab, r.train_us) for r in local]
    assert daemon.best_dff(4096, "h100", window=2, algo="default").algo_choice == "default"
    design = daemon.design("h100", hidden=4096, heads=32, vocab=32000, seq=2048, layers=24,
                           dp=8, zero=3)
    assert design[0].source is crest.Source.PREDICTED
    list(daemon.sweep({"version": 1, "gpu": "h100", "dff": [{"hidden": 4096, "window": 4}]}))
    daemon.export(str(tmp_path / "node.db"))
    from_db = crest.dff(4096, "h100", db=str(tmp_path / "node.db"), window=8, top=0)
    assert from_db.predicted == 17 and from_db.missing == 0, "the model fills what the file lacks"
    assert [r.rank for r in from_db] == list(range(1, 18))


def test_a_mixed_answer_returns_its_headline_best_first_with_the_kind_in_a_column(tmp_path):
    """The shipped H100 measurements cover d_ff within 128 of 10922; a window of
    200 leaves the rest to the model. One answer, one headline, one rank."""
    import gzip
    import shutil
    shipped = os.path.join(os.environ["CREST_ROOT"], "bench", "results", "h100",
                           "reference.db.gz")
    db = tmp_path / "reference.db"
    with gzip.open(shipped) as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    rows = crest.dff(4096, "h100", db=str(db), window=200, top=0)
    assert rows.measured == 257 and rows.predicted == 144
    assert rows.headline is rows[0]
    assert [r.rank for r in rows] == list(range(1, len(rows) + 1))
    kinds = [r.source for r in rows]
    first = kinds[0]
    assert kinds == [first] * kinds.count(first) + [k for k in kinds if k is not first], \
        "the headline's kind first, never interleaved"
    assert all(r.speedup_vs_baseline > 0 and r.speedup_basis is r.source for r in rows)
    measured = [r for r in rows if r.source is crest.Source.MEASURED]
    assert all(len(r.runs) == 1 for r in measured), "each measured row names its one run"
    assert {run["job_id"] for run in rows.runs} >= {r.runs[0] for r in measured}
    assert rows.run_choice == "latest"
    frame = rows.to_pandas()
    assert list(frame["source"])[:1] == [first]
    pooled = crest.dff(4096, "h100", db=str(db), window=0, runs="all")
    assert pooled[0].pooled and len(pooled[0].runs) > 1 and pooled.run_choice == "all"
    # cuBLASLt's first choice, timed in the same rounds: never faster than the run's best.
    best = crest.dff(4096, "h100", db=str(db), window=0)
    first_choice = crest.dff(4096, "h100", db=str(db), window=0, algo="default")
    assert best.algo_choice == "best" and first_choice.algo_choice == "default"
    assert first_choice[0].source is crest.Source.MEASURED
    assert first_choice[0].time_us >= best[0].time_us
    assert best.race is None and best[0].race_verdict is None, "the shipped runs were not raced"


def _check_png(path):
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(str(path))
    assert image.shape[0] >= 300 and image.shape[1] >= 500
    assert image.std() > 0.01, "not a blank image"


def test_rows_plot_marks_measured_and_predicted_apart_and_renders(tmp_path):
    rows = crest.dff(4096, "h100", window=32, top=0)
    ax = rows.plot()
    labels = ax.get_legend_handles_labels()[1]
    assert any(label.startswith("predicted (65)") for label in labels), labels
    assert any(label.startswith("tied best, predicted") for label in labels), labels
    assert any(label == "baseline 10922" for label in labels), labels
    ax.figure.savefig(tmp_path / "dff.png")
    plt.close(ax.figure)
    _check_png(tmp_path / "dff.png")
    for answer, name in ((crest.vocab(50257, 4096, "h100"), "vocab"),
                         (crest.design("h100", params="7B", vocab=32000, seq=4096, dp=8, zero=3),
                          "design")):
        ax = answer.plot()
        ax.figure.savefig(tmp_path / f"{name}.png")
        plt.close(ax.figure)
        _check_png(tmp_path / f"{name}.png")


def test_python_m_crest_plot_writes_png_and_svg_files(tmp_path):
    env = dict(os.environ)
    for kind, flags in (("dff", ["--hidden", "4096", "--gpu", "h100", "--window", "16"]),
                        ("vocab", ["--vocab", "50257", "--hidden", "4096", "--gpu", "h100"]),
                        ("design", ["--hidden", "4096,5120", "--heads", "32,40", "--vocab",
                                    "32000", "--seq", "4096", "--layers", "32",
                                    "--dp", "8", "--zero", "3", "--gpu", "h100"])):
        for ext in ("png", "svg"):
            out = tmp_path / f"{kind}.{ext}"
            done = subprocess.run([sys.executable, "-m", "crest", "plot", kind, *flags,
                                   "--out", str(out)], env=env, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
            assert f"wrote {out}" in done.stdout
            if ext == "png":
                _check_png(out)
            else:
                svg = ET.parse(out).getroot()
                assert svg.tag.endswith("svg")
                assert "predicted" in out.read_text()
    bad = subprocess.run([sys.executable, "-m", "crest", "plot", "vocab", "--vocab", "0",
                          "--hidden", "8", "--gpu", "h100", "--out", str(tmp_path / "x.png")],
                         env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "vocab must be positive" in bad.stderr
    assert not (tmp_path / "x.png").exists()
    wrong = subprocess.run([sys.executable, "-m", "crest", "plot", "dff", "--out",
                            str(tmp_path / "x.gif")], env=env, capture_output=True, text=True)
    assert wrong.returncode == 2 and "must end in .png, .svg or .pdf" in wrong.stderr


def test_one_gemm_the_catalogue_and_a_layers_shapes_in_process():
    """crest.explain, crest.lookup, crest.gpus, crest.shapes: what the CLI
    answers, typed, without a daemon."""
    p = crest.explain(8192, 21888, 4096, "h100")
    assert isinstance(p, crest.Prediction) and p.source is crest.Source.PREDICTED
    assert p.kernel_family == "fast" and p.best.tiles == 5472 and isinstance(p.best.waves, int)
    assert p.time_us == pytest.approx(2 * 8192 * 21888 * 4096 / (p.tflops * 1e6))
    assert len(p.tiles) > 1 and p.model_version.startswith("tilewave-2")
    root = os.environ["CREST_ROOT"]
    db = os.path.join(root, "bench", "results", "h100", "reference.db.gz")
    measured = crest.lookup(8192, 21888, 4096, "h100", db=db)
    assert measured.found and measured.source is crest.Source.MEASURED
    assert measured.detail["device"]["name"] == "NVIDIA H100 80GB HBM3"
    assert measured.detail["runs"][0]["job_id"] == measured.detail["runs"][0]["job_id"] > 0
    gap = crest.lookup(8191, 21888, 4096, "h100", db=db)
    assert gap.found and gap.source is crest.Source.PREDICTED, "the model fills the gap"
    with pytest.raises(crest.CrestCommandError, match="db"):
        crest.lookup(8192, 4096, 4096, "h100")  # a lookup needs a database or a daemon
    catalogue = crest.gpus()
    h100 = next(g for g in catalogue if g.name == "H100-SXM")
    assert isinstance(h100, crest.Gpu) and h100.sm_count == 132 and h100.peak_tflops["bf16"] == 989.4
    assert "h100" in h100.aliases and isinstance(h100.l2_bytes, int)
    layer = crest.shapes(4096, 32, 11008, 32000, 4096, pass_="train")
    assert all(isinstance(g, crest.Gemm) for g in layer)
    assert {g.pass_ for g in layer} == {"fwd", "dgrad", "wgrad"}
    qkv = next(g for g in layer if g.name == "qkv.fwd")
    assert (qkv.m, qkv.n, qkv.k) == (4096, 12288, 4096) and qkv.flops == 2.0 * 4096 * 12288 * 4096
    assert list(layer.to_pandas().columns)[:3] == ["name", "pass_", "m"]
    with pytest.raises(ValueError, match="pass_"):
        crest.shapes(4096, 32, 11008, 32000, 4096, pass_="backward")


def test_the_pass_has_one_spelling_and_the_old_ones_still_answer_with_a_warning():
    assert crest.dff(4096, "h100", window=4, pass_="train").query["pass"] == "train"
    assert crest.dff(4096, "h100", window=4).query["pass"] == "fwd"
    with pytest.deprecated_call():
        assert crest.dff(4096, "h100", window=4, train=True).query["pass"] == "train"
    with pytest.deprecated_call():
        frame = crest.study(gpu="h100", hidden=4096, window=2, passes="train")
    assert set(frame["pass"]) == {"train"}



def test_crest_plot_draws_each_answer_from_the_command_line(tmp_path):
    """`crest plot KIND … --out FILE`: the binary runs the package's plotter;
    the dff title names h and the pass, the study draws a panel per GPU and
    pass, and bad input exits 2 naming the field."""
    crest_bin = os.environ["CREST_BIN"]

    def plot(*args):
        return subprocess.run([crest_bin, "plot", *args], capture_output=True, text=True,
                              check=False, cwd=tmp_path)

    done = plot("dff", "--hidden", "4096", "--gpu", "h100", "--pass", "train", "--top", "0",
                "--out", "dff.png")
    assert done.returncode == 0, done.stderr
    assert "wrote dff.png: 257 dff rows" in done.stdout
    _check_png(tmp_path / "dff.png")
    rows = crest.dff(4096, "h100", pass_="train", top=0)
    title = rows.plot().get_title()
    plt.close("all")
    assert "h=4096" in title and "train pass" in title, title
    done = plot("study", "--gpu", "h100,a100", "--hidden", "4096", "--pass", "fwd,train",
                "--window", "16", "--out", "study.svg")
    assert done.returncode == 0, done.stderr
    assert ET.parse(tmp_path / "study.svg").getroot().tag.endswith("svg")
    text = (tmp_path / "study.svg").read_text()  # matplotlib keeps each text as a comment
    for gpu in ("H100-SXM", "A100-SXM-80GB"):
        for pass_ in ("fwd", "train"):
            assert f"gpu = {gpu}, pass = {pass_}" in text, (gpu, pass_)
    done = plot("design", "--params", "7B", "--vocab", "32000", "--seq", "4096", "--dp", "8",
                "--zero", "3", "--gpu", "h100", "--out", "design.png")
    assert done.returncode == 0, done.stderr
    _check_png(tmp_path / "design.png")
    bad = plot("dff", "--hidden", "4096", "--gpu", "h999", "--out", "x.png")
    assert bad.returncode == 2 and "gpu: unknown GPU 'h999'" in bad.stderr
    assert plot("dff", "--hidden", "4096", "--gpu", "h100", "--out", "x.txt").returncode == 2
    assert plot("heatmap", "--out", "x.png").returncode == 2
    not_a_number = plot("study", "--gpu", "h100", "--hidden", "abc", "--out", "s.png")
    assert not_a_number.returncode == 2 and "hidden: 'abc' is not a list of integers" in not_a_number.stderr
