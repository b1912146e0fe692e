"""The package as a notebook user installs it, and its studies.

A fresh virtual environment of Debian's Python (--system-site-packages, for
python3-pandas and python3-matplotlib), the documented offline `pip install`
of what the build assembles (build/python), then crest.dff and crest.study
answered in process: no subprocess started, no crest binary anywhere on PATH
or in CREST_BIN, no gRPC imported.

Run by ctest with CREST_PYTHON_PACKAGE (build/python) and PYTHONPATH set.
"""

import os
import shutil
import subprocess

import pytest

import crest

PACKAGE = os.environ["CREST_PYTHON_PACKAGE"]

IN_THE_VENV = r'''
import subprocess, sys
import pandas  # its import asks `uname -p`: before the guard
def refuse(*args, **kwargs):
    raise AssertionError(f"a subprocess was started: {args}")
subprocess.run = subprocess.Popen = refuse

import crest
assert crest.in_process(), "crest._native did not load"
rows = crest.dff(4096, "h100")
assert rows[0].source == "predicted" and 10794 <= rows[0].d_ff <= 11050, rows[0]
frame = rows.to_pandas()
assert {"gpu", "dtype", "hidden", "tp", "pass", "tokens", "provenance"} <= set(frame.columns)
study = crest.study(gpu=["h100", "h200"], hidden=[4096, 8192], tp=[1, 2], pass_=["fwd", "train"])
cells = study.groupby(["gpu", "hidden", "tp", "pass"]).size()
assert len(cells) == 16, cells
assert "grpc" not in sys.modules, "gRPC was imported without a server"
print(crest.__file__)
'''


def _clean_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CREST_BIN")}
    env["PATH"] = "/usr/bin:/bin"  # no build directory, no crest binary
    env["HOME"] = str(tmp_path)
    return env


def test_a_fresh_venv_installs_the_package_and_answers_in_process(tmp_path):
    if not os.path.exists(os.path.join(PACKAGE, "crest")) or not any(
            f.startswith("_native") for f in os.listdir(os.path.join(PACKAGE, "crest"))):
        pytest.skip("crest._native was not built (pybind11-dev missing at configure time)")
    env = _clean_env(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, env=env)
    source = tmp_path / "src"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("__pycache__", "build",
                                                                   "*.egg-info"))
    python = str(venv / "bin" / "python")
    # The README's install line, on a copy (pip writes its build files beside the sources).
    subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                    "--no-deps", "-q", str(source)], check=True, env=env)
    done = subprocess.run([python, "-c", IN_THE_VENV], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(venv)), "imported from elsewhere: " + done.stdout


def test_a_study_is_one_tidy_frame_with_every_key_of_its_query():
    frame = crest.study(gpu=["h100", "a100"], hidden=[4096], tp=[1, 4], pass_="fwd",
                        window=16)
    assert set(frame["gpu"]) == {"H100-SXM", "A100-SXM-80GB"} or len(set(frame["gpu"])) == 2
    for key in ("gpu", "dtype", "hidden", "tp", "pass", "tokens", "ratio", "d_ff", "time_us",
                "tflops", "source", "provenance", "tie_group", "rank", "pow2", "baseline_d_ff"):
        assert key in frame.columns, key
    # Each cell is the dff answer for its keys, every candidate of the window.
    one = crest.dff(4096, "h100", tp=4, window=16, top=0)
    cell = frame[(frame["gpu"] == one.gpu) & (frame["tp"] == 4)]
    assert list(cell["d_ff"]) == [r.d_ff for r in one]
    assert list(cell["time_us"]) == [r.time_us for r in one]
    assert all(cell["d_ff"] % 4 == 0), "tp=4 candidates divide by 4"
    assert set(cell["pow2"]) <= {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
    assert set(frame["source"]) == {"predicted"}
    assert frame["provenance"].str.startswith("tilewave-2").all()
    with pytest.raises(ValueError, match="pass_"):
        crest.study(gpu="h100", hidden=4096, pass_="backward")
    with pytest.raises(crest.CrestCommandError, match="gpu"):
        crest.study(gpu="tpu", hidden=4096)


def test_a_study_is_the_same_frame_on_any_number_of_threads():
    """threads: each thread answers the next cell not yet taken (one task a
    thread, not one a cell), and the frame keeps the grid's order whatever
    their number; a negative number is refused, naming the argument."""
    import pandas  # noqa: PLC0415
    grid = dict(gpu=["h100", "a100"], hidden=[2048, 4096, 8192], tp=[1, 2], pass_="fwd",
                window=8)
    one = crest.study(**grid, threads=1)
    assert len(one.groupby(["gpu", "hidden", "tp"])) == 12
    for threads in (2, 3, 64, 0, None):  # 0 and None: one per CPU
        pandas.testing.assert_frame_equal(crest.study(**grid, threads=threads), one)
    with pytest.raises(ValueError, match="threads"):
        crest.study(**grid, threads=-1)


def test_cells_are_answered_in_order_and_a_cells_error_reaches_the_caller():
    from crest.answers import _in_order  # noqa: PLC0415
    items = list(range(11))
    for workers in (1, 2, 3, 20):
        assert _in_order(lambda x: x * x, items, workers) == [x * x for x in items], workers
    assert _in_order(lambda x: x, [], 4) == []

    def fails_at_7(x):
        if x == 7:
            raise ValueError("cell 7 failed")
        return x

    for workers in (1, 3):
        with pytest.raises(ValueError, match="cell 7 failed"):
            _in_order(fails_at_7, items, workers)


def test_a_study_plots_one_panel_per_facet_with_the_legend_outside(tmp_path):
    frame = crest.study(gpu=["h100", "h200"], hidden=4096, tp=[1, 2], window=32)
    fig = crest.plot_study(frame, facet="tp")
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["tp = 1", "tp = 2"]
    legend = fig.legends[0]
    fig.canvas.draw()
    box = legend.get_window_extent()
    for ax in panels:
        assert box.x0 >= ax.get_window_extent().x1, "the legend covers a panel"
    labels = [t.get_text() for t in legend.get_texts()]
    assert any(label.startswith("odd") for label in labels), labels
    assert any("multiple of 8" in label for label in labels), labels
    fig.savefig(tmp_path / "study.png")
    with pytest.raises(ValueError, match="facet"):
        crest.plot_study(frame, facet="colour")


def test_every_answer_frame_starts_with_the_keys_of_its_question():
    vocab = crest.vocab(50257, 4096, "h100", tp=8).to_pandas()
    assert list(vocab.columns[:6]) == ["gpu", "dtype", "hidden", "tp", "tokens", "rank_by"]
    assert set(vocab["tp"]) == {8} and set(vocab["gpu"]) == {"H100-SXM"}
    design = crest.design("h100", hidden=4096, heads=32, d_ff=11008, vocab=32000, seq=4096,
                          dp=8, zero=3,
                          layers=32).to_pandas()
    assert list(design.columns[:3]) == ["gpu", "dtype", "attention"]
    assert set(design["attention"]) == {"fused"}
    assert "hidden" in design.columns and "tp" in design.columns, "a row's own dimensions"


def test_the_in_process_document_is_the_commands_json_as_objects_not_text():
    native = pytest.importorskip("crest._native", reason="crest._native was not built")
    import json  # noqa: PLC0415
    args = ["--json", "dff", "--hidden", "4096", "--gpu", "h100", "--pass", "train", "--top",
            "0", "--window", "16"]
    code, doc, err = native.answer(args, None)
    assert code == 0, err
    code, text, err = native.run(args)
    assert code == 0, err
    assert doc == json.loads(text), "the objects are the document the text spells"
    fields = ["d_ff", "time_us", "no_such_field"]
    code, rows, err = native.answer(args, fields)
    assert [r[:2] for r in rows["candidates"]] == [(c["d_ff"], c["time_us"])
                                                   for c in doc["candidates"]]
    assert all(r[2] is None for r in rows["candidates"])
    assert {k: v for k, v in rows.items() if k != "candidates"} == \
        {k: v for k, v in doc.items() if k != "candidates"}
    code, doc, err = native.answer(["--json", "dff", "--hidden", "-5", "--gpu", "h100"], None)
    assert code == 2 and doc is None and "hidden" in err


def test_in_process_rows_are_every_field_the_json_candidate_gives(tmp_path):
    """The rows study() reads come from the answer's rows, not its JSON: each
    field of each row equals the JSON candidate's (race flat, runs a tuple), on
    a measured answer (device, runs) and a predicted one."""
    native = pytest.importorskip("crest._native", reason="crest._native was not built")
    import gzip  # noqa: PLC0415
    import json  # noqa: PLC0415
    import shutil  # noqa: PLC0415
    from crest.answers import _STUDY_FIELDS, _flat  # noqa: PLC0415
    db = tmp_path / "reference.db"
    with gzip.open(os.path.join(os.environ["CREST_ROOT"], "bench", "results", "h100",
                                "reference.db.gz")) as src, \
            open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    for extra in (["--db", str(db), "--window", "200"], ["--pass", "train", "--tp", "2"]):
        args = ["--json", "dff", "--hidden", "4096", "--gpu", "h100", "--top", "0", *extra]
        code, text, err = native.run(args)
        assert code == 0, err
        candidates = json.loads(text)["candidates"]
        code, doc, err = native.answer(args, list(_STUDY_FIELDS))
        assert code == 0, err
        assert len(doc["candidates"]) == len(candidates) > 100
        for row, c in zip(doc["candidates"], candidates):
            assert row == tuple(_flat(c).get(k) for k in _STUDY_FIELDS), c["d_ff"]
        kinds = {row[_STUDY_FIELDS.index("source")] for row in doc["candidates"]}
        assert kinds == ({"measured", "predicted"} if "--db" in extra else {"predicted"})


def test_a_study_in_process_is_the_frame_the_binary_route_gives(tmp_path, monkeypatch):
    """study() in process joins each cell's columns (arrays, no JSON); the
    route without crest._native builds rows from the binary's JSON. One frame,
    every dtype included, on a measured-and-predicted grid."""
    pytest.importorskip("crest._native", reason="crest._native was not built")
    import gzip  # noqa: PLC0415
    import pandas  # noqa: PLC0415
    from crest import answers  # noqa: PLC0415
    db = tmp_path / "reference.db"
    with gzip.open(os.path.join(os.environ["CREST_ROOT"], "bench", "results", "h100",
                                "reference.db.gz")) as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    grid = dict(gpu="h100", hidden=[4096], tp=[1, 2], pass_=["fwd", "train"], window=160,
                db=str(db))
    in_process = crest.study(**grid)
    assert set(in_process["source"]) == {"measured", "predicted"}
    assert in_process["speedup_vs_baseline"].dtype == "float64"
    monkeypatch.setattr(answers, "_native", lambda: None)
    by_binary = crest.study(**grid)
    pandas.testing.assert_frame_equal(in_process, by_binary)
