"""Usage read apart from a listing (issue 45): one reader per platform whose analytics are priced or paced apart.

`READERS` maps a platform to a factory `(credentials_reader, base_url, *, patient, rate_per_s) -> UsageReader`
(usage.py), the same arguments `sources.build` takes; `migrator usage --from PLATFORM` runs the pass with it.
Platforms that give usage in the listing itself (Kaltura's entry fields, Vimeo's stats) are not here: their
rows carry it from the inventory.
"""

from __future__ import annotations

from collections.abc import Callable

from ...usage import UsageReader

READERS: dict[str, Callable[..., UsageReader]] = {}
