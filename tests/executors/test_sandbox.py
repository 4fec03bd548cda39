"""Sandbox-escape payloads from the public Jinja2 SSTI cheat sheets are all refused.

The corpus is drawn from PayloadsAllTheThings ("Server Side Template Injection/Jinja2"),
HackTricks ("Jinja2 SSTI") and PortSwigger's SSTI research: class-hierarchy walks, the
globals of Jinja's own helpers (cycler, joiner, lipsum, namespace), Flask objects (config,
request, url_for), the template reference, ``attr`` and subscript spellings that dodge a
``.`` filter, ``str.format`` field lookups, loader tricks (import, include, extends) and
mutating calls on the variables. Each must fail the render with ``TemplateRenderError``.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from reconciler.executors.message import MessageExecutor
from reconciler.executors.templates import TemplateRenderError, render, template_context
from tests.executors.httpserver import make_context, make_job

PAYLOADS = [
    # class-hierarchy walks
    "{{ ''.__class__.__mro__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{% for c in [].__class__.__base__.__subclasses__() %}{{ c.__name__ }}{% endfor %}",
    "{{ ().__class__.__bases__[0].__subclasses__()[40]('/etc/passwd').read() }}",
    "{{ [].__class__.__base__.__subclasses__() | list }}",
    "{{ dict.__base__.__subclasses__() }}",
    # the globals of Jinja's own helpers
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ joiner.__init__.__globals__.os.popen('id').read() }}",
    "{{ namespace.__init__.__globals__.os.popen('id').read() }}",
    "{{ lipsum.__globals__['os'].popen('id').read() }}",
    "{{ lipsum.__globals__.__builtins__.__import__('os').popen('id').read() }}",
    "{{ cycler.__init__.__globals__['__builtins__']['eval']('1+1') }}",
    "{% set x = joiner.__init__ %}{{ x.__globals__ }}",
    # Flask objects and helpers (absent here, and unreachable if they were not)
    "{{ config.items() }}",
    "{{ config.__class__.__init__.__globals__['os'].popen('id').read() }}",
    "{{ request.application.__globals__.__builtins__.__import__('os').popen('id').read() }}",
    "{{ url_for.__globals__['current_app'].config }}",
    "{{ get_flashed_messages.__globals__['__builtins__'] }}",
    # the template reference and its private context
    "{{ self._TemplateReference__context.cycler.__init__.__globals__.os }}",
    "{{ self.__init__.__globals__.__builtins__ }}",
    "{{ self._TemplateReference__context.keys() }}",
    # filter and subscript spellings that avoid a literal '.__'
    "{{ ''|attr('__class__')|attr('__mro__') }}",
    "{{ ''|attr('\\x5f\\x5fclass\\x5f\\x5f') }}",
    "{{ ''['__class__']['__mro__'] }}",
    "{{ lipsum|attr('__globals__')|attr('__getitem__')('os') }}",
    "{{ (job|attr('\\u005f\\u005fclass\\u005f\\u005f')) }}",
    "{{ ''[request.args.c] }}",
    # str.format field lookups
    "{{ '{0.__class__.__mro__}'.format('') }}",
    "{{ ('{0.__class__}'|attr('format'))('') }}",
    "{{ '{x.__class__}'.format_map({'x': job}) }}",
    "{{ '{0.__init__.__globals__}'.format(now) }}",
    # reaching os or the interpreter directly
    "{{ os.popen('id').read() }}",
    "{{ __import__('os').system('id') }}",
    "{{ now.__class__.__init__.__globals__ }}",
    "{{ now.tzinfo.__reduce__() }}",
    "{{ [].pop.__self__ }}",
    # loader tricks
    "{% import 'os' as os %}{{ os.system('id') }}",
    "{% include '/etc/passwd' %}",
    "{% extends '/etc/passwd' %}",
    # mutating the variables another template will see
    "{{ job.update({'name': 'other'}) }}",
    "{{ recent_runs.append(1) }}",
    "{{ job.labels.clear() }}",
    # resource exhaustion the sandbox knows about
    "{{ range(10**9) | list | length }}",
]


@pytest.fixture(scope="module")
def variables() -> dict[str, object]:
    job = make_job({"message": {"text": "x"}})
    job = job.model_copy(update={"metadata": job.metadata.model_copy(
        update={"labels": {"team": "data"}})})
    return template_context(make_context(job))


def test_the_corpus_is_large_enough() -> None:
    assert len(PAYLOADS) >= 15 and len(set(PAYLOADS)) == len(PAYLOADS)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_is_refused(payload: str, variables: dict[str, object]) -> None:
    with pytest.raises(TemplateRenderError) as refused:
        render(payload, variables, "run.message.text")
    assert str(refused.value).startswith("run.message.text: ")


def test_the_variables_are_unchanged_after_the_corpus(variables: dict[str, object]) -> None:
    for payload in PAYLOADS:
        with contextlib.suppress(TemplateRenderError):
            render(payload, variables, "f")
    job = variables["job"]
    assert isinstance(job, dict) and job["name"] == "probe" and job["labels"] == {"team": "data"}


def test_a_run_with_an_escape_attempt_fails_and_renders_nothing() -> None:
    job = make_job({"message": {"text": "hi {{ cycler.__init__.__globals__.os }}"}})
    result = asyncio.run(MessageExecutor().execute(make_context(job)))
    assert result.status == "error" and result.output is None
    assert result.error is not None and "run.message.text" in result.error


@pytest.mark.parametrize(("template", "expected"), [
    ("{% set ns = namespace(n=0) %}{% for r in [1, 2] %}{% set ns.n = ns.n + r %}"
     "{% endfor %}{{ ns.n }}", "3"),
    ("{{ job.labels.items() | list }}", "[('team', 'data')]"),
    ("{{ '%s-%d' | format(job.name, 7) }}", "probe-7"),
    ("{{ '{}/{}'.format(job.name, run.attempt) }}", "probe/1"),
    ("{{ [3, 1, 2] | sort | join(',') }}", "1,2,3"),
    ("{{ 3600 | duration }} {{ now | iso }}", "1h 2026-05-28T20:26:40+00:00"),
])
def test_ordinary_templates_still_work(template: str, expected: str,
                                       variables: dict[str, object]) -> None:
    assert render(template, variables, "f") == expected
