"""An API request as the HTTP layer hands it over, the operations one may name, and its JSON body read."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

OPS = ("create", "list", "get", "status", "auth", "refresh", "webhook", "track_add", "track_list")


@dataclass
class ApiRequest:
    """An API request as the HTTP layer hands it over."""

    method: str
    path: str
    query: str
    headers: Mapping
    body: bytes
    base_url: str


def parse_json(raw: bytes) -> tuple[object, str | None]:
    if not raw:
        return None, "request body must be a JSON object"
    try:
        return json.loads(raw), None
    except (ValueError, UnicodeDecodeError):
        return None, "request body is not valid JSON"
