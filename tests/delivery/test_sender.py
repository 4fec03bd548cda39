"""The sender against a real local HTTP server: headers, signatures each service documents,
each channel's request, how replies are judged, and no secret in any message."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import inspect
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from reconciler import __version__
from reconciler.delivery.plan import plan_deliveries
from reconciler.delivery.request import Endpoint, Envelope, Verdict
from reconciler.delivery.sender import Sender
from reconciler.executors.base import RunResult
from reconciler.executors.secrets import SecretResolver
from reconciler.model.enums import ChannelType
from tests.delivery.helpers import T0, channel, finished_run, fixture, job, shape
from tests.delivery.receiver import Receiver, Reply, serving

NOW = T0 + 100
SECRET = "whsec-0123456789abcdef"


# The receiver's check, copied verbatim from the README ("Verifying the signature").
def verify_reconciler_signature(secret: str, body: bytes, signature: str) -> bool:
    """True when `signature` (the X-Reconciler-Signature header) is reconciler's
    signature of `body` (the raw request body, before any JSON parsing)."""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def test_the_snippet_here_is_the_one_in_the_readme() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert inspect.getsource(verify_reconciler_signature) in readme


def send(payload: str, key: str = "run-1", env: Mapping[str, str] | None = None,
         timeout: float = 5.0) -> Verdict:
    async def go() -> Verdict:
        sender = Sender(SecretResolver(env or {}), timeout=timeout)
        try:
            return await sender.send(payload, key, NOW)
        finally:
            await sender.aclose()

    return asyncio.run(go())


def _webhook_payload(url: str, **target: Any) -> str:
    spec = job(delivery={"webhook": {"url": url, **target}})
    result = RunResult("ok", summary="42 tickets", data={"tickets": 42})
    plan = plan_deliveries(spec, {}, finished_run(), result)
    return plan.deliveries[0].payload


def test_a_signed_webhook_verifies_with_the_documented_snippet() -> None:
    with serving() as receiver:
        payload = _webhook_payload(f"{receiver.url}/hook", secret={"fromEnv": "HOOK_SECRET"},
                                   headers={"X-Team": "data"})
        verdict = send(payload, env={"HOOK_SECRET": SECRET})
    assert verdict == Verdict("delivered", "")
    (request,) = receiver.requests
    signature = request.header("X-Reconciler-Signature") or ""
    assert verify_reconciler_signature(SECRET, request.body, signature)
    assert not verify_reconciler_signature("wrong", request.body, signature)
    assert not verify_reconciler_signature(SECRET, request.body + b" ", signature)
    assert request.header("X-Reconciler-Timestamp") == str(int(NOW))
    assert request.header("Idempotency-Key") == "run-1"
    assert request.header("User-Agent") == f"reconciler/{__version__}"
    assert request.header("Content-Type") == "application/json"
    assert request.header("X-Team") == "data"
    assert shape(request.json()) == shape(fixture("webhook"))


def test_an_unsigned_webhook_has_no_signature_headers() -> None:
    with serving() as receiver:
        assert send(_webhook_payload(receiver.url)).outcome == "delivered"
    (request,) = receiver.requests
    assert request.header("X-Reconciler-Signature") is None
    assert request.header("X-Reconciler-Timestamp") is None


def _channel_payload(kind: str, **fields: Any) -> str:
    spec = job(delivery={"channel": "c"})
    chat = {"c": channel(kind, **fields)}
    return plan_deliveries(spec, chat, finished_run(), RunResult("ok", summary="hi")).deliveries[
        0].payload


@pytest.mark.parametrize("kind", ["slack", "discord", "wecom", "feishu", "dingtalk"])
def test_each_chat_channel_posts_its_documented_shape(kind: str) -> None:
    with serving() as receiver:
        payload = _channel_payload(kind, url=f"{receiver.url}/hook/abc")
        assert send(payload).outcome == "delivered"
    (request,) = receiver.requests
    assert request.path == "/hook/abc" and request.header("Idempotency-Key") == "run-1"
    assert shape(request.json()) == shape(fixture(kind))
    assert "daily-digest" in request.body.decode()


def test_feishu_signs_in_the_body_as_feishu_documents() -> None:
    with serving() as receiver:
        payload = _channel_payload("feishu", url=receiver.url, secret={"fromEnv": "FS"})
        assert send(payload, env={"FS": SECRET}).outcome == "delivered"
    body = receiver.requests[0].json()
    assert shape(body) == shape(fixture("feishu_signed"))
    # Feishu's check: HmacSHA256 keyed with timestamp + "\n" + secret over an empty message.
    timestamp = body["timestamp"]
    assert abs(int(timestamp) - NOW) < 3600
    key = f"{timestamp}\n{SECRET}".encode()
    assert body["sign"] == base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


def test_dingtalk_signs_the_url_as_dingtalk_documents() -> None:
    with serving() as receiver:
        payload = _channel_payload(
            "dingtalk", url=f"{receiver.url}/robot/send?access_token=tok", secret={"fromEnv": "D"})
        assert send(payload, env={"D": SECRET}).outcome == "delivered"
    request = receiver.requests[0]
    assert request.query["access_token"] == ["tok"]
    (timestamp,) = request.query["timestamp"]
    (sign,) = request.query["sign"]  # parse_qs already url-decoded it once
    assert int(timestamp) == int(NOW * 1000)
    # DingTalk's check (its Python sample): HmacSHA256 keyed with the secret over
    # timestamp + "\n" + secret, Base64, then url-encoded into the query.
    digest = hmac.new(SECRET.encode(), f"{timestamp}\n{SECRET}".encode(), hashlib.sha256)
    assert sign == base64.b64encode(digest.digest()).decode()
    assert shape(request.json()) == shape(fixture("dingtalk"))
    assert "sign" not in payload  # signatures are made when sending, never stored


def test_telegram_posts_send_message_to_the_bot_path() -> None:
    with serving() as receiver:
        payload = _channel_payload("telegram", url=receiver.url, token={"fromEnv": "TG"},
                                   chatId="-1001234567890")
        assert send(payload, env={"TG": "123456:ABC-secret-token"}).outcome == "delivered"
    request = receiver.requests[0]
    assert request.path == "/bot123456:ABC-secret-token/sendMessage"
    assert shape(request.json()) == shape(fixture("telegram"))
    assert request.json()["chat_id"] == "-1001234567890"


def _judged(reply: Reply, kind: str = "webhook") -> Verdict:
    with serving(Receiver(default=reply)) as receiver:
        if kind == "webhook":
            payload = _webhook_payload(f"{receiver.url}/in")
        else:
            payload = _channel_payload(kind, url=f"{receiver.url}/in")
        return send(payload)


@pytest.mark.parametrize(
    ("reply", "kind", "outcome", "detail"),
    [(Reply(204, ""), "webhook", "delivered", ""),
     (Reply(400, "bad payload"), "webhook", "permanent", "/in: HTTP 400: bad payload"),
     (Reply(404, ""), "slack", "permanent", "HTTP 404"),
     (Reply(503, "busy"), "webhook", "retry", "HTTP 503: busy"),
     (Reply(429, "slow", {"Retry-After": "30"}), "discord", "retry", "HTTP 429"),
     (Reply(302, "", {"Location": "https://x"}), "webhook", "permanent", "HTTP 302"),
     (Reply(200, '{"code":19021,"msg":"sign match fail"}'), "feishu", "permanent", "19021"),
     (Reply(200, '{"code":11232,"msg":"frequency limited"}'), "feishu", "retry", "11232"),
     (Reply(200, '{"code":0,"msg":"success"}'), "feishu", "delivered", ""),
     (Reply(200, '{"errcode":310000,"errmsg":"keywords not in content"}'), "dingtalk",
      "permanent", "310000"),
     (Reply(200, '{"errcode":45009,"errmsg":"api freq out of limit"}'), "wecom", "retry",
      "45009"),
     (Reply(200, '{"errcode":0,"errmsg":"ok"}'), "wecom", "delivered", "")])
def test_replies_are_judged_as_documented(reply: Reply, kind: str, outcome: str,
                                          detail: str) -> None:
    verdict = _judged(reply, kind)
    assert verdict.outcome == outcome and detail in verdict.detail
    if reply.status == 429:
        assert verdict.retry_after == 30.0


def test_network_errors_and_timeouts_are_retried_without_leaking_the_url() -> None:
    with serving() as receiver:
        port_url = receiver.url
    # The server is gone: connection refused on a URL that carries a token.
    payload = _webhook_payload(f"{port_url}/in?token=s3cr3t-t0ken-value")
    verdict = send(payload)
    assert verdict.outcome == "retry" and "s3cr3t" not in verdict.detail
    assert verdict.detail.startswith(f"{port_url}/in: ")

    def slow(_: Any) -> Reply:
        time.sleep(0.5)
        return Reply()

    with serving(Receiver(responder=slow)) as receiver:
        verdict = send(_webhook_payload(f"{receiver.url}/x"), timeout=0.1)
    assert verdict == Verdict("retry", f"{receiver.url}/x: timed out")


def test_a_missing_secret_or_unreadable_payload_is_permanent_and_names_no_value() -> None:
    payload = _webhook_payload("http://127.0.0.1:9/", secret={"fromEnv": "UNSET_SECRET"})
    verdict = send(payload)
    assert verdict.outcome == "permanent" and "env:UNSET_SECRET" in verdict.detail
    assert send("not json").outcome == "permanent"
    assert send('{"v": 99}').detail.startswith("unknown envelope version")
    bad_url = Envelope(Endpoint(ChannelType.WEBHOOK, "ftp://x/y"), {}).dumps()
    assert send(bad_url).outcome == "permanent"


def test_error_bodies_echoing_secrets_are_scrubbed() -> None:
    echo = Reply(401, "invalid token whsec-0123456789abcdef for https://h.example/p?k=v")
    with serving(Receiver(default=echo)) as receiver:
        payload = _webhook_payload(receiver.url, secret={"fromEnv": "S"})
        verdict = send(payload, env={"S": SECRET})
    assert verdict.outcome == "permanent"
    assert SECRET not in verdict.detail and "k=v" not in verdict.detail
    assert "invalid token *** for https://h.example/p" in verdict.detail
