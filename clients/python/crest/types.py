"""The rows and answers Crest's Python package returns, and its errors.

Nothing here imports gRPC: local answers (crest._native) and a crestd's
(crest.Client, server=...) share these types.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import List, Optional, Tuple


class Source(str, enum.Enum):
    """Where a figure came from. A str, so `row.source == "measured"` holds
    and JSON and pandas show the name."""

    MEASURED = "measured"    # timed on a device by Crest's engine
    PREDICTED = "predicted"  # the analytic model (the row's provenance names its version)
    MIXED = "mixed"          # a sum over GEMMs of more than one kind
    REPLAYED = "replayed"    # Crest's pipeline on a simulated GPU timing a recorded table
    IMPORTED = "imported"    # another tool's timing (crest db import); never an answer
    UNKNOWN = "unknown"      # not said (an older crestd)
    NONE = "none"            # no figure: a lookup that found nothing

    def __str__(self) -> str:
        return self.value


class CrestError(Exception):
    """A call the daemon refused or could not answer."""

    def __init__(self, code, message: str):
        # code: a grpc.StatusCode from a crestd, or the crest command's exit code
        super().__init__(f"{getattr(code, 'name', code)}: {message}")
        self.code = code
        self.message = message


def _rows_to_pandas(rows):
    try:
        import pandas  # noqa: PLC0415 (optional dependency)
    except ImportError as e:
        raise ImportError("to_pandas() needs pandas (apt-get install python3-pandas)") from e
    if not rows:
        return pandas.DataFrame()
    # Field by field, shallow (dataclasses.asdict deep-copies: 40x slower).
    names = [f.name for f in dataclasses.fields(rows[0])]
    return pandas.DataFrame([[getattr(r, n) for n in names] for r in rows], columns=names)


def _query_frame(answer):
    """An answer's rows as a DataFrame, the keys of its question (answer.query)
    as the first columns, so frames of different questions concatenate."""
    frame = _rows_to_pandas(answer)
    for i, (key, value) in enumerate(getattr(answer, "query", {}).items()):
        if key not in frame.columns:
            frame.insert(i, key, value)
    return frame


@dataclasses.dataclass(frozen=True)
class DffRow:
    d_ff: int
    time_us: float          # the whole MLP, all GEMMs summed
    tflops: float
    speedup_vs_baseline: float  # against the baseline of this row's kind (else the predicted
                                # baseline: speedup_basis says which); 0: no baseline at all
    mlp_params: int
    params_delta: int
    source: Source          # the kind: Source.MEASURED or Source.PREDICTED
    provenance: str         # the model version, or the device and software
    time_low_us: float      # the interval time_us is known within (95%, measured rows;
    time_high_us: float     #   pooled: covering the runs'; predictions: the model's error)
    tie_group: int          # rows of a group cannot be told apart; 1 = tied with the best
    rank: int = 0           # over the whole answer: 1 is the headline best
    speedup_basis: Optional[Source] = None  # the kind of the baseline time the speed-up used
    runs: Tuple[int, ...] = ()  # measured rows: the job id(s) of the run(s) the time comes from
    pooled: bool = False    # the median over runs (runs="all"), not one run's figure
    race_verdict: Optional[str] = None  # set when the answer's race timed this row: "leader",
    race_ratio: Optional[float] = None  #   "tied", "slower", "unresolved"; its time over the
                                        #   race leader's in the same rounds (geometric mean)


class DffAnswer(list):
    """The ranked rows, with the query's bookkeeping. The first row is the
    headline best (the largest speed-up over a baseline of its own kind); its
    kind's rows follow, then the other kind's: a measured and a predicted time
    are never tied together. `runs` describes the runs measured rows come
    from; `run_choice` is "latest" or "all" (pooled)."""

    headline: Optional[DffRow]
    runs: list
    run_choice: Optional[str]
    algo_choice: Optional[str]  # "best" or "default" (cuBLASLt's first choice)
    race: Optional[dict]        # the race that ordered the leading measured rows, if one did

    gpu: str
    baseline: Optional[DffRow]
    baseline_d_ff: int
    candidates: int
    measured: int
    predicted: int
    replayed: int           # rows from replayed runs (crest sweep --backend replay)
    missing: int
    tied_with_best: int     # evaluated rows in tie group 1, not only those returned
    cache_mode: str         # the measurements' mode the answer is from: "cold" or "warm",
    clock_policy: str       #   "sustained" or "burst"
    query: dict             # the question's keys: gpu, dtype, hidden, tp, pass, tokens, ratio

    def to_pandas(self):
        """One row per candidate, the query's keys first (gpu, dtype, hidden, tp,
        pass, tokens, ratio), then the row's fields (source, provenance: the
        model version or the device and software, runs: the measuring jobs)."""
        return _query_frame(self)

    def plot(self, ax=None):
        """TFLOP/s against d_ff (matplotlib): measured and predicted marked apart,
        the best tie group ringed, the baseline a dashed line. Returns the Axes."""
        from crest.plot import plot_dff  # noqa: PLC0415 (matplotlib is optional)
        return plot_dff(self, ax)


@dataclasses.dataclass(frozen=True)
class TileChoice:
    tile_m: int
    tile_n: int
    ctas_per_sm: int
    tiles: int
    waves: int
    tile_efficiency: float
    wave_efficiency: float
    time_us: float


@dataclasses.dataclass(frozen=True)
class Prediction:
    """The analytic model's answer for one GEMM: always Source.PREDICTED."""

    source: Source
    model_version: str
    calibration: str
    gpu: str
    time_us: float
    tflops: float
    peak_tflops: float
    memory_bound: bool
    kernel_family: str       # "fast" (16-byte aligned operands) or "fallback"
    family_tflops: float
    alignment_factor: float
    expected_error: float    # the model's typical relative error here
    best: TileChoice
    tiles: List[TileChoice]  # every tile considered


@dataclasses.dataclass(frozen=True)
class GemmAnswer:
    found: bool
    source: Source          # Source.NONE when nothing answers (no model path for the dtype)
    time_us: float
    tflops: float
    tiles: int
    waves: int
    tile_efficiency: float
    wave_efficiency: float
    model_version: str      # predicted: the model (and calibration) that answered
    expected_error: float   # predicted: the model's typical relative error
    detail: dict            # `crest lookup --json`'s whole document, as a dict


@dataclasses.dataclass(frozen=True)
class Job:
    id: int
    state: str              # queued, running, done, failed, cancelled
    done: int
    total: int
    priority: int
    backend: str
    target: str
    host: str
    error: str
    spec: dict


@dataclasses.dataclass(frozen=True)
class GemmResult:
    m: int
    n: int
    k: int
    batch: int
    name: str
    source: Source
    time_us: float
    tflops: float


@dataclasses.dataclass(frozen=True)
class JobEvent:
    job: Job
    message: str
    final: bool
    results: List[GemmResult]
    elapsed_s: float = 0.0
    # Where the run's time went (measuring backends; 0 for the model).
    kernel_s: float = 0.0
    gemms_per_minute: float = 0.0
    gpu_busy_fraction: float = 0.0
    host_overhead_per_gemm_s: float = 0.0
    # The final event of a run that reached its end: the sweep's report as
    # `crest sweep` prints it (crest.v1.SweepSummary as plain values: races,
    # plan and revalidation notes, device, host time by step); else None.
    summary: Optional[dict] = None


@dataclasses.dataclass(frozen=True)
class Gpu:
    """One GPU of the catalogue (`crest gpus`): datasheet figures and the
    predictor's calibration for it."""
    name: str                 # canonical, e.g. "H100-SXM"
    architecture: str
    compute_capability: str
    sm_count: int
    l2_bytes: int
    memory_gib: float
    memory_bandwidth_gbs: float
    peak_tflops: dict         # dense peak by dtype ("bf16", "fp16", "fp32", "tf32", "fp8")
    power_w: float
    boost_clock_mhz: float
    min_alignment_bytes: int
    preferred_alignment_bytes: int
    aliases: Tuple[str, ...]
    model_calibration: str    # the model's calibration in words
    calibrations: Tuple[str, ...]  # the calibrations shipped or loaded for it


@dataclasses.dataclass(frozen=True)
class Gemm:
    """One GEMM of a transformer layer (`crest shapes`), per tensor-parallel rank."""
    name: str                 # e.g. "qkv.fwd", "mlp_down.wgrad"
    pass_: str                # "fwd", "dgrad" or "wgrad"
    m: int
    n: int
    k: int
    batch: int
    dtype: str
    layout: str               # row-major op letters: NT, NN or TN
    flops: float


class ShapesAnswer(list):
    """`crest shapes`: the layer's GEMMs (a list of Gemm), with the question's
    totals: layer_flops, logits_flops, attention (the fused core's), warnings."""
    layer_flops: float
    logits_flops: float
    attention: dict
    warnings: list
    query: dict

    def to_pandas(self):
        import pandas  # noqa: PLC0415
        return pandas.DataFrame([dataclasses.asdict(g) for g in self])

