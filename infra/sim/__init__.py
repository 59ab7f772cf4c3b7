"""The provider simulator as a package: one module per concern, one module per provider's wire format.

- config: SimConfig, every knob and its validation;
- bucket, scheduler: the token bucket and the background timer, shared by every profile;
- video: the provider-neutral video record and the source-URL conventions (corrupt,
  unsupported, ?duration=, ?drift=);
- signing: the webhook signature schemes;
- profile: what a provider profile is (routes, auth, bodies, errors, rate headers, events);
- generic, mux, cloudflare, apivideo: the profiles themselves, each only its wire format;
- vimeo: a source, and a target too (vimeo_target: pull uploads, no webhooks, text tracks in two
  steps); wistia: a source-only profile; library: a source's videos computed from their index, links
  to their files that expire, files that take time to prepare (mux, cloudflare and apivideo serve
  a library too when library_size is set); fetch: how a target fetches the link it is handed;
- core: ProviderSim, which wires the parts below together behind the interface callers use;
  state: the shared state under one lock; pipeline: the request pipeline, with gate (auth, the
  budget, buckets, injected faults) and create (the create path); sources: the source side and
  playback media; processing: completions and caption fetches; webhooks: delivery with its
  retries, duplicates and forgeries; stats: the counters and what they report; threads: the
  server thread, the scheduler and the pools; registry: the profiles by name; request: an API
  request as handed over; server: the HTTP layer; cli: the command line.

infra/provider_sim.py stays the entry point and re-exports the public names.
"""
