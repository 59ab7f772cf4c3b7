"""Lints template.yaml as written and as AWS will see it after the SAM transform.

cfn-lint on the SAM source misses typos nested inside events (e.g. a misspelt
ScalingConfig key): those only surface once samtranslator expands the template.
Run with the SAM tool environment's Python: `python -m infra.lint_template`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def translate(template_path: Path) -> dict:
    from samtranslator.model.exceptions import InvalidDocumentException
    from samtranslator.translator.transform import transform
    from samtranslator.yaml_helper import yaml_parse

    class OfflinePolicies:
        """No IAM lookups: the template names no managed policies by name."""

        def load(self):
            return {}

    source = yaml_parse(template_path.read_text())
    # `sam package` would upload local code and write an S3 URI; the linter only needs the shape.
    for section in [
        source.get("Globals", {}).get("Function", {}),
        *(r.get("Properties", {}) for r in source["Resources"].values()),
    ]:
        if isinstance(section.get("CodeUri"), str) and not section["CodeUri"].startswith("s3://"):
            section["CodeUri"] = "s3://lint-placeholder/code.zip"
    try:
        return transform(source, {}, OfflinePolicies())
    except InvalidDocumentException as exc:
        raise SystemExit("SAM transform failed:\n" + "\n".join(f"  {c.message}" for c in exc.causes)) from None


def main() -> int:
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # the transform wants a region; any will do
    template = ROOT / "template.yaml"
    cfn_lint = str(Path(sys.executable).parent / "cfn-lint")
    status = subprocess.run([cfn_lint, str(template)]).returncode
    translated = translate(template)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as out:
        json.dump(translated, out, indent=1)
    status |= subprocess.run([cfn_lint, out.name]).returncode
    print("template.yaml: cfn-lint clean, source and translated" if status == 0 else "template.yaml: lint errors above")
    return status


if __name__ == "__main__":
    sys.exit(main())
