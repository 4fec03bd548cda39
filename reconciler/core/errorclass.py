"""Classify a failure so the policies know whether retrying can help (DESIGN §3.6).

Executors may report a class directly (an HTTP status, a mapped exit code); otherwise the
error text decides, case-insensitively. Anything unrecognised is ``permanent``: retrying an
unknown failure forever hammers what is broken.
"""

from __future__ import annotations

import re

from reconciler.model.enums import ErrorClass

_PATTERNS: list[tuple[ErrorClass, re.Pattern[str]]] = [
    (ErrorClass.RATE_LIMIT, re.compile(
        r"rate[ _-]?limit|too many requests|\b429\b|resource[ _-]?exhausted|tokens per day"
        r"|quota exceeded", re.I)),
    (ErrorClass.OVERLOADED, re.compile(
        r"\b529\b|overloaded|high demand|capacity exceeded|server is busy", re.I)),
    (ErrorClass.TIMEOUT, re.compile(r"timed? ?out|timeout|deadline exceeded", re.I)),
    (ErrorClass.NETWORK, re.compile(
        r"econnreset|econnrefused|connection (reset|refused|aborted|closed)|name resolution"
        r"|getaddrinfo|enotfound|ehostunreach|network is unreachable|socket|broken pipe"
        r"|remote end closed", re.I)),
    (ErrorClass.SERVER_ERROR, re.compile(
        r"\b5\d\d\b|internal server error|bad gateway|service unavailable", re.I)),
]


def classify_text(text: str | None) -> ErrorClass:
    if text:
        for error_class, pattern in _PATTERNS:
            if pattern.search(text):
                return error_class
    return ErrorClass.PERMANENT


def classify_http_status(status: int) -> ErrorClass | None:
    """The class of an HTTP status, or None for a success."""
    if status == 429:
        return ErrorClass.RATE_LIMIT
    if status == 529:
        return ErrorClass.OVERLOADED
    if status == 408:
        return ErrorClass.TIMEOUT
    if 500 <= status <= 599:
        return ErrorClass.SERVER_ERROR
    if 400 <= status <= 499:
        return ErrorClass.PERMANENT
    return None
