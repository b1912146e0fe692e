"""The Python package asks the same default question as the crest command
(tuner/include/crest/tuner/defaults.h): its functions' defaults equal what
`crest dff --json` echoes when no flag but the required ones is given."""

import inspect
import json
import os
import subprocess

import crest
from crest.client import Client


def _cli_defaults():
    done = subprocess.run([os.environ["CREST_BIN"], "--json", "dff", "--hidden", "4096", "--gpu",
                           "h100", "--top", "1"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_python_defaults_are_the_crest_commands():
    doc = _cli_defaults()
    for function in (crest.dff, Client.best_dff):
        params = inspect.signature(function).parameters
        for name in ("ratio", "window", "align", "tokens", "tp", "dtype"):
            assert params[name].default == doc[name], (function.__qualname__, name)
        assert params["pass_"].default == doc["pass"]
        assert params["train"].default is None, "the deprecated spelling, unset"
    vocab = inspect.signature(crest.vocab).parameters
    assert vocab["tokens"].default == doc["tokens"]
