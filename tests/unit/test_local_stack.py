"""The local deploy's shortcuts (infra/stack.py): a package reused only while its artifacts are there, and
the fast event polling kept to the emulator."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from infra.stack import _artifacts_present, sam_env

PACKAGED = """
Resources:
  UploaderFunction:
    Properties:
      CodeUri: s3://aws-sam-cli-managed-default-samclisourcebucket-1a2b/722cafbda17f1f608cd318b3d8e32b3f
  WebhookFunction:
    Properties:
      CodeUri: s3://aws-sam-cli-managed-default-samclisourcebucket-1a2b/722cafbda17f1f608cd318b3d8e32b3f
  Globals:
    CodeUri: functions/
"""


class Bucket:
    def __init__(self, keys):
        self.keys, self.asked = set(keys), []

    def head_object(self, Bucket, Key):  # boto3's own argument names
        self.asked.append((Bucket, Key))
        if (Bucket, Key) not in self.keys:
            raise ClientError({"Error": {"Code": "404", "Message": "Not Found"}}, "HeadObject")
        return {}


ARTIFACT = ("aws-sam-cli-managed-default-samclisourcebucket-1a2b", "722cafbda17f1f608cd318b3d8e32b3f")


@pytest.mark.parametrize(
    ("template", "held", "reusable"),
    [
        (PACKAGED, {ARTIFACT}, True),  # both functions name the one artifact, which is there
        (PACKAGED, set(), False),  # an emulator restarted since: package again
        ("Resources: {}\n", set(), False),  # a template that names no artifact is no package
    ],
)
def test_a_package_is_reused_only_while_every_artifact_it_names_is_held(template, held, reusable):
    s3 = Bucket(held)
    assert _artifacts_present(template, s3) is reusable
    assert set(s3.asked) <= {ARTIFACT} and len(s3.asked) <= 1  # one artifact, asked after once


def test_fast_event_polling_is_for_the_emulator_only_and_an_operators_own_setting_wins(monkeypatch):
    monkeypatch.delenv("SAM_CLI_POLL_DELAY", raising=False)
    assert sam_env("http://127.0.0.1:4566")["SAM_CLI_POLL_DELAY"] == "0.5"
    assert "SAM_CLI_POLL_DELAY" not in sam_env(None)  # AWS: sam's own 5 s, not to be throttled
    monkeypatch.setenv("SAM_CLI_POLL_DELAY", "2")
    assert sam_env("http://127.0.0.1:4566")["SAM_CLI_POLL_DELAY"] == "2"


def test_the_emulator_unpacks_lambda_code_in_memory_only_where_there_is_room(tmp_path, monkeypatch):
    """A tmpfs is used only with room in it and memory to spare for every worker a run keeps; else the system's
    temp directory (a three-worker run held 12 GB of tmpfs on a 23 GB machine, and the kernel killed an emulator)."""
    import shutil
    from collections import namedtuple

    from infra.emulator import memory_available, scratch_parent

    plenty, little = (lambda: 64 * 2**30), (lambda: 12 * 2**30)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10 * 2**30, 2 * 2**30, 8 * 2**30))
    assert scratch_parent(tmp_path, min_free=6 * 2**30, available=plenty) == str(tmp_path)
    assert scratch_parent(tmp_path, min_free=9 * 2**30, available=plenty) is None  # too little room left
    assert scratch_parent(tmp_path, min_free=6 * 2**30, available=little) is None  # too little memory
    assert scratch_parent(tmp_path, min_free=6 * 2**30, available=lambda: None) is None  # no MemAvailable
    monkeypatch.undo()
    assert scratch_parent(tmp_path / "absent", min_free=0, available=plenty) is None  # no tmpfs here (macOS)
    assert scratch_parent(tmp_path, min_free=0, available=plenty) == str(tmp_path)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24683612 kB\nMemFree:        23560000 kB\nMemAvailable:   23000000 kB\n")
    assert memory_available(meminfo) == 23000000 * 1024
    assert memory_available(tmp_path / "absent") is None


def test_the_templates_functions_share_one_runtime_which_is_the_one_read():
    from infra.stack import template_runtime
    from infra.toolchain import ROOT

    text = (ROOT / "template.yaml").read_text()
    assert text.count("Runtime: ") == 1, "one runtime, in Globals: the bytecode compiled is for it"
    assert template_runtime(ROOT / "template.yaml") == "python3.12"


def test_a_build_carries_bytecode_checked_against_its_sources_and_none_for_another_runtime(tmp_path):
    import importlib.util
    import sys

    from infra.stack import compile_bytecode

    module = tmp_path / "UploaderFunction" / "migrator" / "fate.py"
    module.parent.mkdir(parents=True)
    module.write_text("ANSWER = 42\n")
    (tmp_path / "template.yaml").write_text("Resources: {}\n")  # a file beside the functions: left alone

    assert compile_bytecode(tmp_path, "python2.7") == 0
    assert not list(tmp_path.rglob("*.pyc"))

    runtime = f"python{sys.version_info.major}.{sys.version_info.minor}"
    assert compile_bytecode(tmp_path, runtime) == 1
    pyc = importlib.util.cache_from_source(str(module))
    flags = int.from_bytes(open(pyc, "rb").read()[4:8], "little")
    assert flags == 0b11, "hash-based and checked (PEP 552): an unzip that resets file times keeps it valid"


def test_the_emulator_ends_idle_workers_after_a_minute_unless_told_otherwise():
    from infra.emulator import WORKER_IDLE_S, emulator_environment

    env = emulator_environment(4599, "/dev/shm/x", {"PATH": "/bin", "AWS_ACCESS_KEY_ID": "real", "TMPDIR": "/tmp"})
    assert env["LAMBDA_WARM_TTL_SECONDS"] == str(WORKER_IDLE_S) == "60"
    assert (env["GATEWAY_PORT"], env["TMPDIR"], env["BIND_HOST"], env["PATH"]) == (
        "4599",
        "/dev/shm/x",
        "127.0.0.1",
        "/bin",
    )
    assert env["AWS_ACCESS_KEY_ID"] == "test"  # never the caller's real credentials
    assert emulator_environment(4599, "/x", {"LAMBDA_WARM_TTL_SECONDS": "300"})["LAMBDA_WARM_TTL_SECONDS"] == "300"


@pytest.mark.parametrize(
    ("value", "item"),
    [
        ("rate(1 minute)", 'MirrorSchedule="rate(1 minute)"'),
        ("plain", "MirrorSchedule=plain"),
        ('say "hi"', 'MirrorSchedule="say \\"hi\\""'),
    ],
)
def test_a_parameter_value_with_spaces_reaches_sam_quoted_whole(value, item):
    from infra.stack import override

    assert override("MirrorSchedule", value) == item
