"""The uploader's writes for a source whose file is still being prepared (Mux master access, Stream's MP4).

While the platform prepares the file the asset waits: its claim is given back without spending the
attempt (like a hold: counted in `holds`, so the receive-based deferral floor does not charge the
message for it), and `preparing_since` keeps when the wait began, once, so the uploader can fail the
asset with the reason when the wait passes its bound (the stack's SourcePrepareTimeoutSeconds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..states import State
from .table import LedgerTable, Update, WriteResult


class Preparing(LedgerTable):
    """Composed into `Ledger` after `Claims`, whose fenced release it uses."""

    if TYPE_CHECKING:  # Claims' (ledger/claims.py), which `Ledger` composes with this

        def _released(
            self,
            asset_id: str,
            token: str,
            back_to: State,
            retry_at: float,
            now: float,
            update: Update,
            lookup_from: float | None,
        ) -> WriteResult: ...

        def _fenced(self, asset_id: str, token: str, state: State, now: float, update: Update) -> WriteResult: ...

    def release_preparing(
        self, asset_id: str, token: str, back_to: State, retry_at: float, reason: str, now: float
    ) -> WriteResult:
        """The source is preparing the file: back to `back_to` until `retry_at`, the attempt uncounted."""
        update = Update().set("retry_after", retry_at).set("last_error", reason).add("attempts", -1).add("holds", 1)
        update.set_if_absent("preparing_since", now)
        return self._released(asset_id, token, back_to, retry_at, now, update, None)

    def fail_preparing(self, asset_id: str, token: str, error: str, now: float) -> WriteResult:
        """The file never became ready within the bound: failed for good (an operator's retry starts a
        fresh wait, so `preparing_since` goes)."""
        update = Update().set("last_error", error).remove("retry_after", "preparing_since").off_lanes()
        return self._fenced(asset_id, token, State.FAILED, now, update)
