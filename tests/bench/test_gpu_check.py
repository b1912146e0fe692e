"""The GPU check's pieces that run without a GPU: PyTorch's side of the
comparison (shapes, protocol arithmetic), the summary (on a real Crest
database from the first H100 run) and the script's refusal without a device.

Run by ctest with CREST_BIN, CREST_ROOT and CREST_TEST_DATA set.
"""

import json
import math
import os
import sqlite3
import shutil
import subprocess
import sys

import pytest

ROOT = os.environ["CREST_ROOT"]
sys.path.insert(0, os.path.join(ROOT, "bench"))

import gpu_check_summary as summary  # noqa: E402
import torch_compare  # noqa: E402


def test_torch_side_measures_the_same_shapes_as_the_check():
    bmm = torch_compare.seed_bmm_shapes(10820, 11020, 4)
    assert len(bmm) == 52, "K = 10820..11020 step 4, plus the naive 10922"
    assert {s["layout"] for s in bmm} == {"NN"} and {s["batch"] for s in bmm} == {4}
    mlp = torch_compare.mlp_shapes(4096, 128)
    assert len(mlp) == 2 * 257
    gate_up = [s for s in mlp if s["d_ff"] == 10922 and s["name"] == "mlp_gate_up.fwd"][0]
    assert (gate_up["m"], gate_up["n"], gate_up["k"]) == (8192, 21844, 4096)


def test_torch_side_follows_crests_protocol_arithmetic():
    # Crest's cold-L2 rule (tests/measure/arena_test.cc): 1024^3 bf16 on 50 MiB L2 → 17.
    s = {"batch": 1, "m": 1024, "n": 1024, "k": 1024, "dtype": "bf16"}
    assert torch_compare.copies_for(s, 50 << 20) == 17
    assert torch_compare.launches_per_sample(5000, 1) == 1
    assert torch_compare.launches_per_sample(5000, 3) == 3
    assert torch_compare.launches_per_sample(0.01, 1) == 256
    # Crest's order-statistic interval (tests/measure/sampling_test.cc).
    assert torch_compare.median_interval(list(range(1, 11))) == (2, 9)
    assert torch_compare.median_interval(list(range(1, 101))) == (40, 61)
    assert torch_compare.median_interval([5, 1, 4, 2, 3]) == (1, 5)


def test_torch_side_reloads_and_races_as_crest_does():
    # The reload: three times the idle gap, at most 1 s, at least the floor.
    assert torch_compare.reload_budget_s(0.1) == pytest.approx(0.3)
    assert torch_compare.reload_budget_s(5.0) == 1.0
    assert torch_compare.reload_budget_s(0.001, floor_s=0.2) == 0.2
    settled = (1455.0, 690.0)
    assert torch_compare.back_at_load(1465, 600, settled), "clock within 1%"
    assert torch_compare.back_at_load(1980, 685, settled), "power within 1%"
    assert not torch_compare.back_at_load(1700, 500, settled)
    # The study key Crest stores with a race.
    study = torch_compare.parse_study("dff hidden=4096 tokens=8192 tp=1 bf16 fwd fused")
    assert study == {"hidden": 4096, "tokens": 8192, "tp": 1, "dtype": "bf16", "pass": "fwd",
                     "fused": True}
    assert [g["name"] for g in torch_compare.mlp_gemms(study, 10944)] == \
        ["mlp_gate_up.fwd", "mlp_down.fwd"]
    with pytest.raises(ValueError):
        torch_compare.mlp_gemms({**study, "pass": "train"}, 10944)
    # Paired ratios as study_race.cc computes them: rounds 2% and 4% apart.
    times = [[100.0, 102.0], [100.0, 104.0]]
    ratio, lo, hi = torch_compare.paired_ratio(times, 1, 0)
    assert ratio == pytest.approx(math.sqrt(1.02 * 1.04))
    logs = [math.log(1.02), math.log(1.04)]
    half = 12.706 * abs(logs[1] - logs[0]) / math.sqrt(2) / math.sqrt(2)
    assert lo == pytest.approx(math.exp(sum(logs) / 2 - half))
    assert hi == pytest.approx(math.exp(sum(logs) / 2 + half))
    assert torch_compare.verdict(1.01, 1.03, 0.01) == "slower"
    assert torch_compare.verdict(0.995, 1.005, 0.01) == "tied"
    assert torch_compare.verdict(0.98, 1.03, 0.01) == "unresolved"


def test_torch_race_reads_crests_newest_race(tmp_path):
    db = tmp_path / "raced.db"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE races(id INTEGER PRIMARY KEY, study TEXT, resolution REAL, created_us INTEGER);
        CREATE TABLE race_entries(race_id INTEGER, value INTEGER, verdict TEXT, tie_group INTEGER,
                                  ratio REAL, ratio_low REAL, ratio_high REAL);
        INSERT INTO races VALUES (1, 'dff hidden=4096 tokens=8192 tp=1 bf16 fwd fused', 0.01, 5);
        INSERT INTO races VALUES (2, 'dff hidden=8192 tokens=8192 tp=1 bf16 fwd fused', 0.02, 9);
        INSERT INTO race_entries VALUES (2, 21888, 'slower', 2, 1.03, 1.02, 1.04);
        INSERT INTO race_entries VALUES (2, 21760, 'leader', 1, 1.0, 1.0, 1.0);
    """)
    con.commit()
    con.close()
    race = torch_compare.newest_race(str(db))
    assert race["race_id"] == 2 and race["resolution"] == 0.02
    assert [e["d_ff"] for e in race["crest"]] == [21760, 21888], "leader first"


def test_torch_side_without_torch_says_so():
    try:
        import torch  # noqa: F401
    except ImportError:
        assert torch_compare.main(["mlp", "--out", "/dev/null"]) == 2
    else:
        pytest.skip("PyTorch is installed here")


def test_summary_compares_runs_ties_and_torch():
    key_a = (8192, 21888, 4096, 1, "bf16", 0, 1)
    key_b = (8192, 4096, 10944, 1, "bf16", 0, 1)
    first = {key_a: {"median_us": 100.0}, key_b: {"median_us": 50.0}}
    second = {key_a: {"median_us": 101.0}, key_b: {"median_us": 50.0}}
    r = summary.repeatability(first, second)
    assert r["gemms"] == 2 and r["worst_diff"] == pytest.approx(0.01)
    assert r["median_diff"] == pytest.approx(0.005)
    dff = {"candidates": [{"d_ff": 10944, "tie_group": 1}, {"d_ff": 11008, "tie_group": 1},
                          {"d_ff": 10922, "tie_group": 3}]}
    assert summary.tie_group(dff) == [10944, 11008]
    torch_rows = [{"name": "mlp_gate_up.fwd", "m": "8192", "n": "21888", "k": "4096",
                   "batch": "1", "dtype": "bf16", "layout": "NT", "median_us": "120"}]
    c = summary.against_torch(first, torch_rows)
    assert len(c) == 1 and c[0]["ratio"] == pytest.approx(1.2), "torch slower: ratio > 1"


def test_summary_compares_the_two_runs_races():
    def sweep(leader, tied, slower, slower_ratio):
        return {"races": [{"study": "dff hidden=4096 tokens=8192 tp=1 bf16 fwd fused",
                           "race_id": 1, "why_not": None, "rounds": 40, "seconds": 12.0,
                           "stop_reason": "resolved", "standings": [
                               {"d_ff": leader, "verdict": "leader", "tie_group": 1, "ratio": 1.0},
                               {"d_ff": tied, "verdict": "tied", "tie_group": 1, "ratio": 1.002},
                               {"d_ff": slower, "verdict": "slower", "tie_group": 2,
                                "ratio": slower_ratio}]}]}
    first = summary.race_groups(sweep(10944, 11008, 10880, 1.03))[0]
    second = summary.race_groups(sweep(11008, 10944, 10880, 1.032))[0]
    assert first["leader"] == 10944 and first["group"] == [10944, 11008]
    agree = summary.races_agree(first, second)
    assert agree["leader_1_in_group_2"] and agree["leader_2_in_group_1"]
    assert agree["common"] == 3
    # Run 2's ratios taken to run 1's leader (10944, at 1.002 there): 11008 is at
    # 1/1.002 in run 2 against 1.002 in run 1, the largest difference.
    assert agree["worst_ratio_diff"] == pytest.approx(abs(1.002 - 1 / 1.002))
    assert first["algo"] == "best", "a summary without algo is of the fastest algorithms"
    none = summary.race_groups({"races": [{"study": "s", "race_id": None, "algo": "default",
                                           "why_not": "only the leader", "standings": []}]})[0]
    assert not none["raced"] and none["why_not"] == "only the leader"
    assert none["algo"] == "default"


def test_summary_tables_the_host_stages_and_the_device_load_beside_them(tmp_path):
    s = {"devices": [], "clocks": "sustained", "torch": {"shapes": 0},
         "rows_without_samples": {},
         "host_per_gemm": {"mlp-fwd-1": {"plan_s": 0.004, "graphs_s": 0.012,
                                         "keep_load_s": 0.075, "reload_s": 0.003},
                           "seed-bmm": None}}
    text = summary.markdown(s, str(tmp_path))
    assert "| study | operands | plan | graphs | verification | GPU readings | other engine | " \
           "write | between | keep-load | reload |" in text
    assert "| mlp-fwd-1 | 0.0 | 4.0 | 12.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 75.0 | 3.0 |" in text
    assert "seed-bmm" not in text.split("Host ms per GEMM")[1], "a study without figures is left out"


def test_summary_reports_the_steady_load_tests(tmp_path):
    (tmp_path / "gpu-tests.log").write_text(
        "[ RUN      ] CublasLt.SustainedMedianIsWithinThreePercentOfABackToBackLoop\n"
        "sustained median 2240.1 us, back-to-back steady 2251.0 us (900 rounds, 20.0 s), "
        "ratio 0.9952, keep-load 0.140 s, reload 0.000 s\n"
        "[       OK ] CublasLt.SustainedMedianIsWithinThreePercentOfABackToBackLoop (25000 ms)\n"
        "[ RUN      ] CublasLt.HostWorkBetweenGemmsRunsBesideQueuedLoad\n"
        "after a 100 ms pause: keep-load 0.131 s, reload 0.000 s, 0 samples discarded, "
        "first algorithm 2250.3 us\n"
        "[  FAILED  ] CublasLt.HostWorkBetweenGemmsRunsBesideQueuedLoad (3000 ms)\n")
    lines = summary.steady_load_lines(str(tmp_path))
    assert lines[0] == "- SustainedMedianIsWithinThreePercentOfABackToBackLoop: passed"
    assert lines[1] == "- HostWorkBetweenGemmsRunsBesideQueuedLoad: FAILED"
    assert lines[2].startswith("- sustained median 2240.1 us") and "ratio 0.9952" in lines[2]
    assert lines[3].startswith("- after a 100 ms pause")
    assert summary.steady_load_lines(str(tmp_path / "none")) == []


def test_summary_reads_a_real_crest_database(tmp_path):
    db = tmp_path / "seed-bmm.db"
    shutil.copy(os.path.join(os.environ["CREST_TEST_DATA"], "h100-2026-11-22",
                             "crest-seed-bmm.db"), db)
    os.chmod(db, 0o644)
    up = subprocess.run([os.environ["CREST_BIN"], "db", "check", "--upgrade", "--db", str(db)],
                        capture_output=True, text=True)
    assert up.returncode == 0, up.stderr
    # The first engine's rows are burst measurements; none is sustained.
    assert summary.best_times(str(db)) == {}
    burst = summary.best_times(str(db), clocks="burst")
    assert len(burst) == 15
    assert all(v["median_us"] > 0 for v in burst.values())
    assert summary.rows_without_samples(str(db)) == 34


def test_gpu_check_without_a_device_measures_nothing_and_says_so(tmp_path):
    info = json.loads(subprocess.run([os.environ["CREST_BIN"], "info", "--json"],
                                     capture_output=True, text=True).stdout)
    if info["devices"]:
        pytest.skip("this machine has a CUDA device")
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.environ["CREST_BIN"])))
    r = subprocess.run([os.path.join(ROOT, "scripts", "gpu-check.sh"), "--build-dir", build,
                        "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no CUDA device" in r.stderr
    assert not (tmp_path / "out" / "summary.md").exists()
