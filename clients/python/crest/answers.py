"""The architect's answers (`crest dff`, `crest vocab`, `crest design`) as typed rows.

The crest command's answering layer computes them, locally with this build's
model, from a database file (db=...) or through a crestd (server=...): in
this process through the compiled extension crest._native (no subprocess, no
binary on PATH, no Python gRPC), else, in a package built without it, by
running the `crest` binary ($CREST_BIN, else `crest` on PATH). The --json
document becomes dataclasses: numbers are numbers, sources are crest.Source.
Each answer is a list with to_pandas() and plot().
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from typing import List, Optional, Sequence

from crest.types import (CrestError, DffAnswer, DffRow, Gemm, GemmAnswer, Gpu, Prediction,
                         ShapesAnswer, Source, TileChoice, _query_frame)


class CrestCommandError(CrestError):
    """The crest command refused the question (its message names the field)."""

    def __init__(self, exit_code: int, message: str, status: Optional[str] = None):
        Exception.__init__(self, message)
        self.code = exit_code
        self.message = message
        # The failure's status code by name ("INVALID_ARGUMENT", a crestd's
        # gRPC code, …): known in process; from the binary, 2 is
        # INVALID_ARGUMENT and the rest UNKNOWN.
        self.status = status or ("INVALID_ARGUMENT" if exit_code == 2 else "UNKNOWN")


def _binary() -> str:
    path = os.environ.get("CREST_BIN") or shutil.which("crest")
    if not path:
        raise FileNotFoundError("crest: the command is not found; set CREST_BIN or put it on PATH")
    return path


def _native():
    """crest._native, or None in a package built without it."""
    try:
        from crest import _native as native  # noqa: PLC0415
    except ImportError:
        return None
    return native


def in_process() -> bool:
    """Whether answers run in this process (crest._native) or by the crest binary."""
    return _native() is not None


def run_crest(args: Sequence[str], *, server: Optional[str] = None,
              db: Optional[str] = None, row_fields: Optional[Sequence[str]] = None,
              columns: bool = False, token: Optional[str] = None,
              root_certificates: Optional[bytes] = None,
              timeout: Optional[float] = None) -> dict:
    """Runs `crest [--server S] --json ARGS [--db DB]` and returns its document.

    In process, as the binary would: $CREST_SERVER (when set) sends local
    questions to that crestd, and a `--calibration FILE` among ARGS stays in
    force for the rest of the process (the binary forgets it at exit). The
    document comes over as Python objects, not JSON text. With row_fields,
    each of the document's "candidates" is a tuple of those fields in order
    (None where absent), whichever way the command ran; with columns (in
    process only), a d_ff answer's "candidates" is a dict of every DffRow
    field's column (NumPy arrays for numbers, NaN where a row has none).
    With server: token and root_certificates (PEM bytes) reach the crestd
    from memory (in process; the binary is given them as CREST_TOKEN in its
    environment and a --tls-ca file), over $CREST_TOKEN; timeout: seconds a
    call may take."""
    argv = (["--server", server] if server else [])
    if server and timeout is not None:
        argv += ["--timeout", str(timeout)]
    argv += ["--json", *map(str, args)]
    if db:
        argv += ["--db", db]
    native = _native()
    if native is not None:
        code, doc, err, status = native.answer(
            argv, list(row_fields) if row_fields else None, columns, token=token or "",
            root_certificates=root_certificates or b"", with_status=True)
        if code != 0:
            raise CrestCommandError(code, err.strip(), status)
        return doc
    done = _run_binary(argv, token, root_certificates)
    if done.returncode != 0:
        raise CrestCommandError(done.returncode, done.stderr.strip())
    doc = json.loads(done.stdout)
    if row_fields and isinstance(doc.get("candidates"), list):
        doc["candidates"] = [tuple(_flat(c).get(k) for k in row_fields) for c in doc["candidates"]]
    return doc


def _run_binary(argv: List[str], token: Optional[str],
                root_certificates: Optional[bytes]) -> subprocess.CompletedProcess:
    """The crest binary on argv, the token in its environment and the CA in
    a file it reads (--tls-ca), removed after."""
    env = dict(os.environ, CREST_TOKEN=token) if token else None
    if not root_certificates:
        return subprocess.run([_binary(), *argv], capture_output=True, text=True, check=False,
                              env=env)
    with tempfile.NamedTemporaryFile(suffix=".pem") as ca:
        ca.write(root_certificates)
        ca.flush()
        return subprocess.run([_binary(), "--tls-ca", ca.name, *argv], capture_output=True,
                              text=True, check=False, env=env)


def _flat(candidate: dict) -> dict:
    """A dff candidate's fields as DffRow and the in-process rows hold them:
    the race's verdict and ratio as race_verdict and race_ratio, runs a tuple."""
    race = candidate.get("race") if isinstance(candidate.get("race"), dict) else {}
    return {**candidate, "race_verdict": race.get("verdict"), "race_ratio": race.get("ratio"),
            "runs": tuple(candidate.get("runs") or ())}


def _flags(**kwargs) -> List[str]:
    out = []
    for name, value in kwargs.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        out += [flag] if value is True else [flag, str(value)]
    return out


def _source(name: Optional[str]) -> Source:
    try:
        return Source(name)
    except ValueError:
        return Source.UNKNOWN


def _check_mode(cache: str, clocks: str) -> None:
    """Which measurements may answer, checked before any call: a ValueError
    names the argument."""
    if cache not in ("cold", "warm"):
        raise ValueError(f"cache: '{cache}' is not cold or warm")
    if clocks not in ("sustained", "burst"):
        raise ValueError(f"clocks: '{clocks}' is not sustained or burst")


# ---- one GEMM, the catalogue, a layer's shapes --------------------------------

def _tile_choice(c: dict) -> TileChoice:
    return TileChoice(int(c["tile"]["m"]), int(c["tile"]["n"]), int(c["ctas_per_sm"]),
                      int(c["tiles"]), int(c["waves"]), float(c["tile_efficiency"]),
                      float(c["wave_efficiency"]), float(c["time_us"]))


def explain(m: int, n: int, k: int, gpu: str, *, batch: int = 1, dtype: str = "bf16",
            layout: str = "NT", server: Optional[str] = None, token: Optional[str] = None,
            root_certificates: Optional[bytes] = None,
            timeout: Optional[float] = None) -> Prediction:
    """`crest explain`: the model's answer for one GEMM with its tile, wave and
    alignment arithmetic; with server, that crestd's model (Client.predict)."""
    doc = run_crest(["explain", *_flags(m=m, n=n, k=k, batch=batch, dtype=dtype,
                                        layout=layout, gpu=gpu)], server=server, token=token,
                    root_certificates=root_certificates, timeout=timeout)
    tiles = [_tile_choice(c) for c in doc["candidates"]]
    chosen = doc["tile"]
    best = next((t for t in tiles if (t.tile_m, t.tile_n) == (chosen["m"], chosen["n"])),
                tiles[0] if tiles else None)
    return Prediction(_source(doc["source"]), doc["model_version"], doc["calibration"],
                      doc["gpu"], float(doc["time_us"]), float(doc["tflops"]),
                      float(doc["peak_tflops"]), doc["bound"] == "memory", doc["kernel_family"],
                      float(doc["family_tflops"]), float(doc["alignment"]["factor"]),
                      float(doc["expected_error"]), best, tiles)


# What `crest lookup` says when nothing answers a GEMM: no stored row and no
# model path for its dtype on that GPU (clients/crest/cmd_lookup.cc).
_NOTHING_ANSWERS = "the model has no path for"


def lookup(m: int, n: int, k: int, gpu: str, *, db: Optional[str] = None,
           server: Optional[str] = None, batch: int = 1, dtype: str = "bf16",
           layout: str = "NT", runs: Optional[str] = None, algo: Optional[str] = None,
           cache: str = "cold", warm: bool = False, clocks: str = "sustained",
           token: Optional[str] = None, root_certificates: Optional[bytes] = None,
           timeout: Optional[float] = None) -> GemmAnswer:
    """`crest lookup`: the best known result for one GEMM in a database (db=)
    or a crestd (server=; Client.lookup): measured where it has one (the
    latest run's, or runs="all" pooled), else predicted, and says which
    (source); found is False (Source.NONE) when nothing answers, no row and
    no model path for the dtype on that GPU. cache is "cold" or "warm"
    (warm=True is its older spelling), as crest.dff's. detail holds the whole
    document: the algorithm, device, software and runs of a measurement."""
    _check_mode(cache, clocks)
    args = ["lookup", *_flags(m=m, n=n, k=k, batch=batch, dtype=dtype, layout=layout, gpu=gpu,
                              runs=runs, algo=algo, warm=warm or cache == "warm",
                              clocks=None if clocks == "sustained" else clocks)]
    try:
        doc = run_crest(args, server=server, db=db, token=token,
                        root_certificates=root_certificates, timeout=timeout)
    except CrestCommandError as e:
        if _NOTHING_ANSWERS not in e.message:
            raise
        return GemmAnswer(False, Source.NONE, 0.0, 0.0, 0, 0, 0.0, 0.0, "", 0.0,
                          {"message": e.message})
    found = doc.get("time_us") is not None
    return GemmAnswer(found, _source(doc["source"]) if found else Source.NONE,
                      float(doc.get("time_us") or 0), float(doc.get("tflops") or 0),
                      int(doc.get("tiles") or 0), int(doc.get("waves") or 0),
                      float(doc.get("tile_efficiency") or 0),
                      float(doc.get("wave_efficiency") or 0), doc.get("model_version", ""),
                      float(doc.get("expected_error") or 0), doc)


def gpus() -> List[Gpu]:
    """`crest gpus`: the catalogue, oldest architecture first."""
    doc = run_crest(["gpus"])
    return [Gpu(g["name"], g["architecture"], g["compute_capability"], int(g["sm_count"]),
                int(g["l2_bytes"]), float(g["memory_gib"]), float(g["memory_bandwidth_gbs"]),
                {d: float(v) for d, v in g["peak_tflops"].items()}, float(g["power_w"]),
                float(g["boost_clock_mhz"]), int(g["min_alignment_bytes"]),
                int(g["preferred_alignment_bytes"]), tuple(g["aliases"]),
                g["model_calibration"], tuple(g["calibrations"])) for g in doc["gpus"]]


def shapes(hidden: int, heads: int, d_ff: int, vocab: int, seq: int, *,
           kv_heads: Optional[int] = None, batch: int = 1, tp: int = 1,
           pass_: str = "fwd", dtype: str = "bf16", separate_gate_up: bool = False,
           attention: Optional[str] = None) -> ShapesAnswer:
    """`crest shapes`: the GEMMs of one transformer layer per tensor-parallel
    rank (pass_ "fwd" or "train": with the data- and weight-gradient GEMMs)."""
    if pass_ not in _PASSES:
        raise ValueError(f"pass_: '{pass_}' is not fwd or train")
    doc = run_crest(["shapes", *_flags(hidden=hidden, heads=heads, kv_heads=kv_heads, d_ff=d_ff,
                                       vocab=vocab, seq=seq, batch=batch, tp=tp, dtype=dtype,
                                       separate_gate_up=separate_gate_up,
                                       attention=attention), "--pass", pass_])
    answer = ShapesAnswer(Gemm(g["name"], g["pass"], int(g["m"]), int(g["n"]), int(g["k"]),
                               int(g["batch"]), g["dtype"], g["layout"], float(g["flops"]))
                          for g in doc["gemms"])
    answer.layer_flops, answer.logits_flops = float(doc["layer_flops"]), float(doc["logits_flops"])
    answer.attention, answer.warnings = doc["attention"], list(doc["warnings"])
    answer.query = {"hidden": hidden, "heads": heads, "kv_heads": kv_heads or heads, "d_ff": d_ff,
                    "vocab": vocab, "seq": seq, "batch": batch, "tp": tp, "pass": pass_,
                    "dtype": doc["dtype"]}
    return answer


# ---- d_ff -----------------------------------------------------------------

def _dff_row(r: dict) -> DffRow:
    basis = r.get("speedup_basis")
    race = r.get("race") or {}
    return DffRow(int(r["d_ff"]), float(r["time_us"]), float(r["tflops"]),
                  float(r["speedup_vs_baseline"] or 0.0), int(r["mlp_params"]),
                  int(r["params_delta"]), _source(r["source"]), r["provenance"],
                  float(r["time_low_us"]), float(r["time_high_us"]), int(r["tie_group"]),
                  int(r.get("rank", 0)), _source(basis) if basis else None,
                  tuple(int(j) for j in r.get("runs", ())), bool(r.get("pooled", False)),
                  race.get("verdict"), race.get("ratio"))


def _baseline_row(b: dict) -> Optional[DffRow]:
    """The answer's baseline (naive d_ff) as a row, as the gRPC route gives it;
    None when no source answered it."""
    if b.get("time_us") is None:
        return None
    source = _source(b["source"])
    time_us = float(b["time_us"])
    return DffRow(int(b["d_ff"]), time_us, float(b["tflops"]), 1.0, int(b["mlp_params"]), 0,
                  source, b.get("provenance") or "",
                  float(b.get("time_low_us") or time_us), float(b.get("time_high_us") or time_us),
                  0, 0, source, tuple(int(r["job_id"]) for r in b.get("runs", ())),
                  bool(b.get("pooled", False)))


_PASSES = ("fwd", "train")


def _pass_of(pass_, old, old_name: str, who: str):
    """The pass asked for: `pass_` ("fwd" or "train", the crest command's
    default "fwd"; "pass" is a Python keyword), unless the deprecated
    spelling `old_name` (train=True/False, or passes=...) is given: then that,
    with a DeprecationWarning. One spelling for every call, as --pass."""
    if old is None:
        return pass_
    import warnings  # noqa: PLC0415
    warnings.warn(f"{who}({old_name}=...) is deprecated: use pass_=\"fwd\" or \"train\"",
                  DeprecationWarning, stacklevel=3)
    return ("train" if old else "fwd") if isinstance(old, bool) else old


def _dff_args(hidden, gpu, *, pass_, **flags) -> List[str]:
    """`crest dff`'s arguments (pass_: "fwd" or "train"; "pass" is a keyword)."""
    return ["dff", *_flags(hidden=hidden, gpu=gpu, **flags), "--pass", pass_]


def dff(hidden: int, gpu: str, *, server: Optional[str] = None, db: Optional[str] = None,
        ratio: str = "8/3", window: int = 128, align: int = 1, tokens: int = 8192, tp: int = 1,
        dtype: str = "bf16", pass_: str = "fwd", top: int = 10,
        runs: Optional[str] = None, algo: Optional[str] = None,
        train: Optional[bool] = None, separate_gate_up: bool = False,
        predict_only: bool = False, cache: str = "cold", clocks: str = "sustained",
        token: Optional[str] = None, root_certificates: Optional[bytes] = None,
        timeout: Optional[float] = None) -> DffAnswer:
    """`crest dff`: d_ff candidates near ratio*hidden, the headline best first
    (rows[0], its kind in the source column), then the rest of its kind, then
    the other kind. pass_: "fwd" (default) or "train" (as --pass; train= is
    its deprecated spelling). runs: "latest" (default) or "all" (pooled);
    algo: "best" (default) or "default" (cuBLASLt's first choice); both with
    db or server. rows.baseline is the naive d_ff's row (None when nothing
    answers it). cache ("cold" or "warm") and clocks ("sustained" or "burst")
    choose which measurements answer; predict_only: the model's prediction
    alone, no database read (a crestd's model, with server). token,
    root_certificates and timeout: as run_crest takes them, with server."""
    _check_mode(cache, clocks)
    doc = run_crest(_dff_args(hidden, gpu, ratio=ratio, window=window, align=align,
                              tokens=tokens, tp=tp, dtype=dtype, top=top, runs=runs, algo=algo,
                              separate_gate_up=separate_gate_up, predict_only=predict_only,
                              warm=cache == "warm",
                              clocks=None if clocks == "sustained" else clocks,
                              pass_=_pass_of(pass_, train, "train", "dff")),
                    server=server, db=db, token=token, root_certificates=root_certificates,
                    timeout=timeout)
    return dff_from_json(doc)


def dff_from_json(doc: dict) -> DffAnswer:
    """`crest dff --json`'s document as typed rows."""
    answer = DffAnswer(_dff_row(r) for r in doc["candidates"])
    b = doc["baseline"]
    answer.gpu = doc["gpu"]
    answer.query = {"gpu": doc["gpu"], "dtype": doc["dtype"], "hidden": int(doc["hidden"]),
                    "tp": int(doc["tp"]), "pass": doc["pass"], "tokens": int(doc["tokens"]),
                    "ratio": doc["ratio"]}
    answer.baseline = _baseline_row(b)
    answer.baseline_d_ff = int(b["d_ff"])
    cov = doc["coverage"]
    answer.candidates, answer.measured = int(cov["candidates"]), int(cov["measured"])
    answer.predicted, answer.missing = int(cov["predicted"]), int(cov["missing"])
    answer.replayed = int(cov.get("replayed", 0))
    answer.tied_with_best = int(doc["tied_with_best"])
    mode = doc.get("measure_mode") or {}
    answer.cache_mode = mode.get("cache")
    answer.clock_policy = mode.get("clocks")
    answer.headline = answer[0] if answer else None
    answer.runs = list(doc.get("runs", []))
    answer.run_choice = doc.get("run_choice")
    answer.algo_choice = doc.get("algo_choice")
    answer.race = doc.get("race") if (doc.get("race") or {}).get("race_id") else None
    return answer


# ---- vocab ----------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class VocabRow:
    rank: int                  # within its source
    tie_group: int
    vocab: int                 # the padded size
    multiple_of: Optional[int]  # the largest of 8..1024 times tp it is a multiple of
    unpadded: bool
    fwd_us: float              # the logits GEMM, forward
    train_us: float            # forward + data and weight gradients
    train_tflops: float
    speedup: float             # the baseline's time / this one, same source only; 0: not comparable
    extra_params: int          # (vocab - V)*h per vocab-by-h table
    extra_params_per_rank: int
    source: Source             # of the ranked time
    provenance: str


class VocabAnswer(list):
    """The paddings, each source ranked within itself."""

    gpu: str
    vocab: int
    baseline: int
    rank_by: str
    answered_by: str
    query: dict  # gpu, dtype, hidden, tp, tokens, rank_by

    def to_pandas(self):
        """One row per padding, the query's keys first."""
        return _query_frame(self)

    def plot(self, ax=None):
        from crest.plot import plot_vocab  # noqa: PLC0415 (matplotlib is optional)
        return plot_vocab(self, ax)


def vocab(vocab_size: int, hidden: int, gpu: str, *, server: Optional[str] = None,
          db: Optional[str] = None, tp: int = 1, tokens: int = 8192, dtype: str = "bf16",
          rank_by: str = "train", runs: Optional[str] = None, token: Optional[str] = None,
          root_certificates: Optional[bytes] = None,
          timeout: Optional[float] = None) -> VocabAnswer:
    """`crest vocab`: paddings of a vocabulary ranked by the logits GEMM's time, the
    headline best first. runs: "latest" (default) or "all" (pooled), with db or server.
    token, root_certificates and timeout: as run_crest takes them, with server."""
    doc = run_crest(["vocab", *_flags(vocab=vocab_size, hidden=hidden, gpu=gpu, tp=tp,
                                      tokens=tokens, dtype=dtype, rank_by=rank_by, runs=runs)],
                    server=server, db=db, token=token, root_certificates=root_certificates,
                    timeout=timeout)
    return vocab_from_json(doc)


def vocab_from_json(doc: dict) -> VocabAnswer:
    """`crest vocab --json`'s document as typed rows."""
    ranked = "train" if doc["rank_by"] == "train" else "fwd"
    answer = VocabAnswer(
        VocabRow(int(r["rank"]), int(r["tie_group"]), int(r["vocab"]),
                 None if r["multiple_of"] is None else int(r["multiple_of"]), bool(r["unpadded"]),
                 float(r["fwd"]["time_us"]), float(r["train"]["time_us"]),
                 float(r["train_tflops"]), float(r["speedup"] or 0.0), int(r["extra_params"]),
                 int(r["extra_params_per_rank"]), _source(r["source"]),
                 r[ranked]["provenance"])
        for r in doc["candidates"])
    answer.gpu, answer.vocab, answer.baseline = doc["gpu"], int(doc["vocab"]), int(doc["baseline"])
    answer.query = {"gpu": doc["gpu"], "dtype": doc["dtype"], "hidden": int(doc["hidden"]),
                    "tp": int(doc["tp"]), "tokens": int(doc["tokens"]),
                    "rank_by": doc["rank_by"]}
    answer.rank_by, answer.answered_by = doc["rank_by"], doc["answered_by"]
    return answer


# ---- design ---------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class DesignRow:
    """One configuration's predicted training step on one GPU (crest design --json)."""
    rank: int                  # within its source
    tie_group: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    d_ff: int
    vocab: int
    seq: int
    micro_batch: int
    tp: int
    dp: int
    zero: int
    grad_accum: int
    recompute: str             # none, selective, full
    mlp: str                   # swiglu, gelu
    grad_reduce: str           # the dtype gradients are reduced in: fp32, bf16
    backward_prefetch: str     # FSDP's (zero 3): pre, post
    layers: int
    params: int
    params_per_tp_rank: int
    train_flops_per_token: float      # executed (causal attention), forward and backward
    model_flops_per_token: float      # MFU's: 6 per matmul weight + 12·L·a·d·s
    layer_fwd_us: float               # one layer's GEMMs and attention core, one micro-batch
    attention_core_fwd_us: float
    step_ms: float                    # one optimizer step on one GPU
    gemm_ms: float                    # its parts: GEMMs,
    attention_ms: float               # the attention core,
    other_kernels_ms: float           # the memory-bound kernels,
    recompute_ms: float               # the forward re-run,
    comm_ms: float                    # tensor-parallel + exposed data-parallel collectives,
    optimizer_ms: float               # the optimizer
    tokens_per_s_per_gpu: float
    tokens_per_s_per_gpu_no_overlap: float
    model_tflops_per_gpu: float       # model FLOP/s per GPU / 1e12
    mfu_peak: float                   # MFU against the datasheet dense peak
    hfu_peak: float
    memory_gib: float                 # predicted per GPU
    fits: bool
    source: Source                    # of the step's time
    warnings: List[str]


class DesignAnswer(list):
    """Ranked configurations; `broken` holds those that break a rule, with the rule
    (and, where memory is the rule, the memory)."""

    gpu: str
    answered_by: str
    peak_tflops: float
    rank_by: str               # tokens_per_s_per_gpu, or model_flops_per_s_per_gpu across sizes
    broken: List[dict]
    attention_note: str
    assumptions: List[str]
    query: dict  # gpu, dtype, attention (fused, fused-fa2, fused-triton or unfused)

    def to_pandas(self):
        """One row per configuration (its own dimensions in its columns), the
        query's keys first."""
        return _query_frame(self)

    def plot(self, ax=None):
        from crest.plot import plot_design  # noqa: PLC0415
        return plot_design(self, ax)


def _design_row(r: dict) -> DesignRow:
    c, step = r["config"], r["step"]

    def ms(part: str) -> float:
        return float(step[part]["time_us"]) / 1e3

    return DesignRow(
        int(r["rank"]), int(r["tie_group"]), int(c["hidden"]), int(c["heads"]),
        int(c["kv_heads"]), int(c["head_dim"]), int(c["d_ff"]), int(c["vocab"]), int(c["seq"]),
        int(c["micro_batch"]), int(c["tp"]), int(c["dp"]), int(c["zero"]),
        int(c["grad_accum"]), str(c["recompute"]), str(c["mlp"]), str(c["grad_reduce"]),
        str(c["backward_prefetch"]), int(c["layers"]),
        int(r["params"]["total"]), int(r["params"]["per_tp_rank"]),
        float(r["train_flops_per_token"]), float(r["model_flops_per_token"]),
        float(r["layer_fwd"]["time_us"]), float(r["attention_core_fwd"]["time_us"]),
        float(step["time_us"]) / 1e3, ms("gemm"), ms("attention"), ms("other_kernels"),
        ms("recompute"), ms("tp_comm") + ms("dp_comm_exposed"), ms("optimizer"),
        float(r["tokens_per_s_per_gpu"]), float(r["tokens_per_s_per_gpu_no_overlap"]),
        float(r["model_flops_per_s_per_gpu"]) / 1e12, float(r["mfu_peak"]),
        float(r["hfu_peak"]), float(r["memory"]["total_gib"]), bool(r["memory"]["fits"]),
        _source(r["source"]), list(r["warnings"]))


def design(gpu: str, *, server: Optional[str] = None, db: Optional[str] = None,
           top: int = 10, token: Optional[str] = None,
           root_certificates: Optional[bytes] = None, timeout: Optional[float] = None,
           **dims) -> DesignAnswer:
    """`crest design`: dims are hidden, heads, kv_heads, d_ff, vocab, seq, batch (or
    "max"), tp, layers (a value, "4096,5120" or "4096:8192:512"), or params="7B" with
    tolerance; and the step's layout: dp, zero, grad_accum, grad_reduce ("fp32" or
    "bf16"), backward_prefetch ("pre" or "post", with zero=3), recompute, mlp, norm,
    gpus_per_node, attention; runs="all" pools a database's runs (default: each
    configuration from one run). token, root_certificates and timeout: as run_crest
    takes them, with server."""
    lists = {k: ",".join(map(str, v)) if isinstance(v, (list, tuple)) else v
             for k, v in dims.items()}
    doc = run_crest(["design", *_flags(gpu=gpu, top=top, **lists)], server=server, db=db,
                    token=token, root_certificates=root_certificates, timeout=timeout)
    return design_from_json(doc)


def design_from_json(doc: dict) -> DesignAnswer:
    """`crest design --json`'s document as typed rows."""
    answer = DesignAnswer(_design_row(r) for r in doc["configs"])
    answer.gpu, answer.answered_by = doc["gpu"], doc["answered_by"]
    answer.peak_tflops = float(doc["peak_tflops"])
    answer.rank_by = doc["rank_by"]
    answer.broken = list(doc["broken_rules"])
    answer.attention_note = doc["attention_note"]
    answer.assumptions = list(doc["assumptions"])
    # Each row carries its own configuration; these keys are the question's.
    answer.query = {"gpu": doc["gpu"], "dtype": doc["dtype"], "attention": doc["attention"]}
    return answer


# ---- studies ----------------------------------------------------------------

def _pow2(n: int) -> int:
    """The largest power of two dividing n (as `crest dff`'s pow2 column)."""
    return n & -n if n > 0 else 0


# A study's row fields: DffRow's, which are the dff document's candidate keys.
_STUDY_FIELDS = tuple(f.name for f in dataclasses.fields(DffRow))
# Its real-valued fields: float64 columns (NaN where a row has none) by either route.
_REAL_FIELDS = tuple(f.name for f in dataclasses.fields(DffRow)
                     if f.type in ("float", "Optional[float]", float, Optional[float]))
_STUDY_KEYS = ("gpu", "dtype", "hidden", "tp", "pass", "tokens", "ratio")


def _cell_keys(doc: dict) -> tuple:
    return (doc["gpu"], doc["dtype"], int(doc["hidden"]), int(doc["tp"]), doc["pass"],
            int(doc["tokens"]), doc["ratio"])


def _study_frame_of_columns(docs, pandas):
    """The study frame from each cell's columns (crest._native, columns=True):
    arrays joined, no Python object per number."""
    import numpy  # noqa: PLC0415  (pandas' own dependency)
    cells = [(doc, doc["candidates"]) for doc in docs]
    counts = [len(c["d_ff"]) if isinstance(c, dict) else 0 for _, c in cells]
    keys = [_cell_keys(doc) for doc, _ in cells]
    data = {}
    for i, key in enumerate(_STUDY_KEYS):
        values = [k[i] for k in keys]
        kind = numpy.int64 if isinstance(values[0], int) else object
        data[key] = numpy.repeat(numpy.array(values, dtype=kind), counts)
    full = [c for _, c in cells if isinstance(c, dict)]
    for name in _STUDY_FIELDS:
        parts = [c[name] for c in full]
        if parts and isinstance(parts[0], numpy.ndarray):
            data[name] = numpy.concatenate(parts)
        else:
            joined = [v for part in parts for v in part]
            data[name] = numpy.fromiter(joined, dtype=object, count=len(joined))
    d_ff, tp = data["d_ff"], data["tp"]
    whole = d_ff // tp
    data["pow2"] = numpy.where(d_ff % tp == 0, whole & -whole, 0).astype(numpy.int64)
    bases = [int(doc["baseline"]["d_ff"]) for doc, _ in cells]
    data["baseline_d_ff"] = numpy.repeat(numpy.array(bases, dtype=numpy.int64), counts)
    # copy=False: the arrays are this frame's alone, and joining them into
    # one block a dtype copied every number again (0.07-0.27 ms a ranking
    # against 0.04, issue 39).
    return pandas.DataFrame(data, copy=False)


def _in_order(fn, items, workers):
    """[fn(item) for item in items], on up to `workers` threads: one task a
    thread, each taking the next item not yet taken (a study's grid
    alternates fwd and train cells, so a fixed share would give one thread
    the dearer ones), and none where one thread is asked for: handing each
    item to a pool thread was a tenth of a predicted study's time (issue 39:
    0.08-0.10 ms of about 0.6 ms a cell on a 2-core VM). An item's error is
    raised here (with several threads, that of the first thread with one)."""
    import concurrent.futures  # noqa: PLC0415
    import itertools  # noqa: PLC0415
    workers = max(1, min(workers, len(items)))
    if workers == 1:
        return [fn(item) for item in items]
    out = [None] * len(items)
    taken = itertools.count()  # next() on it is atomic under the GIL

    def work(_):
        while (i := next(taken)) < len(items):
            out[i] = fn(items[i])

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(work, range(workers)))
    return out


def study(*, gpu, hidden, tp=1, pass_="fwd", ratio="8/3", window: int = 128,
          tokens: int = 8192, dtype="bf16", align: int = 1, runs: Optional[str] = None,
          server: Optional[str] = None, db: Optional[str] = None, threads: int = 0,
          passes=None):
    """Every d_ff ranking of a grid in one tidy pandas DataFrame.

    gpu, hidden, tp, pass_ ("fwd"/"train", default "fwd"; passes= is its
    deprecated spelling), ratio and dtype take a value or a list; the grid is their product, and each cell is `crest dff` over every
    candidate of its window (top=0). One row per candidate: its keys (gpu,
    dtype, hidden, tp, pass, tokens, ratio), the row's fields as DffRow names
    them (d_ff, time_us, tflops, speedup_vs_baseline, source, provenance:
    the model version or the device and software, tie_group, rank, runs, …),
    `pow2` (the largest power of two dividing d_ff/tp: the alignment class)
    and `baseline_d_ff`. Local answers run in this process, `threads` at a
    time (0: one per CPU; the answering code runs without the GIL; below 0:
    ValueError)."""
    import itertools  # noqa: PLC0415
    try:
        import pandas  # noqa: PLC0415
    except ImportError as e:
        raise ImportError("study() needs pandas (apt-get install python3-pandas)") from e

    def as_list(v):
        return list(v) if isinstance(v, (list, tuple, set, range)) else [v]

    the_pass = _pass_of(pass_, passes, "passes", "study")
    cells = list(itertools.product(as_list(gpu), as_list(hidden), as_list(tp), as_list(the_pass),
                                   as_list(ratio), as_list(dtype)))
    if not cells:
        raise ValueError("study: an axis is empty")
    for cell in cells:
        if cell[3] not in _PASSES:
            raise ValueError(f"pass_: '{cell[3]}' is not fwd or train")

    native = _native()

    def answer(cell):
        g, h, t, p, r, d = cell
        args = _dff_args(int(h), g, ratio=str(r), window=window, align=align, tokens=tokens,
                         tp=int(t), dtype=d, top=0, runs=runs, pass_=p)
        if native is not None:  # each cell's columns, as arrays
            return run_crest(args, server=server, db=db, columns=True)
        return run_crest(args, server=server, db=db, row_fields=_STUDY_FIELDS)

    if threads is not None and threads < 0:
        raise ValueError(f"threads: must be 0 (one per CPU) or more (got {threads})")
    docs = _in_order(answer, cells, threads or os.cpu_count() or 1)
    if native is not None:
        return _study_frame_of_columns(docs, pandas)
    records = []
    for doc in docs:
        keys = _cell_keys(doc)
        tp_ = keys[3]
        base = int(doc["baseline"]["d_ff"])
        for row in doc["candidates"]:  # tuples of _STUDY_FIELDS, d_ff first
            f = row[0]
            records.append((*keys, *row, _pow2(f // tp_) if f % tp_ == 0 else 0, base))
    columns = [*_STUDY_KEYS, *_STUDY_FIELDS, "pow2", "baseline_d_ff"]
    frame = pandas.DataFrame.from_records(records, columns=columns)
    return frame.astype({name: "float64" for name in _REAL_FIELDS})


def plot_study(frame, *, facet="gpu", axes=None):
    """TFLOP/s against d_ff for each value of `facet` (a column of study()'s
    frame, or a list of them: a panel per combination, e.g. ["gpu", "pass"];
    frame: gpu, tp, hidden, pass, dtype), one panel each; colour is the
    alignment class (pow2 of d_ff/tp), the marker the source; the legend sits
    outside the data. Returns the figure."""
    from crest.plot import plot_study as draw  # noqa: PLC0415
    return draw(frame, facet=facet, axes=axes)
