"""What a `migrator rewrite` run found and did: counts for the summary, and the embeds a person must look at.

Counts are kept whole; the lists (what was left, with its reason; what was rewritten to a signed form and needs a
token) keep their first MAX_LISTED entries and count the rest, so a dump with millions of embeds reports in bounded
memory. `as_dict` is `--json`'s document; `lines` the summary a terminal shows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .outcomes import ALREADY, Left, Outcome

MAX_LISTED = 10_000
SIGNED_DOC = "docs/rewrite.md#signed-embeds"
# Reasons that are no one's problem: the embed already points at the target (a second run).
QUIET_REASONS = (ALREADY,)


@dataclass
class Report:
    files: Counter = field(default_factory=Counter)  # files read, by kind (text, json, csv, sql, wxr)
    skipped: Counter = field(default_factory=Counter)  # files not read, by reason
    changed_files: int = 0
    changed_records: int = 0
    bytes_read: int = 0
    values: Counter = field(default_factory=Counter)  # database values: seen, changed, serialized_fixed, malformed
    found: Counter = field(default_factory=Counter)  # embeds found, by platform
    forms: Counter = field(default_factory=Counter)  # embeds found, by form
    rewritten: Counter = field(default_factory=Counter)  # by platform
    written_as: Counter = field(default_factory=Counter)  # "<kind found> -> <kind written>" where they differ
    left: Counter = field(default_factory=Counter)  # by reason
    dropped: Counter = field(default_factory=Counter)  # options no target player took, by name
    notes: Counter = field(default_factory=Counter)  # what a target said of what it wrote (a rendition it needs, ...)
    signed: int = 0
    left_listed: list[dict] = field(default_factory=list)
    signed_listed: list[dict] = field(default_factory=list)
    unlisted: int = 0  # left entries past MAX_LISTED, counted only
    signed_unlisted: int = 0

    def record(self, outcome: Outcome, where: str) -> None:
        embed = outcome.embed
        self.found[embed.platform] += 1
        self.forms[embed.form] += 1
        entry = {"file": where, "platform": embed.platform, "form": embed.form, "video_id": embed.video_id}
        if isinstance(outcome, Left):
            self.left[outcome.reason] += 1
            if outcome.reason not in QUIET_REASONS:
                left = {**entry, "reason": outcome.reason, "detail": outcome.detail, "asset_id": outcome.asset_id}
                if len(self.left_listed) < MAX_LISTED:
                    self.left_listed.append(left)
                else:
                    self.unlisted += 1
            return
        rendered = outcome.rendered
        self.rewritten[embed.platform] += 1
        if rendered.kind != embed.kind:
            self.written_as[f"{embed.kind} -> {rendered.kind}"] += 1
        for name in rendered.dropped:
            key = name.split("=", 1)[0]
            if " " in key:  # a sentence, not a parameter: the target's note on what it wrote
                self.notes[name] += 1
            else:
                self.dropped[key] += 1
        if rendered.marked:
            self.signed += 1
            if len(self.signed_listed) < MAX_LISTED:
                self.signed_listed.append({**entry, "kind": rendered.kind, "todo": f"mint a token: {SIGNED_DOC}"})
            else:
                self.signed_unlisted += 1

    @property
    def problems(self) -> int:
        """Embeds left for a reason someone must act on."""
        return sum(n for reason, n in self.left.items() if reason not in QUIET_REASONS)

    def as_dict(self) -> dict:
        return {
            "files": {"read": dict(self.files), "skipped": dict(self.skipped), "changed": self.changed_files},
            "records_changed": self.changed_records,
            "bytes_read": self.bytes_read,
            "database_values": dict(self.values),
            "embeds": {
                "found": dict(self.found),
                "by_form": dict(self.forms),
                "rewritten": dict(self.rewritten),
                "written_as": dict(self.written_as),
                "left": dict(self.left),
                "signed": self.signed,
            },
            "dropped_options": dict(self.dropped),
            "notes": dict(self.notes),
            "left": self.left_listed,
            "signed": self.signed_listed,
            "unlisted": {"left": self.unlisted, "signed": self.signed_unlisted},
        }

    def _value_lines(self) -> list[str]:
        if not self.values.get("values"):
            return []
        line = (
            f"values      {self.values['values']} in dumps and exports, {self.values['changed']} changed,"
            f" {self.values['serialized_fixed']} PHP-serialized with their lengths fixed"
        )
        malformed = self.values.get("malformed_serialized", 0)
        if malformed:
            line += f"; {malformed} looked serialized but did not parse: left as they were, look at them"
        return [line]

    def lines(self, applied: bool) -> list[str]:
        read = sum(self.files.values())
        out = [
            f"files       {read} read ({_counts(self.files)}), {sum(self.skipped.values())} skipped"
            + (f" ({_counts(self.skipped)})" if self.skipped else ""),
            f"            {self.changed_files} {'changed' if applied else 'would change'}"
            f" ({self.changed_records} records), {self.bytes_read / 1e6:.1f} MB read",
            *self._value_lines(),
            f"embeds      {sum(self.found.values())} found ({_counts(self.found)})",
            f"rewritten   {sum(self.rewritten.values())}" + (f" ({_counts(self.rewritten)})" if self.rewritten else ""),
        ]
        if self.written_as:
            out.append(f"            as another kind: {_counts(self.written_as)}")
        if self.signed:
            out.append(f"signed      {self.signed} need a token the site must mint ({SIGNED_DOC})")
        if self.left:
            out.append(f"left        {sum(self.left.values())} ({_counts(self.left)})")
        if self.dropped:
            out.append(f"dropped     options the target's player has no equivalent for: {_counts(self.dropped)}")
        for note, n in self.notes.most_common():
            out.append(f"note        {n} x {note}")
        for entry in self.left_listed[:20]:
            detail = f": {entry['detail']}" if entry.get("detail") else ""
            out.append(f"  left  {entry['file']}: {entry['platform']} {entry['video_id']} ({entry['reason']}{detail})")
        if len(self.left_listed) > 20 or self.unlisted:
            out.append(f"  ... {len(self.left_listed) - 20 + self.unlisted} more left: --json lists them")
        return out


def _counts(counter: Counter) -> str:
    return ", ".join(f"{key} {n}" for key, n in counter.most_common()) or "none"
