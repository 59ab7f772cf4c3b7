"""The rewrite corpus: pages made from the platforms' documented embed snippets (tests/data/rewrite/snippets/*.json),
each in several page kinds, with every embed the page holds listed; look-alike pages beside them; and, per target,
a map that sends every snippet's video there with ids and URLs of the target's own documented shapes.

Used by tests/unit/test_rewrite_corpus.py and the pipeline's corpus test; `python -m tests.rewrite_corpus DIR` writes
the pages and their manifest (`expected.json`) to look at.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

SNIPPETS = Path(__file__).parent / "data" / "rewrite" / "snippets"
TARGETS = ("mux", "cloudflare", "apivideo", "bunny", "jwplayer", "vimeo", "generic", "aws")
# Kinds found as a bare URL (they can sit in a Markdown link or a YAML value); the rest are elements or blocks.
URL_KINDS = ("player_url", "page", "oembed", "hls", "dash", "mp4", "thumbnail")


@dataclass(frozen=True)
class Page:
    name: str  # a relative path: its extension says what kind of page it is
    text: str
    expected: tuple[dict, ...]  # each embed it holds: form, kind, platform, video_id (in order)
    lookalike: bool = False


@dataclass
class Corpus:
    pages: list[Page] = field(default_factory=list)
    videos: dict[tuple[str, str], int] = field(default_factory=dict)  # (platform, video id) -> its number

    @property
    def expected(self) -> int:
        return sum(len(p.expected) for p in self.pages)


def snippet_files() -> list[dict]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(SNIPPETS.glob("*.json"))]


def contexts(snippet: str, kind: str, slug: str) -> list[tuple[str, str]]:
    """The snippet placed as a site holds it: in an HTML article, a Markdown post, an MDX page, a Liquid template;
    a bare URL also as a Markdown link and a YAML value."""
    pages = [
        (
            f"html/{slug}.html",
            f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{slug}</title></head>\n<body>\n'
            f'<nav><a href="/">Home</a> <a href="/videos/">Videos</a></nav>\n<article>\n<h1>{slug}</h1>\n'
            f"<p>Watch it below, or read the transcript.</p>\n{snippet}\n<p>Posted in talks.</p>\n</article>\n"
            "</body></html>\n",
        ),
        (f"posts/{slug}.md", f"---\ntitle: {slug}\nlayout: post\n---\n\nThe talk, in full:\n\n{snippet}\n\nThanks.\n"),
        (f"docs/{slug}.mdx", f"import Layout from '../components/Layout'\n\n# {slug}\n\n{snippet}\n\n<Layout />\n"),
        (
            f"_includes/{slug}.liquid",
            f'{{% if page.video %}}\n<div class="video">\n{snippet}\n</div>\n{{% endif %}}\n',
        ),
    ]
    if kind in URL_KINDS:
        pages.append((f"posts/{slug}-link.md", f"See [the video]({snippet}) or <{snippet}>.\n"))
        pages.append((f"_data/{slug}.yml", f"title: {slug}\nvideo: {snippet}\ntags: [talk]\n"))
    return pages


def build() -> Corpus:
    corpus = Corpus()
    for doc in snippet_files():
        platform = doc["platform"]
        for number, entry in enumerate(doc["forms"]):
            slug = f"{platform}-{number:02d}-{entry['form'].split('.', 1)[1]}"
            expected = tuple(
                {"form": entry["form"], "platform": e.get("platform", platform), **e} for e in entry["expect"]
            )
            for e in expected:
                corpus.videos.setdefault((e["platform"], e["video_id"]), len(corpus.videos))
            kinds = {e["kind"] for e in expected}
            kind = kinds.pop() if len(kinds) == 1 else "mixed"
            for name, text in contexts(entry["snippet"], kind, slug):
                multiplier = text.count(entry["snippet"])
                corpus.pages.append(Page(name, text, expected * multiplier))
        for number, entry in enumerate(doc.get("lookalikes", [])):
            slug = f"{platform}-lookalike-{number:02d}"
            for name, text in contexts(entry["snippet"], "mixed", slug)[:2]:
                corpus.pages.append(Page(name, text, (), lookalike=True))
    return corpus


def _hex(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def _alnum(seed: str, n: int) -> str:
    digits = int(_hex(seed, 32), 16)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    out = ""
    while len(out) < n:
        digits, r = divmod(digits, len(alphabet))
        out += alphabet[r]
    return out


def destination_row(target: str, platform: str, video_id: str, number: int) -> dict:
    """An export row sending (platform, video id) to `target`, with ids and URLs of the target's documented shapes
    (so a second pass meets real target embeds, not example.com ones)."""
    seed = f"{target}/{platform}/{video_id}"
    row = {
        "id": f"asset-{number}",
        "source_platform": platform,
        "source_id": video_id,
        "source_url": video_id if "://" in video_id else f"{platform}://{video_id}",
        "source_aliases": [video_id] if platform == "mux" else [],
        "provider": target,
        "state": "ready",
        "privacy": "public",
        "remote_id": None,
        "playback_id": None,
        "hls_url": None,
        "player_url": None,
        "thumbnail_url": None,
    }
    if platform == "mux":  # Mux embeds name a playback id; the map knows the asset and the id as an alias
        row["source_id"] = f"asset{_alnum(seed, 20)}"
        row["source_url"] = f"mux://{row['source_id']}"
    if target == "mux":
        pid = _alnum(seed, 24)
        row.update(
            remote_id=_alnum(seed + "a", 24),
            playback_id=pid,
            hls_url=f"https://stream.mux.com/{pid}.m3u8",
            player_url=f"https://player.mux.com/{pid}",
            thumbnail_url=f"https://image.mux.com/{pid}/thumbnail.jpg",
        )
    elif target == "cloudflare":
        uid = _hex(seed, 32)
        base = f"https://customer-f33zs165nr7gyfy4.cloudflarestream.com/{uid}"
        row.update(
            remote_id=uid,
            hls_url=f"{base}/manifest/video.m3u8",
            player_url=f"{base}/iframe",
            thumbnail_url=f"{base}/thumbnails/thumbnail.jpg",
        )
    elif target == "apivideo":
        vid = "vi" + _alnum(seed, 22)
        row.update(
            remote_id=vid,
            hls_url=f"https://vod.api.video/vod/{vid}/hls/manifest.m3u8",
            player_url=f"https://embed.api.video/vod/{vid}",
            thumbnail_url=f"https://vod.api.video/vod/{vid}/thumbnail.jpg",
        )
    elif target == "bunny":
        h = _hex(seed, 32)
        guid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        row.update(
            remote_id=guid,
            hls_url=f"https://vz-a1b2c3d4-e5f.b-cdn.net/{guid}/playlist.m3u8",
            player_url=f"https://iframe.mediadelivery.net/embed/76543/{guid}",
            thumbnail_url=f"https://vz-a1b2c3d4-e5f.b-cdn.net/{guid}/thumbnail.jpg",
        )
    elif target == "jwplayer":
        media = _alnum(seed, 8)
        row.update(
            remote_id=media,
            hls_url=f"https://cdn.jwplayer.com/manifests/{media}.m3u8",
            player_url=f"https://cdn.jwplayer.com/players/{media}-Ab12Cd34.html",
            thumbnail_url=f"https://cdn.jwplayer.com/v2/media/{media}/poster.jpg",
        )
    elif target == "vimeo":
        vid = str(100_000_000 + int(_hex(seed, 7), 16))
        row.update(remote_id=vid, player_url=f"https://player.vimeo.com/video/{vid}")
    elif target == "generic":
        rid = _alnum(seed, 16)
        row.update(
            remote_id=rid,
            hls_url=f"https://videos.example-provider.net/{rid}/index.m3u8",
            player_url=f"https://videos.example-provider.net/{rid}/player",
            thumbnail_url=f"https://videos.example-provider.net/{rid}/poster.jpg",
        )
    elif target == "aws":
        rid = _alnum(seed, 16)
        row.update(
            remote_id=rid,
            hls_url=f"https://d1a2b3c4d5e6f7.cloudfront.net/hls/{rid}/index.m3u8",
            thumbnail_url=f"https://d1a2b3c4d5e6f7.cloudfront.net/hls/{rid}/poster.jpg",
        )
    else:
        raise ValueError(f"no destination shapes for the target {target!r}")
    return row


def map_rows(corpus: Corpus, target: str) -> list[dict]:
    return [destination_row(target, p, v, n) for (p, v), n in corpus.videos.items()]


def write(corpus: Corpus, root: Path) -> None:
    for page in corpus.pages:
        path = root / page.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page.text, encoding="utf-8")
    manifest = {p.name: {"lookalike": p.lookalike, "expected": list(p.expected)} for p in corpus.pages}
    (root / "expected.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")


if __name__ == "__main__":
    built = build()
    write(built, Path(sys.argv[1]))
    print(f"{len(built.pages)} pages, {built.expected} embeds, {len(built.videos)} videos -> {sys.argv[1]}")
