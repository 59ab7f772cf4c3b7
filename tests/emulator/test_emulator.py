"""The emulator runner cleans up after itself: ministack unpacks every Lambda worker's code into
its temp directory and never removes it (about 60 MB each; a day of benchmarks filled the disk),
so `Emulator` gives it a scratch directory of its own and removes it on stop."""

from __future__ import annotations

import io
import json
import time
import zipfile
from pathlib import Path

import pytest

from infra.emulator import Emulator, client, free_port

pytestmark = pytest.mark.emulator


def _package() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", "def handler(event, context):\n    return {'echo': event}\n")
    return buffer.getvalue()


def test_lambda_code_is_unpacked_in_the_emulators_scratch_and_removed_on_stop(tmp_path):
    emulator = Emulator(port=free_port(), log_path=tmp_path / "ministack.log").start()
    scratch = Path(emulator.scratch)
    try:
        lam = client("lambda", emulator.endpoint)
        lam.create_function(
            FunctionName="scratch-probe",
            Runtime="python3.12",
            Role="arn:aws:iam::000000000000:role/probe",
            Handler="app.handler",
            Code={"ZipFile": _package()},
        )
        answer = lam.invoke(FunctionName="scratch-probe", Payload=json.dumps({"n": 1}))
        assert json.loads(answer["Payload"].read()) == {"echo": {"n": 1}}
        assert any(scratch.glob("ministack-lambda-*")), "the worker's code went somewhere else"
    finally:
        emulator.stop()
    deadline = time.time() + 30  # removed by a process of its own, not waited for (Emulator._remove_scratch)
    while scratch.exists() and time.time() < deadline:
        time.sleep(0.2)
    assert not scratch.exists()
