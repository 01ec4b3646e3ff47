"""What the store's modules share: the statuses as the rows spell them, the row ids a read hands to the write,
JSON columns parsed once per distinct text, reading a big query while the engine works, and PostgreSQL's arrays."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from queue import SimpleQueue
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import FloatField, Func, QuerySet, TextField
from django.db.models.functions import Cast

from engine.manifests.core import read_node_selector_terms
from engine.objects import (
    NodeAffinity,
    Toleration,
)
from engine.resources import ResourceList
from scheduling.choices import FINISHED_POD_STATUSES, PodStatus

logger = logging.getLogger(__name__)


FINISHED_DB_STATUSES = FINISHED_POD_STATUSES


# Statuses that hold resources on a node and may be evicted into Releasing.
ALLOCATED_DB_STATUSES = (PodStatus.ALLOCATED, PodStatus.BINDING, PodStatus.BOUND, PodStatus.RUNNING)


SCHEDULED_CONDITION_REASON = "tasks in gang are ready to be scheduled"  # Volcano gang plugin's wording


BATCH = 500


class JsonCache:
    """Parse each distinct JSON text once (pods share a few requests, selectors and tolerations)."""

    def __init__(self) -> None:
        self.values: dict[str | None, Any] = {None: None, "{}": {}, "[]": []}
        self.resources: dict[str | None, ResourceList] = {None: ResourceList(), "{}": ResourceList()}
        self.tolerations: dict[str | None, tuple[Toleration, ...]] = {None: (), "[]": ()}
        self.affinities: dict[str | None, NodeAffinity] = {None: (), "[]": ()}

    def value(self, text: str | None) -> Any:
        try:
            return self.values[text]
        except KeyError:
            parsed = json.loads(text)  # type: ignore[arg-type]
            self.values[text] = parsed
            return parsed

    def resource_list(self, text: str | None) -> ResourceList:
        try:
            return self.resources[text]
        except KeyError:
            data = self.value(text) or {}
            rl = ResourceList({str(k): int(v) for k, v in data.items()})
            self.resources[text] = rl
            return rl

    def node_affinity(self, text: str | None) -> NodeAffinity:
        """A pod's stored required node affinity (``Pod.node_affinity``: Kubernetes' ``nodeSelectorTerms``)."""
        try:
            return self.affinities[text]
        except KeyError:
            terms = self.value(text)
            out = read_node_selector_terms(terms, "node_affinity") if terms else ()
            self.affinities[text] = out
            return out

    def toleration_tuple(self, text: str | None) -> tuple[Toleration, ...]:
        try:
            return self.tolerations[text]
        except KeyError:
            out = tuple(
                Toleration(
                    key=t.get("key", "") or "",
                    operator=t.get("operator", "Equal") or "Equal",
                    value=t.get("value", "") or "",
                    effect=t.get("effect", "") or "",
                    toleration_seconds=t.get("toleration_seconds", t.get("tolerationSeconds")),
                )
                for t in (self.value(text) or [])
            )
            self.tolerations[text] = out
            return out


def as_text(field: str) -> Cast:
    return Cast(field, output_field=TextField())


def timestamp(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def parse_time(value: object) -> float | None:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class RowIds:
    """Primary keys of what a snapshot holds, so that writing its decisions needs no name lookups."""

    pods: Mapping[str, int]  # task uid -> Pod pk
    nodes: Mapping[str, int]  # node name -> Node pk


class Epoch(Func):
    """A datetime column as float seconds since the epoch (much cheaper to read than datetimes)."""

    output_field = FloatField()

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:  # SQLite and others
        sql, params = compiler.compile(self.source_expressions[0])
        return f"((julianday({sql}) - 2440587.5) * 86400.0)", list(params)

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        return f"EXTRACT(EPOCH FROM {sql})::float8", list(params)


def fetch_all(qs: QuerySet[Any]) -> list[tuple[Any, ...]]:
    """The rows of a ``values_list`` queryset in one ``fetchall`` (no per-row converters: every column read this
    way is an int, a bool, a float or text)."""
    sql, params = qs.query.get_compiler(using=qs.db).as_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


class SharedConnectionThread:
    """A thread that works on the starting thread's database connection, inside its open transaction (Django's
    thread sharing, as its live-server tests use): its ORM and ``connection`` are the starter's. The starter must
    not use the connection from ``start`` until ``join`` has returned; a PostgreSQL connection runs one statement
    at a time, so the two take turns, the thread's statements running while the starter computes."""

    def __init__(self, name: str, work: Callable[[], None]) -> None:
        self._connection = connections[DEFAULT_DB_ALIAS]
        self._work = work
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.joined = False

    def start(self) -> None:
        self._connection.inc_thread_sharing()
        self._thread.start()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def join(self) -> None:
        if not self.joined:
            self._thread.join()
            self.joined = True
            self._connection.dec_thread_sharing()

    def _run(self) -> None:
        connections[DEFAULT_DB_ALIAS] = self._connection
        self._work()


@contextmanager
def fetched_meanwhile(qs: QuerySet[Any], chunk: int = 5000) -> Iterator[Iterator[list[tuple[Any, ...]]]]:
    """The rows of a ``values_list`` queryset (as ``fetch_all``), ``chunk`` at a time, fetched by a thread while
    the caller works on the chunks already there: on PostgreSQL through a server-side cursor, so that the server
    produces the next rows while the caller turns the last ones into objects (a full read of 50,000 pods waited
    0.1 s for the query before it began). The thread uses the caller's connection and transaction; the caller must
    not use that connection inside the block. Elsewhere, or where server-side cursors are off (a transaction-mode
    connection pooler: Django's ``DISABLE_SERVER_SIDE_CURSORS``), one ``fetchall``."""
    if not is_postgres() or connection.settings_dict.get("DISABLE_SERVER_SIDE_CURSORS"):
        yield iter([fetch_all(qs)])
        return
    sql, params = qs.query.get_compiler(using=qs.db).as_sql()
    out: SimpleQueue[Any] = SimpleQueue()
    stop = threading.Event()

    def fetch() -> None:
        try:
            with connection.chunked_cursor() as cursor:
                cursor.execute(sql, params)
                while not stop.is_set():
                    rows = cursor.fetchmany(chunk)
                    if not rows:
                        break
                    out.put(rows)
        except BaseException as exc:  # raised again in the caller's thread
            out.put(exc)
        out.put(END)

    def chunks() -> Iterator[list[tuple[Any, ...]]]:
        while (item := out.get()) is not END:
            if isinstance(item, BaseException):
                raise item
            yield item

    thread = SharedConnectionThread("fairway-read", fetch)
    thread.start()
    try:
        yield chunks()
    finally:
        stop.set()
        thread.join()


def split_uid(uid: str) -> tuple[str, str]:
    ns, _, name = uid.partition("/")
    return ns, name


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


def pg_array(values: Iterable[Any]) -> str:
    """A PostgreSQL array literal (``{1,2,"text",NULL}``) of ints, strings, datetimes or None, to be cast to an
    array type in the query: one string parameter instead of a list the driver would quote element by element
    (the bindings of a 50,000-pod session spent a fifth of their time there)."""
    parts: list[str] = []
    add = parts.append
    for v in values:
        if v is None:
            add("NULL")
        elif type(v) is int:
            add(str(v))
        else:
            text = v.isoformat() if isinstance(v, datetime) else str(v)
            add('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return "{" + ",".join(parts) + "}"


def pg_int_array(values: Iterable[int]) -> str:
    return "{" + ",".join(map(str, values)) + "}"


END = object()  # the last item of a queue a thread reads
