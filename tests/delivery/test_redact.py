"""No token or secret of a URL or a header in any text the delivery layer lets out."""

from __future__ import annotations

import pytest

from reconciler.delivery.redact import redact_url, scrub

CASES = {
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX":
        "https://hooks.slack.com/services/T00000000/B00000000/***",
    "https://discord.com/api/webhooks/123456789012345678/AbCdEf0123456789-ghIJKLmnopQRstu_vwx":
        "https://discord.com/api/webhooks/123456789012345678/***",
    "https://open.feishu.cn/open-apis/bot/v2/hook/5e3d587e-d78e-4a07-bd07-265f269f86fd":
        "https://open.feishu.cn/open-apis/bot/v2/hook/***",
    "https://oapi.dingtalk.com/robot/send?access_token=50cb6e954c89afa14fb97754eafd886d":
        "https://oapi.dingtalk.com/robot/send",
    "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a91f6-7xxx-4bc4-97a0-0ec2sifa5aaa":
        "https://qyapi.weixin.qq.com/cgi-bin/webhook/send",
    "https://api.telegram.org/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/sendMessage":
        "https://api.telegram.org/bot***/sendMessage",
    "https://user:p4ssw0rd@example.com:8443/hooks/reconciler?sig=abc#frag":
        "https://example.com:8443/hooks/reconciler",
    "http://127.0.0.1:9000/": "http://127.0.0.1:9000/",
    "not a url": "***",
    "https://[::1:bad": "***",
}  # fmt: skip


@pytest.mark.parametrize(("url", "shown"), CASES.items())
def test_redact_url_shows_scheme_host_and_path_only(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_scrub_redacts_urls_and_masks_secret_values_in_any_text() -> None:
    text = ("POST https://hooks.example.com/x?token=s3cr3t-t0ken failed; "
            "header Authorization: Bearer hunter22 rejected")
    cleaned = scrub(text, ["hunter22", "ok"])
    assert "s3cr3t" not in cleaned and "hunter22" not in cleaned
    assert "https://hooks.example.com/x failed" in cleaned and "Bearer ***" in cleaned
    assert scrub("all ok", ["ok"]) == "all ok"  # too short to be a secret worth masking
