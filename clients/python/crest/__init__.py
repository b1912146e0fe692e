"""Crest's Python client: talk to a crestd from a notebook or a script.

    import crest
    client = crest.Client("127.0.0.1:50051")
    rows = client.best_dff(hidden=4096, gpu="h100", top=5)
    rows[0].d_ff, rows[0].time_us, rows[0].source   # crest.Source.MEASURED or .PREDICTED
    rows.to_pandas()                                 # when pandas is installed

Every figure carries its source, a crest.Source (a str enum): "measured"
on a device, or "predicted" by the analytic model. Errors are crest.CrestError with the gRPC code and the
daemon's message (which names the bad field).
"""

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
    Source,
)

__all__ = ["Calibration", "Client", "CrestError", "DffAnswer", "DffRow", "GemmAnswer",
           "GemmResult", "Job", "JobEvent", "Source", "read_calibration"]
