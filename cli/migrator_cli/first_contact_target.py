"""`migrator doctor --target T`: the first contact with a target provider (see first_contact.py).

With the credentials the stack will use (read from the stack's secret, or given as a file or a variable before
any stack exists), the provider adapter's own reads are made, never a write: the cheap authenticated read
(`check`), the first page of the library (the audit's listing), one video's read (the poll), its text tracks (the
tracks worker's look before an upload), the extras' looks on that video where the target takes them (its
thumbnail's and its chapters': first_contact_extras.py), the lost-create lookup (`find`, for an id nothing can
carry: it must find nothing) and a collection's lookup (likewise), and where the provider's webhooks point where its
API can say; then each declared answer is checked, and the provider's uncertain behaviours are tried
(first_contact_probes.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from migrator.fate import OutcomeKind
from migrator.providers import ListingError
from migrator.providers.facts import CredentialsError, TrackList
from migrator.providers.http import TransportError, watching

from .first_contact import FAIL, PASS, SKIP, NotSent, Report, Watch, declarations, line, refusal, shape_lines

# The asset id the lookup is asked for: no video can carry it (no row is ever loaded under it), so a lookup that
# names a video for it reads a filter the provider did not apply.
PROBE_ASSET = "doctor/first-contact-{stamp}"
LOOKUP_WINDOW_S = 3600.0


def check_target(provider, clock: Callable[[], float] = time.time) -> Report:
    """Every read-only check of `provider` (a migrator.providers provider, with the credentials to use)."""
    from .first_contact_extras import collection_lookups, video_looks
    from .first_contact_probes import TARGET_PROBES

    name = provider.name
    declared = declarations("target", name)
    report = Report("target", name)
    watch = Watch(declared, provider.http.base)
    with watching(watch):
        if _reached(provider, report):
            video = _listing(provider, report)
            if video is None or not video.remote_id:
                said = "the library is empty: its read, its tracks and the extras' looks were not checked"
                report.lines.append(line(f"{name} one video", SKIP, said))
            else:
                _poll(provider, video, report)
                _tracks(provider, video.remote_id, report)
                report.lines += video_looks(provider, video.remote_id)
            _lookup(provider, report, clock)
            report.lines += collection_lookups(provider, clock)
            report.lines.append(webhooks_line(provider))
            for extra in TARGET_PROBES.get(name, ()):
                report.lines += extra(provider, watch, clock)
    report.lines += shape_lines(declared, watch.exchanges)
    return report


def _reached(provider, report: Report) -> bool:
    name = f"{provider.name} credentials"
    try:
        answer = provider.check()
    except (CredentialsError, NotSent, TransportError) as exc:
        detail = exc.kind if isinstance(exc, TransportError) else str(exc)
        report.lines.append(line(name, FAIL, f"no answer: {detail}", "the credentials' format, or --provider-url"))
        return False
    if 200 <= answer.status < 300:
        report.lines.append(line(name, PASS, f"accepted (HTTP {answer.status})"))
        return True
    fix = (
        f"the {provider.name} credentials are wrong or lack rights (docs/providers.md)"
        if answer.status in (401, 403)
        else "the provider's address (--provider-url, ProviderBaseUrl) or its weather: try again"
    )
    report.lines.append(line(name, FAIL, f"HTTP {answer.status}", fix))
    return False


def _listing(provider, report: Report):
    name = f"{provider.name} listing"
    try:
        video = next(iter(provider.videos()), None)
        if video is not None:
            video = provider.settled(video)
    except NotSent as exc:
        report.lines.append(line(name, FAIL, refusal(exc, "the listing"), "report this line"))
        return None
    except (ListingError, TransportError) as exc:
        report.lines.append(line(name, FAIL, getattr(exc, "kind", None) or str(exc)))
        return None
    if video is None:
        report.lines.append(line(name, PASS, "the first page answered, and the library is empty"))
    else:
        state = f"{video.status}" + ("" if video.known else " (a status this adapter does not know)")
        report.lines.append(
            line(name, PASS if video.known else FAIL, f"the first page answered; its first video is {state}")
        )
    return video


def _poll(provider, video, report: Report) -> None:
    name = f"{provider.name} one video read"
    try:
        polled = provider.poll(video.ref or PROBE_ASSET.format(stamp="poll"), video.remote_id)
    except NotSent as exc:
        report.lines.append(line(name, FAIL, refusal(exc, "the poll"), "report this line"))
        return
    if polled.http_status != 200 or polled.video is None:
        report.lines.append(line(name, FAIL, f"{video.remote_id}: HTTP {polled.http_status or 'no answer'}"))
        return
    read = polled.video
    if not read.known:
        detail = f"{video.remote_id}: {read.status!r}, a status this adapter does not know"
        report.lines.append(line(name, FAIL, detail, "report this line: the poll would wait on it for ever"))
        return
    state = read.target.value if read.target else "still processing"
    report.lines.append(line(name, PASS, f"{video.remote_id}: {read.status} ({state})"))


def _tracks(provider, remote_id: str, report: Report) -> None:
    name = f"{provider.name} text tracks of one video"
    if not provider.takes_tracks:
        report.lines.append(line(name, SKIP, "this provider takes no text tracks"))
        return
    try:
        listed = provider.track_list(remote_id)
    except NotSent as exc:
        report.lines.append(line(name, FAIL, refusal(exc, "the track list"), "report this line"))
        return
    if isinstance(listed, TrackList):
        gone = f"; the provider says {listed.video_gone}" if listed.video_gone else ""
        report.lines.append(line(name, PASS, f"{remote_id}: {len(listed.tracks)} listed{gone}"))
    else:
        report.lines.append(line(name, FAIL, f"{remote_id}: {listed.kind.value}: {listed.error or '?'}"))


def _lookup(provider, report: Report, clock) -> None:
    """The lost-create lookup for an id no video carries: it must find nothing, and say so."""
    name = f"{provider.name} lost-create lookup"
    asset = PROBE_ASSET.format(stamp=int(clock()))
    try:
        found = provider.find(asset, clock() - LOOKUP_WINDOW_S)
    except NotSent as exc:
        report.lines.append(line(name, FAIL, refusal(exc, "the lookup"), "report this line"))
        return
    if found.kind is OutcomeKind.NOT_FOUND:
        report.lines.append(line(name, PASS, "an id no video carries is not found, as it must not be"))
    elif found.kind is OutcomeKind.CREATED:
        detail = f"an id no video carries was 'found' as {found.remote_id}: the lookup's filter is not applied"
        fix = "a crash after a create could adopt another asset's video: report this line before migrating"
        report.lines.append(line(name, FAIL, detail, fix))
    else:
        report.lines.append(line(name, FAIL, f"{found.kind.value}: {found.error or '?'}"))


def webhooks_line(provider, here: str | None = None):
    """Where the provider's webhooks point, where its API says (`webhook_urls`, else the one of `webhook_target`);
    with `here` (the stack's URL), whether one points there."""
    from .webhook_targets import webhook_check

    check = webhook_check(provider, here)
    result = SKIP if check.unknown else (PASS if check.ok else FAIL)
    return line(f"{provider.name} webhooks", result, check.detail, check.fix)
