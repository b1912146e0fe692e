"""The Python client against a real crestd on an ephemeral loopback port.

The daemon fixture is in conftest.py.
"""

import json
import os
import signal
import sqlite3
import subprocess
import time

import pytest

import crest

SPEC = {"version": 1, "gpu": "h100", "dff": [{"hidden": 4096, "window": 16}]}


def test_sweep_then_best_dff_returns_labelled_rows_a_notebook_can_use(daemon):
    events = list(daemon.sweep(SPEC))
    assert events[-1].final
    assert events[-1].job.state == "done"
    assert events[-1].elapsed_s > 0
    assert events[-1].kernel_s == 0 and events[-1].gpu_busy_fraction == 0, "the model is no GPU"
    assert sum(len(e.results) for e in events) == 66
    assert all(r.source == "predicted" for e in events for r in e.results)
    # The last event carries the sweep's report, as `crest sweep` prints it.
    assert events[-1].summary["backend"] == "model"
    assert "device" not in events[-1].summary, "the model measured on no device"
    assert all(e.summary is None for e in events[:-1])
    again = list(daemon.sweep(SPEC))[-1]
    assert again.summary["already_present"] == 66, "a second sweep finds all 66 stored"

    rows = daemon.best_dff(hidden=4096, gpu="h100", window=16, top=5)
    assert len(rows) == 5
    assert isinstance(rows[0], crest.DffRow)
    assert rows[0].time_us <= rows[1].time_us, "fastest first"
    assert {r.source for r in rows} == {"predicted"}
    assert rows[0].source is crest.Source.PREDICTED, "a typed enum, equal to its name"
    assert json.dumps({"source": rows[0].source}) == '{"source": "predicted"}'
    assert rows.gpu == "H100-SXM"
    assert rows.baseline.d_ff == 10922
    assert rows.candidates == 33 and rows.predicted == 33 and rows.missing == 0
    assert rows[0].tie_group == 1 and rows.tied_with_best >= 1
    # A prediction's interval is its model's expected error around it.
    assert all(r.time_low_us < r.time_us < r.time_high_us for r in rows)
    assert (rows.cache_mode, rows.clock_policy) == ("cold", "sustained")
    with pytest.raises(ValueError, match="clocks"):
        daemon.best_dff(hidden=4096, gpu="h100", clocks="boost")
    assert [r.rank for r in rows] == [1, 2, 3, 4, 5], "ranked within the one source"
    frame = rows.to_pandas()  # python3-pandas is installed by scripts/install-deps.sh
    assert list(frame["d_ff"]) == [r.d_ff for r in rows]
    assert str(frame["d_ff"].dtype) == "int64" and str(frame["time_us"].dtype) == "float64"
    assert set(frame["source"]) == {"predicted"}
    assert list(frame.columns)[:10] == ["gpu", "dtype", "hidden", "tp", "pass", "tokens", "ratio",
                                        "d_ff", "time_us", "tflops"]
    assert set(frame["hidden"]) == {4096} and set(frame["pass"]) == {"fwd"}


def test_lookup_predict_and_node_info(daemon):
    list(daemon.sweep(SPEC))
    found = daemon.lookup(m=8192, n=4096, k=10922, gpu="h100")
    assert found.found and found.source == "predicted" and found.time_us > 0
    live = daemon.lookup(m=8192, n=4096, k=99, gpu="h100")
    assert live.found and live.source is crest.Source.PREDICTED, "the model fills the gap"
    missing = daemon.lookup(m=8192, n=4096, k=4096, gpu="a100", dtype="fp8")
    assert not missing.found and missing.source is crest.Source.NONE
    assert live.model_version.startswith("tilewave-2") and 0 < live.expected_error < 1
    p = daemon.predict(m=2304, n=1536, k=4096, gpu="a100", dtype="fp16")
    assert isinstance(p, crest.Prediction) and p.source is crest.Source.PREDICTED
    assert p.best.waves == 1 and isinstance(p.best.waves, int), "numbers are numbers"
    assert isinstance(p.time_us, float) and len(p.tiles) > 1
    info = daemon.node_info()
    assert info["model_version"] == "tilewave-2"
    assert any(c.startswith("tilewave-2+h100-sxm-bf16-") for c in info["calibrations"])
    p = daemon.predict(m=8192, n=4096, k=10922, gpu="h100")
    assert p.kernel_family == "fallback" and 0 < p.expected_error < 0.1
    assert p.calibration.startswith("calibrated for bf16")
    with pytest.raises(ValueError, match="dtype: 'bf17'"):
        daemon.predict(m=8, n=8, k=8, gpu="h100", dtype="bf17")
    assert info["database"]["predictions"] == 66, "counts are numbers, not proto3 JSON's text"
    assert isinstance(info["database"]["file_bytes"], int) and info["database"]["file_bytes"] > 0


def test_lookup_and_predict_take_the_one_route_of_crest_lookup_and_explain(daemon):
    """Client.lookup and Client.predict are crest.lookup and crest.explain
    with server=: the same answer, field for field, found or not."""
    list(daemon.sweep(SPEC))
    for m, n, k, gpu, dtype in [(8192, 4096, 10922, "h100", "bf16"),  # stored
                                (8192, 4096, 99, "h100", "bf16"),     # the model fills the gap
                                (8192, 4096, 4096, "a100", "fp8")]:   # nothing answers
        assert daemon.lookup(m, n, k, gpu, dtype=dtype) == crest.lookup(
            m, n, k, gpu, dtype=dtype, server=daemon.target)
    stored = daemon.lookup(8192, 4096, 10922, "h100")
    assert stored.detail["answered_by"] == "crestd at " + daemon.target
    assert stored.detail["gemm"]["k"] == 10922, "detail is crest lookup's document"
    nothing = daemon.lookup(8192, 4096, 4096, "a100", dtype="fp8")
    assert not nothing.found and nothing.source is crest.Source.NONE
    assert "no path for fp8" in nothing.detail["message"]
    assert daemon.predict(2304, 1536, 4096, "a100", dtype="fp16") == crest.explain(
        2304, 1536, 4096, "a100", dtype="fp16", server=daemon.target)
    with pytest.raises(ValueError, match="cache: 'hot'"):
        daemon.lookup(8192, 4096, 4096, "h100", cache="hot")
    with pytest.raises(ValueError, match="cache: 'hot'"):
        crest.lookup(8192, 4096, 4096, "h100", cache="hot", server=daemon.target)


def test_jobs_submit_watch_list_cancel_and_export(daemon, tmp_path):
    job = daemon.submit(SPEC, priority=3)
    assert job.state in ("queued", "running", "done") and job.total == 66
    last = list(daemon.watch(job.id))[-1]
    assert last.final and last.job.state == "done" and last.job.done == 66
    assert daemon.job(job.id).priority == 3
    assert [j.id for j in daemon.jobs(state="done")] == [job.id]
    with pytest.raises(crest.CrestError) as e:
        daemon.cancel(job.id)
    assert "already ended" in e.value.message

    path = str(tmp_path / "snapshot.db")
    assert daemon.export(path) > 0
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM predictions").fetchone()[0] == 66
    with pytest.raises(FileExistsError):
        daemon.export(path)


def test_bad_input_raises_crest_error_naming_the_field(daemon):
    with pytest.raises(crest.CrestError) as e:
        daemon.best_dff(hidden=0, gpu="h100")
    assert e.value.code.name == "INVALID_ARGUMENT"
    assert "hidden" in e.value.message
    with pytest.raises(crest.CrestError) as e:
        daemon.best_dff(hidden=4096, gpu="h300")
    assert "h300" in e.value.message
    with pytest.raises(ValueError, match="dtype"):
        daemon.best_dff(hidden=4096, gpu="h100", dtype="int3")
    with pytest.raises(crest.CrestError) as e:
        daemon.submit({"version": 1, "gpu": "h100", "dff": []})
    assert e.value.code.name == "INVALID_ARGUMENT"


def test_a_calibration_file_reads_without_a_daemon(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cal = crest.read_calibration(os.path.join(root, "tuner", "calibrations", "h100-sxm-bf16.json"))
    assert cal.gpu == "H100-SXM" and cal.dtype == "bf16"
    assert cal.model_version.startswith("tilewave-2+h100-sxm-bf16-")
    assert cal.provenance["source"] == "measured"
    assert [s["hidden"] for s in cal.fit["after"]["studies"]] == [4096, 8192]
    assert all(s["spearman"] >= 0.85 for s in cal.fit["after"]["studies"])
    assert "fast_tflops" in cal.fitted
    # Intervals set on windows left out of the fit, and how often they held them.
    assert cal.fit["interval"]["basis"] == "held-out d_ff windows"
    assert cal.fit["interval"]["coverage"] >= 0.8
    assert cal.fit["interval"]["coverage_multiples_of_8"] >= 0.8
    assert 0 < cal.parameters["expected_error"]["nt.fast.16"] < 0.25
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1, "model": "tilewave-1"}')
    with pytest.raises(ValueError, match="tilewave-1"):
        crest.read_calibration(str(bad))


def test_the_baseline_row_is_the_same_in_process_and_through_grpc(daemon):
    """One route or the other, DffAnswer.baseline is the naive d_ff's row."""
    remote = daemon.best_dff(hidden=4096, gpu="h100", window=16, top=5)
    local = crest.dff(4096, "h100", window=16, top=5)
    assert local.baseline is not None and remote.baseline is not None
    for field in ("d_ff", "time_us", "tflops", "mlp_params", "source", "provenance",
                  "time_low_us", "time_high_us", "speedup_vs_baseline", "pooled"):
        assert getattr(local.baseline, field) == pytest.approx(getattr(remote.baseline, field)), field
    assert local.baseline.d_ff == 10922 and local.baseline.speedup_vs_baseline == 1.0
    with pytest.deprecated_call():
        trained = daemon.best_dff(hidden=4096, gpu="h100", window=4, train=True)
    assert trained.query["pass"] == "train"
    assert daemon.best_dff(hidden=4096, gpu="h100", window=4, pass_="train").query["pass"] == "train"



def test_best_dff_is_the_answer_crest_dff_gives_through_the_same_crestd(daemon):
    """One route to a crestd's d_ff answer (Client.best_dff is crest.dff's
    server=, the C++ remote answers in process): every row, every field, and
    the answer's bookkeeping agree, before and after a sweep stores
    predictions."""
    import dataclasses  # noqa: PLC0415
    for sweep_first in (False, True):
        if sweep_first:
            assert list(daemon.sweep(SPEC))[-1].job.state == "done"
        for pass_ in ("fwd", "train"):
            grpc_route = daemon.best_dff(hidden=4096, gpu="h100", window=16, top=0, pass_=pass_)
            cli_route = crest.dff(4096, "h100", window=16, top=0, pass_=pass_,
                                  server=daemon.target)
            assert len(grpc_route) == len(cli_route) == 33
            for a, b in zip(grpc_route, cli_route):
                for field in dataclasses.fields(crest.DffRow):
                    x, y = getattr(a, field.name), getattr(b, field.name)
                    assert x == (pytest.approx(y) if isinstance(y, float) else y), \
                        (pass_, a.d_ff, field.name, x, y)
            for attr in ("gpu", "baseline_d_ff", "candidates", "measured", "predicted", "missing",
                         "tied_with_best", "run_choice", "algo_choice", "race"):
                assert getattr(grpc_route, attr) == getattr(cli_route, attr), attr


def test_a_client_token_held_in_memory_reaches_a_crestd_that_wants_one_for_reads(tmp_path):
    """Client(token=) answers through the C++ route with its token in memory:
    a crestd with --auth-reads answers it, and refuses a wrong one with
    UNAUTHENTICATED, naming no token."""
    tokens = tmp_path / "tokens"
    tokens.write_text("alice secret-token-0123456789\n")
    tokens.chmod(0o600)  # crestd refuses a token file others can read
    port_file = tmp_path / "port"
    log = tmp_path / "crestd.log"
    proc = subprocess.Popen(
        [os.environ["CRESTD_BIN"], "--listen", "127.0.0.1:0", "--state-dir", str(tmp_path),
         "--port-file", str(port_file), "--token-file", str(tokens), "--auth-reads"],
        stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    try:
        for _ in range(3000):
            if port_file.exists() and port_file.read_text().strip():
                break
            assert proc.poll() is None, log.read_text()
            time.sleep(0.01)
        target = "127.0.0.1:" + port_file.read_text().strip()
        os.environ.pop("CREST_TOKEN", None)
        with crest.Client(target, token="secret-token-0123456789") as client:
            rows = client.best_dff(hidden=4096, gpu="h100", window=4, top=3)
            assert len(rows) == 3 and rows.gpu == "H100-SXM"
            predicted = client.best_dff(hidden=4096, gpu="h100", window=4, predict_only=True)
            assert {r.source for r in predicted} == {"predicted"}
            # vocab and design take the same route, with the same token.
            assert client.vocab(50257, 4096, "h100")[0].vocab > 50257, "a padding wins"
            assert client.design("h100", hidden=4096, heads=32, vocab=32000, seq=2048,
                                 layers=24, dp=8, zero=3)[0].hidden == 4096
        with crest.Client(target, token="wrong-token-0123456789") as client:
            with pytest.raises(crest.CrestError) as e:
                client.best_dff(hidden=4096, gpu="h100", window=4)
            with pytest.raises(crest.CrestError) as v:
                client.vocab(50257, 4096, "h100")
        assert e.value.code.name == v.value.code.name == "UNAUTHENTICATED", e.value
        assert "wrong-token-0123456789" not in e.value.message
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
