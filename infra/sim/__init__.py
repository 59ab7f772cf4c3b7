"""The provider simulator as a package: one module per concern, one module per provider's wire format.

- config: SimConfig, every knob and its validation;
- bucket, scheduler: the token bucket and the background timer, shared by every profile;
- video: the provider-neutral video record and the source-URL conventions (corrupt,
  unsupported, ?duration=, ?drift=);
- signing: the webhook signature schemes;
- profile: what a provider profile is (routes, auth, bodies, errors, rate headers, events);
- generic, mux, cloudflare, apivideo: the profiles themselves, each only its wire format;
- vimeo, wistia: source-only profiles; library: a source's videos computed from their index, links
  to their files that expire, files that take time to prepare (mux, cloudflare and apivideo serve
  a library too when library_size is set); fetch: how a target fetches the link it is handed;
- core: ProviderSim, the state and the request pipeline with its fault injection and
  webhook delivery; server: the HTTP layer; cli: the command line.

infra/provider_sim.py stays the entry point and re-exports the public names.
"""
