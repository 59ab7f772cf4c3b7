"""The uploader's parts after a record's claim, split by what each does: use them through `migrator.uploader`,
whose `Uploader` holds one of each over the same settings, ledger, pacer and provider.

- `attempt`: one claim's try (`Attempt`), what the create carries, where a release returns;
- `pace`: the fleet's pace as one invocation meets it: slots, short waits in place, what a create heard;
- `create`: the provider's lookup and create for one claimed asset (`FindOrCreate`);
- `handoff`: the source's URL made just before the create, or why it cannot be had now;
- `archive_first`: ArchiveFirst's gate before a create: the original archived first, the copy handed over;
- `moves`: the ledger's fenced move for what the try came to, and the message's fate;
- `telemetry`: the one logger and metrics set all of them (and the handler) share.
"""
