"""How the CLI writes sizes and dollars for people: one place, so `plan`, `status` and `verify --archive` say them
alike."""

from __future__ import annotations


def human_bytes(n: float) -> str:
    """Decimal units, as S3 and the platforms bill them: `1,234 B`, `1.2 KB` ... `3.4 PB`."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:,.1f} {unit}" if unit != "B" else f"{n:,} B"
        n /= 1000
    return f"{n} B"


def human_usd(value: float | None) -> str:
    """Dollars to the cent, a fraction of a cent to four places; `-` for a figure not known."""
    if value is None:
        return "-"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"
