"""Job and channel names: OpenClaw's free text turned into unique DNS-1123 labels.

A name is the OpenClaw name folded to ASCII, lower-cased, every other run of characters made a
``-``, cut to fit 63 characters. Names that collide (two jobs called "Daily report", or names
with no ASCII letters at all, like "开会提醒") all get a suffix from a hash of the OpenClaw id,
so the result does not depend on the order of the jobs in the file, and re-importing the same
store gives the same names.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence

MAX_NAME = 63
_SUFFIX = 6
_NOT_LABEL = re.compile(r"[^a-z0-9]+")


def slug(text: str, limit: int = MAX_NAME) -> str:
    """``text`` as a DNS-1123 label of at most ``limit`` characters ("" if nothing is left)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return _NOT_LABEL.sub("-", folded.lower()).strip("-")[:limit].strip("-")


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_SUFFIX]


def unique_names(pairs: Sequence[tuple[str, str]], fallback: str = "job") -> list[str]:
    """One name per ``(free text, stable id)`` pair, in order, all distinct.

    A pair whose slug is empty or shared with another pair gets ``-<hash of id>``; identical
    ids (a hand-edited store) are told apart by their position as a last resort."""
    bases = [slug(text, MAX_NAME) for text, _ in pairs]
    counts: dict[str, int] = {}
    for base in bases:
        counts[base] = counts.get(base, 0) + 1
    names: list[str] = []
    taken: set[str] = set()
    for (_, stable_id), base in zip(pairs, bases, strict=True):
        name = base
        if not base or counts[base] > 1:
            stem = (base or fallback)[: MAX_NAME - _SUFFIX - 1].strip("-")
            name = f"{stem}-{short_hash(stable_id)}"
        candidate, position = name, 2
        while candidate in taken:
            candidate = f"{name[: MAX_NAME - 4].strip('-')}-{position}"
            position += 1
        name = candidate
        taken.add(name)
        names.append(name)
    return names
