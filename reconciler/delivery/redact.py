"""Keep credentials out of logs, errors and status: URLs shown as scheme, host and path only.

Chat services put the credential in the URL itself: in the query (WeCom ``?key=``, DingTalk
``?access_token=``) or in the path (Slack ``/services/T…/B…/<secret>``, Discord
``/api/webhooks/<id>/<token>``, Feishu ``/hook/<uuid>``, Telegram ``/bot<token>/``). So
``redact_url`` drops user info, query and fragment, and masks every path segment that holds a
credential: the token positions of those services, and any other segment of 16 or more
characters that mixes letters and digits. Ordinary words (``/hooks/reconciler``) and numeric
ids stay readable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

MASK: Final[str] = "***"
_TELEGRAM_BOT = re.compile(r"^bot\d+:[A-Za-z0-9_-]+$")
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
# Secrets shorter than this are not scrubbed from text: masking "ok" everywhere helps nobody.
_MIN_SECRET = 4


def _looks_secret(segment: str) -> bool:
    if len(segment) < 16:
        return False
    return any(c.isdigit() for c in segment) and any(c.isalpha() for c in segment)


def _after(segments: list[str], index: int, distance: int, name: str) -> bool:
    return index >= distance and segments[index - distance] == name


def _mask_segment(segments: list[str], index: int) -> str:
    segment = segments[index]
    if _TELEGRAM_BOT.match(segment):
        return f"bot{MASK}"
    # Known shapes first, since a token may happen to be all letters: Feishu .../hook/<token>,
    # Discord .../webhooks/<id>/<token>, Slack .../services/<team>/<bot>/<token>.
    known = (_after(segments, index, 1, "hook") or _after(segments, index, 2, "webhooks")
             or _after(segments, index, 3, "services"))
    return MASK if segment and (known or _looks_secret(segment)) else segment


def redact_url(url: str) -> str:
    """``https://hooks.slack.com/services/T0/B0/***``: never user info, query or a token."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return MASK
    if not parts.scheme or not parts.hostname:
        return MASK
    host = parts.hostname if port is None else f"{parts.hostname}:{port}"
    segments = parts.path.split("/")
    path = "/".join(_mask_segment(segments, index) for index in range(len(segments)))
    return f"{parts.scheme}://{host}{path}"


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every URL redacted and every known secret value masked.

    Error messages of HTTP libraries and of receivers may echo the request URL or a header;
    everything that leaves the delivery layer as text goes through here.
    """
    for secret in sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return _URL_IN_TEXT.sub(lambda match: redact_url(match.group(0)), text)
