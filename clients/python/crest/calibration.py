"""Predictor calibrations (`crest calibrate` writes them; crest and crestd load them).

    cal = crest.read_calibration("h100-sxm-bf16.json")
    cal.parameters["fast_tflops"], cal.fit["after"]["median_error"], cal.provenance["source"]

The file format is docs/predictor.md's; this reads it without a daemon, so a
notebook can compare calibrations or plot a fit.
"""

from __future__ import annotations

import dataclasses
import json
from typing import List

SCHEMA_VERSION = 3  # 3: expected_error by class, fit.interval
MODEL = "tilewave-2"


@dataclasses.dataclass(frozen=True)
class Calibration:
    id: str
    model_version: str      # what predictions made with it carry: "tilewave-2+<id>"
    gpu: str                # catalogue name
    dtype: str
    parameters: dict        # every parameter of the model, fitted or kept
    fitted: List[str]       # the parameters the fit set
    fit: dict               # {"before", "after": metrics; "k_residue"; "interval": how the intervals were set}
    provenance: dict        # source (measured/imported), tool, device, software, date, rows


def read_calibration(path: str) -> Calibration:
    """Reads a calibration file; ValueError names the file and what is wrong."""
    with open(path) as f:
        try:
            doc = json.load(f)
        except ValueError as e:
            raise ValueError(f"{path}: not valid JSON ({e})") from None
    version = doc.get("schema_version", 0)
    if not 1 <= version <= SCHEMA_VERSION:
        raise ValueError(f"{path}: calibration schema_version {version} "
                         f"(this package reads {SCHEMA_VERSION})")
    if doc.get("model") != MODEL:
        raise ValueError(f"{path}: a calibration of model {doc.get('model')!r}; expected {MODEL}")
    for key in ("id", "gpu", "dtype", "parameters"):
        if key not in doc:
            raise ValueError(f"{path}: {key}: missing")
    return Calibration(doc["id"], f"{MODEL}+{doc['id']}", doc["gpu"], doc["dtype"],
                       doc["parameters"], list(doc.get("fitted", [])), doc.get("fit", {}),
                       doc.get("provenance", {}))
