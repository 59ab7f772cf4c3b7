"""The one registry of platforms: each target and source is named once in migrator.platforms and registered once as
its class; everything that offers a choice of platform (settings, the CLI, the plan, the demo, the benchmarks)
reads the names and facts from there, never from a list of its own."""

from __future__ import annotations

import pytest
from migrator import platforms
from migrator.messages import ALLOWED_SCHEMES, SOURCE_PLATFORMS
from migrator.providers import PROVIDERS, REGISTERED
from migrator.settings import PROVIDER_NAMES, SettingsError, load
from migrator.sources import HTTP_SOURCES, PLATFORMS, S3Source
from migrator.sources import REGISTERED as REGISTERED_SOURCES
from migrator_cli.main import build_parser
from migrator_cli.plan import DOCUMENTED_RATES
from migrator_cli.plan import PROVIDERS as PLAN_PROVIDERS
from migrator_cli.source_credentials import ENV_CREDENTIALS, source_credentials

from infra.demo import parse_args as demo_args
from infra.matrix import SOURCE_PAIRS


def test_the_leaf_names_are_the_registered_classes_own_names_in_order():
    assert platforms.TARGETS == tuple(cls.name for cls in REGISTERED) == tuple(PROVIDERS)
    assert platforms.REFERENCED_SOURCES == tuple(cls.platform for cls in REGISTERED_SOURCES) == tuple(HTTP_SOURCES)
    assert platforms.SOURCES == (*platforms.REFERENCED_SOURCES, S3Source.platform) == PLATFORMS
    assert all(name == cls.name for name, cls in PROVIDERS.items())  # a class named twice would collapse the dict


def test_every_module_that_names_platforms_reads_the_registry():
    assert PROVIDER_NAMES == platforms.TARGETS
    assert SOURCE_PLATFORMS == platforms.REFERENCED_SOURCES
    assert set(platforms.REFERENCED_SOURCES) <= set(ALLOWED_SCHEMES)
    assert PLAN_PROVIDERS == platforms.TARGETS
    assert {source for source, _ in SOURCE_PAIRS} == set(platforms.SOURCES)


@pytest.mark.parametrize("name", platforms.TARGETS)
def test_every_target_is_a_choice_of_the_stack_the_plan_and_the_demo(name):
    env = {"PROVIDER": name, "PROVIDER_BASE_URL": "https://p.example", "LEDGER_TABLE": "t", "QUEUE_URL": "q"}
    assert load(env).provider == name
    assert build_parser().parse_args(["plan", "inv.csv", "--provider", name]).provider == name
    assert demo_args(["--provider", name]).provider == name


def test_a_name_nobody_registered_is_no_choice_anywhere():
    with pytest.raises(SettingsError, match="PROVIDER must be one of"):
        load({"PROVIDER": "nosuch", "PROVIDER_BASE_URL": "https://p.example", "LEDGER_TABLE": "t", "QUEUE_URL": "q"})
    with pytest.raises(SystemExit):
        build_parser().parse_args(["plan", "inv.csv", "--provider", "nosuchplatform"])
    with pytest.raises(SystemExit):
        demo_args(["--from", "nosuchplatform"])


@pytest.mark.parametrize("name", platforms.SOURCES)
def test_every_source_is_a_choice_of_the_demo_and_the_inventory(name):
    assert demo_args(["--from", name]).source == name
    assert build_parser().parse_args(["inventory", "--from", name]).platform == name


# The plan's time at each provider's documented create rate, as its table said before the rates moved to the
# providers' classes: a registry that lost or changed one fails here.
@pytest.mark.parametrize(
    "name, per_s, cited",
    [
        ("mux", 1.0, "docs.mux.com/docs/core/make-api-requests"),
        ("cloudflare", 4.0, "developers.cloudflare.com/fundamentals/api/reference/limits"),
        ("apivideo", 100 / 60, "docs.api.video/reference/limits"),
        ("jwplayer", 0.95, "docs.jwplayer.com/platform/reference/authentication"),
        ("bunny", None, None),  # none documented: the plan asks for --rate
        ("vimeo", None, None),
        ("generic", None, None),
    ],
)
def test_the_plan_times_each_target_at_its_own_documented_rate(name, per_s, cited):
    cls = PROVIDERS[name]
    assert cls.documented_rate_per_s == per_s
    if per_s is None:
        assert name not in DOCUMENTED_RATES and not cls.documented_rate_doc
    else:
        assert DOCUMENTED_RATES[name] == (per_s, cls.documented_rate_doc) and cited in cls.documented_rate_doc


@pytest.mark.parametrize("platform", platforms.REFERENCED_SOURCES)
def test_every_sources_credentials_come_from_the_variables_its_class_declares(platform):
    cls = HTTP_SOURCES[platform]
    assert cls.credential_env, f"{platform} declares no credential_env"
    assert ENV_CREDENTIALS[platform] == dict(cls.credential_env)
    assert all(var.isupper() and var.isidentifier() for var in cls.credential_env.values())
    env = {var: f"value-of-{field}" for field, var in cls.credential_env.items()}
    assert source_credentials(platform, None, None, env) == {field: f"value-of-{field}" for field in cls.credential_env}
    missing = dict(list(env.items())[1:])  # one variable unset: no credentials, not a partial set
    assert source_credentials(platform, None, None, missing) is None


def test_every_platform_but_the_object_stores_has_a_simulator_profile_of_its_name():
    """The simulator's registry is built from its profile classes (each declares its name), as the product's is."""
    from infra.provider_sim import PROFILES as SIM_NAMES
    from infra.sim.platforms import PROFILES as SIM_PROFILES
    from infra.sim.platforms import REGISTERED as SIM_REGISTERED
    from infra.storage_emulators import STORE_PLATFORMS

    assert tuple(SIM_PROFILES) == tuple(cls.name for cls in SIM_REGISTERED) == SIM_NAMES
    with_emulators = set(STORE_PLATFORMS)  # the object stores run in their real emulators instead
    # The aws target speaks the AWS SDK, not HTTP of its own: its simulator is MediaConvert's (infra/sim/mediaconvert).
    http_targets = {name for name, cls in PROVIDERS.items() if cls.speaks_http}
    assert http_targets == set(platforms.TARGETS) - {"aws"}
    assert set(SIM_PROFILES) == http_targets | (set(platforms.REFERENCED_SOURCES) - with_emulators)


def test_a_profiles_limits_are_its_own_and_an_unknown_profile_is_refused():
    from infra.provider_sim import ConfigError, SimConfig
    from infra.sim.platforms.jwplayer import JwPlayer

    jw = SimConfig(profile="jwplayer")
    assert (jw.budget_quota, jw.budget_window_s) == (JwPlayer.limits["budget_quota"], 60.0) == (60, 60.0)
    assert SimConfig(profile="bunny").rate == 20.0  # none documented: the simulator's default
    with pytest.raises(ConfigError, match="profile must be one of generic, mux"):
        SimConfig(profile="aws")


def test_the_one_target_that_sends_no_webhooks_says_so_itself():
    """doctor's webhook check (cli webhook_targets) and the conformance suite read it from the class."""
    from migrator_cli.webhook_targets import webhook_check

    assert [name for name, cls in PROVIDERS.items() if not cls.sends_webhooks] == ["vimeo"]
    silent = webhook_check(PROVIDERS["vimeo"](None, lambda: None), "https://hooks.example/w")
    assert silent.ok and silent.unknown and "sends no webhooks" in silent.detail
