"""What a viewer sees of an api.video library video besides its file and captions (issue 42), for the "apivideo"
profile as a source: its thumbnail's image and its chapters files. Computed from the video's index like the rest of
the library (apivideo_library.py); the target side's own (uploaded thumbnails, chapters sent) is apivideo_extras.py.

Documents: api.video's OpenAPI file (oas_apivideo.yaml, apivideo/api.video-api-specification) and docs.api.video:

- `assets.thumbnail`, "A link to the thumbnail for your video", at the delivery host (`https://cdn.api.video/vod/
  {videoId}/thumbnail.jpg` in the OpenAPI's examples; here `/_stream/apivideo/vod/{videoId}/thumbnail.jpg`); a
  private video's carries its private token, `.../token/{token}/thumbnail.jpg`, spent by one request unless a
  session's `avh` goes with it ("Private video session tokens": `.../token/{private token}/thumbnail.jpg?avh=...`),
  under apivideo_vod's rules. The image is a real JPEG, the video's own (a comment in it names the video);
- `GET /videos/{videoId}/chapters` ("Retrieve a list of all chapters for by video id", paginated like every list),
  Chapter `{uri, src, language}`, `src` "The link to your VTT file, which contains your chapters information for the
  video" (`https://cdn.api.video/vod/{videoId}/chapters/fr.vtt`); `GET /videos/{videoId}/chapters/{language}` one,
  404 where there is none. One video in four has chapters in English, one in eight in French too. The file is
  served at `src` without a token, a public video's or a private one's: whether a private video's chapters link
  carries its token is not documented.
"""

from __future__ import annotations

from ..library import Item, Shelf
from .wistia_extras import named_jpeg

CHAPTER_TITLES = {"en": ("Opening", "The method", "Summary"), "fr": ("Ouverture", "La méthode", "Résumé")}


def chapter_languages(video: Item) -> list[str]:
    if video.index % 4 != 1:
        return []
    return ["en", "fr"] if video.index % 8 == 1 else ["en"]


def chapters(shelf: Shelf, vid: str, video: Item) -> list[dict]:
    """The video's Chapter objects, one a language (`vid`: its id)."""
    return [
        {
            "uri": f"/videos/{vid}/chapters/{language}",
            "src": f"{shelf.base_url}/_stream/apivideo/vod/{vid}/chapters/{language}.vtt",
            "language": language,
        }
        for language in chapter_languages(video)
    ]


def chapter_starts(video: Item) -> list[float]:
    """Where the video's chapters start, in seconds: thirds of it."""
    return [round(k * video.duration / 3, 3) for k in range(3)]


def _stamp(seconds: float) -> str:
    """A WebVTT timestamp, hh:mm:ss.ttt."""
    minutes, millis = divmod(round(seconds * 1000), 60_000)
    return f"{minutes // 60:02d}:{minutes % 60:02d}:{millis // 1000:02d}.{millis % 1000:03d}"


def chapters_vtt(video: Item, language: str) -> bytes | None:
    """The chapters file of one language, as WebVTT; None where the video has none in it."""
    if language not in chapter_languages(video):
        return None
    starts = [*chapter_starts(video), video.duration]
    cues = [
        f"{_stamp(starts[k])} --> {_stamp(starts[k + 1])}\n{title}" for k, title in enumerate(CHAPTER_TITLES[language])
    ]
    return ("WEBVTT\n\n" + "\n\n".join(cues) + "\n").encode()


def thumbnail(vid: str) -> bytes:
    return named_jpeg(f"api.video {vid}")
