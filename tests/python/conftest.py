"""The crestd the Python tests talk to: a real one on an ephemeral loopback port.

Run by ctest with PYTHONPATH=<build>/python, CRESTD_BIN and CREST_BIN set.
"""

import os
import signal
import subprocess
import time

import pytest

import crest


@pytest.fixture()
def daemon(tmp_path):
    port_file = tmp_path / "port"
    log = open(tmp_path / "crestd.log", "w")
    proc = subprocess.Popen(
        [os.environ["CRESTD_BIN"], "--listen", "127.0.0.1:0", "--state-dir", str(tmp_path),
         "--port-file", str(port_file), "--shutdown-grace", "2"],
        stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(3000):
        if port_file.exists() and port_file.read_text().strip():
            break
        assert proc.poll() is None, (tmp_path / "crestd.log").read_text()
        time.sleep(0.01)
    client = crest.Client("127.0.0.1:" + port_file.read_text().strip())
    yield client
    client.close()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    log.close()
