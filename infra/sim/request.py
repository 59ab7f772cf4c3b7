"""An API request as the HTTP layer hands it over, the operations one may name, and its JSON (or form) body read."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import Message

OPS = ("create", "list", "get", "status", "auth", "refresh", "webhook", "track_add", "track_list")


@dataclass
class ApiRequest:
    """An API request as the HTTP layer hands it over."""

    method: str
    path: str
    query: str
    headers: Mapping | Message  # read by name, without regard to case (http.client.HTTPMessage)
    body: bytes
    base_url: str


def parse_json(raw: bytes) -> tuple[object, str | None]:
    if not raw:
        return None, "request body must be a JSON object"
    try:
        return json.loads(raw), None
    except (ValueError, UnicodeDecodeError):
        return None, "request body is not valid JSON"


def is_form(content_type: str | None) -> bool:
    """Whether a request says its body is `application/x-www-form-urlencoded` (an OAuth token request's form)."""
    return (content_type or "").split(";")[0].strip().lower() == "application/x-www-form-urlencoded"


def form_fields(raw: bytes) -> dict | None:
    """A form body's fields (the first value of each name), or None when it is empty or not UTF-8."""
    try:
        pairs = urllib.parse.parse_qsl(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=100)
    except (UnicodeDecodeError, ValueError):
        return None
    fields: dict = {}
    for name, value in pairs:
        fields.setdefault(name, value)
    return fields or None
