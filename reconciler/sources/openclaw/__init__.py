"""Import an OpenClaw cron store (``~/.openclaw/cron/jobs.json``) as reconciler specs and state.

    reader      jobs.json (JSON5) + jobs-state.json (the split form) -> raw jobs
    normalize   the 25 ``openclaw doctor --fix`` normalisations (+ _schedule, _payload)
    names       free-text names -> unique DNS-1123 labels
    mapping     a job -> ScheduledJob document (+ mapping_run for payloads)
    channels    delivery / failureAlert targets -> Channel documents and references
    state       runtime state -> JobState (+ the last run) for the state store; pure
    importer    all of the above for a whole store, every job accounted for
    emit        YAML files with comments; report: the summary and its JSON

Writing the state into the store happens in the command (``cli/import_cmd``): this package
may not import the store.
"""
