"""Each resource's type in templates as AWS will see them (after the SAM transform): `{logical id: type}`.

CloudFormation refuses to change a resource's type under the same logical id ("Invalid API identifier" when
0.1.0's HTTP API became a REST API under one name), so a release must never do it; the template tests compare
this release's types with every earlier release's. Run with the SAM tool environment's Python:
`python -m infra.template_types FILE...` prints one JSON object of {file: {logical id: type}}.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .lint_template import translate


def resource_types(template_path: Path) -> dict[str, str]:
    """Every resource of the translated template, by logical id."""
    return {name: resource["Type"] for name, resource in translate(template_path)["Resources"].items()}


def main(paths: list[str]) -> int:
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # the transform wants a region; any will do
    print(json.dumps({path: resource_types(Path(path)) for path in paths}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
