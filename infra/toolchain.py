"""Finds Python 3.12 and builds the side virtual environments the local stack needs.

The emulator (ministack) pins botocore exactly and SAM CLI pins its own world, so each
gets a virtual environment of its own under .local/venvs, separate from the project's.
They run on Python 3.12 because the template's Lambda runtime is python3.12: ministack
runs handlers on its own interpreter and `sam build` needs a python3.12 on PATH.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENVS = ROOT / ".local" / "venvs"
# Pinned tool versions; bump deliberately (see ../shared/NOTES.md for what was checked).
TOOLS = {
    # aws-sam-translator lets the emulator run the SAM transform itself (as CloudFormation
    # does on AWS) and brings boto3, which the Lambda workers import from this interpreter.
    "ministack": ["ministack==1.5.33", "aws-sam-translator==1.115.0"],
    "sam": ["aws-sam-cli==1.170.0", "cfn-lint==1.58.0"],
}
# Node tools, pinned, each installed by npm under .local/node/<name> (Node.js and npm from the machine).
# Azurite runs on Node 20 here although 3.37's package.json asks for 22 (npm only warns): checked 2026-12-02.
NODE_TOOLS = {"azurite": "azurite@3.37.0"}
NODE_DIR = ROOT / ".local" / "node"


class ToolchainError(RuntimeError):
    pass


def find_python312() -> str:
    """A python3.12 interpreter: this one, one on PATH, or one from pyenv."""
    if sys.version_info[:2] == (3, 12):
        return sys.executable
    candidates = [shutil.which("python3.12")]
    pyenv_root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(f"{pyenv_root}/versions/3.12*/bin/python3.12"), reverse=True)
    candidates += ["/usr/local/bin/python3.12", "/usr/bin/python3.12"]
    for path in candidates:
        # pyenv's shim may be on PATH without a 3.12 selected: try each one.
        if path and os.access(path, os.X_OK) and _is_python312(path):
            return path
    raise ToolchainError(
        "python3.12 not found (needed for the python3.12 Lambda runtime): install it "
        "(e.g. `pyenv install 3.12`) or put it on PATH"
    )


def _is_python312(path: str) -> bool:
    check = "import sys; assert sys.version_info[:2] == (3, 12)"
    return subprocess.run([path, "-c", check], capture_output=True).returncode == 0


def venv(name: str) -> Path:
    """The side virtual environment `name`, created and installed on first use."""
    target = VENVS / name
    marker = target / ".installed"
    wanted = "\n".join(TOOLS[name])
    if marker.exists() and marker.read_text() == wanted:
        return target
    python = find_python312()
    print(f"[toolchain] preparing {name} in {target.relative_to(ROOT)} ({', '.join(TOOLS[name])})", flush=True)
    subprocess.run([python, "-m", "venv", "--clear", str(target)], check=True)
    result = subprocess.run(
        [str(target / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", *TOOLS[name]],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise ToolchainError(f"installing {name} failed:\n{result.stderr[-3000:]}")
    marker.write_text(wanted)
    return target


def tool(name: str, executable: str) -> str:
    return str(venv(name) / "bin" / executable)


def python312_bin_dir() -> str:
    return str(Path(find_python312()).parent)


def node_tool(name: str, executable: str) -> str:
    """The Node tool `name`'s `executable`, installed with npm on first use (pinned: NODE_TOOLS)."""
    target = NODE_DIR / name
    marker = target / ".installed"
    wanted = NODE_TOOLS[name]
    if not (marker.exists() and marker.read_text() == wanted):
        npm = shutil.which("npm")
        if npm is None:
            raise ToolchainError(f"npm not found: {name} needs Node.js and npm (e.g. apt-get install nodejs npm)")
        print(f"[toolchain] installing {wanted} in {target.relative_to(ROOT)}", flush=True)
        target.mkdir(parents=True, exist_ok=True)
        command = [npm, "install", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error", wanted]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise ToolchainError(f"installing {wanted} failed:\n{result.stderr[-3000:]}")
        marker.write_text(wanted)
    return str(target / "node_modules" / ".bin" / executable)


CHROMIUM = "/usr/bin/chromium"


def chromium() -> str:
    """Debian's Chromium (the rewrite's browser test opens a rewritten page in it), installed with apt-get where it
    is missing and this runs as root, as infra/bootstrap.sh installs ffmpeg; otherwise an error saying why."""
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise ToolchainError(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) as root")
    print("[toolchain] installing chromium from Debian", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]
    for argv in (["apt-get", "update", "-qq"], install):
        result = subprocess.run(argv, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            raise ToolchainError(f"{' '.join(argv)} failed:\n{result.stderr[-3000:]}")
    if not os.access(CHROMIUM, os.X_OK):
        raise ToolchainError(f"apt-get installed chromium but {CHROMIUM} is not there")
    return CHROMIUM
