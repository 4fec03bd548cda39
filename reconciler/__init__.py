"""reconciler: a declarative GitOps job-spec reconciler."""

from __future__ import annotations

__version__ = "0.1.0"
API_GROUP = "reconciler.dev"
API_VERSION = f"{API_GROUP}/v1"
