"""The incremental sessions' change feed and what reads it: ``mirror`` (a cluster's snapshot kept in the process and
brought up to date from the ``RowChange`` rows the database triggers log) and ``affinity`` (a cluster's sessions
sent to the process that holds its mirror). The engine's side is ``engine.session.carry``; the whole subsystem is
described in ``docs/incremental-sessions.md``."""
