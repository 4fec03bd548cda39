"""cron-1k: 1,000 jobs on a per-second cron (``* * * * * *``), reconciler vs APScheduler 3.

    .venv/bin/python -m bench.cron                              # 1,000 jobs, 10 s, 3 reps
    .venv/bin/python -m bench.cron --jobs 50 --seconds 2 --reps 1

The variant chosen: per-second cron, not per-minute cron staggered over the minute. It puts
the same load as fire-1k (1,000 fires every second) through the cron path instead of the
interval path, so the two tables compare directly, and a 10 s window sees 10,000 fires where
the per-minute form would need minutes per repetition. The reconciler's job opts in to the
sixth (seconds) field (``withSeconds: true``) and gets no stagger (it is not a top-of-hour
expression); APScheduler's is ``CronTrigger(second="*")``. Everything else is ``bench.fire``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from bench import fire


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--seconds" not in args and "--child" not in args:
        args += ["--seconds", "10"]
    if "--contenders" not in args and "--child" not in args and fire.peers_available():
        args += ["--contenders", "reconciler,aps-memory"]
    return fire.main(args, kind="cron")


if __name__ == "__main__":
    sys.exit(main())
