"""The command executor's pure helpers: capture bounds, the RESULT file, env, exit status."""

from __future__ import annotations

import pytest

from reconciler.executors.command import (
    ResultReport,
    build_env,
    describe_exit,
    exit_error_class,
    parse_result_file,
)
from reconciler.executors.process import Capture
from reconciler.model.enums import ErrorClass
from tests.executors.command_support import context


def test_capture_keeps_a_quarter_head_and_the_rest_as_tail() -> None:
    capture = Capture(16)
    for chunk in (b"abc", b"defghij", b"klmnopqrstuvwxyz"):
        capture.feed(chunk)
    assert capture.total == 26 and capture.elided == 10
    assert capture.text() == "abcd\n[... 10 bytes elided ...]\nopqrstuvwxyz"
    assert capture.tail_text(5) == "vwxyz"


def test_capture_below_the_limit_is_the_whole_stream() -> None:
    capture = Capture(16)
    capture.feed(b"0123456789")  # spans the head and the tail buffers
    assert capture.elided == 0
    assert capture.text() == "0123456789" and capture.tail_text(100) == "0123456789"


def test_capture_replaces_a_cut_multibyte_character() -> None:
    capture = Capture(9)  # head 2 bytes, tail 7: the tail starts mid-character
    capture.feed("ééééééé".encode())
    assert capture.text().startswith("é\n[... ")
    assert capture.text().endswith("\ufffdééé")


def test_parse_result_file() -> None:
    assert parse_result_file("") is None and parse_result_file(" \n") is None
    assert parse_result_file('{"data": [1]}') == ResultReport(data=[1])
    assert parse_result_file('{"status": "error", "error": "x", "extra": 1}') == \
        ResultReport(status="error", error="x")
    with pytest.raises(ValueError, match="summary must be a string"):
        parse_result_file('{"summary": 3}')


def test_describe_exit() -> None:
    assert describe_exit(2) == "exit code 2"
    assert describe_exit(-15) == "killed by signal SIGTERM (15)"
    assert describe_exit(-200) == "killed by signal an unknown signal (200)"


def test_exit_error_class_prefers_the_spec_mapping_over_the_text() -> None:
    codes = {75: ErrorClass.OVERLOADED}
    assert exit_error_class(75, codes, "429 too many") is ErrorClass.OVERLOADED
    assert exit_error_class(1, codes, "429 too many") is ErrorClass.RATE_LIMIT
    assert exit_error_class(1, codes, "bad input") is ErrorClass.PERMANENT


def test_build_env_puts_the_run_identity_last() -> None:
    env = build_env({"HOME": "/h", "RECONCILER_STATE": "/s"}, {"RECONCILER_ATTEMPT": "9"},
                    context({"command": ["true"]}, attempt=4, trigger="retry"), "/r")
    assert env["HOME"] == "/h" and "RECONCILER_STATE" not in env
    assert env["RECONCILER_ATTEMPT"] == "4" and env["RECONCILER_TRIGGER"] == "retry"
    assert env["RECONCILER_RESULT"] == "/r"
