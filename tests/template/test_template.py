"""template.yaml passes the linters, as written and as translated, and keeps its invariants."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from tests.conftest import ROOT
from tests.emulator.conftest import _CfnLoader


@pytest.fixture(scope="module")
def sam_python():
    from infra.toolchain import tool

    return tool("sam", "python")


def test_cfn_lint_on_source_and_translated_template(sam_python):
    result = subprocess.run([sam_python, "-m", "infra.lint_template"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "clean, source and translated" in result.stdout


def test_sam_validate_lint(sam_python):
    sam = os.path.join(os.path.dirname(sam_python), "sam")
    env = {**os.environ, "SAM_CLI_TELEMETRY": "0"}
    result = subprocess.run(
        [sam, "validate", "--lint", "--region", "us-east-1"], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_visibility_is_six_times_its_timeout():
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    allowed = template["Parameters"]["UploaderTimeout"]["AllowedValues"]
    mapping = template["Mappings"]["TimeoutToVisibility"]
    assert {str(v) for v in allowed} == set(mapping)
    for timeout, row in mapping.items():
        assert row["Visibility"] >= 6 * int(timeout)


def test_uploader_record_budget_fits_the_shortest_timeout():
    from migrator.settings import Settings

    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    shortest = min(int(v) for v in template["Parameters"]["UploaderTimeout"]["AllowedValues"])
    budget = Settings("t", "q", "https://x").record_budget_s
    assert budget * 1.5 < shortest  # room for at least one record per invocation, with margin


def test_concurrency_mapping_covers_every_allowed_value():
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    allowed = template["Parameters"]["MaximumConcurrency"]["AllowedValues"]
    mapping = template["Mappings"]["ConcurrencyValue"]
    assert set(allowed) == set(mapping)
    assert all(mapping[k]["Value"] == int(k) for k in allowed)


def test_the_due_index_projects_what_reconcile_reads():
    from migrator.due import INDEX, INDEX_FIELDS

    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    table = template["Resources"]["LedgerTable"]["Properties"]
    (index,) = [i for i in table["GlobalSecondaryIndexes"] if i["IndexName"] == INDEX]
    keys = {k["AttributeName"] for k in table["KeySchema"]} | {k["AttributeName"] for k in index["KeySchema"]}
    assert set(INDEX_FIELDS) <= keys | set(index["Projection"]["NonKeyAttributes"])


def test_heals_wait_longer_than_a_crashed_invocations_own_message():
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    params = template["Parameters"]
    visibility = template["Mappings"]["TimeoutToVisibility"][str(params["UploaderTimeout"]["Default"])]["Visibility"]
    assert params["HealAfterSeconds"]["Default"] > visibility


def test_the_tally_counts_every_change_since_the_table_was_made():
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    resources = template["Resources"]
    assert resources["LedgerTable"]["Properties"]["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    stream = resources["TallyFunction"]["Properties"]["Events"]["LedgerStream"]["Properties"]
    assert stream["StartingPosition"] == "TRIM_HORIZON"


def test_one_bad_stream_batch_cannot_freeze_the_counts():
    """A failing batch is split to find the bad record, retried a bounded number of times, and
    what still fails is parked where `status` reports it, instead of blocking the shard forever."""
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    resources = template["Resources"]
    stream = resources["TallyFunction"]["Properties"]["Events"]["LedgerStream"]["Properties"]
    assert stream["BisectBatchOnFunctionError"] is True
    assert 0 <= stream["MaximumRetryAttempts"] <= 100
    assert stream["DestinationConfig"]["OnFailure"]["Type"] == "SQS"
    assert resources["TallyFailureQueue"]["Type"] == "AWS::SQS::Queue"
    assert "TallyFailureQueueUrl" in template["Outputs"]


def test_the_rate_limit_stays_within_what_one_pacer_item_sustains():
    """Every create writes the one #pacer item; a DynamoDB item takes about 1,000 writes/s."""
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    assert template["Parameters"]["ProviderRateLimit"]["MaxValue"] <= 500


@pytest.fixture(scope="module")
def translated(sam_python) -> dict:
    """template.yaml after the SAM transform: what CloudFormation (and IAM) will actually see."""
    code = "import json; from infra.lint_template import translate; from pathlib import Path; "
    code += "print(json.dumps(translate(Path('template.yaml'))))"
    env = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1"}
    result = subprocess.run([sam_python, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _statements(role: dict) -> list[dict]:
    return [st for policy in role["Properties"].get("Policies", []) for st in policy["PolicyDocument"]["Statement"]]


def test_every_function_has_its_own_role_naming_its_own_resources(translated):
    resources = translated["Resources"]
    functions = {k: v for k, v in resources.items() if v["Type"] == "AWS::Lambda::Function"}
    # The aws target's two (JobEventsFunction, PlaybackKeyGroupFunction) and the mirror (MirrorSource) among them.
    assert len(functions) == 10
    for name, function in functions.items():
        role_name = function["Properties"]["Role"]["Fn::GetAtt"][0]
        role = resources[role_name]
        # No AWS managed policy: SAM's event-source policies read every queue or stream (Resource "*").
        assert "ManagedPolicyArns" not in role["Properties"], name
        for statement in _statements(role):
            if "Fn::If" in statement:
                continue  # conditional statements are checked in their branches below
            if statement["Resource"] == "*":  # only X-Ray and CloudFront's keys: no resource-level permissions
                actions = statement["Action"]
                tracing = actions == ["xray:PutTraceSegments", "xray:PutTelemetryRecords"]
                keys = all(a.startswith("cloudfront:") and ("Key" in a) for a in actions)
                assert tracing or (keys and name == "PlaybackKeyGroupFunction"), (name, statement)
        log_group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert resources[log_group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    roles = [r for r in resources.values() if r["Type"] == "AWS::IAM::Role"]
    # One a function, MediaConvert's (the aws target's jobs) and the mirror's schedule's: SAM made no others.
    assert len(roles) == 12


def test_reconcile_never_writes_whole_items_and_reads_only_its_due_lanes(translated):
    role = translated["Resources"]["ReconcileRole"]
    statements = _statements(role)
    assert not [st for st in statements if "dynamodb:PutItem" in st.get("Action", [])]
    (ledger,) = [st for st in statements if "dynamodb:Query" in st.get("Action", [])]
    assert {"Fn::Sub": "${LedgerTable.Arn}/index/by_due"} in ledger["Resource"]
    assert {"Fn::Sub": "${LedgerTable.Arn}/index/by_tracks_due"} in ledger["Resource"]
    assert not [r for r in ledger["Resource"] if "by_state" in str(r)]


def test_the_tally_writes_the_ledger_only_for_the_pacer_item(translated):
    role = translated["Resources"]["TallyRole"]
    ledger = [st for st in _statements(role) if st["Resource"] == {"Fn::GetAtt": ["LedgerTable", "Arn"]}]
    assert len(ledger) == 1 and ledger[0]["Action"] == ["dynamodb:GetItem", "dynamodb:UpdateItem"]
    assert ledger[0]["Condition"] == {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["#pacer"]}}
    from migrator.pacer import PACER_ID

    assert PACER_ID == "#pacer"


def test_the_uploader_and_reconcile_know_the_fleet_they_pace():
    """Both take slots of the one pacer (creates and lookups; polls), so both see its settings."""
    variables = load_template()["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["PROVIDER_RATE_LIMIT"] == {"Ref": "ProviderRateLimit"}
    assert variables["START_RATE"] == {"Ref": "StartRate"}
    assert variables["MAXIMUM_CONCURRENCY"] == {"Ref": "MaximumConcurrency"}
    assert variables["CREATE_SHARE"] == {"Ref": "CreateShare"}
    assert variables["PROVIDER_MAX_IN_FLIGHT"] == {"Ref": "ProviderMaxInFlight"}


def test_the_tally_reads_only_the_ledgers_stream(translated):
    role = translated["Resources"]["TallyRole"]
    (stream,) = [st for st in _statements(role) if "dynamodb:GetRecords" in st["Action"]]
    assert stream["Resource"] == {"Fn::Sub": "${LedgerTable.Arn}/stream/*"}


class _IntrinsicLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short-form tags kept, as {"Fn::Sub": ...} and {"Ref": ...}."""


def _intrinsic(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {"Ref" if suffix == "Ref" else f"Fn::{suffix}": value}


_IntrinsicLoader.add_multi_constructor("!", _intrinsic)


def load_template() -> dict:
    return yaml.load((ROOT / "template.yaml").read_text(), Loader=_IntrinsicLoader)


ALARMS = {
    # what each watches: (namespace, metric)
    "DeadLetterAlarm": ("AWS/SQS", "ApproximateNumberOfMessagesVisible"),
    "OldestMessageAlarm": ("AWS/SQS", "ApproximateAgeOfOldestMessage"),
    "UploaderCrashesAlarm": ("AWS/Lambda", "Errors"),
    "UploaderErrorsAlarm": ("VideoMigration", "Errors"),
    "ThrottleRateAlarm": ("VideoMigration", "ThrottledPercent"),
    "WebhookUnauthorizedAlarm": ("VideoMigration", "WebhookUnauthorized"),
    "Webhook5xxAlarm": ("AWS/ApiGateway", "5XXError"),
    "TallyIteratorAgeAlarm": ("AWS/Lambda", "IteratorAge"),
    "ReconcileFailuresAlarm": ("AWS/Lambda", "Errors"),
    "ReconcileAssetErrorsAlarm": ("VideoMigration", "ReconcileErrors"),
    "TracksDeadLetterAlarm": ("AWS/SQS", "ApproximateNumberOfMessagesVisible"),
    "TracksErrorsAlarm": ("AWS/Lambda", "Errors"),
    "ArchiveDeadLetterAlarm": ("AWS/SQS", "ApproximateNumberOfMessagesVisible"),
    "ArchiveErrorsAlarm": ("AWS/Lambda", "Errors"),
}


def test_every_alarm_exists_watches_its_metric_and_says_what_to_do():
    resources = load_template()["Resources"]
    alarms = {k for k, v in resources.items() if v["Type"] == "AWS::CloudWatch::Alarm"}
    assert alarms == set(ALARMS)
    for name, (namespace, metric) in ALARMS.items():
        props = resources[name]["Properties"]
        assert (props["Namespace"], props["MetricName"]) == (namespace, metric), name
        assert len(props["AlarmDescription"]) > 60, name  # a runbook line, not a label
        assert props["TreatMissingData"] == "notBreaching" and props["AlarmActions"] and props["OKActions"], name
    assert resources["AlarmEmailSubscription"]["Condition"] == "HasAlarmEmail"
    assert resources["AlarmTopic"]["Condition"] == "OwnAlarmTopic"


def test_the_metrics_the_alarms_read_are_the_ones_the_code_emits():
    import re

    package = ROOT / "functions" / "migrator"
    code = "".join(p.read_text() for p in [*package.glob("*.py"), *(package / "upload").glob("*.py")])
    emitted = set(re.findall(r'name="([A-Za-z]+)"', code)) | {f"Reconcile{n}" for n in ("Polled", "Examined", "Errors")}
    for name, (namespace, metric) in ALARMS.items():
        if namespace == "VideoMigration":
            assert metric in emitted, (name, metric)


def test_the_dashboard_is_valid_json_and_shows_what_an_operator_watches():
    body = load_template()["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    text = body[0] if isinstance(body, list) else body
    import re

    doc = json.loads(re.sub(r"\$\{[^}]+\}", "0", text))  # CloudFormation substitutes ${...}
    titles = " ".join(w["properties"]["title"] for w in doc["widgets"]).lower()
    for word in ("state", "creates", "429", "queue", "dead-letter", "webhook", "reconcile", "drift"):
        assert word in titles, word


def test_logs_are_kept_a_set_time_traced_and_json():
    template = load_template()
    assert template["Globals"]["Function"]["Tracing"] == "Active"
    resources = template["Resources"]
    groups = {k for k, v in resources.items() if v["Type"] == "AWS::Logs::LogGroup"}
    assert len(groups) == 11  # ten functions and the webhook API's access log
    for group in groups:
        assert "RetentionInDays" in resources[group]["Properties"], group
    for name, resource in resources.items():
        if resource["Type"] == "AWS::Serverless::Function":
            assert resource["Properties"]["LoggingConfig"]["LogFormat"] == "JSON", name
    stage = resources["WebhookRestStage"]["Properties"]["AccessLogSetting"]
    assert json.loads(stage["Format"])["status"] == "$context.status"


def test_the_ledger_and_the_stats_outlive_the_stack():
    resources = load_template()["Resources"]
    for table in ("LedgerTable", "StatsTable"):
        assert resources[table]["DeletionPolicy"] == "Retain" and resources[table]["UpdateReplacePolicy"] == "Retain"
        assert resources[table]["Properties"]["DeletionProtectionEnabled"] is True


def test_rules_refuse_a_stack_without_credentials_or_a_webhook_secret():
    rules = load_template()["Rules"]
    assert set(rules) == {
        "ProviderCredentialsSet",
        "WebhookSecretSet",
        "GenericNeedsAnAddress",
        "ArchiveFirstNeedsAReadableArchive",
        "AwsTranscodesTheArchive",
        "MirrorNeedsSourceCredentials",
    }
    for rule in rules.values():
        for assertion in rule["Assertions"]:
            assert "Set" in assertion["AssertDescription"] or "set" in assertion["AssertDescription"]


def test_the_lambdas_run_with_the_sdk_the_package_pins():
    requirements = (ROOT / "functions" / "requirements.txt").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    import re

    pinned = dict(re.findall(r"^([a-z0-9-]+)==([0-9.]+)", requirements, re.M))
    assert "boto3" in pinned, "the runtime's own boto3 would change under the code"
    for name, version in pinned.items():
        assert f'"{name}=={version}"' in pyproject, name  # the same pins as the project itself


def test_the_lambda_package_holds_no_cli_and_imports_none():
    """CodeUri is what `sam build` ships: the operator's CLI (and its ffprobe guard) stays out of it."""
    import ast

    template = load_template()
    code_dirs = {
        ROOT / (resource["Properties"].get("CodeUri") or template["Globals"]["Function"]["CodeUri"])
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::Serverless::Function"
    }
    assert code_dirs == {ROOT / "functions"}
    shipped = [p for d in code_dirs for p in d.rglob("*.py") if "__pycache__" not in p.parts]
    assert shipped and not any("cli" in p.relative_to(ROOT / "functions").parts for p in shipped)
    for path in shipped:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(name.startswith("migrator_cli") for name in names), path


def _branches(role: dict) -> list[dict]:
    """Every statement of a role, the true branch of each conditional one included."""
    out = []
    for statement in _statements(role):
        out.append(statement["Fn::If"][1] if "Fn::If" in statement else statement)
    return out


def test_a_secret_grant_names_that_one_secret_not_its_siblings(translated):
    """`secret:${Name}-*` also matched `${Name}-admin-...`; AWS's form for one secret is six characters."""
    resources = translated["Resources"]
    grants = [
        st
        for role in (r for r in resources.values() if r["Type"] == "AWS::IAM::Role")
        for st in _branches(role)
        if "secretsmanager:GetSecretValue" in st.get("Action", [])
    ]
    # The provider's secret (uploader, reconcile, webhook, tracks), the signing secret, the sources' secret
    # (uploader, tracks, archive, mirror); and the aws target's key group secret, which the stack itself makes
    # (its ARN).
    made = [g for g in grants if g["Resource"] == {"Fn::GetAtt": ["PlaybackKeySecret", "Id"]}]
    assert len(made) == 1
    grants = [g for g in grants if g not in made]
    assert len(grants) == 9
    for grant in grants:
        arn = grant["Resource"]["Fn::Sub"]
        assert arn.endswith("-??????") and "*" not in arn, arn


def test_the_source_credentials_are_read_by_the_workers_that_fetch_from_sources_alone(translated):
    """The source platforms' credentials (issue 21) reach the uploader's role (a video's source reference),
    the tracks worker's (a caption's) and the archive worker's (an original's), as one named secret or
    parameter, and no other function's; the
    uploader is told their names and the sources' settings."""
    resources = translated["Resources"]
    readers = {
        name
        for name, role in resources.items()
        if role["Type"] == "AWS::IAM::Role"
        for st in _branches(role)
        if "SourceToken" in json.dumps(st.get("Resource", ""))
    }
    assert readers == {"UploaderRole", "TracksRole", "ArchiveRole", "MirrorRole"}
    grants = {
        st["Sid"]: st for st in _branches(resources["UploaderRole"]) if st.get("Sid", "").startswith("SourceToken")
    }
    assert grants["SourceToken"]["Resource"]["Fn::Sub"].endswith(":secret:${SourceTokenSecretName}-??????")
    assert grants["SourceTokenParameter"]["Action"] == ["ssm:GetParameter"]
    env = resources["UploaderFunction"]["Properties"]["Environment"]["Variables"]
    for variable in (
        "SOURCE_TOKEN_SECRET",
        "SOURCE_TOKEN_PARAMETER",
        "SOURCE_BASE_URLS",
        "SOURCE_PREPARE_TIMEOUT_SECONDS",
    ):
        assert variable in env
    for name in ("ReconcileFunction", "WebhookFunction", "IntakeFunction", "TallyFunction"):
        assert "SOURCE_TOKEN_SECRET" not in json.dumps(resources[name]["Properties"].get("Environment", {}))


def test_functions_that_read_secrets_may_decrypt_them_under_the_customer_key_through_the_services(translated):
    resources = translated["Resources"]
    for role_name in ("UploaderRole", "ReconcileRole", "WebhookRole", "TracksRole", "ArchiveRole", "MirrorRole"):
        statements = _statements(resources[role_name])
        (conditional,) = [st for st in statements if "Fn::If" in st and st["Fn::If"][0] == "HasSecretsKey"]
        grant = conditional["Fn::If"][1]
        assert grant["Action"] == ["kms:Decrypt"] and grant["Resource"] == {"Ref": "SecretsKmsKeyArn"}
        services = grant["Condition"]["StringEquals"]["kms:ViaService"]
        assert [s["Fn::Sub"].split(".")[0] for s in services] == ["secretsmanager", "ssm"]
    for role_name in ("TallyRole", "IntakeRole"):  # they read no secret
        assert not [st for st in _branches(resources[role_name]) if "kms:Decrypt" in st.get("Action", [])]


def test_the_webhook_throttle_takes_what_the_stack_can_cause():
    """It was 100/s while the stack may create 500 videos/s, each with one or more callbacks."""
    from migrator.providers import PROVIDERS

    template = load_template()
    ceiling = template["Parameters"]["ProviderRateLimit"]["MaxValue"]
    throttle = template["Mappings"]["WebhookThrottle"]
    assert set(throttle) == set(PROVIDERS)
    for name, provider in PROVIDERS.items():
        assert throttle[name]["Rate"] == ceiling * provider.events_per_asset * 2, name
        assert throttle[name]["Burst"] >= throttle[name]["Rate"], name
    settings = template["Resources"]["WebhookRestStage"]["Properties"]["MethodSettings"][0]
    assert settings["ThrottlingRateLimit"]["Fn::If"][2] == {
        "Fn::FindInMap": ["WebhookThrottle", {"Ref": "Provider"}, "Rate"]
    }


def test_the_provider_parameter_offers_every_registered_target_and_describes_each():
    """CloudFormation needs the names literal: they are held to the registry (migrator.platforms, providers), so a
    target registered in code but not here (or here but not in code) fails, and each one's words are there."""
    from migrator.platforms import TARGETS
    from migrator.providers import PROVIDERS

    parameters = load_template()["Parameters"]
    assert parameters["Provider"]["AllowedValues"] == list(TARGETS)
    assert parameters["Provider"]["Default"] in TARGETS
    for name, provider in PROVIDERS.items():
        assert f"{name} = " in parameters["Provider"]["Description"], name
        assert f"{name}, " in parameters["ProviderTokenSecretName"]["Description"], name
        assert provider.default_base_url in parameters["ProviderBaseUrl"]["Description"], name


def test_the_webhook_rate_limits_description_says_the_throttle_each_target_gets():
    """The description names each target's rate as the formula makes it (500 creates/s x events per asset x 2)."""
    import re

    from migrator.providers import PROVIDERS

    parameters = load_template()["Parameters"]
    ceiling = parameters["ProviderRateLimit"]["MaxValue"]
    said = {
        name: int(rate.replace(",", ""))
        for name, rate in re.findall(r"\b([a-z]+) ([0-9][0-9,]*)\b", parameters["WebhookRateLimit"]["Description"])
        if name in PROVIDERS
    }
    assert said == {name: ceiling * provider.events_per_asset * 2 for name, provider in PROVIDERS.items()}


def test_a_waf_rate_rule_can_stand_in_front_of_the_webhook():
    resources = load_template()["Resources"]
    acl, association = resources["WebhookWebAcl"], resources["WebhookWebAclAssociation"]
    assert acl["Condition"] == association["Condition"] == "HasWebhookWaf"
    (rule,) = acl["Properties"]["Rules"]
    assert rule["Statement"]["RateBasedStatement"] == {
        "Limit": {"Ref": "WebhookWafRateLimit"},
        "AggregateKeyType": "IP",
    }
    assert rule["Action"] == {"Block": {}} and acl["Properties"]["Scope"] == "REGIONAL"
    arn = association["Properties"]["ResourceArn"]["Fn::Sub"]
    assert "/restapis/${WebhookRestApi}/stages/${WebhookRestStage}" in arn
    assert resources["WebhookRestApi"]["Type"] == "AWS::ApiGateway::RestApi"  # WAF protects REST API stages only


def test_the_tracks_worker_reads_its_own_queue_and_writes_the_ledger_only_by_conditional_updates(translated):
    resources = translated["Resources"]
    statements = _branches(resources["TracksRole"])
    actions = {a for st in statements for a in st.get("Action", [])}
    assert not actions & {
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",
        "dynamodb:Query",
        "dynamodb:Scan",
        "sqs:SendMessage",
    }
    (queue,) = [st for st in statements if "sqs:ReceiveMessage" in st.get("Action", [])]
    assert queue["Resource"] == {"Fn::GetAtt": ["TracksQueue", "Arn"]}
    (ledger,) = [st for st in statements if "dynamodb:UpdateItem" in st.get("Action", [])]
    assert ledger["Resource"] == {"Fn::GetAtt": ["LedgerTable", "Arn"]}
    # The uploader and reconcile may send to the tracks queue; the uploader reads only its own.
    uploader = [st for st in _statements(resources["UploaderRole"]) if "sqs:SendMessage" in st.get("Action", [])]
    assert uploader and uploader[0]["Resource"] == {"Fn::GetAtt": ["TracksQueue", "Arn"]}


def test_the_tracks_lane_index_is_what_the_code_queries_and_its_queue_outlasts_the_worker():
    from migrator.due import TRACKS_DUE_AT, TRACKS_INDEX, TRACKS_LANE

    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    resources = template["Resources"]
    table = resources["LedgerTable"]["Properties"]
    (index,) = [i for i in table["GlobalSecondaryIndexes"] if i["IndexName"] == TRACKS_INDEX]
    assert [k["AttributeName"] for k in index["KeySchema"]] == [TRACKS_LANE, TRACKS_DUE_AT]
    assert index["Projection"]["ProjectionType"] == "KEYS_ONLY"  # reconcile needs the keys only
    timeout = resources["TracksFunction"]["Properties"]["Timeout"]
    assert resources["TracksQueue"]["Properties"]["VisibilityTimeout"] >= 6 * timeout
    assert template["Parameters"]["TrackFetchTestOrigins"]["Default"] == ""  # tests only: nothing is exempt


class _TaggedLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short-form tags kept as {tag: value}, e.g. {"If": [...]}."""


def _tagged(loader, suffix, node):
    if isinstance(node, yaml.SequenceNode):
        return {suffix: loader.construct_sequence(node, deep=True)}
    if isinstance(node, yaml.MappingNode):
        return {suffix: loader.construct_mapping(node, deep=True)}
    return {suffix: loader.construct_scalar(node)}


_TaggedLoader.add_multi_constructor("!", _tagged)


def test_the_local_stack_applies_each_reserved_concurrency_from_the_parameter_the_template_reads():
    """The emulator's CloudFormation drops ReservedConcurrentExecutions; infra/stack.py applies it from the
    parameter it names, so that name must be the one the template's function really reads (and 0 = none)."""
    from infra.stack import RESERVED_CONCURRENCY, local_defaults

    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_TaggedLoader)
    declared = {
        logical_id: resource["Properties"]["ReservedConcurrentExecutions"]
        for logical_id, resource in template["Resources"].items()
        if "ReservedConcurrentExecutions" in resource.get("Properties", {})
    }
    assert set(declared) == set(RESERVED_CONCURRENCY)
    for logical_id, parameter in RESERVED_CONCURRENCY.items():
        condition, value, otherwise = declared[logical_id]["If"]
        assert value == {"Ref": parameter} and otherwise == {"Ref": "AWS::NoValue"}
        assert template["Conditions"][condition] == {"Not": [{"Equals": [{"Ref": parameter}, 0]}]}
        assert template["Parameters"][parameter]["Default"] == 0  # AWS: nothing reserved unless asked
        assert int(local_defaults()[parameter]) >= 2  # the emulator: bounded


def test_only_the_archive_worker_writes_the_archive_and_only_under_its_prefix(translated):
    """Issue 43: "Only the archiver's role may write the bucket, and only under its prefix". The uploader may only
    read under the prefix, and only with ArchiveFirst, to presign the archived copy a target is handed."""
    resources = translated["Resources"]
    writers = {}
    for name, role in resources.items():
        if role["Type"] != "AWS::IAM::Role":
            continue
        for st in _branches(role):
            if "ArchiveBucket" in json.dumps(st.get("Resource", "")):
                writers.setdefault(name, []).append(st)
    assert set(writers) == {"ArchiveRole", "UploaderRole", "MediaConvertRole"}
    (transcode,) = writers["MediaConvertRole"]  # the aws target's jobs read the archived originals
    assert transcode["Action"] == ["s3:GetObject"]
    (reader,) = writers["UploaderRole"]
    assert reader["Action"] == ["s3:GetObject"]
    assert reader["Resource"] == {"Fn::Sub": "arn:${AWS::Partition}:s3:::${ArchiveBucket}/${ArchivePrefix}/*"}
    (conditional,) = [st for st in _statements(resources["UploaderRole"]) if "ArchiveBucket" in json.dumps(st)]
    assert conditional["Fn::If"][0] == "ArchivesFirst" and conditional["Fn::If"][2] == {"Ref": "AWS::NoValue"}
    assert translated["Conditions"]["ArchivesFirst"] == {
        "Fn::And": [{"Condition": "HasArchive"}, {"Fn::Equals": [{"Ref": "ArchiveFirst"}, "true"]}]
    }
    by_sid = {st["Sid"]: st for st in writers["ArchiveRole"]}
    assert by_sid["ArchiveWrite"]["Resource"] == {
        "Fn::Sub": "arn:${AWS::Partition}:s3:::${ArchiveBucket}/${ArchivePrefix}/*"
    }
    assert "s3:DeleteObject" not in by_sid["ArchiveWrite"]["Action"]  # a copy is never removed by the stack
    assert by_sid["ArchiveUploads"]["Action"] == ["s3:ListBucketMultipartUploads"]
    assert not [st for st in _branches(resources["ArchiveRole"]) if "ProviderToken" in st.get("Sid", "")]


def test_the_archive_is_off_by_default_and_all_of_it_hangs_on_the_bucket():
    template = load_template()
    assert template["Parameters"]["ArchiveBucket"]["Default"] == ""
    archive = [name for name in template["Resources"] if name.startswith("Archive")]
    assert set(archive) == {
        "ArchiveQueue",
        "ArchiveDeadLetterQueue",
        "ArchiveFunction",
        "ArchiveLogGroup",
        "ArchiveRole",
        "ArchiveDeadLetterAlarm",
        "ArchiveErrorsAlarm",
    }
    for name in archive:
        assert template["Resources"][name]["Condition"] == "HasArchive", name
    for name in ("ArchiveBucketName", "ArchivePrefix", "ArchiveQueueUrl", "ArchiveDeadLetterQueueUrl"):
        assert template["Outputs"][name]["Condition"] == "HasArchive", name
    uploader = template["Resources"]["UploaderFunction"]["Properties"]["Environment"]["Variables"]
    assert uploader["ARCHIVE_QUEUE_URL"] == {"Fn::If": ["HasArchive", {"Ref": "ArchiveQueue"}, ""]}


def test_the_archive_parameters_are_the_ones_the_worker_reads():
    from migrator.archive.plan import STORAGE_CLASSES

    template = load_template()
    assert tuple(template["Parameters"]["ArchiveStorageClass"]["AllowedValues"]) == STORAGE_CLASSES
    env = template["Resources"]["ArchiveFunction"]["Properties"]["Environment"]["Variables"]
    source = (ROOT / "functions/migrator/archiver.py").read_text()
    for variable in ("ARCHIVE_BUCKET", "ARCHIVE_PREFIX", "ARCHIVE_STORAGE_CLASS", "ARCHIVE_QUEUE_URL"):
        assert variable in env and f'"{variable}"' in source, variable
    # A part of up to 256 MiB is held while it is checked and sent.
    assert template["Resources"]["ArchiveFunction"]["Properties"]["MemorySize"] >= 1024


def test_archive_first_is_off_by_default_and_refused_where_a_target_could_not_read_the_copy():
    """ArchiveFirst hands the target a presigned GET of the archived copy: the stack is refused without an archive,
    with a class read only after a restore (GLACIER, DEEP_ARCHIVE), or for a target that cannot fetch such a link."""
    template = load_template()
    first = template["Parameters"]["ArchiveFirst"]
    assert first["Default"] == "false" and first["AllowedValues"] == ["false", "true"]
    rule = template["Rules"]["ArchiveFirstNeedsAReadableArchive"]
    assert rule["RuleCondition"] == {"Fn::Equals": [{"Ref": "ArchiveFirst"}, "true"]}
    refused = [value for a in rule["Assertions"] for value in _refused(a["Assert"])]
    # exactly these: every other storage class is read at once, and every other target fetches a presigned GET
    assert refused == [
        {"ArchiveBucket": ""},
        {"ArchiveStorageClass": "GLACIER"},
        {"ArchiveStorageClass": "DEEP_ARCHIVE"},
        {"Provider": "cloudflare"},
    ]
    for assertion in rule["Assertions"]:
        assert "set " in assertion["AssertDescription"].lower() and "ArchiveFirst" in assertion["AssertDescription"]
    env = template["Resources"]["UploaderFunction"]["Properties"]["Environment"]["Variables"]
    assert env["ARCHIVE_FIRST"] == {"Ref": "ArchiveFirst"}
    assert env["ARCHIVE_BUCKET"] == {"Fn::If": ["HasArchive", {"Ref": "ArchiveBucket"}, ""]}
    assert env["ARCHIVE_PREFIX"] == {"Fn::If": ["HasArchive", {"Ref": "ArchivePrefix"}, ""]}


def _refused(assertion: dict) -> list[dict]:
    """The parameter values an assertion of the form Not(Equals(Ref, value)), or an And of them, refuses."""
    if "Fn::And" in assertion:
        return [value for part in assertion["Fn::And"] for value in _refused(part)]
    ref, value = assertion["Fn::Not"][0]["Fn::Equals"]
    return [{ref["Ref"]: value}]


def test_the_mirror_is_off_by_default_and_its_schedule_invokes_it_alone(translated):
    """Issue 45: nothing of the mirror without a MirrorSource, its schedule disabled unless MirrorEnabled, invoking
    the mirror through a role of its own; the mirror's role reads its own checkpoint item, writes the ledger only
    by UpdateItem, sends to the intake queue alone, and reads the sources' credentials as the uploader does."""
    from migrator.sources import HTTP_SOURCES

    template = load_template()
    parameters, resources = template["Parameters"], template["Resources"]
    assert parameters["MirrorSource"]["Default"] == "" and parameters["MirrorEnabled"]["Default"] == "false"
    assert parameters["MirrorSource"]["AllowedValues"] == ["", *HTTP_SOURCES]
    assert parameters["MirrorSchedule"]["Default"] == "rate(1 hour)"
    names = ("MirrorFunction", "MirrorLogGroup", "MirrorRole", "MirrorSweepSchedule", "MirrorScheduleRole")
    for name in names:
        assert resources[name]["Condition"] == "HasMirror", name
    for name in ("MirrorFunctionName", "MirrorScheduleName"):
        assert template["Outputs"][name]["Condition"] == "HasMirror", name
    schedule = translated["Resources"]["MirrorSweepSchedule"]["Properties"]
    assert schedule["State"] == {"Fn::If": ["MirrorOnSchedule", "ENABLED", "DISABLED"]}
    assert schedule["Target"]["Arn"] == {"Fn::GetAtt": ["MirrorFunction", "Arn"]}
    assert schedule["Target"]["RoleArn"] == {"Fn::GetAtt": ["MirrorScheduleRole", "Arn"]}
    invoke = _statements(translated["Resources"]["MirrorScheduleRole"])
    assert invoke == [
        {
            "Sid": "InvokeMirror",
            "Effect": "Allow",
            "Action": ["lambda:InvokeFunction"],
            "Resource": {"Fn::GetAtt": ["MirrorFunction", "Arn"]},
        }
    ]
    statements = {st["Sid"]: st for st in _branches(translated["Resources"]["MirrorRole"])}
    assert statements["Checkpoint"]["Action"] == ["dynamodb:GetItem"]
    assert statements["Checkpoint"]["Condition"] == {
        "ForAllValues:StringEquals": {"dynamodb:LeadingKeys": [{"Fn::Sub": "#mirror#${MirrorSource}"}, "#window"]}
    }
    assert statements["LedgerUpdates"]["Action"] == ["dynamodb:UpdateItem", "dynamodb:Scan"]
    assert statements["Intake"]["Resource"] == {"Fn::GetAtt": ["IntakeQueue", "Arn"]}
    sends = [st for st in statements.values() if any(a.startswith("sqs:") for a in st["Action"])]
    assert sends == [statements["Intake"]]
    env = translated["Resources"]["MirrorFunction"]["Properties"]["Environment"]["Variables"]
    assert env["INTAKE_QUEUE_URL"] == {"Ref": "IntakeQueue"} and env["MIRROR_SOURCE"] == {"Ref": "MirrorSource"}
    assert env["MIRROR_WHERE"] == {"Ref": "MirrorWhere"}  # the triage the mirror keeps to
    assert translated["Resources"]["MirrorFunction"]["Properties"]["Handler"] == "migrator.mirror.handler.handler"


def test_every_function_knows_the_working_hours_and_their_default_is_always_open():
    """The uploader holds and the mirror lists only within them (window.py); empty is no window at all."""
    from migrator.window import parse_window

    template = load_template()
    assert template["Globals"]["Function"]["Environment"]["Variables"]["WORKING_HOURS"] == {"Ref": "WorkingHours"}
    assert parse_window(template["Parameters"]["WorkingHours"]["Default"]) is None


def test_reconcile_publishes_its_notices_on_the_alarm_topic_and_may_read_the_intake_depth(translated):
    reconcile = translated["Resources"]["ReconcileFunction"]["Properties"]["Environment"]["Variables"]
    topic = {"Fn::If": ["OwnAlarmTopic", {"Ref": "AlarmTopic"}, {"Ref": "AlarmTopicArn"}]}
    assert reconcile["NOTICE_TOPIC_ARN"] == topic and reconcile["STALL_AFTER_MINUTES"] == {"Ref": "StallAfterMinutes"}
    assert reconcile["INTAKE_QUEUE_URL"] == {"Ref": "IntakeQueue"}
    statements = _statements(translated["Resources"]["ReconcileRole"])
    (publish,) = [st for st in statements if "sns:Publish" in st.get("Action", [])]
    assert publish["Resource"] == topic and publish["Action"] == ["sns:Publish"]
    (depth,) = [st for st in statements if "sqs:GetQueueAttributes" in st.get("Action", [])]
    assert depth["Resource"] == {"Fn::GetAtt": ["IntakeQueue", "Arn"]}
