"""`migrator doctor --source P` / `--target T`: the first contact with a real platform, read-only, one line per
assumption.

No test of this project can reach a real account: every adapter and every simulator was built from the
platforms' documents. So on the operator's first day each assumption they share is checked against the platform
itself, with the operator's credentials: the adapter's own calls are made (a page of the listing, one video's
read, its link and a 1-byte range GET of it, its captions; for a target its listing, one video's read, its
tracks, its thumbnail's and chapters' looks, the lost-create lookup, a collection's lookup, where its webhooks
point), each answer is held to its declaration (migrator.shapes: the fields and values the adapter reads), and the
behaviours the documents leave uncertain are tried where that is safe (first_contact_probes.py).

Never a write: every request goes through a `Watch` (providers.http.watching) that refuses, before it is sent,
anything the platform's declarations do not name as a read (an adapter that would create a download, ask for a
master file or sign a token is stopped there, and the line says so). Every message is redacted
(redact.redact_credentials) and stripped of terminal controls before it is printed: an answer can carry a signed
link.

This module holds what both sides share: the report and its lines, the watch, the declarations' lines, the
link's probe and its life; first_contact_source.py and first_contact_target.py run each side
(first_contact_extras.py: a target's looks for what a viewer sees).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

import requests
from migrator.link_life import LinkTerms, expiry_in_link, span
from migrator.redact import redact_credentials, strip_controls
from migrator.shapes import Declared, Platform, platform, xml_doc

from .errors import CliError

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
# A link that ends this much sooner than the adapter was told counts as a difference (clocks, the request's time).
LINK_SLACK_S = 120.0
LINK_TIMEOUT_S = (5.0, 15.0)


def clean(text: object, limit: int = 400) -> str:
    """What may be printed of a platform's words: no credential (signed links redacted), no terminal control."""
    return strip_controls(redact_credentials(str(text)))[:limit]


@dataclass(frozen=True)
class Line:
    """One assumption checked: PASS, FAIL (with what differed and what to do) or SKIP (why it could not be)."""

    name: str
    result: str
    detail: str
    fix: str = ""

    @property
    def ok(self) -> bool:
        return self.result != FAIL

    def text(self) -> str:
        out = f"{self.result}  {self.name}: {self.detail}"
        return out + (f"\n      fix: {self.fix}" if self.result == FAIL and self.fix else "")

    def as_dict(self) -> dict:
        return {"name": self.name, "result": self.result, "ok": self.ok, "detail": self.detail, "fix": self.fix}


def line(name: str, result: str, detail: str, fix: str = "") -> Line:
    return Line(clean(name, 120), result, clean(detail, 600), clean(fix, 400))


@dataclass
class Report:
    side: str  # "source" | "target"
    platform: str
    lines: list[Line] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(each.ok for each in self.lines)

    def count(self, result: str) -> int:
        return sum(1 for each in self.lines if each.result == result)

    def summary(self) -> str:
        said = f"{self.count(PASS)} PASS, {self.count(FAIL)} FAIL, {self.count(SKIP)} SKIP"
        verdict = "every assumption checked holds" if self.ok else "fix what FAILs before migrating"
        return f"first contact with {self.platform} as a {self.side}: {said}; {verdict}"

    def text(self) -> str:
        return "\n".join([*(each.text() for each in self.lines), self.summary()])

    def as_dict(self) -> dict:
        return {
            "ok": self.ok,
            "side": self.side,
            "platform": self.platform,
            "passed": self.count(PASS),
            "failed": self.count(FAIL),
            "skipped": self.count(SKIP),
            "summary": self.summary(),
            "checks": [each.as_dict() for each in self.lines],
        }


# --- the watch: read-only, every answer kept ------------------------------------------------------------------


class NotSent(Exception):
    """A request the platform's declarations do not name as a read: refused before it was sent."""

    def __init__(self, method: str, path: str):
        super().__init__(f"{method} {path}")
        self.method, self.path = method, path


@dataclass(frozen=True)
class Exchange:
    """One request the watch let through and its answer."""

    declared: Declared
    method: str
    path: str
    params: dict
    sent: object  # the JSON body sent (Kaltura's filters, Dropbox's arguments)
    status: int
    body: object
    text: str
    headers: dict


def declarations(side: str, name: str) -> Platform:
    """What `name` declares as a `side`, which a first contact checks it against: every platform declares it
    (tests/unit/test_shapes.py), so none is a mistake said in one line."""
    declared = platform(side, name)
    if declared is None:
        raise CliError(f"the {side} {name} declares no answer: a first contact has nothing to check it against")
    return declared


class Watch:
    """Refuses what `platform` does not declare as a read; keeps every answer (see providers.http.watching)."""

    def __init__(self, platform: Platform, base: str = ""):
        self.platform = platform
        self.base = base.rstrip("/")  # the API's address: its path (Wistia's /modern) is not the declarations'
        self.exchanges: list[Exchange] = []
        self.refused: list[NotSent] = []

    def path_of(self, url: str) -> str:
        """The request's path as the declarations name it: below the API's address, or the whole URL's path (a
        delivery host, a token endpoint)."""
        if self.base and url.startswith(self.base + "/"):
            url = url[len(self.base) :]
        return urlsplit(url).path

    def before(self, method: str, url: str) -> None:
        path = self.path_of(url)
        if self.platform.find(method, path) is None:
            refused = NotSent(method.upper(), path)
            self.refused.append(refused)
            raise refused

    def after(self, method: str, url: str, params, json_body, answer) -> None:
        path = self.path_of(url)
        declared = self.platform.find(method, path)
        if declared is None:  # before() let it through, so it is declared: kept for safety all the same
            return
        self.record(declared, method, path, dict(params or {}), json_body, answer.status, answer.body, answer.text,
                    answer.headers)  # fmt: skip

    def record(self, declared, method, path, params, sent, status, body, text, headers) -> None:
        self.exchanges.append(Exchange(declared, method.upper(), path, params, sent, status, body, text, headers))

    def answers(self, name: str) -> list[Exchange]:
        return [ex for ex in self.exchanges if ex.declared.name == name]


def refusal(exc: NotSent, what: str) -> str:
    return (
        f"{what} would need {exc.method} {exc.path}, which is no read this check may send (a write, or a call"
        " no declaration names): not sent"
    )


# --- the declarations, one line each ---------------------------------------------------------------------------


def shape_lines(platform: Platform, exchanges: list[Exchange]) -> list[Line]:
    """One line per declared answer: PASS when every answer got fits it, FAIL naming what differed, SKIP when
    this run never asked for it (the library had nothing that needed it)."""
    out = []
    for declared in platform.answers:
        got = [ex for ex in exchanges if ex.declared is declared]
        where = got[0].path if got else readable(declared.path)
        name = f"{platform.name} {declared.name} ({declared.method} {where})"
        if not got:
            out.append(line(name, SKIP, "not asked in this run (nothing the reads met needed it)"))
            continue
        checked = [ex for ex in got if ex.status in declared.statuses]
        found: list[str] = []
        for ex in checked:
            body = xml_doc(ex.text, declared.xml_lists) if declared.form == "xml" else ex.body
            found += [d for d in declared.check(ex.status, body, ex.headers) if d not in found]
        statuses = sorted({ex.status for ex in got})
        if found:
            shown = "; ".join(found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
            fix = (
                f"the platform answers otherwise than {declared.reads} reads it: report this line (it names the"
                " field) before migrating; docs/runbook.md, first contact"
            )
            out.append(line(name, FAIL, shown, fix))
        elif not checked:
            said = ", ".join(f"HTTP {s}" for s in statuses)
            out.append(line(name, SKIP, f"answered {said} only: no answer of the form the adapter reads came back"))
        else:
            what = "as declared" if declared.schema is not None or declared.headers else "(its body is not read)"
            out.append(line(name, PASS, f"{len(checked)} answer(s), HTTP {checked[0].status}, {what}"))
    return out


def readable(pattern: str) -> str:
    """A declared path's pattern as an operator reads it: `/videos/{id}/captions`."""
    for regex, shown in ((r"(/.*)?", ""), (r"(/[^/]+)?", ""), ("[^/]+", "{id}"), (r"\d+", "{n}"), ("/?", "/")):
        pattern = pattern.replace(regex, shown)
    return pattern.replace("\\", "").split("|")[0]


# --- the link: alive, and how long it lives --------------------------------------------------------------------


def probe_link(url: str, get: Callable = requests.get) -> tuple[bool, str]:
    """A 1-byte range GET of a download link (any signed link takes GET; S3 signs the method, so no HEAD):
    (alive, what it answered). Nothing is read past the first byte."""
    try:
        with get(url, headers={"Range": "bytes=0-0"}, stream=True, timeout=LINK_TIMEOUT_S) as answer:
            status = answer.status_code
            size = (answer.headers.get("Content-Range") or "").rpartition("/")[2] or answer.headers.get(
                "Content-Length", "?"
            )
            if status in (200, 206):
                next(answer.iter_content(1), b"")
                return True, f"HTTP {status}, {size} bytes in all"
            return False, f"HTTP {status}"
    except requests.RequestException as exc:
        return False, f"no answer ({type(exc).__name__})"


def carried_expiry(url: str) -> float | None:
    """When the link itself says it ends: a signature's own end (link_life.expiry_in_link), or an `expires` /
    `exp` epoch in its query or its path's token (`exp=1700000000~acl=...`), where it carries one."""
    found = expiry_in_link(url)
    if found is not None:
        return found
    parts = urlsplit(url)
    for chunk in [*parts.query.split("&"), *parts.path.replace("~", "/").split("/")]:
        name, _, value = chunk.partition("=")
        if name.lower() in ("expires", "exp") and value.isdigit() and 9 <= len(value) <= 11:
            return float(value)
    return None


def link_life_line(platform: str, url: str, told: float | None, terms: LinkTerms | None, now: float) -> Line:
    """The link's real end (what it carries) beside what the adapter was told or assumes (`told`: the
    Resolution's `expires_at`) and what the platform documents (`terms`)."""
    name = f"{platform} link lifetime"
    carried = carried_expiry(url)
    words = (terms.words if terms and terms.words else "nothing documented") + (
        "; the end is not said" if terms and terms.expires_unsaid else ""
    )
    if carried is None:
        if told is None:
            return line(name, SKIP, f"neither the link nor the answer says when it ends ({words}): not measurable here")
        return line(
            name,
            SKIP,
            f"the adapter counts it to live {span(told - now)} ({words}); the link does not say when it ends, so"
            " that cannot be measured here",
        )
    if carried <= now:
        return line(name, FAIL, f"the link says it ended {span(now - carried)} ago", "report this line")
    if told is not None and carried < told - LINK_SLACK_S:
        return line(
            name,
            FAIL,
            f"the link itself ends in {span(carried - now)}, {span(told - carried)} sooner than the adapter counts"
            f" ({span(told - now)}; {words})",
            "the hand-off would give a target a link that dies sooner than it thinks: report this line before"
            " migrating to a target that fetches later (Vimeo)",
        )
    if terms is not None and terms.longest_s is not None and carried - now > terms.longest_s + LINK_SLACK_S:
        return line(name, FAIL, f"the link lives {span(carried - now)}, past the {span(terms.longest_s)} documented")
    counted = f", as the adapter counts ({span(told - now)})" if told is not None else " (the adapter counted none)"
    return line(name, PASS, f"the link itself ends in {span(carried - now)}{counted}; {words}")


def iso(epoch: float | None) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if epoch is not None else "?"
