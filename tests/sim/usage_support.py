"""What the usage readers' simulator tests share: the seed each profile answers from, and a pass read to its end."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

from infra.sim.platforms.analytics import Seed, seeded


def seed(index: int, today: date | None = None) -> Seed:
    """Video `index`'s usage as every profile seeds it (infra/sim/platforms/analytics.py)."""
    return seeded(SimpleNamespace(index=index), today)  # type: ignore[arg-type]


def played_by_id(id_of, size: int) -> dict[str, int]:
    """The plays of each played video of a library of `size`, by the id `id_of(video)` gives it."""
    return {id_of(SimpleNamespace(index=i)): seed(i).plays for i in range(size) if seed(i).plays}


def read_all(reader, video_ids=(), max_pages: int = 100):
    """Every page of a usage pass: the usage by id (later pages win), the pages and the requests they cost."""
    usage, cursor, pages, requests = {}, None, 0, 0
    while True:
        page = reader.page(cursor, list(video_ids))
        usage.update(page.usage)
        pages, requests, cursor = pages + 1, requests + page.requests, page.cursor
        if cursor is None or pages >= max_pages:
            return usage, pages, requests
