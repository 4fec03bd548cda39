"""Pydantic spec models (ScheduledJob, Channel) and the value types they are built from."""
