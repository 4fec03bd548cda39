"""An outbox entry's payload (the envelope), the HTTP request it becomes, and what a reply means.

The envelope is what the outbox stores: the target's endpoint as the spec wrote it (secret
*references* stay references, resolved only when sending, so a rotated secret is picked up and
no resolved credential is written to the state) and the JSON body to post. A target deleted or
edited after the run still receives what the run owed it.

``prepare`` turns an envelope into a request at the moment of sending: it resolves secrets,
adds the service's signature (those are time-stamped, so they cannot be computed earlier) and
our headers. ``judge`` reads the reply: 2xx is delivered, 429 and 5xx are retried, any other
status is permanent; Feishu, DingTalk and WeCom answer 200 with an error code in the body,
which is read the same way (their rate-limit codes retry). No I/O besides secret resolution.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import quote_plus

from reconciler.delivery.redact import redact_url, scrub
from reconciler.executors.secrets import SecretResolver
from reconciler.model.channel import ChannelSpec
from reconciler.model.delivery import WebhookTarget
from reconciler.model.enums import ChannelType
from reconciler.model.secrets import SecretRef, SecretValue

ENVELOPE_VERSION: Final[int] = 1
TELEGRAM_API: Final[str] = "https://api.telegram.org"
SIGNATURE_HEADER: Final[str] = "X-Reconciler-Signature"
TIMESTAMP_HEADER: Final[str] = "X-Reconciler-Timestamp"
_BODY_EXCERPT = 200
# Error codes the services return with HTTP 200 that mean "slow down", not "never".
_RATE_LIMIT_CODES: Final[dict[ChannelType, frozenset[int]]] = {
    ChannelType.FEISHU: frozenset({11232}),
    ChannelType.DINGTALK: frozenset({130101, 410100}),
    ChannelType.WECOM: frozenset({-1, 45009}),
}


def _dump_secret(value: SecretValue | None) -> Any:
    if value is None or isinstance(value, str):
        return value
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


def _load_secret(value: Any) -> SecretValue | None:
    if value is None or isinstance(value, str):
        return value
    return SecretRef.model_validate(value)


def _describe_secret(value: SecretValue | None) -> str:
    if value is None:
        return "(none)"
    return redact_url(value) if isinstance(value, str) else value.describe()


@dataclass(frozen=True)
class Endpoint:
    """Where and how to post: a channel's or webhook's fields, secrets still unresolved."""

    kind: ChannelType
    url: SecretValue | None = None
    secret: SecretValue | None = None
    token: SecretValue | None = None
    headers: tuple[tuple[str, SecretValue], ...] = ()

    @classmethod
    def of_channel(cls, spec: ChannelSpec) -> Endpoint:
        return cls(spec.type, spec.url, spec.secret, spec.token, tuple(spec.headers.items()))

    @classmethod
    def of_webhook(cls, target: WebhookTarget) -> Endpoint:
        return cls(ChannelType.WEBHOOK, target.url, target.secret, None,
                   tuple(target.headers.items()))

    def describe(self) -> str:
        """A label safe for status and logs: the kind and the redacted URL or its reference."""
        if self.kind is ChannelType.TELEGRAM:
            return f"telegram {redact_url(self.url) if isinstance(self.url, str) else TELEGRAM_API}"
        return f"{self.kind.value} {_describe_secret(self.url)}"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.kind.value, "url": _dump_secret(self.url),
            "secret": _dump_secret(self.secret), "token": _dump_secret(self.token),
            "headers": [[name, _dump_secret(value)] for name, value in self.headers],
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Endpoint:
        headers = tuple((str(name), _load_secret(value)) for name, value in data["headers"])
        return cls(ChannelType(data["type"]), _load_secret(data["url"]),
                   _load_secret(data["secret"]), _load_secret(data["token"]),
                   tuple((name, value) for name, value in headers if value is not None))


@dataclass(frozen=True)
class Envelope:
    """One outbox payload: the endpoint and the JSON body owed to it."""

    endpoint: Endpoint
    body: dict[str, Any]

    def dumps(self) -> str:
        document = {"v": ENVELOPE_VERSION, "endpoint": self.endpoint.to_json(), "body": self.body}
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"), default=str)

    @classmethod
    def loads(cls, text: str) -> Envelope:
        """Raises ``ValueError`` for a payload this version cannot read."""
        try:
            document = json.loads(text)
            if document.get("v") != ENVELOPE_VERSION:
                raise ValueError(f"unknown envelope version {document.get('v')!r}")
            return cls(Endpoint.from_json(document["endpoint"]), dict(document["body"]))
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
            raise ValueError(f"unreadable outbox payload: {exc}") from exc


@dataclass(frozen=True)
class PreparedRequest:
    url: str
    headers: dict[str, str]
    content: bytes
    display: str  # the redacted URL, for messages
    secrets: tuple[str, ...]  # resolved values that must never appear in any message


def sign_body(secret: str, body: bytes) -> str:
    """``X-Reconciler-Signature``: ``sha256=`` and the hex HMAC-SHA256 of the raw body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def feishu_sign(secret: str, timestamp: int) -> str:
    """Feishu: base64(HMAC-SHA256(key="{timestamp}\\n{secret}", message=empty))."""
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


def dingtalk_sign(secret: str, timestamp_ms: int) -> str:
    """DingTalk: urlencode(base64(HMAC-SHA256(key=secret, message="{timestamp}\\n{secret}")))."""
    digest = hmac.new(secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256)
    return quote_plus(base64.b64encode(digest.digest()).decode())


def _resolve(resolver: SecretResolver, value: SecretValue | None) -> str | None:
    return None if value is None else resolver.resolve(value)


def prepare(envelope: Envelope, key: str, now: float, resolver: SecretResolver,
            user_agent: str) -> PreparedRequest:
    """The request for ``envelope`` sent at ``now``. Raises ``PermanentError`` for a secret
    that cannot be resolved (the error names the reference, never a value)."""
    endpoint = envelope.endpoint
    secret = _resolve(resolver, endpoint.secret)
    token = _resolve(resolver, endpoint.token)
    url = _resolve(resolver, endpoint.url)
    body = dict(envelope.body)
    if endpoint.kind is ChannelType.TELEGRAM:
        url = f"{(url or TELEGRAM_API).rstrip('/')}/bot{token}/sendMessage"
    elif endpoint.kind is ChannelType.FEISHU and secret:
        body |= {"timestamp": str(int(now)), "sign": feishu_sign(secret, int(now))}
    elif endpoint.kind is ChannelType.DINGTALK and secret:
        stamp = int(now * 1000)
        separator = "&" if "?" in (url or "") else "?"
        url = f"{url}{separator}timestamp={stamp}&sign={dingtalk_sign(secret, stamp)}"
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str).encode()
    headers = resolver.resolve_map(dict(endpoint.headers))
    extra = list(headers.values())
    headers |= {"Content-Type": "application/json", "Idempotency-Key": key,
                "User-Agent": user_agent}
    if endpoint.kind is ChannelType.WEBHOOK and secret:
        headers |= {TIMESTAMP_HEADER: str(int(now)), SIGNATURE_HEADER: sign_body(secret, content)}
    secrets = tuple(s for s in (secret, token, url, *extra) if s)
    return PreparedRequest(url or "", headers, content, redact_url(url or ""), secrets)


@dataclass(frozen=True)
class Verdict:
    outcome: Literal["delivered", "retry", "permanent"]
    detail: str  # redacted; empty when delivered
    retry_after: float | None = None  # seconds the receiver asked us to wait


def _body_code(kind: ChannelType, text: str) -> tuple[int, str] | None:
    """The service's own error code in a 2xx reply, or None when it reports success."""
    if kind not in _RATE_LIMIT_CODES:
        return None
    try:
        reply = json.loads(text)
    except ValueError:
        return None
    if not isinstance(reply, dict):
        return None
    for field in ("code", "errcode", "StatusCode"):
        code = reply.get(field)
        if isinstance(code, int) and code != 0:
            return code, str(reply.get("msg") or reply.get("errmsg") or "")
    return None


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: rare for webhooks; our backoff applies instead


def judge(kind: ChannelType, status: int, text: str, retry_after: str | None,
          secrets: tuple[str, ...] = ()) -> Verdict:
    """What an HTTP reply means for the entry (README "delivery", the outbox)."""
    excerpt = scrub(text.strip()[:_BODY_EXCERPT], secrets)
    if 200 <= status < 300:
        found = _body_code(kind, text)
        if found is None:
            return Verdict("delivered", "")
        code, message = found
        detail = scrub(f"{kind.value} error {code}: {message}"[:_BODY_EXCERPT], secrets)
        outcome: Literal["retry", "permanent"] = (
            "retry" if code in _RATE_LIMIT_CODES[kind] else "permanent")
        return Verdict(outcome, detail)
    detail = f"HTTP {status}" + (f": {excerpt}" if excerpt else "")
    if status == 429 or status >= 500:
        return Verdict("retry", detail, _retry_after(retry_after))
    return Verdict("permanent", detail)
