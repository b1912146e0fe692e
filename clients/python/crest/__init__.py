"""Crest's Python client: talk to a crestd from a notebook or a script.

    import crest
    client = crest.Client("127.0.0.1:50051")
    rows = client.best_dff(hidden=4096, gpu="h100", top=5)
    rows[0].d_ff, rows[0].time_us, rows[0].source   # crest.Source.MEASURED or .PREDICTED
    rows.to_pandas()                                 # python3-pandas
    rows.plot()                                      # python3-matplotlib: TFLOP/s vs d_ff

    crest.vocab(50257, 4096, "h100", tp=8)           # the crest command's answers, typed
    crest.design("h100", params="7B", vocab=32000, seq=4096)
    # python3 -m crest plot dff --hidden 4096 --gpu h100 --out dff.png

Every figure carries its source, a crest.Source (a str enum): "measured"
on a device, or "predicted" by the analytic model. Errors are crest.CrestError with the gRPC code and the
daemon's message (which names the bad field).
"""

from crest.answers import (  # noqa: F401
    CrestCommandError,
    DesignAnswer,
    DesignRow,
    VocabAnswer,
    VocabRow,
    design,
    dff,
    vocab,
)
from crest.calibration import Calibration, read_calibration  # noqa: F401
from crest.client import (  # noqa: F401
    Client,
    CrestError,
    DffAnswer,
    DffRow,
    GemmAnswer,
    GemmResult,
    Job,
    JobEvent,
    Prediction,
    Source,
    TileChoice,
)

__all__ = ["Calibration", "Client", "CrestCommandError", "CrestError", "DesignAnswer",
           "DesignRow", "DffAnswer", "DffRow", "GemmAnswer", "GemmResult", "Job", "JobEvent",
           "Prediction", "Source", "TileChoice", "VocabAnswer", "VocabRow", "design", "dff",
           "read_calibration", "vocab"]
