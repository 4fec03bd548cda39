"""The one HTTP adapter of the delivery layer (httpx): POST an outbox entry, say what happened.

``Sender.send(payload, key, now)`` posts one entry's envelope with ``Idempotency-Key: key`` and
returns a ``Verdict``; it never raises for a delivery problem. A network error or a timeout is
``retry``; an envelope it cannot read or a secret it cannot resolve is ``permanent``. Every
message it returns is scrubbed: the URL appears as scheme, host and path only, and resolved
secrets never appear at all.
"""

from __future__ import annotations

import httpx

from reconciler import __version__
from reconciler.delivery.redact import scrub
from reconciler.delivery.request import Envelope, Verdict, judge, prepare
from reconciler.errors import ReconcilerError
from reconciler.executors.secrets import SecretResolver

DEFAULT_TIMEOUT = 10.0


class Sender:
    """Posts envelopes over one pooled ``httpx.AsyncClient``; close it with ``aclose``."""

    def __init__(self, resolver: SecretResolver | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 client: httpx.AsyncClient | None = None, version: str = __version__) -> None:
        self._resolver = resolver or SecretResolver()
        # Redirects are not followed: a POST redirected may turn into a GET and lose its body.
        self._client = client or httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        self.user_agent = f"reconciler/{version}"

    async def send(self, payload: str, key: str, now: float) -> Verdict:
        try:
            envelope = Envelope.loads(payload)
            request = prepare(envelope, key, now, self._resolver, self.user_agent)
        except (ValueError, ReconcilerError) as exc:
            return Verdict("permanent", scrub(str(exc)))
        try:
            response = await self._client.post(
                request.url, content=request.content, headers=request.headers)
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            return Verdict("permanent", f"{request.display}: invalid URL ({type(exc).__name__})")
        except httpx.TimeoutException:
            return Verdict("retry", f"{request.display}: timed out")
        except httpx.HTTPError as exc:
            # httpx messages may quote the URL: scrub them like everything else.
            reason = scrub(f"{type(exc).__name__}: {exc}", request.secrets)
            return Verdict("retry", f"{request.display}: {reason}")
        verdict = judge(envelope.endpoint.kind, response.status_code, response.text,
                        response.headers.get("Retry-After"), request.secrets)
        if verdict.outcome == "delivered":
            return verdict
        return Verdict(verdict.outcome, f"{request.display}: {verdict.detail}",
                       verdict.retry_after)

    async def aclose(self) -> None:
        await self._client.aclose()
