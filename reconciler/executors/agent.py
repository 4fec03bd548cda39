"""The ``agent`` executor: one chat completion against an OpenAI-compatible endpoint.

``POST {endpoint}/chat/completions`` with the system prompt of ``agent_prompt`` (time context,
memory, result protocol, the spec's own ``system``) and the rendered ``prompt``; the API key
(a secret reference) goes in ``Authorization: Bearer``. When the model itself is the problem
(404, or a client error that names the model) the ``fallbackModels`` are tried in order; a
rate limit, an overload, a server or network error is classified and returned instead, for the
retry policy (a different model would not fix the endpoint). A reply that only acknowledges
the task gets exactly one follow-up turn. Works with Ollama, vLLM, llama.cpp's server and
hosted APIs alike: only the endpoint, model and key differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from reconciler.core.errorclass import classify_http_status, classify_text
from reconciler.errors import PermanentError
from reconciler.executors.agent_prompt import (
    FOLLOW_UP,
    AgentReply,
    is_interim,
    parse_reply,
    strip_reasoning,
    system_prompt,
)
from reconciler.executors.base import RunContext, RunResult
from reconciler.executors.httpclient import (
    Deadline,
    HttpRequest,
    HttpResponse,
    HttpTransportError,
    connect_timeout_for,
    send,
)
from reconciler.executors.secrets import SecretResolver
from reconciler.executors.templates import UNTRUSTED_NONCE, render, template_context
from reconciler.model.enums import ErrorClass
from reconciler.model.run import AgentRun

OUTPUT_LIMIT = 16000  # characters of the reply kept as the run's output
_ERROR_EXCERPT = 300

Message = dict[str, str]


@dataclass(frozen=True)
class _Call:
    """Everything one run sends, prepared before the first request."""

    url: str
    headers: dict[str, str]
    messages: list[Message]
    connect_timeout: float
    deadline: Deadline


@dataclass(frozen=True)
class _Completion:
    model: str
    text: str


class AgentExecutor:
    def __init__(self, secrets: SecretResolver | None = None) -> None:
        self._secrets = secrets or SecretResolver()

    async def execute(self, context: RunContext) -> RunResult:
        spec = context.job.spec.run.agent
        if spec is None:
            return RunResult("error", error="not an agent job", error_class=ErrorClass.PERMANENT)
        try:
            call = self._prepare(spec, context)
        except PermanentError as exc:
            return RunResult("error", error=str(exc), error_class=ErrorClass.PERMANENT)
        models = [spec.model, *spec.fallback_models]
        first = await _complete(spec, call, models, context)
        if isinstance(first, RunResult):
            return first
        if not _interim(first.text):
            return _result(first, followed_up=False)
        # One follow-up turn, to the model that answered; never a second.
        followed = replace(call, messages=[*call.messages,
                                           {"role": "assistant", "content": first.text},
                                           {"role": "user", "content": FOLLOW_UP}])
        second = await _complete(spec, followed, [first.model], context)
        return second if isinstance(second, RunResult) else _result(second, followed_up=True)

    def _prepare(self, spec: AgentRun, context: RunContext) -> _Call:
        # Load the memory once: the template context and the system prompt both show it.
        runs = context.recent_runs(max(spec.memory, 1))
        cached = replace(context, memory=lambda count: runs[:count])
        variables = template_context(cached, memory=spec.memory)
        prompt = render(spec.prompt, variables, "run.agent.prompt")
        extra = None if spec.system is None else render(spec.system, variables,
                                                        "run.agent.system")
        nonce = str(variables[UNTRUSTED_NONCE])
        uses_markers = nonce in prompt or (extra is not None and nonce in extra)
        system = system_prompt(context, runs, spec.memory, extra,
                               nonce if uses_markers else None)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if spec.api_key is not None:
            headers["Authorization"] = f"Bearer {self._secrets.resolve(spec.api_key)}"
        url = spec.endpoint.rstrip("/") + "/chat/completions"
        return _Call(url, headers, [{"role": "system", "content": system},
                                    {"role": "user", "content": prompt}],
                     connect_timeout_for(None, context.timeout), Deadline.after(context.timeout))


def _interim(text: str) -> bool:
    reply = parse_reply(text)
    if reply is None:
        return is_interim(text)
    # A protocol reply that handled nothing and says it will get back is still a stall.
    return reply.processed is None and not reply.errors and is_interim(reply.summary)


async def _complete(spec: AgentRun, call: _Call, models: list[str],
                    context: RunContext) -> _Completion | RunResult:
    """The first model that answers; a model error moves on to the next one."""
    failures: list[str] = []
    for model in models:
        outcome = await _ask(spec, call, model, context)
        if isinstance(outcome, _Completion):
            return outcome
        result, model_error = outcome
        if not model_error or model == models[-1]:
            return _with_failures(result, failures)
        failures.append(f"{model}: {result.error}")
    raise AssertionError("unreachable: models is never empty")


def _with_failures(result: RunResult, failures: list[str]) -> RunResult:
    if not failures:
        return result
    tried = "; ".join(failures)
    return replace(result, error=f"{result.error} (after fallbacks: {tried})")


async def _ask(spec: AgentRun, call: _Call, model: str,
               context: RunContext) -> _Completion | tuple[RunResult, bool]:
    payload: dict[str, Any] = {"model": model, "messages": call.messages, "stream": False}
    if spec.temperature is not None:
        payload["temperature"] = spec.temperature
    if spec.max_tokens is not None:
        payload["max_tokens"] = spec.max_tokens
    request = HttpRequest("POST", call.url, call.headers,
                          content=json.dumps(payload).encode("utf-8"))
    try:
        response = await send(request, connect_timeout=call.connect_timeout,
                              read_timeout=call.deadline.remaining())
    except HttpTransportError as exc:
        return RunResult("error", error=f"model {model} at {call.url}: {exc}",
                         error_class=exc.error_class), False
    return _read(response, model, context.started_at)


def _read(response: HttpResponse, model: str,
          started_at: float) -> _Completion | tuple[RunResult, bool]:
    body = response.json()
    text = _content(body) if 200 <= response.status <= 299 else None
    if text:
        return _Completion(model, text)
    message = _error_message(body, response)
    error_class = classify_http_status(response.status) or classify_text(message)
    model_error = error_class is ErrorClass.PERMANENT and (
        response.status == 404 or "model" in message.lower())
    result = RunResult("error", error=f"model {model}: HTTP {response.status}: {message}",
                       error_class=error_class, retry_after=response.retry_after(started_at))
    return result, model_error


def _content(body: Any) -> str | None:
    """The assistant's text from a chat completion body, or None if it has none."""
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return strip_reasoning(content) if isinstance(content, str) and content.strip() else None


def _error_message(body: Any, response: HttpResponse) -> str:
    if isinstance(body, dict):
        error = body.get("error", body.get("detail"))
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str) and error:
            return error
        if "choices" in body:
            return "the model returned an empty reply"
    excerpt = " ".join(response.text()[:_ERROR_EXCERPT].split())
    return excerpt or response.reason or "no reply"


def _result(completion: _Completion, followed_up: bool) -> RunResult:
    text = completion.text
    output = text[:OUTPUT_LIMIT]
    reply = parse_reply(text)
    if followed_up and _interim(text):
        return RunResult("error", summary=_first_line(text), output=output,
                         error="the agent only acknowledged the task, twice, and gave no result",
                         error_class=ErrorClass.PERMANENT)
    if reply is None:
        return RunResult("ok", summary=text, output=output)
    return _structured(reply, output)


def _structured(reply: AgentReply, output: str) -> RunResult:
    data = reply.as_data()
    if reply.status == "ok":
        return RunResult("ok", summary=reply.summary, output=output, data=data)
    error = "; ".join(reply.errors) or reply.summary or "the agent reported an error"
    return RunResult("error", summary=reply.summary, output=output, data=data, error=error,
                     error_class=classify_text(error))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
