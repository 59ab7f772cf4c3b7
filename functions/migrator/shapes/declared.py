"""A declared answer (`Declared`), a platform's set of them (`Platform`), and XML read as the checker reads it:
the types shapes/__init__.py describes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .checker import differences


@dataclass(frozen=True)
class Declared:
    """One answer an adapter relies on: the request that gets it and what the adapter reads of it.

    `path` is a regular expression over the request URL's path (matched whole); `schema` the answer's body (None:
    no body is read, a HEAD); `statuses` the answers the adapter takes as success (only those are checked: an
    error answer is the adapter's to report); `form` "json", "xml" (converted by `xml_doc`) or "text" (not
    checked); `headers` the answer's headers the adapter reads. `reads` is the adapter function it mirrors."""

    name: str
    method: str
    path: str
    schema: dict | None
    reads: str
    statuses: tuple[int, ...] = (200,)
    form: str = "json"
    headers: tuple[str, ...] = ()
    xml_lists: tuple[str, ...] = ()  # element names that repeat (a list even when one is there)
    note: str = ""  # what this call is, where the request is not plainly a read (a token, a session)
    # The form of an error the platform answers with a success status (Kaltura's KalturaAPIException, HTTP 200):
    # an answer of that form is the adapter's to report, not checked here.
    error_form: dict | None = None

    def matches(self, method: str, path: str) -> bool:
        return method.upper() == self.method and re.fullmatch(self.path, path) is not None

    def check(self, status: int, body: object, headers: dict | None = None) -> list[str]:
        """What in one answer differs from this declaration (an answer of another status is not checked)."""
        if status not in self.statuses or (self.error_form is not None and not differences(self.error_form, body)):
            return []
        found = []
        lowered = {str(k).lower() for k in (headers or {})}
        found += [f"header {h}: missing" for h in self.headers if h.lower() not in lowered]
        if self.form == "json" and self.schema is not None:
            if body is None:
                return [*found, "the answer: expected JSON, got none (not JSON, or empty)"]
            found += differences(self.schema, body)
        elif self.form == "xml" and self.schema is not None:
            found += differences(self.schema, body)
        return found


@dataclass(frozen=True)
class Platform:
    """A platform's declared answers, as a source or a target."""

    name: str
    side: str  # "source" | "target"
    answers: tuple[Declared, ...] = field(default_factory=tuple)

    def find(self, method: str, path: str) -> Declared | None:
        return next((d for d in self.answers if d.matches(method, path)), None)


def xml_doc(text: str, lists: Sequence[str] = ()) -> object:
    """An XML answer as the checker reads it: an element is an object of its children by tag (a tag met twice,
    or named in `lists`, a list), a leaf its text; attributes are not read. None when it is not XML."""
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return None

    def of(node) -> object:
        children = list(node)
        if not children:
            return node.text or ""
        doc: dict = {}
        for child in children:
            value = of(child)
            if child.tag in lists:
                doc.setdefault(child.tag, []).append(value)
            elif child.tag in doc:
                held = doc[child.tag]
                doc[child.tag] = [*held, value] if isinstance(held, list) else [held, value]
            else:
                doc[child.tag] = value
        return doc

    return {root.tag: of(root)}
