"""The closed vocabularies of the spec and the state."""

from __future__ import annotations

from enum import StrEnum


class ErrorClass(StrEnum):
    """What kind of failure a run had; decides whether it is retried."""

    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    NETWORK = "network"
    TIMEOUT = "timeout"
    SERVER_ERROR = "server_error"
    PERMANENT = "permanent"


TRANSIENT_CLASSES = (
    ErrorClass.RATE_LIMIT,
    ErrorClass.OVERLOADED,
    ErrorClass.NETWORK,
    ErrorClass.TIMEOUT,
    ErrorClass.SERVER_ERROR,
)


class ConcurrencyPolicy(StrEnum):
    FORBID = "Forbid"
    ALLOW = "Allow"
    REPLACE = "Replace"
    QUEUE = "Queue"


class CatchUpPolicy(StrEnum):
    LATEST = "latest"
    ALL = "all"
    NONE = "none"


class RunStatus(StrEnum):
    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    SKIPPED = "skipped"
    INTERRUPTED = "interrupted"


class ChannelType(StrEnum):
    SLACK = "slack"
    DISCORD = "discord"
    FEISHU = "feishu"
    DINGTALK = "dingtalk"
    WECOM = "wecom"
    TELEGRAM = "telegram"
    WEBHOOK = "webhook"


class DeliveryOn(StrEnum):
    OK = "ok"
    ERROR = "error"
