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


# A Lambda worker's cold start unpacks its package (42 MB, 3,900 files) into the emulator's TMPDIR: 5.5 s on
# this machine's disk against 0.6 s in memory, and a test run starts about 200 workers. Memory is used when
# it has room for every worker a run keeps at once (about 45 MB each, a few dozen per emulator).
MEMORY_SCRATCH = Path("/dev/shm")
MEMORY_SCRATCH_MIN_FREE = 6 * 1024**3


def scratch_parent(memory: Path = MEMORY_SCRATCH, min_free: int = MEMORY_SCRATCH_MIN_FREE) -> str | None:
    """Where the emulator's scratch directory goes: `memory` (a tmpfs) when it exists, is writable and has
    `min_free` bytes free; else None, the system's temp directory."""
    try:
        usage = shutil.disk_usage(memory)
    except OSError:
        return None
    return str(memory) if os.access(memory, os.W_OK) and usage.free >= min_free else None


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
        env = {
            **os.environ,
            **CREDENTIALS,
            "BIND_HOST": "127.0.0.1",
            "GATEWAY_PORT": str(self.port),
            "MINISTACK_HOST": "127.0.0.1",
            "TMPDIR": self.scratch,  # where it unpacks Lambda code: ours to remove
        }
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
