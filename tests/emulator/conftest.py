"""Adapter tests against the emulator: the ledger table is created from template.yaml."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import ROOT, unique


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short-form tags read as plain values."""


_CfnLoader.add_multi_constructor("!", lambda loader, suffix, node: None)


def table_properties(logical_id: str) -> dict:
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    return template["Resources"][logical_id]["Properties"]


def create_table_like(dynamodb, logical_id: str) -> str:
    """A new table shaped exactly like the template's table `logical_id`."""
    props = table_properties(logical_id)
    name = unique(logical_id.lower())
    extra = {"GlobalSecondaryIndexes": props["GlobalSecondaryIndexes"]} if "GlobalSecondaryIndexes" in props else {}
    dynamodb.create_table(
        TableName=name,
        BillingMode=props["BillingMode"],
        AttributeDefinitions=props["AttributeDefinitions"],
        KeySchema=props["KeySchema"],
        **extra,
    )
    dynamodb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    return name


def create_ledger_table(dynamodb) -> str:
    return create_table_like(dynamodb, "LedgerTable")


@pytest.fixture
def table(aws):
    return create_ledger_table(aws("dynamodb"))


@pytest.fixture
def events_table(aws):
    return create_table_like(aws("dynamodb"), "WebhookEventsTable")


@pytest.fixture
def queue(aws):
    sqs = aws("sqs")
    url = sqs.create_queue(QueueName=unique("queue"), Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    yield url
    sqs.delete_queue(QueueUrl=url)


@pytest.fixture
def tracks_queue(aws):
    """A queue standing in for the tracks worker's."""
    sqs = aws("sqs")
    url = sqs.create_queue(QueueName=unique("tracks"))["QueueUrl"]
    yield url
    sqs.delete_queue(QueueUrl=url)
