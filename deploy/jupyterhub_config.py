# JupyterHub for a CUDA course on one machine with one or more GPUs (deploy/README.md).
#
#   sudo /opt/cudakit/bin/jupyterhub -f /opt/cudakit/deploy/jupyterhub_config.py
#
# Participants log in with their Unix account (PAM) and get JupyterLab with cudakit, one
# GPU (or MIG instance) each, shared round robin, and a memory and CPU limit. Settings come
# from the environment, so one file serves the course machine and the end-to-end test:
#
#   CUDAKIT_HUB_BIND_URL     where the proxy listens        (http://127.0.0.1:8000; TLS in front)
#   CUDAKIT_HUB_STATE        database, cookie secret, pids  (/srv/jupyterhub)
#   CUDAKIT_HUB_PYTHON       Python of the course environment, run by every participant
#                            (the Python running the hub)
#   CUDAKIT_HUB_STUDENTS     Unix group of participants     (cuda-students)
#   CUDAKIT_HUB_INSTRUCTORS  Unix group of instructors      (cuda-instructors)
#   CUDAKIT_HUB_ADMINS       hub administrators, comma-separated user names (none)
#   CUDAKIT_HUB_MEM_LIMIT    memory per participant         (8G)
#   CUDAKIT_HUB_CPU_LIMIT    CPU cores per participant      (4)
#   CUDAKIT_HUB_SPAWNER      "systemd" (limits enforced by systemd) or "local"
#                            (default: systemd when systemd runs this machine)
#   CUDAKIT_NVIDIA_SMI       the nvidia-smi to ask for GPUs (nvidia-smi)
#   CUDA_VISIBLE_DEVICES     GPUs (indices or UUIDs) the course may use (all)
import grp
import os
import pwd
import sys
from pathlib import Path

from cudakit.course.gpus import GpuPool, discover

c = get_config()  # noqa: F821 - provided by JupyterHub


def setting(name: str, default: str) -> str:
    return os.environ.get(f"CUDAKIT_HUB_{name}") or default


state = Path(setting("STATE", "/srv/jupyterhub"))
state.mkdir(parents=True, exist_ok=True, mode=0o700)

# -- the hub: proxy on one address, everything else on localhost ----------------------------
c.JupyterHub.bind_url = setting("BIND_URL", "http://127.0.0.1:8000")
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(state / "jupyterhub-proxy.pid")
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every single-user server

# -- who may log in: Unix accounts in the course's groups -----------------------------------
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False  # no login sessions for servers (systemd gives them)
instructors = setting("INSTRUCTORS", "cuda-instructors")
c.PAMAuthenticator.allowed_groups = {setting("STUDENTS", "cuda-students"), instructors}
c.Authenticator.admin_users = {n for n in setting("ADMINS", "").split(",") if n}

# -- single-user servers: JupyterLab with cudakit, a memory and CPU limit --------------------
python = setting("PYTHON", sys.executable)
c.Spawner.cmd = [python, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.mem_limit = setting("MEM_LIMIT", "8G")
c.Spawner.cpu_limit = float(setting("CPU_LIMIT", "4"))
c.Spawner.http_timeout = 60
c.Spawner.env_keep.extend(["JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "CUDA_HOME"])
c.Spawner.environment = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}

spawner = setting("SPAWNER", "systemd" if Path("/run/systemd/system").is_dir() else "local")
if spawner == "systemd":
    # jupyterhub-systemdspawner: each server is a transient unit with MemoryMax and CPUQuota
    c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"
    c.SystemdSpawner.isolate_tmp = True
    c.SystemdSpawner.disable_user_sudo = True
    c.SystemdSpawner.isolate_devices = False  # the GPU's /dev/nvidia* must stay visible
elif spawner == "local":
    # LocalProcessSpawner enforces no limits: MEM_LIMIT and CPU_LIMIT reach the server only
    # as environment variables. Use it where systemd is not running (containers, the test).
    c.JupyterHub.spawner_class = "localprocess"
else:
    raise ValueError(f"CUDAKIT_HUB_SPAWNER={spawner!r}: expected 'systemd' or 'local'")

# -- one GPU (or MIG instance) per server, round robin --------------------------------------
gpus = GpuPool(discover(os.environ.get("CUDAKIT_NVIDIA_SMI", "nvidia-smi"),
                        os.environ.get("CUDA_VISIBLE_DEVICES")))


def server_key(spawner) -> str:
    return f"{spawner.user.name}/{spawner.name}"


def is_instructor(name: str) -> bool:
    """Whether Unix user ``name`` is in the instructors' group."""
    try:
        group = grp.getgrnam(instructors)
        return name in group.gr_mem or pwd.getpwnam(name).pw_gid == group.gr_gid
    except KeyError:
        return False


# participants' JupyterLab without nbgrader's instructor tools (formgrader, create assignment)
PARTICIPANTS = Path(__file__).resolve().parent / "participants"


def prepare(spawner) -> None:
    """pre_spawn_hook: one unit of the GPU pool in CUDA_VISIBLE_DEVICES; the participants'
    JupyterLab settings for everyone but instructors."""
    env = {}
    if not is_instructor(spawner.user.name):
        env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
            p for p in (str(PARTICIPANTS), os.environ.get("JUPYTER_CONFIG_PATH")) if p)
    unit = gpus.acquire(server_key(spawner))
    if unit is None:
        spawner.log.warning("no NVIDIA GPU found: %s runs kernels on the emulator",
                            spawner.user.name)
    else:
        env.update(CUDA_VISIBLE_DEVICES=unit.uuid, CUDAKIT_GPU=unit.name)
        spawner.log.info("%s gets %s (%s), shared with %d other server(s)", spawner.user.name,
                         unit.uuid, unit.name, gpus.load(unit) - 1)
    spawner.environment = {**spawner.environment, **env}


def free_gpu(spawner) -> None:
    """post_stop_hook: the unit goes back to the pool."""
    gpus.release(server_key(spawner))


c.Spawner.pre_spawn_hook = prepare
c.Spawner.post_stop_hook = free_gpu
