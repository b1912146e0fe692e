"""Crest's Python package: GEMM-shape answers for a notebook or a script.

    import crest
    rows = crest.dff(4096, "h100")              # in process: no binary, no daemon
    rows[0].d_ff, rows[0].time_us, rows[0].source  # crest.Source.MEASURED or .PREDICTED
    rows.to_pandas()                             # python3-pandas; the query's keys as columns
    frame = crest.study(gpu=["h100", "h200"], hidden=[4096, 8192], tp=[1, 2])
    crest.plot_study(frame, facet="gpu")         # python3-matplotlib
    crest.vocab(50257, 4096, "h100", tp=8)
    crest.design("h100", params="7B", vocab=32000, seq=4096)
    crest.explain(8192, 21888, 4096, "h100")     # one GEMM's tile, wave and alignment arithmetic
    crest.lookup(8192, 21888, 4096, "h100", db="crest.db")  # the best known result
    crest.gpus(); crest.shapes(4096, 32, 11008, 32000, 4096, pass_="train")
    crest.dff(4096, "h100", server="node1:50051")  # the same answer from a crestd
    client = crest.Client("127.0.0.1:50051")       # the daemon's whole API (gRPC)

Local answers run in this process through the compiled extension
crest._native (the crest command's answering layer); `server=` asks a
crestd. gRPC is imported only by crest.Client. Every figure carries its
source, a crest.Source (a str enum): "measured" on a device, "replayed" (a
recorded table timed on a simulated GPU, `crest sweep --backend replay`), or
"predicted" by the analytic model. Errors are crest.CrestError (crest.CrestCommandError
for a refused question: its message names the bad field).
"""

from crest.answers import (  # noqa: F401
    CrestCommandError,
    DesignAnswer,
    DesignRow,
    VocabAnswer,
    VocabRow,
    design,
    dff,
    explain,
    gpus,
    in_process,
    lookup,
    plot_study,
    shapes,
    study,
    vocab,
)
from crest.calibration import Calibration, read_calibration  # noqa: F401
from crest.types import (  # noqa: F401
    CrestError,
    DffAnswer,
    DffRow,
    Gemm,
    GemmAnswer,
    GemmResult,
    Gpu,
    Job,
    JobEvent,
    Prediction,
    ShapesAnswer,
    Source,
    TileChoice,
)

__all__ = ["Calibration", "Client", "CrestCommandError", "CrestError", "DesignAnswer",
           "DesignRow", "DffAnswer", "DffRow", "Gemm", "GemmAnswer", "GemmResult", "Gpu", "Job",
           "JobEvent", "Prediction", "ShapesAnswer", "Source", "TileChoice", "VocabAnswer",
           "VocabRow", "design", "dff", "explain", "gpus", "in_process", "lookup", "plot_study",
           "read_calibration", "shapes", "study", "vocab"]


def __getattr__(name):
    # crest.Client needs gRPC (python3-grpcio): imported on first use only.
    if name == "Client":
        from crest.client import Client  # noqa: PLC0415
        return Client
    raise AttributeError(f"module 'crest' has no attribute '{name}'")
