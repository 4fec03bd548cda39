"""The bundled http and message examples, run by the real daemon: the http job calls a local
server with its secret header, the message job's text is delivered to its channel."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.daemon.harness import cli_json, running, wait_for
from tests.delivery.receiver import Receiver, serving

EXAMPLES = Path(__file__).resolve().parents[2] / "specs" / "examples"


def test_http_and_message_examples_run_and_deliver(tmp_path: Path) -> None:
    specs, state = tmp_path / "specs", tmp_path / "state"
    shutil.copytree(EXAMPLES, specs)
    with serving(Receiver()) as receiver:
        http = specs / "executors" / "http.yaml"
        http.write_text(http.read_text().replace("http://127.0.0.1:8080/",
                                                 f"{receiver.url}/health"))
        discord_url = tmp_path / "discord-webhook-url"
        discord_url.write_text(f"{receiver.url}/discord\n")
        discord = specs / "channels" / "discord.yaml"
        discord.write_text(discord.read_text().replace("/run/secrets/discord-webhook-url",
                                                       str(discord_url)))
        env = {"HEALTH_CHECK_TOKEN": "t0ken"}
        with running(specs, state, tmp_path / "daemon.log", env=env):
            for job in ("local-health-check", "friday-deploy-freeze"):
                answer = cli_json("trigger", job, "--state", str(state))
                assert answer["status"] == "started", answer
            for job in ("local-health-check", "friday-deploy-freeze"):
                runs = wait_for(lambda job=job: [r for r in cli_json(
                    "history", job, "--state", str(state))["runs"] if r["status"] == "ok"],
                    10, f"{job} to succeed")
                assert runs[0]["trigger"] == "manual"
            wait_for(lambda: any(r.path == "/discord" for r in receiver.requests), 15,
                     "the message to reach its channel")
            # Status and history show the run's delivery, as delivered once acknowledged.
            wait_for(lambda: cli_json("history", "friday-deploy-freeze", "--state", str(state))
                     ["runs"][0]["delivery"] == "delivered", 10, "the delivery recorded")
            status = cli_json("status", "friday-deploy-freeze", "--state", str(state),
                              "--specs", str(specs))
            assert status["jobs"][0]["lastDelivery"] == "delivered"
            health = cli_json("history", "local-health-check", "--state", str(state))
            assert health["runs"][0]["delivery"] == "not-requested"
        call = next(r for r in receiver.requests if r.path == "/health")
        assert call.header("Authorization") == "t0ken"
        assert call.query == {"probe": ["local-health-check"]}
        message = next(r for r in receiver.requests if r.path == "/discord")
        assert "Deploy freeze starts now" in message.json()["content"]
        assert message.header("Idempotency-Key")
