"""The ``Channel`` spec: a chat service's incoming webhook or bot, or a generic webhook."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from reconciler.model.base import SpecModel
from reconciler.model.enums import ChannelType
from reconciler.model.secrets import SecretValue


class ChannelSpec(SpecModel):
    type: ChannelType = Field(
        description="slack, discord, feishu, dingtalk, wecom, telegram or webhook."
    )
    url: SecretValue | None = Field(
        default=None,
        description="Incoming-webhook URL (it usually embeds a token: use a reference).",
    )
    secret: SecretValue | None = Field(
        default=None, description="Signing secret (feishu, dingtalk, webhook HMAC)."
    )
    token: SecretValue | None = Field(default=None, description="Bot token (telegram).")
    chat_id: str | None = Field(default=None, description="Chat id (telegram).")
    headers: dict[str, SecretValue] = Field(
        default_factory=dict, description="Extra headers (webhook)."
    )
    format: str | None = Field(default=None, description="Default message template.")
    link: str | None = Field(default=None, description="A link added to messages (a template).")

    @model_validator(mode="after")
    def _required_per_type(self) -> Self:
        if self.type is ChannelType.TELEGRAM:
            if self.token is None or self.chat_id is None:
                raise ValueError("a telegram channel needs token and chatId")
        elif self.url is None:
            raise ValueError(f"a {self.type.value} channel needs url (e.g. url: {{fromEnv: X}})")
        if self.chat_id is not None and self.type is not ChannelType.TELEGRAM:
            raise ValueError("chatId only applies to telegram channels")
        return self
