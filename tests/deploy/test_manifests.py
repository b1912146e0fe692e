"""deploy/k8s: the manifests parse and carry what running crestd on a GPU
fleet needs. Run by ctest as deploy_manifests (Debian's pytest and PyYAML,
/usr/bin/python3)."""
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import time

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"


def docs(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def objects():
    out = {}
    for path in sorted((K8S / "base").glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for d in docs(path):
            out[(d["kind"], d["metadata"]["name"])] = d
    return out


def pod_spec(obj):
    if obj["kind"] == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return obj["spec"]["template"]["spec"]


def gpu_node_terms(spec):
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    return {e["key"] for t in terms for e in t["matchExpressions"]}


def tolerates_gpu_taint(spec):
    return any(t.get("key") == "nvidia.com/gpu" and t.get("operator") == "Exists"
               for t in spec.get("tolerations", []))


def test_every_base_file_is_in_the_kustomization_and_every_object_is_namespaced():
    kustomization = docs(K8S / "base" / "kustomization.yaml")[0]
    listed = set(kustomization["resources"])
    present = {p.name for p in (K8S / "base").glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present
    for (kind, name), obj in objects().items():
        if kind != "Namespace":
            assert obj["metadata"].get("namespace") == "crest", (kind, name)


def test_daemonset_runs_on_gpu_nodes_keeps_state_on_the_host_and_probes_grpc_health():
    ds = objects()[("DaemonSet", "crestd")]
    spec = pod_spec(ds)
    assert "nvidia.com/gpu.present" in gpu_node_terms(spec)
    assert tolerates_gpu_taint(spec)
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] != 0
    (crestd,) = spec["containers"]
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert crestd[probe]["grpc"]["port"] == 50051, probe
    assert crestd["resources"]["requests"]["cpu"]
    assert crestd["resources"]["requests"]["memory"]
    # The decision in the file's header: the GPUs are shared, not requested.
    assert "nvidia.com/gpu" not in crestd["resources"].get("limits", {})
    assert "nvidia.com/gpu" not in crestd["resources"].get("requests", {})
    assert crestd["securityContext"]["allowPrivilegeEscalation"] is False
    args = crestd["args"]
    assert "--state-dir=/var/lib/crest" in args
    assert any(a.startswith("--metrics-listen=") for a in args)
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["name"]: m["mountPath"] for m in crestd["volumeMounts"]}
    assert volumes["state"]["hostPath"]["path"] == "/var/lib/crest"
    assert mounts["state"] == "/var/lib/crest"
    ports = {p["name"]: p["containerPort"] for p in crestd["ports"]}
    assert ports == {"grpc": 50051, "metrics": 9464}


def test_services_reach_the_local_node_and_list_every_node():
    objs = objects()
    local = objs[("Service", "crestd")]["spec"]
    assert local["internalTrafficPolicy"] == "Local"
    assert {p["name"] for p in local["ports"]} == {"grpc", "metrics"}
    headless = objs[("Service", "crestd-nodes")]["spec"]
    assert headless["clusterIP"] == "None"
    ds_labels = objs[("DaemonSet", "crestd")]["spec"]["template"]["metadata"]["labels"]
    for svc in (local, headless):
        assert svc["selector"].items() <= ds_labels.items()


def test_servicemonitor_scrapes_the_metrics_port():
    (sm,) = docs(K8S / "servicemonitor.yaml")
    assert sm["kind"] == "ServiceMonitor"
    assert sm["apiVersion"].startswith("monitoring.coreos.com/")
    assert [e["port"] for e in sm["spec"]["endpoints"]] == ["metrics"]
    svc = objects()[("Service", "crestd")]
    assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()


def test_nightly_cronjob_fans_out_one_pod_per_gpu_node_then_merges():
    objs = objects()
    cron = objs[("CronJob", "crest-nightly")]
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    job = cron["spec"]["jobTemplate"]["spec"]
    assert job["completionMode"] == "Indexed"
    assert job["completions"] == job["parallelism"]
    spec = pod_spec(cron)
    assert "nvidia.com/gpu.present" in gpu_node_terms(spec)
    assert tolerates_gpu_taint(spec)
    anti = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0]["topologyKey"] == "kubernetes.io/hostname"
    assert anti[0]["labelSelector"]["matchLabels"].items() <= \
        job_template_labels(cron).items()
    (container,) = spec["containers"]
    script = "\n".join(container["args"])
    assert "--server crestd:50051" in script and "jobs submit" in script and "--wait" in script
    assert "JOB_COMPLETION_INDEX" in script
    assert "fleet pull --targets-dns crestd-nodes:50051" in script
    assert "--into /catalogue/" in script
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["specs"]["configMap"]["name"] == "crest-specs"
    claim = volumes["catalogue"]["persistentVolumeClaim"]["claimName"]
    assert ("PersistentVolumeClaim", claim) in objs
    spec_env = {e["name"]: e["value"] for e in container["env"]}["CREST_SPEC"]
    configmap = objs[("ConfigMap", "crest-specs")]
    assert pathlib.PurePosixPath(spec_env).name in configmap["data"]


def job_template_labels(cron):
    return cron["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]


def test_specs_configmap_holds_exactly_the_repository_specs():
    configmap = objects()[("ConfigMap", "crest-specs")]
    specs = {p.name: p.read_text() for p in (ROOT / "deploy" / "specs").glob("*.json")}
    assert configmap["data"] == specs, "run deploy/k8s/make-specs-configmap.sh"


def test_nightly_specs_revalidate_after_a_library_upgrade():
    for path in (ROOT / "deploy" / "specs").glob("*.json"):
        assert json.loads(path.read_text()).get("revalidate") is True, path.name


def test_exclusive_overlay_requests_the_gpus():
    overlay = K8S / "overlays" / "exclusive-gpu"
    (kustomization,) = docs(overlay / "kustomization.yaml")
    # bases and a patch file: what Debian 12's kubectl 1.20 (kustomize v2) reads too.
    assert kustomization["bases"] == ["../../base"]
    (target,) = kustomization["patchesJson6902"]
    assert target["target"]["kind"] == "DaemonSet" and target["target"]["name"] == "crestd"
    (patch,) = docs(overlay / target["path"])
    added = [op for op in patch if op["op"] == "add"]
    assert added[0]["path"].endswith("nvidia.com~1gpu")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
@pytest.mark.parametrize("directory", ["base", "overlays/exclusive-gpu"])
def test_kustomize_builds(directory):
    out = subprocess.run(["kubectl", "kustomize", str(K8S / directory)], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0, out.stderr
    objects = [d for d in yaml.safe_load_all(out.stdout) if d]
    kinds = [d["kind"] for d in objects]
    assert "DaemonSet" in kinds and "CronJob" in kinds
    for d in objects:
        assert d["apiVersion"] and d["metadata"]["name"], d
        if d["kind"] != "Namespace":
            assert d["metadata"]["namespace"] == "crest", d["metadata"]
    if directory.startswith("overlays"):
        (daemonset,) = [d for d in objects if d["kind"] == "DaemonSet"]
        limits = daemonset["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
        assert limits["nvidia.com/gpu"] == 8


CRESTD_BIN = os.environ.get("CRESTD_BIN")
CREST_BIN = os.environ.get("CREST_BIN")
needs_binaries = pytest.mark.skipif(not (CRESTD_BIN and CREST_BIN),
                                    reason="CRESTD_BIN and CREST_BIN not set (ctest sets them)")


def start_crestd(args, tmp_path):
    port_file = tmp_path / "port"
    proc = subprocess.Popen([CRESTD_BIN, *args, "--port-file", str(port_file)],
                            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "crestd.log", "w"))
    for _ in range(300):
        if port_file.exists() and port_file.read_text().strip():
            return proc, int(port_file.read_text())
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError((tmp_path / "crestd.log").read_text())


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


@needs_binaries
def test_daemonset_args_start_crestd(tmp_path):
    (crestd,) = pod_spec(objects()[("DaemonSet", "crestd")])["containers"]
    # The same flags, on ephemeral ports and a temporary state directory.
    args = [re.sub(r":\d+$", ":0", a) if a.startswith(("--listen=", "--metrics-listen=")) else a
            for a in crestd["args"]]
    args = [f"--state-dir={tmp_path}" if a.startswith("--state-dir=") else a for a in args]
    proc, _ = start_crestd(args, tmp_path)
    stop(proc)


@needs_binaries
def test_nightly_script_sweeps_its_node_waits_for_all_and_merges(tmp_path):
    cron = objects()[("CronJob", "crest-nightly")]
    (container,) = pod_spec(cron)["containers"]
    state = tmp_path / "state"
    state.mkdir()
    proc, port = start_crestd(["--listen", "127.0.0.1:0", "--state-dir", str(state),
                               "--shutdown-grace", "2"], tmp_path)
    try:
        address = f"127.0.0.1:{port}"
        # The pod's script, with the cluster names pointed at this daemon.
        script = container["args"][0]
        script = script.replace("crestd-nodes:50051", address).replace("crestd:50051", address)
        script = script.replace("/catalogue/", f"{tmp_path}/").replace("--poll 30", "--poll 0.2")
        spec = tmp_path / "spec.json"
        spec.write_text('{"version": 1, "gpu": "h100", "dff": [{"hidden": 4096, "window": 4}]}')
        env = {"PATH": f"{os.path.dirname(CREST_BIN)}:/usr/bin:/bin",
               "CREST_SPEC": str(spec), "JOB_COMPLETION_INDEX": "0"}
        out = subprocess.run(["/bin/sh", "-c", script], env=env, capture_output=True, text=True,
                             timeout=120, check=False)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "job 1: done" in out.stdout + out.stderr
        stats = subprocess.run([CREST_BIN, "--json", "db", "stats", "--db",
                                str(tmp_path / "catalogue.db")], capture_output=True, text=True,
                               check=True)
        # The node's job, and the barrier's: on a node whose job had already
        # ended it is a second job that finds every GEMM stored and ends at once.
        assert '"done": 2' in stats.stdout, stats.stdout
        assert '"H100-SXM": 18' in stats.stdout, stats.stdout
    finally:
        stop(proc)
