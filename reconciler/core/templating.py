"""The one sandboxed Jinja2 environment for every template field, and its syntax check.

Templates render with ``StrictUndefined`` (a typo fails loudly instead of rendering empty) in
Jinja2's ``ImmutableSandboxedEnvironment``: no attribute access to internals such as
``__class__``, and no mutating calls (``dict.update``, ``list.append``) on the variables, so one
template cannot alter what the next one sees. The globals ``lipsum``, ``cycler`` and ``joiner``
are removed: no job needs them and they are the usual first step of sandbox-escape payloads.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from jinja2 import StrictUndefined, TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment

_MARKERS = ("{{", "{%", "{#")
_REMOVED_GLOBALS = ("lipsum", "cycler", "joiner")


@lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True
    )
    for name in _REMOVED_GLOBALS:
        env.globals.pop(name, None)
    return env


def is_template(text: str) -> bool:
    return any(marker in text for marker in _MARKERS)


@dataclass(frozen=True)
class TemplateProblem:
    line: int  # 1-based line inside the template text
    message: str


@lru_cache(maxsize=8192)
def template_syntax_problem(text: str) -> TemplateProblem | None:
    """The first syntax error of ``text`` as a template, or None if it parses.

    Cached: a repository of generated jobs repeats the same few templates thousands of times.
    """
    if not is_template(text):
        return None
    try:
        environment().parse(text)
    except TemplateSyntaxError as exc:
        return TemplateProblem(exc.lineno or 1, f"template syntax error: {exc.message}")
    return None
