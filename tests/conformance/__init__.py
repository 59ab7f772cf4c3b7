"""The contracts every platform meets, run by one call against the platform's own simulator.

As rclone's backends each run `fstests.Run`, every target runs `providers.check_provider(name, ...)` and every
source `sources.check_source(name, ...)`: the interface the uploader, the webhook, reconcile, the audit and the
sweep rely on, driven end to end through the adapter against its simulator profile, with the platform's made-up
account (its profile's `made_up_target`/`made_up_source`). Nothing here names a platform: what differs is read from
the registry (migrator.platforms, the classes' facts, the profiles' `api_path`). tests/sim/test_conformance.py runs
both for every registered platform, so a new one is covered without a line more.

Not test modules themselves (no `test_` prefix): the depth folder that calls them gives the marker.
"""
