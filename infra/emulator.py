"""Starts and stops the local AWS emulator (ministack) on 127.0.0.1.

Used by the tests, the demo and the local-stack command. `Emulator.start()` returns once
the health endpoint answers; `stop()` ends it and every Lambda worker it spawned, and
removes its scratch directory: ministack unpacks each Lambda worker's code (about 45 MB)
into the temp directory and deletes it only when it ends the worker, so a day of benchmarks once
filled the disk. The scratch directory is in memory (/dev/shm) when there is room: a cold start
unpacks 3,900 files, and the emulator's are what most of an end-to-end test waits on.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import requests

from .toolchain import ROOT, tool

DEFAULT_PORT = 4566
REGION = "us-east-1"
# The emulator accepts any credentials; these keep boto3 from looking for real ones.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": REGION}


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def free_port() -> int:
    """A port nothing listens on right now, on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthy(endpoint: str) -> bool:
    try:
        return requests.get(f"{endpoint}/_ministack/health", timeout=1).ok
    except requests.RequestException:
        return False


# A Lambda worker's cold start unpacks its package (51 MB with its bytecode, 4,300 files) into the emulator's
# TMPDIR: 5.5 s on this machine's disk against 0.6 s in memory, and a test run starts about 200 workers (on
# disk the suite took 983 s against 875 s, both with WORKER_IDLE_S, 2026-12-04). But a tmpfs is memory, held as long
# as each worker lives: a three-worker run with ministack's 5-minute idle workers held 12 GB there beside
# 11 GB of processes, and the kernel killed an emulator on this 23 GB machine; with WORKER_IDLE_S the run
# peaked at 16.4 GiB in use, tmpfs included. So memory is used only where more than that is available.
MEMORY_SCRATCH = Path("/dev/shm")
MEMORY_SCRATCH_MIN_FREE = 6 * 1024**3
MEMORY_SCRATCH_MIN_AVAILABLE = 18 * 1024**3


def memory_available(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """The kernel's estimate of the memory available to new work (MemAvailable), in bytes; None off Linux."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def scratch_parent(
    memory: Path = MEMORY_SCRATCH,
    min_free: int = MEMORY_SCRATCH_MIN_FREE,
    min_available: int = MEMORY_SCRATCH_MIN_AVAILABLE,
    available: Callable[[], int | None] = memory_available,
) -> str | None:
    """Where the emulator's scratch directory goes: `memory` (a tmpfs) when it exists, is writable, has
    `min_free` bytes free and the machine `min_available` bytes of memory available; else None, the system's
    temp directory."""
    try:
        usage = shutil.disk_usage(memory)
    except OSError:
        return None
    if not os.access(memory, os.W_OK) or usage.free < min_free:
        return None
    room = available()
    return str(memory) if room is not None and room >= min_available else None


# Seconds a Lambda worker beyond each function's first may sit idle before the emulator ends it (ministack's
# own default is 300). A warm worker holds about 125 MB: its process and its package unpacked in the scratch
# directory, in memory. A test run's three emulators start about 200 workers, and kept for 5 minutes idle
# they ran this 23 GB machine out of memory (an emulator killed by the kernel at 12 GB of /dev/shm). A worker
# ended too soon costs one cold start, about 1.5 s.
WORKER_IDLE_S = 60


def emulator_environment(port: int, scratch: str, base: Mapping[str, str]) -> dict[str, str]:
    """The emulator's environment: `base` (the caller's), the dummy credentials, loopback only, `scratch` as
    its TMPDIR, and idle workers ended after WORKER_IDLE_S unless `base` sets LAMBDA_WARM_TTL_SECONDS."""
    return {
        "LAMBDA_WARM_TTL_SECONDS": str(WORKER_IDLE_S),
        **base,
        **CREDENTIALS,
        "BIND_HOST": "127.0.0.1",
        "GATEWAY_PORT": str(port),
        "MINISTACK_HOST": "127.0.0.1",
        "TMPDIR": scratch,  # where it unpacks Lambda code: ours to remove
    }


class Emulator:
    def __init__(self, port: int = DEFAULT_PORT, log_path: Path | None = None):
        self.port = port
        self.endpoint = f"http://127.0.0.1:{port}"
        self.log_path = log_path or ROOT / ".local" / f"ministack-{port}.log"
        self.process: subprocess.Popen | None = None
        self.scratch: str | None = None  # the emulator's TMPDIR, removed by stop()

    def start(self, timeout_s: float = 60) -> Emulator:
        if not port_is_free(self.port):
            raise RuntimeError(f"port {self.port} is in use; stop what runs there or pick another port")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.scratch = tempfile.mkdtemp(prefix=f"migrator-emulator-{self.port}-", dir=scratch_parent())
        env = emulator_environment(self.port, self.scratch, os.environ)
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [tool("ministack", "ministack")], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            if self.process.poll() is not None:
                self.stop()  # its workers, if any, and the scratch directory
                raise RuntimeError(f"the emulator exited at start; see {self.log_path}")
            if healthy(self.endpoint):
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the emulator did not answer within {timeout_s:.0f} s; see {self.log_path}")

    def reset(self) -> None:
        requests.post(f"{self.endpoint}/_ministack/reset", timeout=10).raise_for_status()

    def stop(self) -> None:
        if self.process is None:
            self._remove_scratch()
            return
        try:  # the whole process group: ministack and its warm Lambda workers
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)
        self.process = None
        self._remove_scratch()

    def _remove_scratch(self) -> None:
        """The scratch directory goes in a process of its own, not waited for: each function the emulator ran
        unpacked its 42 MB package there, and after a test worker's few dozen stacks removing 250,000 files
        took 40 s on a quiet machine and 120 to 150 s at the end of a CI run, each worker's last."""
        if self.scratch is None:
            return
        scratch, self.scratch = self.scratch, None
        try:
            subprocess.Popen(
                ["rm", "-rf", "--", scratch],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # outlives this process; nothing of ours waits on it
            )
        except OSError:
            shutil.rmtree(scratch, ignore_errors=True)


def client(service: str, endpoint: str):
    import boto3

    return boto3.client(service, endpoint_url=endpoint, region_name=REGION, **_boto_credentials())


def _boto_credentials() -> dict:
    return {"aws_access_key_id": "test", "aws_secret_access_key": "test"}
