from __future__ import annotations

from reconciler.cli import main

raise SystemExit(main())
