"""Deprecated: ``scrub(data)`` is ``migrate.source.SourceFile(data)`` (``.code``: comments and
literals blanked).  Kept only for migrate/checks/mps018 until it imports migrate.source."""
from migrate.source import SourceFile as scrub  # noqa: F401
