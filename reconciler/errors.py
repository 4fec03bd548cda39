"""The whole exception tree, named by what happens next.

    ReconcilerError                      base of everything we raise on purpose
    ├── SpecError                        the spec is wrong: wait for a spec change
    │   └── SpecLoadError                a file cannot be read or parsed at all
    ├── ScheduleError                    a next fire cannot be computed (counts toward auto-disable)
    ├── TransientError                   back off and retry (rate limit, network, 5xx, timeout)
    ├── PermanentError                   give up on this attempt (bad credentials, 4xx)
    ├── DeliveryError                    a result could not be delivered; never fails a run
    ├── StateError                       the state directory cannot be used as asked
    │   ├── StateLockedError             another writer holds the state directory
    │   └── StateVersionTooNew           written by a newer reconciler: refuse to start
    └── UsageError                       the command line is wrong (exit code 2)

Adapters translate foreign exceptions at the boundary (``raise SpecError(...) from exc``), so
callers only ever catch these.
"""

from __future__ import annotations


class ReconcilerError(Exception):
    """Base class of every error the reconciler raises on purpose."""


class SpecError(ReconcilerError):
    """A spec is invalid; nothing will change until the spec does."""


class SpecLoadError(SpecError):
    """A spec file or directory cannot be read."""


class ScheduleError(ReconcilerError):
    """The next fire of a job cannot be computed."""


class TransientError(ReconcilerError):
    """A failure worth retrying after a backoff."""


class PermanentError(ReconcilerError):
    """A failure that retrying will not fix."""


class DeliveryError(ReconcilerError):
    """A delivery failed; recorded on the run, never fails the run itself."""


class StateError(ReconcilerError):
    """The state directory cannot be used as asked."""


class StateLockedError(StateError):
    """Another writer already holds the state directory."""


class StateVersionTooNew(StateError):
    """The state was written by a newer reconciler than this one."""


class UsageError(ReconcilerError):
    """The command line is wrong."""
