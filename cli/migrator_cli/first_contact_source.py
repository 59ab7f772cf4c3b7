"""`migrator doctor --source P`: the first contact with a source platform (see first_contact.py).

With the operator's credentials, as `migrator inventory --from P` takes them, the source adapter's own reads are
made: the first page of the listing (with its caption lookups), one video read by id, its resolve to a download
link, a 1-byte range GET of that link and its lifetime, one caption track resolved; then each declared answer is
checked, and the platform's uncertain behaviours are tried (first_contact_probes.py). S3 is read through boto3:
its calls are watched through botocore's events, and its link is the one the uploader would presign.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable
from datetime import date, datetime
from urllib.parse import urlsplit

from migrator.link_life import LinkTerms
from migrator.messages import AssetMessage
from migrator.presign import MAX_EXPIRY_S
from migrator.providers.facts import CredentialsError
from migrator.providers.http import watching
from migrator.sources import Page, Resolution, ResolutionKind, S3Source, SourceDenied, SourceError, parse_ref

from .first_contact import (
    FAIL,
    PASS,
    SKIP,
    NotSent,
    Report,
    Watch,
    declarations,
    line,
    link_life_line,
    probe_link,
    refusal,
)
from .first_contact import shape_lines as declared_lines

# Rows of the first page tried in turn for a resolve that needs no write (a Mux master not made yet, a Stream
# download not asked for yet): past these, the line says why none could be resolved read-only.
RESOLVE_TRIES = 5
S3_LINK_S = 3600
S3_TERMS = LinkTerms("the stack signs S3 links for PresignExpirySeconds", longest_s=MAX_EXPIRY_S)


def check_source(
    source, probe: Callable[[str], tuple[bool, str]] = probe_link, clock: Callable[[], float] = time.time
) -> Report:
    """Every read-only check of `source` (a migrator.sources source, built with the operator's credentials)."""
    from .first_contact_probes import SOURCE_PROBES

    name = source.platform
    declared = declarations("source", name)
    report = Report("source", name)
    watch = Watch(declared, getattr(source, "base_url", ""))
    with _watched(source, watch):
        page = _listing(source, report)
        if page is not None:
            rows = [e for e in page.entries if isinstance(e, AssetMessage)]
            if not rows:
                report.lines.append(
                    line(
                        f"{name} one video",
                        SKIP,
                        "no fetchable video on the first page: its read, its link and its captions were not checked",
                    )
                )
            else:
                _video_read(source, rows[0], report)
                _resolve(source, rows, report, probe, clock)
                _captions(source, rows, report, probe)
            for extra in SOURCE_PROBES.get(name, ()):
                report.lines += extra(source, watch, page, clock)
    report.lines += declared_lines(declared, watch.exchanges)
    return report


# --- the steps ---------------------------------------------------------------------------------------------------


def _listing(source, report: Report) -> Page | None:
    name = f"{source.platform} listing"
    try:
        page = source.page(None, None, True)
    except NotSent as exc:
        report.lines.append(line(name, FAIL, refusal(exc, "the listing"), "report this line"))
        return None
    except (SourceDenied, CredentialsError) as exc:
        fix = f"the {source.platform} credentials are wrong or lack rights: docs/sources.md has what each needs"
        report.lines.append(line(name, FAIL, _reason(exc), fix))
        return None
    except SourceError as exc:
        report.lines.append(line(name, FAIL, _reason(exc), "read the reason; docs/runbook.md, first contact"))
        return None
    rows = sum(1 for e in page.entries if isinstance(e, AssetMessage))
    unfetchable = [e for e in page.entries if not isinstance(e, AssetMessage)]
    listed = len(page.entries) + len(page.pending)
    detail = f"{listed} videos on the first page: {rows} fetchable, {len(unfetchable)} unfetchable"
    detail += f", {len(page.pending)} still processing" if page.pending else ""
    if unfetchable:
        reason, count = Counter(e.reason for e in unfetchable).most_common(1)[0]
        detail += f" (most often, {count}: {reason})"
    detail += "; more pages follow" if page.cursor else "; the whole library"
    unread = page.listed - page.skipped
    if not listed and unread > 0:  # items the adapter could not even name: an id it reads is missing, or other
        detail = f"none of the {unread} items the page listed names a video the adapter can read; {detail}"
        report.lines.append(line(name, FAIL, detail, "the declared answers below name what differs: report them"))
        return page
    report.lines.append(line(name, PASS, detail))
    return page


def _video_read(source, row: AssetMessage, report: Report) -> None:
    name = f"{source.platform} one video read by id"
    ref = parse_ref(row.source_url)
    if ref is None:
        report.lines.append(line(name, SKIP, "this source's rows name objects, not videos read by id (S3)"))
        return
    try:
        again = source.video(ref.video_id)
    except NotImplementedError:
        report.lines.append(line(name, SKIP, "this source reads no single video (every video is listed)"))
        return
    except NotSent as exc:
        report.lines.append(line(name, FAIL, refusal(exc, "reading one video"), "report this line"))
        return
    except SourceError as exc:
        report.lines.append(line(name, FAIL, _reason(exc)))
        return
    found = [e for e in [*again.entries, *again.pending] if e.asset_id == row.asset_id]
    if found:
        report.lines.append(line(name, PASS, f"{row.asset_id} answered as the listing gave it"))
    else:
        report.lines.append(
            line(name, FAIL, f"{row.asset_id}, listed just now, was not answered when asked for by id", "report this")
        )


def _resolve(source, rows: list[AssetMessage], report: Report, probe, clock) -> None:
    """The first row that resolves to a link without a write: the link, alive (a 1-byte GET), and its lifetime.
    A row the resolve finds unfetchable (private past its window, say) or preparing is the adapter's answer for
    that video: the next row is tried; credentials refused, or no answer, fail at once."""
    name = f"{source.platform} resolve to a download link"
    passed: list[str] = []
    for row in rows[:RESOLVE_TRIES]:
        try:
            resolution = _resolution(source, row, clock)
        except NotSent as exc:
            passed.append(refusal(exc, f"resolving {row.asset_id}"))
            continue
        except SourceError as exc:
            report.lines.append(line(name, FAIL, f"{row.asset_id}: {_reason(exc)}", _fix(exc)))
            return
        if resolution.kind in (ResolutionKind.DENIED, ResolutionKind.THROTTLED, ResolutionKind.TRANSIENT):
            said = f"{row.asset_id}: {resolution.kind.value}: {resolution.reason or '?'}"
            report.lines.append(line(name, FAIL, said, "the source credentials (docs/sources.md), or try again"))
            return
        if resolution.kind is not ResolutionKind.READY or not resolution.url:
            passed.append(f"{row.asset_id}: {resolution.kind.value}: {resolution.reason or 'no link'}")
            continue
        host = urlsplit(resolution.url).netloc
        report.lines.append(line(name, PASS, f"{row.asset_id} resolved to a link on {host}"))
        alive, said = probe(resolution.url)
        fix = "" if alive else "the link the target would be handed does not serve the file: report this line"
        report.lines.append(line(f"{source.platform} link answers", PASS if alive else FAIL, f"{host}: {said}", fix))
        terms = S3_TERMS if isinstance(source, S3Source) else getattr(source, "link_terms", None)
        report.lines.append(link_life_line(source.platform, resolution.url, resolution.expires_at, terms, clock()))
        return
    why = passed[0] + (f" (and {len(passed) - 1} more videos: {_kinds(passed[1:])})" if len(passed) > 1 else "")
    tried = min(len(rows), RESOLVE_TRIES)
    report.lines.append(line(name, SKIP, f"no link could be had read-only from the {tried} videos tried: {why}"))


def _kinds(said: list[str]) -> str:
    """What the other tries met, counted by kind (a write needed, unfetchable, preparing)."""
    counted = Counter("a write needed" if "no read this check may send" in s else s.split(": ")[1] for s in said)
    return ", ".join(f"{n} {kind}" for kind, n in counted.most_common())


def _fix(exc: Exception) -> str:
    if isinstance(exc, SourceDenied | CredentialsError):
        return "the source credentials are wrong or lack rights: docs/sources.md has what each needs"
    return "read the reason; docs/runbook.md, first contact"


def _resolution(source, row: AssetMessage, clock) -> Resolution:
    if isinstance(source, S3Source):  # no reference: the uploader presigns the object (presign.S3Presigner)
        bucket, _, key = row.source_url.removeprefix("s3://").partition("/")
        params = {"Bucket": bucket, "Key": key}
        url = source.client.generate_presigned_url("get_object", Params=params, ExpiresIn=S3_LINK_S)
        return Resolution.ready(url, expires_at=clock() + S3_LINK_S)
    ref = parse_ref(row.source_url)
    if ref is None:
        return Resolution.unfetchable(f"not a source reference: {row.source_url[:60]}")
    return source.resolve(ref)


def _captions(source, rows: list[AssetMessage], report: Report, probe) -> None:
    """The first caption track of the first page that resolves (a track the adapter finds unfetchable, a signed
    Mux track without a signing key, say, is its answer for that track: the next is tried)."""
    name = f"{source.platform} one caption track"
    tracks = [(row, track) for row in rows for track in row.tracks if parse_ref(track.url) is not None]
    if not tracks:
        report.lines.append(line(name, SKIP, "no video of the first page lists a caption track"))
        return
    passed: list[str] = []
    for row, track in tracks[:RESOLVE_TRIES]:
        where = f"{row.asset_id} {track.language}"
        try:
            resolution = source.resolve(parse_ref(track.url))
        except NotSent as exc:
            passed.append(refusal(exc, "resolving the track"))
            continue
        except SourceError as exc:
            report.lines.append(line(name, FAIL, f"{where}: {_reason(exc)}", _fix(exc)))
            return
        if resolution.kind is ResolutionKind.READY and resolution.text is not None:
            said = f"{where}: {len(resolution.text):,} characters of {resolution.text_format} served by the API"
            report.lines.append(line(name, PASS, said))
            return
        if resolution.kind is ResolutionKind.READY and resolution.url:
            alive, said = probe(resolution.url)
            detail = f"{where}: its link on {urlsplit(resolution.url).netloc}: {said}"
            report.lines.append(line(name, PASS if alive else FAIL, detail, "" if alive else "report this line"))
            return
        if resolution.kind is ResolutionKind.DENIED:
            report.lines.append(line(name, FAIL, f"{where}: {resolution.reason}", "the source credentials"))
            return
        passed.append(f"{where}: {resolution.kind.value}: {resolution.reason or '?'}")
    more = f" (and {len(passed) - 1} more tracks alike)" if len(passed) > 1 else ""
    report.lines.append(line(name, SKIP, f"no track could be had read-only: {passed[0]}{more}"))


def _reason(exc: Exception) -> str:
    return getattr(exc, "reason", None) or str(exc) or type(exc).__name__


# --- watching: HTTP through the transport's hook, S3 through botocore's events ---------------------------------------


@contextlib.contextmanager
def _watched(source, watch: Watch):
    with watching(watch):
        if not isinstance(source, S3Source):
            yield
            return
        events = source.client.meta.events
        before = _s3_before(watch)
        after = _s3_after(watch)
        events.register("before-call.s3", before)
        events.register("after-call.s3", after)
        try:
            yield
        finally:
            events.unregister("before-call.s3", before)
            events.unregister("after-call.s3", after)


def _s3_before(watch: Watch):
    def refuse(model, **_) -> None:
        if watch.platform.find("AWS", model.name) is None:
            refused = NotSent("AWS", model.name)
            watch.refused.append(refused)
            raise refused

    return refuse


def _s3_after(watch: Watch):
    def keep(http_response, parsed, model, **_) -> None:
        declared = watch.platform.find("AWS", model.name)
        if declared is not None:
            body = json_safe({k: v for k, v in (parsed or {}).items() if k != "ResponseMetadata"})
            watch.record(declared, "AWS", model.name, {}, None, http_response.status_code, body, "", {})

    return keep


def json_safe(value: object) -> object:
    """boto3's parsed answer as JSON would carry it: times as ISO text."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


__all__ = ["check_source"]
