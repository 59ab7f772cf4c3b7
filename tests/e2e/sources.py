"""The source platforms' simulators the e2e package migrates from: one per platform, each with its library."""

from __future__ import annotations

from migrator.platforms import REFERENCED_SOURCES

from infra.sim import catalog

# Object stores, each a real emulator (infra/storage_emulators.py) holding one bucket or container, filled by
# the modules that migrate from it (tests/e2e/test_storage_source_stack.py).
STORES = ("gcs", "azure")
# Every other source a reference names: a simulator each (migrator.platforms).
PLATFORMS = tuple(p for p in REFERENCED_SOURCES if p not in STORES)
STORE_NAME = "e2e-library"
LIBRARY = {
    "library_size": 20,
    "library_unfetchable_every": 5,
    "library_private_every": 4,
    "library_captions_every": 3,
    "prepare_s": 4.0,
}


class Sources:
    """One source simulator per platform, with its made-up account."""

    def __init__(self):
        from infra.accounts import mux_signing_key, source_account
        from infra.provider_sim import ProviderSim, SimConfig

        self.sims, self.credentials = {}, {}
        for platform in PLATFORMS:
            creds, sim_config = source_account(platform)
            config = SimConfig(port=0, profile=platform, rate=0, read_rate=0, budget_quota=0, **sim_config, **LIBRARY)
            self.sims[platform] = ProviderSim(config).start()
            self.credentials[platform] = creds
        self.credentials["mux"].update(mux_signing_key(self.sims["mux"].url, self.credentials["mux"]))
        self.baselines = {platform: sim.config_dict() for platform, sim in self.sims.items()}
        self.stores = start_stores(self.credentials)

    def base(self, platform: str) -> str:
        if platform in self.stores:
            return self.stores[platform].endpoint if platform == "azure" else self.stores[platform].url
        return self.sims[platform].url + catalog.profile(platform).api_path

    def base_urls(self) -> str:
        return ",".join(f"{p}={self.base(p)}" for p in (*PLATFORMS, *STORES))

    def reset(self) -> None:
        """Each library as it began (a test that changed one, e.g. its links' lifetime, leaves no trace)."""
        for platform, sim in self.sims.items():
            sim.reset(keep_account=True)  # the Mux signing key the credentials name stays
            sim.patch_config(self.baselines[platform])

    def stop(self):
        for sim in self.sims.values():
            sim.stop()
        for store in self.stores.values():
            store.stop()


def start_stores(credentials: dict) -> dict:
    """The object stores' emulators, each with its (empty) bucket or container; their credentials into `credentials`."""
    from azure.storage.blob import BlobServiceClient

    from infra.storage_emulators import Azurite, GcsEmulator

    stores = {"gcs": GcsEmulator().start(), "azure": Azurite().start()}
    stores["gcs"].client().create_bucket(STORE_NAME)
    credentials["gcs"] = stores["gcs"].credentials(STORE_NAME)
    service = BlobServiceClient.from_connection_string(stores["azure"].connection_string(), api_version="2025-11-05")
    service.create_container(STORE_NAME)
    credentials["azure"] = stores["azure"].credentials(STORE_NAME)
    return stores
