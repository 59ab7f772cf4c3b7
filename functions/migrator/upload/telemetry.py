"""The uploader's one logger and one metrics set: import them from here in every part of the upload, so
the handler's `inject_lambda_context` and `log_metrics` cover what each part logs and counts."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger(service="uploader")
metrics = Metrics(namespace="VideoMigration", service="uploader")

__all__ = ["MetricUnit", "logger", "metrics"]
