"""The crest.Client class and the plain rows it returns."""

from __future__ import annotations

import json
import os
from typing import Iterator, List, Optional, Union

import grpc

from crest import answers as _answers
from crest.answers import _PASSES, CrestCommandError, _pass_of
from crest.v1 import crest_pb2 as pb
from crest.v1 import crest_pb2_grpc as pb_grpc
from crest.types import (  # noqa: F401 (re-exported: crest.client's names as before)
    CrestError, DffAnswer, DffRow, GemmAnswer, GemmResult, Job, JobEvent, Prediction, Source,
    TileChoice)



_SOURCES = {pb.SOURCE_MEASURED: Source.MEASURED, pb.SOURCE_PREDICTED: Source.PREDICTED,
            pb.SOURCE_MIXED: Source.MIXED, pb.SOURCE_REPLAYED: Source.REPLAYED}
_DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")
_STATES = {pb.JOB_STATE_QUEUED: "queued", pb.JOB_STATE_RUNNING: "running",
           pb.JOB_STATE_DONE: "done", pb.JOB_STATE_FAILED: "failed",
           pb.JOB_STATE_CANCELLED: "cancelled"}


def _as_dict(msg) -> dict:
    """A message as plain Python values: numbers as numbers (proto3's JSON
    mapping, json_format.MessageToDict, writes 64-bit integers as text), enums
    by name, messages and repeated and map fields converted alike; fields at
    their default are left out, as MessageToDict leaves them."""
    from google.protobuf.descriptor import FieldDescriptor  # noqa: PLC0415

    def value_of(field, v):
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            return _as_dict(v)
        if field.type == FieldDescriptor.TYPE_ENUM:
            named = field.enum_type.values_by_number.get(v)
            return named.name if named is not None else v
        return v

    out = {}
    for field, value in msg.ListFields():
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            entry = field.message_type.fields_by_name["value"]
            out[field.name] = {k: value_of(entry, v) for k, v in value.items()}
        elif field.label == FieldDescriptor.LABEL_REPEATED:
            out[field.name] = [value_of(field, v) for v in value]
        else:
            out[field.name] = value_of(field, value)
    return out


def _check_dtype(name: str) -> None:
    """A ValueError naming the argument, before any call."""
    if name not in _DTYPES:
        raise ValueError(f"dtype: '{name}' is not one of {', '.join(_DTYPES)}")


def _job(j) -> Job:
    return Job(j.id, _STATES.get(j.state, "unknown"), j.done, j.total, j.priority, j.backend,
               j.target, j.host, j.error, json.loads(j.spec_json) if j.spec_json else {})


def _event(e) -> JobEvent:
    results = [GemmResult(r.gemm.m, r.gemm.n, r.gemm.k, r.gemm.batch or 1, r.gemm.name,
                          _SOURCES.get(r.source, Source.UNKNOWN), r.time_us, r.tflops)
               for r in e.results]
    return JobEvent(_job(e.job), e.message, e.final, results, e.elapsed_s, e.kernel_s,
                    e.gemms_per_minute, e.gpu_busy_fraction, e.host_overhead_per_gemm_s,
                    _as_dict(e.summary) if e.HasField("summary") else None)


def _spec_json(spec: Union[str, dict]) -> str:
    return spec if isinstance(spec, str) else json.dumps(spec)


class Client:
    """A connection to one crestd.

    target: "host:port" or "unix:/path". token: a bearer token for mutating
    calls (default: $CREST_TOKEN). root_certificates: PEM bytes of the CA,
    which turns TLS on. timeout: seconds per unary call.
    """

    def __init__(self, target: str = "127.0.0.1:50051", *, token: Optional[str] = None,
                 root_certificates: Optional[bytes] = None, timeout: float = 30.0):
        self.target = target
        self.timeout = timeout
        self._token = token if token is not None else os.environ.get("CREST_TOKEN")
        self._root_certificates = root_certificates
        if root_certificates is not None:
            creds = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            self._channel = grpc.secure_channel(target, creds)
        else:
            self._channel = grpc.insecure_channel(target)
        self._stub = pb_grpc.CrestStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- plumbing
    def _metadata(self):
        return [("authorization", f"Bearer {self._token}")] if self._token else []

    def _call(self, method, request):
        try:
            return method(request, timeout=self.timeout, metadata=self._metadata())
        except grpc.RpcError as e:
            raise CrestError(e.code(), e.details()) from None

    def _stream(self, method, request) -> Iterator:
        try:
            yield from method(request, metadata=self._metadata())
        except grpc.RpcError as e:
            raise CrestError(e.code(), e.details()) from None

    # ---- lookups
    def node_info(self) -> dict:
        """The node's devices, backends, versions and database figures, as plain
        values (byte and row counts as numbers)."""
        return _as_dict(self._call(self._stub.GetNodeInfo, pb.GetNodeInfoRequest()))

    def best_dff(self, hidden: int, gpu: str, *, ratio: str = "8/3", window: int = 128,
                 align: int = 1, tokens: int = 8192, tp: int = 1, dtype: str = "bf16",
                 pass_: str = "fwd", separate_gate_up: bool = False, top: int = 10,
                 predict_only: bool = False, cache: str = "cold",
                 clocks: str = "sustained", runs: str = "latest",
                 algo: str = "best", train: Optional[bool] = None) -> DffAnswer:
        """The d_ff candidates near ratio*hidden, the headline best first (`crest dff`).

        pass_ is "fwd" (default) or "train", as crest.dff and --pass (train= is
        its deprecated spelling).

        cache and clocks choose which measurements answer (never mixed); runs
        is "latest" (each candidate from the most recent run that measured all
        of its GEMMs) or "all" (the runs pooled); algo is "best" (each GEMM's
        fastest algorithm) or "default" (cuBLASLt's first choice); rows that
        cannot be told apart share a tie_group; `race` describes the race that
        ordered the leading measured rows, if one did.
        """
        the_pass = _pass_of(pass_, train, "train", "Client.best_dff")
        if the_pass not in _PASSES:
            raise ValueError(f"pass_: '{the_pass}' is not fwd or train")
        _check_dtype(dtype)
        # One route with crest.dff(server=): the C++ remote answers, in process.
        return self._answered(_answers.dff, hidden, gpu, ratio=ratio, window=window,
                              align=align, tokens=tokens, tp=tp, dtype=dtype, pass_=the_pass,
                              top=top, runs=runs, algo=algo, separate_gate_up=separate_gate_up,
                              predict_only=predict_only, cache=cache, clocks=clocks)

    def lookup(self, m: int, n: int, k: int, gpu: str, *, batch: int = 1, dtype: str = "bf16",
               layout: str = "NT", cache: str = "cold",
               clocks: str = "sustained") -> GemmAnswer:
        """The best known result for one GEMM on `gpu`: crest.lookup(server=)
        against this crestd, so detail is `crest lookup`'s document."""
        _check_dtype(dtype)
        return self._answered(_answers.lookup, m, n, k, gpu, batch=batch, dtype=dtype,
                              layout=layout, cache=cache, clocks=clocks)

    def predict(self, m: int, n: int, k: int, gpu: str, *, batch: int = 1,
                dtype: str = "bf16", layout: str = "NT") -> Prediction:
        """This crestd's model for one GEMM: crest.explain(server=)."""
        _check_dtype(dtype)
        return self._answered(_answers.explain, m, n, k, gpu, batch=batch, dtype=dtype,
                              layout=layout)

    # ---- whole answers, computed by the crest command's answering layer in
    # process (crest._native) against this crestd, with this client's token,
    # CA and timeout
    def _answered(self, run, *args, **kwargs):
        try:
            return run(*args, server=self.target, token=self._token,
                       root_certificates=self._root_certificates, timeout=self.timeout,
                       **kwargs)
        except CrestCommandError as e:
            code = getattr(grpc.StatusCode, e.status, grpc.StatusCode.UNKNOWN)
            raise CrestError(code, e.message) from None

    def vocab(self, vocab: int, hidden: int, gpu: str, **kwargs):
        """`crest vocab` through this crestd (crest.answers.vocab)."""
        return self._answered(_answers.vocab, vocab, hidden, gpu, **kwargs)

    def design(self, gpu: str, **kwargs):
        """`crest design` through this crestd (crest.answers.design)."""
        return self._answered(_answers.design, gpu, **kwargs)

    # ---- jobs
    def submit(self, spec: Union[str, dict], *, backend: str = "", priority: int = 0,
               force: bool = False) -> Job:
        """Queues a sweep spec (docs/sweep-spec.md); returns at once."""
        r = self._call(self._stub.SubmitJob, pb.SubmitJobRequest(
            spec=pb.SweepSpec(json=_spec_json(spec)), backend=backend, priority=priority,
            force=force))
        return _job(r.job)

    def job(self, job_id: int) -> Job:
        return _job(self._call(self._stub.GetJob, pb.GetJobRequest(id=job_id)))

    def jobs(self, state: str = "", limit: int = 100) -> List[Job]:
        states = {v: k for k, v in _STATES.items()}
        if state and state not in states:
            raise ValueError(f"state: '{state}' is not one of {', '.join(states)}")
        r = self._call(self._stub.ListJobs, pb.ListJobsRequest(
            state=states.get(state, pb.JOB_STATE_UNSPECIFIED), limit=limit))
        return [_job(j) for j in r.jobs]

    def cancel(self, job_id: int) -> Job:
        return _job(self._call(self._stub.CancelJob, pb.CancelJobRequest(id=job_id)))

    def watch(self, job_id: int) -> Iterator[JobEvent]:
        """Events of a job until it ends (the last has final=True)."""
        yield from self._follow(self._stub.WatchJob, pb.WatchJobRequest(id=job_id))

    def sweep(self, spec: Union[str, dict], *, backend: str = "",
              force: bool = False) -> Iterator[JobEvent]:
        """Runs a spec now at interactive priority, yielding its events."""
        request = pb.SweepRequest(spec=pb.SweepSpec(json=_spec_json(spec)), backend=backend,
                                  force=force)
        yield from self._follow(self._stub.Sweep, request)

    def _follow(self, method, request) -> Iterator[JobEvent]:
        """A job's events from a Sweep or WatchJob stream. crestd ends a stream
        that has had nothing to send for its --stream-idle-timeout (CANCELLED)
        and the job goes on: it is then watched again, by its id."""
        job_id, final = 0, False
        while True:
            try:
                for e in self._stream(method, request):
                    job_id, final = e.job.id, e.final
                    yield _event(e)
                return
            except CrestError as e:
                if e.code != grpc.StatusCode.CANCELLED or final or not job_id:
                    raise
            method, request = self._stub.WatchJob, pb.WatchJobRequest(id=job_id)

    def export(self, path: str) -> int:
        """Writes a consistent snapshot of the node's database to `path` (a new file)."""
        if os.path.exists(path):
            raise FileExistsError(path)
        part = path + ".part"
        written, total = 0, -1
        try:
            with open(part, "wb") as out:
                for chunk in self._stream(self._stub.ExportResults, pb.ExportResultsRequest()):
                    out.write(chunk.data)
                    written += len(chunk.data)
                    total = chunk.total_bytes
            if written != total:
                raise CrestError(grpc.StatusCode.DATA_LOSS,
                                 f"snapshot ended at {written} of {total} bytes")
            os.replace(part, path)
        finally:
            if os.path.exists(part):
                os.remove(part)
        return written
