"""``reconciler run``: the daemon; ``reconciler trigger JOB``: run a job now."""

from __future__ import annotations

import argparse
from typing import Any

from reconciler.runtime.settings import Settings, resolve_settings

_FLAGS: list[tuple[str, str]] = [
    ("--specs", "spec directory (default ./specs)"),
    ("--state", "state directory (default ./.reconciler)"),
    ("--config", "YAML file of settings (or RECONCILER_CONFIG)"),
    ("--http", "serve the read-only HTTP API and /metrics, e.g. 127.0.0.1:8080 (off by default)"),
    ("--http-token-file", "file holding the bearer token for POST .../trigger"),
    ("--log-format", "text (default) or json"),
    ("--shutdown-grace", "how long running jobs get on SIGTERM (default 30s)"),
    ("--resync-interval", "re-read the specs at least this often (default 60s)"),
    ("--debounce", "quiet time that ends a burst of file events (default 1s)"),
    ("--max-concurrent-runs", "runs in flight at once, all jobs together (default 4)"),
    ("--stuck-after", "clear a run marked running for longer than this (default 2h)"),
    ("--arm-ahead", "decide and record an on-time run this long before its slot, so it "
                    "starts on the dot (default 500ms; 0 = at the slot)"),
    ("--git-url", "clone this repository into --specs and fast-forward it (system git)"),
    ("--git-ref", "branch to follow with --git-url (default main)"),
    ("--git-interval", "how often to fetch with --git-url (default 1m)"),
    ("--run-for", "stop by itself after this long (demos and smoke tests)"),
    ("--alert-channel", "Channel for failure alerts of jobs that name none"),
]


def register(subparsers: Any) -> None:
    run: argparse.ArgumentParser = subparsers.add_parser(
        "run", help="the daemon: watch specs, reconcile, schedule, execute, deliver",
        description="Run the reconciler until SIGTERM/SIGINT. Settings: flags, then "
                    "RECONCILER_* environment variables, then the --config file.")
    for flag, text in _FLAGS:
        run.add_argument(flag, default=None, help=text)
    run.set_defaults(handler=run_daemon_command)


def flag_values(args: argparse.Namespace) -> dict[str, Any]:
    return {flag[2:].replace("-", "_"): getattr(args, flag[2:].replace("-", "_"))
            for flag, _ in _FLAGS}


def run_daemon_command(args: argparse.Namespace) -> int:
    from reconciler.runtime.daemon import run_daemon

    settings: Settings = resolve_settings(flag_values(args))
    return run_daemon(settings)
