"""A writer process for the store tests: opens a state directory and obeys stdin line by line.

Usage: ``writer_proc.py STATE_DIR``. Prints ``ready <pid>`` once the writer is open, or the
``StateLockedError`` message on stderr and exits 1 (what the daemon does). Commands, each
answered by one line: ``run ID`` (start + finish one run, ``committed ID``), ``begin ID`` (start a
run inside a transaction left open, ``open``), ``commit`` (``committed``), ``quit``.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack

from reconciler.clock import SystemClock
from reconciler.errors import StateLockedError
from reconciler.model.state import JobState, RunFinish, RunStart
from reconciler.store import StateWriter


def main(state_dir: str) -> int:
    clock = SystemClock()
    try:
        writer = StateWriter.open(state_dir, now=clock.now())
    except StateLockedError as exc:
        print(exc, file=sys.stderr)
        return 1
    held = ExitStack()
    print(f"ready {writer.holder.pid}", flush=True)
    for line in sys.stdin:
        command, _, arg = line.strip().partition(" ")
        if command == "run":
            now = clock.now()
            writer.put_job(JobState(arg.split("/")[0]))
            writer.start_run(RunStart(arg, arg.split("/")[0], f"k-{arg}", now, now))
            writer.finish_run(RunFinish(arg, arg.split("/")[0], now + 1, "ok", summary=arg))
            print(f"committed {arg}", flush=True)
        elif command == "begin":
            tx = held.enter_context(writer.transaction())
            now = clock.now()
            tx.start_run(RunStart(arg, arg.split("/")[0], f"k-{arg}", now, now))
            print("open", flush=True)
        elif command == "commit":
            held.close()
            print("committed", flush=True)
        elif command == "quit":
            break
    held.close()
    writer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
