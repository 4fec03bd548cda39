"""The ``message`` executor: the rendered ``text`` is the run's result (a reminder).

No process and no network: the text becomes the output and the summary, and delivery sends
it. The run fails only when the template does (with the template error and its position).
"""

from __future__ import annotations

from reconciler.executors.base import RunContext, RunResult
from reconciler.executors.templates import TemplateRenderError, render, template_context
from reconciler.model.enums import ErrorClass


class MessageExecutor:
    async def execute(self, context: RunContext) -> RunResult:
        spec = context.job.spec.run.message
        if spec is None:
            return RunResult("error", error="not a message job",
                             error_class=ErrorClass.PERMANENT)
        try:
            text = render(spec.text, template_context(context), "run.message.text")
        except TemplateRenderError as exc:
            return RunResult("error", error=str(exc), error_class=ErrorClass.PERMANENT)
        return RunResult("ok", summary=text, output=text)
