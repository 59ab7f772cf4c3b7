"""The platforms by name: the targets a stack can migrate to and the sources a library can come from.

A leaf module (it imports nothing of the migrator's), so that the lowest modules (`settings`, `messages`) can
name the platforms before any adapter can be imported. Each platform is registered once more, as its class, in
`providers/__init__.py` (PROVIDERS) or `sources/__init__.py` (HTTP_SOURCES), in the same order: a unit test
(tests/unit/test_platforms.py) holds these names equal to the registered classes' own `name`/`platform`.
Everything else (the CLI's choices, the plan, the demo, the benchmarks, the simulator) reads the names from here
or the facts from the classes, never from a list of its own. docs/adding-a-platform.md says what else a new
platform brings.
"""

from __future__ import annotations

# The providers a migration can target: the stack's `Provider` parameter (template.yaml's AllowedValues).
TARGETS = ("generic", "mux", "cloudflare", "apivideo", "bunny", "jwplayer", "vimeo", "aws")
# The platforms a source reference names (`vimeo://<video id>`): the uploader resolves each to a fresh link at
# the create (messages.ALLOWED_SCHEMES).
REFERENCED_SOURCES = (
    "vimeo",
    "wistia",
    "mux",
    "cloudflare",
    "apivideo",
    "kaltura",
    "jwplayer",
    "brightcove",
    "gcs",
    "azure",
    "dropbox",
)
# Every platform a library can be listed from (`migrator inventory --from`): the referenced ones and S3, whose
# rows carry s3:// URLs the stack presigns.
SOURCES = (*REFERENCED_SOURCES, "s3")
