"""Shared helpers of the store tests: directory snapshots, database dumps, fixtures, processes."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from reconciler.store.files import FILE_MODE, create_private_file

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
WRITER_PROC = HERE / "writer_proc.py"
REPO = HERE.parent.parent


def snapshot(directory: Path) -> dict[str, Any]:
    """Every entry of ``directory``: its bytes (hashed), size, mode and mtime; and the dir's own."""
    entries: dict[str, Any] = {".": (os.stat(directory).st_mtime_ns, os.stat(directory).st_mode)}
    for name in sorted(os.listdir(directory)):
        path = directory / name
        info = os.stat(path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        entries[name] = (digest, info.st_size, info.st_mode, info.st_mtime_ns)
    return entries


def dump(conn: sqlite3.Connection) -> dict[str, Any]:
    """A comparable picture of a database: user_version, each table's columns and sorted rows."""
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    picture: dict[str, Any] = {"user_version": conn.execute("PRAGMA user_version").fetchone()[0]}
    picture["indexes"] = sorted(
        row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
    )
    for table in tables:
        columns = [tuple(row) for row in conn.execute(f"PRAGMA table_info({table})")]
        rows = sorted(
            (tuple(row) for row in conn.execute(f"SELECT * FROM {table}")), key=repr
        )
        picture[table] = (columns, rows)
    return picture


def fixture_sql(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def load_fixture_memory(name: str) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(fixture_sql(name))
    return conn


def load_fixture_file(name: str, db: Path) -> None:
    """Write fixture ``name`` as a database file at ``db`` (rollback mode, mode 0600)."""
    db.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    create_private_file(db)
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.executescript(fixture_sql(name))
    finally:
        conn.close()
    assert os.stat(db).st_mode & 0o777 == FILE_MODE


class WriterProcess:
    """``writer_proc.py`` in a real subprocess, driven line by line over stdin/stdout."""

    def __init__(self, state_dir: Path, *args: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER_PROC), str(state_dir), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env,
        )  # fmt: skip
        self.banner = self.read()

    def read(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def ask(self, command: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self.read()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.ask("quit")
        code = self.proc.wait(timeout=30)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return code
