"""The demo's last step: a small sample site embedding the migrated videos as their source platform documents it, and
`migrator rewrite --dry-run` over it with the map read from the stack's ledger, its summary printed (issue 46).

The site is made from the demo's own cut-over map: for a few of its videos, one page each holding every documented
form of the video's source platform (each form's `sample`, so what the forms find is what the platform's embed
documentation shows), and for a URL list's videos, the URLs themselves in a <video> and a link. The dry run changes
nothing; the demo checks that every embed it wrote was found and that none was "not in the map" (a form and the map
that disagree about an id), and reports the rest as the rewrite does.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
from collections.abc import Mapping
from pathlib import Path

from migrator_cli.rewrite.forms import all_forms, find
from migrator_cli.rewrite.idmap import read_export

PAGES = 8  # videos given a page of their own: enough to show every form, small enough to read the summary


def sample_site(cutover: Path, site: Path, pages: int = PAGES) -> int:
    """Write the sample site into `site` from the map at `cutover`; how many embeds it holds."""
    site.mkdir(parents=True, exist_ok=True)
    rows = list(read_export(io.StringIO(cutover.read_text(encoding="utf-8")), str(cutover)))
    ready = sorted((r for r in rows if r.get("state") == "ready"), key=lambda r: str(r.get("id")))
    others = sorted((r for r in rows if r.get("state") != "ready"), key=lambda r: str(r.get("id")))
    rows = [*ready[: pages - 1 if others else pages], *others[:1]]  # one not moved, to show its embed is left
    by_platform: dict[str, list] = {}
    for form in all_forms():
        by_platform.setdefault(form.platform, []).append(form)
    embeds = 0
    for number, row in enumerate(rows, start=1):
        body, count = page_body(row, by_platform.get(str(row.get("source_platform") or ""), []))
        if not count:
            continue
        embeds += count
        title = html.escape(str(row.get("id") or number))
        (site / f"video-{number}.html").write_text(
            f"<!doctype html>\n<title>{title}</title>\n<h1>{title}</h1>\n{body}\n", encoding="utf-8"
        )
    return embeds


def page_body(row: Mapping, forms: list) -> tuple[str, int]:
    """Every form of the row's platform that reads back as this video, one after another; a URL list's URL as a
    <video> and a link."""
    platform = str(row.get("source_platform") or "")
    url = str(row.get("source_url") or "")
    if platform in ("https", "http"):
        link = html.escape(url, quote=True)
        return f'<video controls src="{link}"></video>\n<p><a href="{link}">download</a></p>', 2
    aliases = str(row.get("source_aliases") or "").split()
    candidates = [c for c in (str(row.get("source_id") or ""), url, *aliases) if c]
    parts = []
    for form in forms:
        for candidate in candidates:
            try:
                text = form.sample(candidate)
            except (ValueError, IndexError):  # not an id of the shape this form writes (s3's wants s3://b/k)
                continue
            found = find(text)
            if len(found) == 1 and found[0].video_id == candidate and found[0].form == form.name:
                parts.append(f"<!-- {form.name}: {form.cite} -->\n{text}")
                break
    return "\n".join(parts), len(parts)


def rewrite_step(run, cutover: Path, cli) -> tuple[str, str | None]:
    """Write the site, run `migrator rewrite --dry-run` on it (its summary shown): the summary's line, and what is
    wrong or None."""
    site = Path(".local") / f"{run.stack_name}-site"
    embeds = sample_site(cutover, site)
    print(f"\n$ migrator rewrite --dry-run {site}   (the map from the ledger; {embeds} embeds on a sample site)")
    if not embeds:
        if _no_forms(cutover):
            return "no embed form for this source", None
        return "no embed written", "the sample site holds no embed"
    code, doc = _rewrite_json(run, site, cli)
    if doc is None:
        return "no result", f"migrator rewrite failed (exit {code})"
    counts = doc["embeds"]
    found, rewritten = sum(counts["found"].values()), sum(counts["rewritten"].values())
    left = ", ".join(f"{reason} {n}" for reason, n in sorted(counts["left"].items()))
    line = f"{found} of {embeds} embeds found, {rewritten} rewritten" + (f", left: {left}" if left else "")
    unmapped = counts["left"].get("not in the map", 0)
    if found != embeds:
        return line, f"rewrite found {found} of the {embeds} embeds the sample site holds"
    if unmapped:
        return line, f"rewrite found {unmapped} embeds of migrated videos not in the map"
    return line, None


def _rewrite_json(run, site: Path, cli) -> tuple[int, dict | None]:
    """The dry run, twice in one: its summary as a person sees it, and its --json for the demo's own check."""
    cli(run, "rewrite", "--dry-run", "--no-diff", str(site))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli(run, "rewrite", "--json", str(site))
    try:
        return code, json.loads(out.getvalue())
    except ValueError:
        return code, None


def _no_forms(cutover: Path) -> bool:
    """No row of the map is of a platform with forms (nothing could be embedded): not a failure of the rewrite."""
    platforms = {f.platform for f in all_forms()} | {"https", "http"}
    rows = read_export(io.StringIO(cutover.read_text(encoding="utf-8")), str(cutover))
    return not any(str(r.get("source_platform") or "") in platforms for r in rows)
