"""deploy/: the local hub's config and GPU hook, the Kubernetes values against the chart's schema,
the Slurm spawner's batch script. (The local hub runs for real in test_hub_e2e.py.)"""

from __future__ import annotations

import copy
import json
import logging
import os
import pwd
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest
import yaml
from traitlets.config import PyFileConfigLoader

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
FIXTURES = Path(__file__).parent / "fixtures"
Z2JH = FIXTURES / "z2jh-4.4.0"


def _load(path: Path, monkeypatch, **env: str):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return PyFileConfigLoader(path.name, str(path.parent)).load_config()


def _fake_smi(tmp_path: Path, listing: str) -> str:
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\ncat {FIXTURES / listing}\n")
    smi.chmod(0o755)
    return str(smi)


def _spawner(user: str, name: str = ""):
    return SimpleNamespace(user=SimpleNamespace(name=user), name=name, environment={},
                           log=logging.getLogger("test"))


# -- the local hub ---------------------------------------------------------------------------

def test_local_hub_gives_each_server_a_mig_instance_round_robin(tmp_path, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    c = _load(DEPLOY / "jupyterhub_config.py", monkeypatch, CUDAKIT_HUB_STATE=str(tmp_path / "s"),
              CUDAKIT_HUB_SPAWNER="local",
              CUDAKIT_NVIDIA_SMI=_fake_smi(tmp_path, "a100_mig_nvidia-smi-L.txt"))
    assert c.JupyterHub.spawner_class == "localprocess"
    assert c.JupyterHub.bind_url == "http://127.0.0.1:8000"
    assert c.Spawner.mem_limit == "8G" and c.Spawner.cpu_limit == 4.0
    servers = [_spawner(u) for u in ("ann", "bob", "cho", "dan")]
    for server in servers:
        c.Spawner.pre_spawn_hook(server)
    got = [s.environment["CUDA_VISIBLE_DEVICES"] for s in servers]
    assert got == ["MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f",
                   "MIG-cba663e8-9bed-5b86-b5ec-9e5e1c2d0a3f",
                   "GPU-a2b4c6d8-1e3f-5a7b-9c0d-2e4f6a8b0c1d",
                   "MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f"]
    # bob stops: the next server gets bob's instance, the least used one
    c.Spawner.post_stop_hook(servers[1])
    eve = _spawner("eve")
    c.Spawner.pre_spawn_hook(eve)
    assert eve.environment["CUDA_VISIBLE_DEVICES"] == got[1]


def test_participants_get_lab_settings_without_the_instructor_tools(tmp_path, monkeypatch):
    import grp

    me = pwd.getpwuid(os.getuid())
    c = _load(DEPLOY / "jupyterhub_config.py", monkeypatch, CUDAKIT_HUB_STATE=str(tmp_path / "s"),
              CUDAKIT_HUB_SPAWNER="local", CUDAKIT_NVIDIA_SMI=str(tmp_path / "none"),
              CUDAKIT_HUB_INSTRUCTORS=grp.getgrgid(me.pw_gid).gr_name,
              JUPYTER_CONFIG_PATH="/etc/cuda-course")
    participant, instructor = _spawner("no-such-user-here"), _spawner(me.pw_name)
    for server in (participant, instructor):
        c.Spawner.pre_spawn_hook(server)
    settings = DEPLOY / "participants"
    assert participant.environment["JUPYTER_CONFIG_PATH"] == f"{settings}:/etc/cuda-course"
    assert "JUPYTER_CONFIG_PATH" not in instructor.environment
    disabled = json.loads((settings / "labconfig" / "page_config.json").read_text())
    assert "@jupyter/nbgrader:formgrader" in disabled["disabledExtensions"]


def test_local_hub_without_gpus_leaves_the_emulator(tmp_path, monkeypatch):
    c = _load(DEPLOY / "jupyterhub_config.py", monkeypatch, CUDAKIT_HUB_STATE=str(tmp_path / "s"),
              CUDAKIT_HUB_SPAWNER="local", CUDAKIT_NVIDIA_SMI=str(tmp_path / "no-nvidia-smi"))
    server = _spawner("ann")
    c.Spawner.pre_spawn_hook(server)
    assert "CUDA_VISIBLE_DEVICES" not in server.environment


def test_local_hub_keeps_to_the_gpus_it_is_given(tmp_path, monkeypatch):
    c = _load(DEPLOY / "jupyterhub_config.py", monkeypatch, CUDAKIT_HUB_STATE=str(tmp_path / "s"),
              CUDAKIT_HUB_SPAWNER="local", CUDA_VISIBLE_DEVICES="1",
              CUDAKIT_NVIDIA_SMI=_fake_smi(tmp_path, "a100_mig_nvidia-smi-L.txt"))
    servers = [_spawner(u) for u in ("ann", "bob")]
    for server in servers:
        c.Spawner.pre_spawn_hook(server)
    assert {s.environment["CUDA_VISIBLE_DEVICES"] for s in servers} == {
        "GPU-a2b4c6d8-1e3f-5a7b-9c0d-2e4f6a8b0c1d"}


def test_systemd_spawner_enforces_the_limits(tmp_path, monkeypatch):
    """The unit SystemdSpawner would start (systemd-run is replaced by a recorder) has the
    limits as MemoryMax and CPUQuota, a private /tmp, no sudo, and the GPU devices visible."""
    import asyncio

    systemdspawner = pytest.importorskip("systemdspawner")
    c = _load(DEPLOY / "jupyterhub_config.py", monkeypatch, CUDAKIT_HUB_STATE=str(tmp_path / "s"),
              CUDAKIT_HUB_SPAWNER="systemd", CUDAKIT_HUB_MEM_LIMIT="6G", CUDAKIT_HUB_CPU_LIMIT="2",
              CUDAKIT_NVIDIA_SMI=str(tmp_path / "none"))
    assert c.JupyterHub.spawner_class == "systemdspawner.SystemdSpawner"
    started = {}

    async def not_running(unit):
        return False

    async def record(unit, **kwargs):
        started.update(kwargs, unit=unit)

    async def up(self):
        return None

    monkeypatch.setattr(systemdspawner.systemdspawner.systemd, "service_running", not_running)
    monkeypatch.setattr(systemdspawner.systemdspawner.systemd, "start_transient_service", record)
    monkeypatch.setattr(systemdspawner.SystemdSpawner, "poll", up)
    me = pwd.getpwuid(os.getuid()).pw_name  # the spawner looks the user up
    hub = SimpleNamespace(public_host="", url="http://127.0.0.1:8081/hub/", base_url="/hub/",
                          api_url="http://127.0.0.1:8081/hub/api")
    spawner = systemdspawner.SystemdSpawner(config=c, hub=hub, user=SimpleNamespace(
        name=me, id=1, url=f"/user/{me}/", escaped_name=me))
    asyncio.run(spawner.start())
    properties = started["properties"]
    assert properties["MemoryMax"] == 6 * 1024**3
    assert properties["CPUQuota"] == "200%"
    assert properties["PrivateTmp"] == "yes" and properties["NoNewPrivileges"] == "yes"
    assert "PrivateDevices" not in properties  # /dev/nvidia* stays visible
    assert started["cmd"][-2:] == ["-m", "jupyterhub.singleuser"]
    with pytest.raises(ValueError, match="CUDAKIT_HUB_SPAWNER"):
        _load(DEPLOY / "jupyterhub_config.py", monkeypatch, CUDAKIT_HUB_SPAWNER="docker")


# -- Kubernetes (Zero to JupyterHub) ---------------------------------------------------------

def _merged(values: dict) -> dict:
    """The chart's defaults with ``values`` over them, as helm merges them (maps merge,
    everything else is replaced)."""
    def merge(base, top):
        if isinstance(base, dict) and isinstance(top, dict):
            out = dict(base)
            for key, value in top.items():
                out[key] = merge(base.get(key), value) if key in base else value
            return out
        return copy.deepcopy(top)
    return merge(yaml.safe_load((Z2JH / "values.yaml").read_text()), values)


def _validator():
    schema = yaml.safe_load((Z2JH / "values.schema.yaml").read_text())
    return jsonschema.Draft7Validator(schema)


def test_kubernetes_values_pass_the_chart_schema():
    values = yaml.safe_load((DEPLOY / "kubernetes" / "values.yaml").read_text())
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
              for e in _validator().iter_errors(_merged(values))]
    assert errors == []


def test_the_schema_check_catches_mistakes():
    """The same check fails on a misspelt key and on a wrong type, so its pass means something."""
    values = yaml.safe_load((DEPLOY / "kubernetes" / "values.yaml").read_text())
    misspelt = copy.deepcopy(values)
    misspelt["singleuser"]["memroy"] = misspelt["singleuser"].pop("memory")
    wrong_type = copy.deepcopy(values)
    wrong_type["singleuser"]["profileList"] = {"gpu": 1}
    for broken in (misspelt, wrong_type):
        assert list(_validator().iter_errors(_merged(broken)))


def test_kubernetes_profiles_request_gpus_with_kubespawner_settings():
    kubespawner = pytest.importorskip("kubespawner")
    values = yaml.safe_load((DEPLOY / "kubernetes" / "values.yaml").read_text())
    profiles = values["singleuser"]["profileList"]
    traits = kubespawner.KubeSpawner.class_traits(config=True)
    for profile in profiles:
        unknown = set(profile["kubespawner_override"]) - set(traits)
        assert not unknown, (profile["display_name"], unknown)
    limits = [p["kubespawner_override"].get("extra_resource_limits", {}) for p in profiles]
    assert limits[0] == {"nvidia.com/gpu": "1"}
    assert list(limits[1]) == ["nvidia.com/mig-1g.10gb"]
    assert sum(bool(p.get("default")) for p in profiles) == 1


# -- Slurm (batchspawner) ----------------------------------------------------------------------

def test_slurm_spawner_asks_for_a_gpu_partition(tmp_path, monkeypatch):
    batchspawner = pytest.importorskip("batchspawner")
    c = _load(DEPLOY / "slurm" / "jupyterhub_config.py", monkeypatch,
              CUDAKIT_HUB_STATE=str(tmp_path / "s"), CUDAKIT_SLURM_GRES="gpu:1g.10gb:1",
              CUDAKIT_SLURM_ACCOUNT="cuda101", CUDAKIT_HUB_PYTHON="/opt/cudakit/bin/python")
    assert c.JupyterHub.spawner_class == "batchspawner.SlurmSpawner"
    user = pwd.getpwuid(os.getuid()).pw_name  # batchspawner looks the user up
    hub = SimpleNamespace(public_host="", url="http://login1:8081/hub/", base_url="/hub/",
                          api_url="http://login1:8081/hub/api")
    spawner = batchspawner.SlurmSpawner(config=c, hub=hub, user=SimpleNamespace(
        name=user, url=f"/user/{user}/", escaped_name=user, id=1))
    subvars = dict(spawner.get_req_subvars(), cmd=spawner.cmd_formatted_for_batch())
    script = batchspawner.batchspawner.format_template(spawner.batch_script, **subvars)
    lines = script.splitlines()
    for wanted in ("#SBATCH --partition=gpu", "#SBATCH --gres=gpu:1g.10gb:1",
                   "#SBATCH --mem=8G", "#SBATCH --cpus-per-task=4", "#SBATCH --time=4:00:00",
                   "#SBATCH --account=cuda101"):
        assert wanted in lines, script
    assert ("srun /opt/cudakit/bin/python -m batchspawner.singleuser "
            "/opt/cudakit/bin/jupyterhub-singleuser") in script, script
    assert os.path.basename(spawner.cmd[0]) == "jupyterhub-singleuser"
