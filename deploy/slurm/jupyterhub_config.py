# JupyterHub for the CUDA course on a Slurm cluster (deploy/README.md): batchspawner's
# SlurmSpawner starts each participant's JupyterLab as a batch job on a GPU node, with one GPU
# (GRES) and a memory, CPU and time limit. The hub itself runs on a login or service node that
# can submit jobs (sbatch, squeue, scancel) as the participants, and shares their home folders.
#
#   sudo /opt/cudakit/bin/jupyterhub -f /opt/cudakit/deploy/slurm/jupyterhub_config.py
#
#   CUDAKIT_SLURM_PARTITION  partition with the GPUs        (gpu)
#   CUDAKIT_SLURM_GRES       GPUs per server                (gpu:1; e.g. gpu:1g.10gb:1 for MIG)
#   CUDAKIT_SLURM_TIME       wall-clock limit of a server   (4:00:00)
#   CUDAKIT_SLURM_ACCOUNT    account to charge              (none)
#   CUDAKIT_HUB_*            as in ../jupyterhub_config.py (bind URL, state, Python, groups, limits)
import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 - provided by JupyterHub


def setting(name: str, default: str) -> str:
    return os.environ.get(name) or default


state = Path(setting("CUDAKIT_HUB_STATE", "/srv/jupyterhub"))
state.mkdir(parents=True, exist_ok=True, mode=0o700)

c.JupyterHub.bind_url = setting("CUDAKIT_HUB_BIND_URL", "http://127.0.0.1:8000")
# the servers run on compute nodes and must reach the hub's API on this node
c.JupyterHub.hub_ip = "0.0.0.0"
c.JupyterHub.hub_connect_ip = setting("CUDAKIT_HUB_CONNECT_IP", os.uname().nodename)
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(state / "jupyterhub-proxy.pid")

c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.PAMAuthenticator.allowed_groups = {setting("CUDAKIT_HUB_STUDENTS", "cuda-students"),
                                     setting("CUDAKIT_HUB_INSTRUCTORS", "cuda-instructors")}

c.JupyterHub.spawner_class = "batchspawner.SlurmSpawner"
# the course environment, at the same path on the compute nodes (a shared /opt or module)
python = setting("CUDAKIT_HUB_PYTHON", sys.executable)
c.SlurmSpawner.batchspawner_singleuser_cmd = f"{python} -m batchspawner.singleuser"
c.Spawner.cmd = [str(Path(python).parent / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.http_timeout = 300  # a job may wait in the queue
c.Spawner.start_timeout = 600
c.Spawner.environment = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
c.SlurmSpawner.req_partition = setting("CUDAKIT_SLURM_PARTITION", "gpu")
c.SlurmSpawner.req_runtime = setting("CUDAKIT_SLURM_TIME", "4:00:00")
c.SlurmSpawner.req_memory = setting("CUDAKIT_HUB_MEM_LIMIT", "8G")
c.SlurmSpawner.req_nprocs = setting("CUDAKIT_HUB_CPU_LIMIT", "4")
# Slurm sets CUDA_VISIBLE_DEVICES to the GPU it grants (a MIG instance with a MIG GRES type)
c.SlurmSpawner.req_gres = setting("CUDAKIT_SLURM_GRES", "gpu:1")
if account := os.environ.get("CUDAKIT_SLURM_ACCOUNT"):
    c.SlurmSpawner.req_options = f"--account={account}"
