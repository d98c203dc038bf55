"""A real single-node Slurm for the grading tests: munged, slurmctld and slurmd on 127.0.0.1.

Everything lives in a private folder (slurm.conf, cgroup.conf, gres.conf, a fresh munge
key, state, logs); the daemons run in the foreground as children of the test and are
always stopped. The node offers two GPUs to ``--gres=gpu:1``: /dev/null and /dev/zero stand
in for the device files (nothing constrains devices here), so Slurm's GRES bookkeeping and
``CUDA_VISIBLE_DEVICES`` are real while kernels run on the emulator. Needs Debian's
``slurm-wlm`` and ``munge`` (``tools/install-system-deps``) and root (slurmd starts jobs as
the submitting user).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo")

SLURM_CONF = """\
ClusterName=cudakit-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
CommunicationParameters=NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={folder}/munge/socket
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/log/slurmctld.log
SlurmdLogFile={folder}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
MailProg=/bin/true
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=grading Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""

CGROUP_CONF = "CgroupPlugin=cgroup/v1\nCgroupAutomount=no\nConstrainCores=no\n" \
              "ConstrainRAMSpace=no\nConstrainDevices=no\n"


@dataclass
class SlurmCluster:
    folder: Path
    env: dict[str, str]

    def run(self, *command: str) -> str:
        return subprocess.run(command, env=self.env, capture_output=True, text=True,
                              check=True, timeout=60).stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for(what: str, check, folder: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    logs = "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in (folder / "log").iterdir())
    raise RuntimeError(f"{what} did not come up in {seconds:g} s\n{logs}")


def _cancel_everything(cluster: SlurmCluster) -> None:
    """Jobs outlive slurmd (slurmstepd runs them): cancel them all and wait till they end."""
    try:
        cluster.run("scancel", "--partition=grading")
        _wait_for("the end of every job",
                  lambda: not cluster.run("squeue", "--noheader").strip(), cluster.folder)
    except (subprocess.SubprocessError, RuntimeError):
        pass  # the daemons are stopped next in any case


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """A running single-node Slurm; ``SLURM_CONF`` points at it while the module runs."""
    missing = [d for d in DAEMONS if shutil.which(d) is None]
    if missing:
        pytest.skip(f"Slurm not installed ({', '.join(missing)}): run tools/install-system-deps")
    if os.geteuid() != 0:
        pytest.skip("a private slurmd must run as root")
    folder = tmp_path_factory.mktemp("slurm")
    for sub in ("munge", "state", "spool", "log"):
        (folder / sub).mkdir(mode=0o700)
    key = folder / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    # the node's two "GPUs": GRES needs character devices, any will do without cgroups
    (folder / "gres.conf").write_text("NodeName=localhost Name=gpu File=/dev/null,/dev/zero\n")
    (folder / "cgroup.conf").write_text(CGROUP_CONF)
    conf = folder / "slurm.conf"
    conf.write_text(SLURM_CONF.format(folder=folder, ctld_port=_free_port(),
                                      slurmd_port=_free_port(), cpus=os.cpu_count() or 2))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    cluster = SlurmCluster(folder, env)
    log = (folder / "log" / "daemons.out").open("w")
    started = []
    previous = os.environ.get("SLURM_CONF")
    try:
        started.append(subprocess.Popen(
            ["munged", "--foreground", "--force", f"--socket={folder}/munge/socket",
             f"--key-file={key}", f"--pid-file={folder}/munge/pid",
             f"--seed-file={folder}/munge/seed", f"--log-file={folder}/log/munged.log"],
            stdout=log, stderr=subprocess.STDOUT))
        _wait_for("munged", (folder / "munge" / "socket").exists, folder)
        started.append(subprocess.Popen(["slurmctld", "-D", "-i", "-f", str(conf)], env=env,
                                        stdout=log, stderr=subprocess.STDOUT))
        started.append(subprocess.Popen(["slurmd", "-D", "-N", "localhost", "-f", str(conf)],
                                        env=env, stdout=log, stderr=subprocess.STDOUT))

        def idle():
            try:
                return cluster.run("sinfo", "--noheader", "--format=%T").strip() == "idle"
            except subprocess.SubprocessError:
                return False

        _wait_for("slurmctld and slurmd", idle, folder)
        os.environ["SLURM_CONF"] = str(conf)
        yield cluster
    finally:
        _cancel_everything(cluster)
        if previous is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = previous
        for process in reversed(started):
            _stop(process)
        log.close()
