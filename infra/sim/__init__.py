"""The platform simulator, shaped like the product: a shared engine here, one profile per platform in platforms/.

As functions/migrator keeps its engine apart from providers/ and sources/, the simulator keeps what every platform
shares (this package's modules) apart from each platform's wire format (infra/sim/platforms/, one module each,
registered there in one line: the profile's class declares its name, its documented limits and where its API
lives). The engine, from the bottom up:

- catalog: the profiles by name, as platforms/ registered them (what the engine asks for the active profile);
- config: SimConfig, every knob and its validation (a limit left unset takes the profile's);
- bucket, scheduler: the token bucket and the background timer; video: the platform-neutral video record and
  the source-URL conventions (corrupt, unsupported, ?duration=, ?drift=); signing: the webhook signature schemes;
  texttracks: caption files; media: what a ready video plays as; library: a source's videos computed from their
  index, links that expire, files that take time to prepare; fetch: how a target fetches the link it is handed;
  drift: a test knob that reshapes answers as a drifted platform would;
- profile: what a platform's profile is (routes, auth, bodies, errors, rate headers, events, playback);
- state: the shared state under one lock, and the counters; stats: what the simulator reports of itself;
- gate (auth, the budget, buckets, injected faults), create (the create path), processing (completions and
  caption fetches), webhooks (delivery with its retries, duplicates and forgeries), sources (the source side
  and playback media), pipeline (a request through all of them);
- threads: the server thread, the scheduler and the pools; request: an API request as handed over; server: the
  HTTP layer; core: ProviderSim, which wires the parts together behind the interface callers use; cli: the
  command line.

No module imports another round a circle (tests/unit/test_import_graph.py). Importing anything of infra.sim
registers every profile first (the import below), so a SimConfig can name any of them.
infra/provider_sim.py stays the entry point and re-exports the public names.
"""

from . import platforms  # noqa: F401  (registers every profile in the catalog)
