"""A live session's inputs recorded so that it can be run again exactly (``fairway replay session ID``).

The live loop feeds the engine one ``Snapshot`` per session. Recording them all in full would cost the session too
much (a 20,000-node snapshot takes seconds to serialise), so a **keyframe** (the whole snapshot) is written now and
then, and between keyframes a **delta**: what changed since the snapshot the previous record holds. The mirror that
makes the snapshots keeps the same object for every row that did not change (``scheduling.feed.mirror``), so the
changed pods, podgroups and nodes are found by identity, with no comparison of their fields; the other parts of a
snapshot (the trees, the policy, the past usage: small) are compared as serialised when their object is not the same.

Pure (no Django): ``Recorder`` turns snapshots into payloads (bytes, zlib-compressed pickles of the engine's own
objects, in columns for the big mappings: a ``ResourceList`` pickled through its own machinery costs ten times its
dictionary), ``rebuild`` turns a keyframe and its deltas back into the snapshot, key order included (the engine's
ties follow it). ``compact_decisions`` / ``differences`` give and compare what a session decided.

The payloads are read back with an unpickler that loads only the engine's classes and a few builtins
(``_Loader``): a row altered in the database cannot make the reader run anything else.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import operator
import pickle
import zlib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import chain, compress, filterfalse
from typing import Any

import orjson

from engine.objects import NodeInfo, PodGroupInfo, Snapshot, TaskInfo
from engine.resources import ResourceList
from engine.session.decisions import SessionResult

__all__ = [
    "FORMAT",
    "RecordError",
    "Recorder",
    "compact_decisions",
    "decisions_digest",
    "differences",
    "dump_decisions",
    "load_decisions",
    "rebuild",
]

FORMAT = 1
LEVEL = 1  # zlib's fastest level: a tenth of the pickle's bytes at a twentieth of its time
# the big mappings, diffed by identity and stored in columns; every other field of a snapshot is stored whole
BIG: dict[str, type] = {"nodes": NodeInfo, "tasks": TaskInfo, "podgroups": PodGroupInfo}
FIELDS = tuple(f.name for f in dataclasses.fields(Snapshot) if f.init)
OTHER = tuple(name for name in FIELDS if name not in BIG)


class RecordError(Exception):
    """A payload that cannot be read back (another format, damaged, or naming what the engine does not define)."""


# -- columns ----------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Layout:
    """How one class's objects become rows: every init field read at once (``attrgetter``, in C), a
    ``ResourceList`` field as its dictionary (``_data``), wrapped again when read back."""

    cls: type
    names: tuple[str, ...]
    wrapped: tuple[int, ...]  # indexes of the fields stored as a ResourceList's dictionary
    get: Any

    @classmethod
    def of(cls, kind: type) -> _Layout:
        names: list[str] = []
        paths: list[str] = []
        wrapped: list[int] = []
        for f in dataclasses.fields(kind):
            if not f.init:
                continue
            names.append(f.name)
            if f.type == "ResourceList":  # always a ResourceList (the annotation allows nothing else)
                wrapped.append(len(paths))
                paths.append(f"{f.name}._data")
            else:
                paths.append(f.name)
        return cls(kind, tuple(names), tuple(wrapped), operator.attrgetter(*paths))

    def rows(self, values: Sequence[Any]) -> list[Any]:
        return list(map(self.get, values))

    def objects(self, rows: Iterable[Sequence[Any]]) -> list[Any]:
        kind, names, wrapped = self.cls, self.names, self.wrapped
        out = []
        for row in rows:
            values = list(row)
            for i in wrapped:
                values[i] = ResourceList.trusted(values[i])
            out.append(kind(**dict(zip(names, values, strict=True))))
        return out


_LAYOUTS = {name: _Layout.of(kind) for name, kind in BIG.items()}


def _encode_entries(name: str, keys: list[str], values: list[Any]) -> tuple[Any, ...]:
    """``(keys, rows)`` in columns, or ``(keys, objects)`` pickled as they are when one is not of the field's class
    exactly (then nothing is assumed about its fields)."""
    layout = _LAYOUTS[name]
    if all(type(v) is layout.cls for v in values):
        return ("rows", keys, layout.rows(values))
    return ("objects", keys, values)


def _decode_entries(name: str, entry: Sequence[Any]) -> dict[str, Any]:
    how, keys, payload = entry
    values = _LAYOUTS[name].objects(payload) if how == "rows" else list(payload)
    return dict(zip(keys, values, strict=True))


# -- payloads ---------------------------------------------------------------------------------------------------


def _dump(document: Mapping[str, Any]) -> bytes:
    return zlib.compress(pickle.dumps(dict(document), protocol=pickle.HIGHEST_PROTOCOL), LEVEL)


_SAFE_BUILTINS = frozenset({"frozenset", "set", "slice", "complex", "bytearray", "range"})
_SAFE = frozenset(
    {
        ("fractions", "Fraction"),
        ("decimal", "Decimal"),
        ("collections", "OrderedDict"),
        ("collections", "defaultdict"),
        ("datetime", "datetime"),
        ("datetime", "timedelta"),
        ("datetime", "timezone"),
        ("datetime", "date"),
        ("copyreg", "_reconstructor"),
        ("builtins", "object"),
    }
)


class _Loader(pickle.Unpickler):
    """Loads the engine's classes (``engine.*``) and a few value types only."""

    def find_class(self, module: str, name: str) -> Any:
        if (module == "builtins" and name in _SAFE_BUILTINS) or (module, name) in _SAFE:
            return super().find_class(module, name)
        if (module == "engine" or module.startswith("engine.")) and name.isidentifier() and not name.startswith("_"):
            # a class the engine defines, never a name it imported (a module, a function) nor a dotted path
            found = super().find_class(module, name)
            if isinstance(found, type) and found.__module__.split(".")[0] == "engine":
                return found
        raise RecordError(f"the payload names {module}.{name}, which a recorded session never holds")


def _load(payload: bytes) -> dict[str, Any]:
    try:
        document = _Loader(io.BytesIO(zlib.decompress(payload))).load()
    except RecordError:
        raise
    except Exception as exc:  # zlib.error, pickle.UnpicklingError, EOFError, ...
        raise RecordError(f"the payload cannot be read ({type(exc).__name__}: {exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise RecordError(f"the payload is not a recorded session of format {FORMAT}")
    return document


# -- recording --------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Delta:
    """What changed between two snapshots, ready to store: ``payload`` and how many entries it holds."""

    payload: bytes
    entries: int


class Recorder:
    """The state one cluster's recording keeps between sessions: the last snapshot recorded (its mappings, held by
    reference: they are the mirror's own, immutable objects) and the serialised form of its small fields.

    ``keyframe(snapshot)`` gives the whole snapshot's payload; ``delta(snapshot)`` the changes since the last one
    given to either (None when too much changed for a delta to be worth it: more than ``max_share`` of a big
    mapping's entries, as after a full read of the cluster, when every object is new)."""

    def __init__(self, max_share: float = 0.5) -> None:
        self.max_share = max_share
        self._last: dict[str, Any] | None = None
        self._blobs: dict[str, bytes] = {}

    @property
    def primed(self) -> bool:
        return self._last is not None

    def clear(self) -> None:
        self._last = None
        self._blobs = {}

    def _remember(self, snapshot: Snapshot, blobs: dict[str, bytes]) -> None:
        self._last = {name: getattr(snapshot, name) for name in FIELDS}
        self._blobs = blobs

    def keyframe(self, snapshot: Snapshot) -> bytes:
        fields: dict[str, Any] = {}
        for name in BIG:
            mapping = getattr(snapshot, name)
            fields[name] = _encode_entries(name, list(mapping), list(mapping.values()))
        blobs = {name: pickle.dumps(getattr(snapshot, name), protocol=pickle.HIGHEST_PROTOCOL) for name in OTHER}
        document = {"format": FORMAT, "kind": "keyframe", "big": fields, "other": blobs}
        payload = _dump(document)
        self._remember(snapshot, blobs)
        return payload

    def delta(self, snapshot: Snapshot, tasks_note: tuple[Any, Any, Any] | None = None) -> Delta | None:
        """The changes since the last snapshot given. ``tasks_note``: ``(base, tasks, changed)`` from the caller
        that made the snapshot (``scheduling.feed.mirror``): ``tasks`` differs from ``base`` only at the uids in
        ``changed``, the others kept in their relative order, the uids stored anew appended at the end; when ``base``
        is the last snapshot's pods and ``tasks`` this one's, the pods are diffed by it (the uids it names only)."""
        last = self._last
        if last is None:
            return None
        big: dict[str, Any] = {}
        entries = 0
        for name in BIG:
            new, old = getattr(snapshot, name), last[name]
            if new is old:
                continue
            change = None
            noted = name == "tasks" and tasks_note is not None and tasks_note[2] is not None
            if noted and tasks_note is not None and tasks_note[0] is old and tasks_note[1] is new:
                change = self._diff_noted(name, old, new, tasks_note[2])
            if change is None:
                change = self._diff(name, old, new)
            if change is None:
                return None
            if change:
                big[name] = change
                entries += len(change.get("set", ("", (), ()))[1]) + len(change.get("drop", ()))
        blobs = dict(self._blobs)
        other: dict[str, bytes] = {}
        for name in OTHER:
            new, old = getattr(snapshot, name), last[name]
            if new is old or _same_values(new, old):
                continue
            blob = pickle.dumps(new, protocol=pickle.HIGHEST_PROTOCOL)
            if blob != blobs.get(name):
                other[name] = blobs[name] = blob
                entries += 1
        payload = _dump({"format": FORMAT, "kind": "delta", "big": big, "other": other})
        self._remember(snapshot, blobs)
        return Delta(payload, entries)

    def _diff_noted(
        self, name: str, old: Mapping[str, Any], new: Mapping[str, Any], noted: Collection[str]
    ) -> dict[str, Any] | None:
        """``_diff`` by the keys ``noted`` alone (see ``delta``); None when the note does not hold (then the caller
        diffs in full). The keys stored anew are the longest end of ``new`` made of noted keys: each is dropped and
        set again (so it goes to the end, in that order); the other noted keys are set in place or dropped."""
        if len(noted) > self.max_share * max(len(new), 1) and len(noted) > 64:
            return None
        if not isinstance(new, dict):
            return None
        block: list[str] = []
        for key in reversed(new):
            if key not in noted:
                break
            block.append(key)
        block.reverse()
        at_end = set(block)
        in_place = []
        dropped = []
        for key in noted:
            if key in at_end:
                continue
            if key in new:
                if key not in old:  # stored anew but not at the end: not what the note promises
                    return None
                if new[key] is not old[key]:
                    in_place.append(key)
            elif key in old:
                dropped.append(key)
        dropped += [key for key in block if key in old]
        out: dict[str, Any] = {}
        changed = in_place + block
        if changed:
            out["set"] = _encode_entries(name, changed, [new[k] for k in changed])
        if dropped:
            out["drop"] = dropped
        return out

    def _diff(self, name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any] | None:
        """The entries of ``new`` that are not ``old``'s objects, the keys gone, and the keys' order when the one
        ``rebuild`` would give (the old order less the keys gone, the keys added at the end) is not ``new``'s.

        Every pass over the mappings is one of the interpreter's own loops (``map``, ``compress``, ``filterfalse``,
        a list's comparison): at 200,000 pods a Python loop over them costs a churned session several per cent."""
        keys = list(new)
        flags = list(map(operator.is_not, new.values(), map(old.get, keys)))
        changed = list(compress(keys, flags))
        if len(changed) > self.max_share * max(len(new), 1) and len(changed) > 64:
            return None
        added = list(filterfalse(old.__contains__, changed))
        out: dict[str, Any] = {}
        if changed:
            out["set"] = _encode_entries(name, changed, list(map(new.__getitem__, changed)))
        if len(old) + len(added) != len(new):
            dropped = list(filterfalse(new.__contains__, old))
            out["drop"] = dropped
            expected = list(filterfalse(set(dropped).__contains__, old))
        else:
            expected = list(old)
        if added:
            expected += added
        if keys != expected:
            out["order"] = keys
        return out


def _same_values(new: Any, old: Any) -> bool:
    """Two mappings holding the same objects (or equal plain values: strings, numbers, tuples of them) under the same
    keys, in the same order: a mapping made again from what did not change (the trees' specs, the quota groups'
    namespaces). The usual cases (the same objects; tuples of strings made again) are decided in the interpreter's
    own loops."""
    if not isinstance(new, Mapping) or not isinstance(old, Mapping) or len(new) != len(old):
        return False
    if list(new) != list(old):
        return False
    values, before = list(new.values()), list(old.values())
    if all(map(operator.is_, values, before)):
        return True
    if _tuples_of_strings(values) and _tuples_of_strings(before):
        return values == before  # exact: strings compare as themselves
    return all(v1 is v2 or _plain_equal(v1, v2) for v1, v2 in zip(values, before, strict=True))


def _tuples_of_strings(values: list[Any]) -> bool:
    return set(map(type, values)) <= {tuple} and set(map(type, chain.from_iterable(values))) <= {str}


_PLAIN = (str, int, bool, type(None))  # not float: 0.0 == -0.0


def _plain_equal(a: Any, b: Any) -> bool:
    """Equal and of the same plain types all the way down (where ``==`` cannot hide a difference that matters)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, _PLAIN):
        return bool(a == b)
    if type(a) is tuple:
        return len(a) == len(b) and all(_plain_equal(x, y) for x, y in zip(a, b, strict=True))
    return False


# -- rebuilding -------------------------------------------------------------------------------------------------


def rebuild(keyframe: bytes, deltas: Iterable[bytes] = ()) -> Snapshot:
    """The snapshot of the last record of a chain: its keyframe's payload, then each delta's in order."""
    document = _load(keyframe)
    if document.get("kind") != "keyframe":
        raise RecordError("the first payload of a chain is not a keyframe")
    big = {name: _decode_entries(name, document["big"][name]) for name in BIG}
    blobs = dict(document["other"])
    for payload in deltas:
        delta = _load(payload)
        if delta.get("kind") != "delta":
            raise RecordError("a payload after the keyframe is not a delta")
        for name, change in delta["big"].items():
            mapping = big[name]
            for key in change.get("drop", ()):
                mapping.pop(key, None)
            if "set" in change:
                mapping.update(_decode_entries(name, change["set"]))
            if "order" in change:
                big[name] = {key: mapping[key] for key in change["order"]}
        blobs.update(delta["other"])
    fields: dict[str, Any] = dict(big)
    for name in OTHER:
        if name not in blobs:
            raise RecordError(f"the keyframe lacks the snapshot's {name}")
        try:
            fields[name] = _Loader(io.BytesIO(blobs[name])).load()
        except RecordError:
            raise
        except Exception as exc:
            raise RecordError(f"the snapshot's {name} cannot be read ({type(exc).__name__})") from None
    return Snapshot(**fields)


# -- decisions --------------------------------------------------------------------------------------------------


def compact_decisions(
    result: SessionResult,
    snapshot: Snapshot | None = None,
    previous: tuple[Mapping[str, Any], Mapping[str, list[str]]] | None = None,
) -> dict[str, Any]:
    """What a session decided, as compared: the bindings (pod, node, pipelined), the evictions (pod, action,
    preemptor, message) and the podgroups' statuses (phase, reason, message), in the session's order. With the
    ``snapshot`` the session was fed, a status the podgroup already had there is left out (most of them, session
    after session): a replay, filtered against the same snapshot, then compares exactly as with every status.

    ``previous``: the podgroups' statuses of the session before on the same kept state (its result's mapping) and
    what this function made of them (with its snapshot). When this result's statuses are based on that mapping
    (``SessionResult.status_changes``), only the statuses the close computed are looked at: every other one is the
    very status object of the session before, for a podgroup whose snapshot object did not change either (a
    settled podgroup is one nothing changed), so its entry is the one made then. The statuses then come in
    another order (the digest and the stored decisions sort the keys)."""
    changes = getattr(result, "status_changes", None)
    if snapshot is not None and previous is not None and changes is not None and previous[0] is changes.base:
        return _compact(result, snapshot, _compact_statuses_since(result.podgroups, snapshot, changes, previous[1]))
    return _compact(result, snapshot, _compact_statuses(result.podgroups.items(), snapshot))


def _compact(result: SessionResult, snapshot: Snapshot | None, statuses: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "bindings": [[b.task, b.node, b.pipelined] for b in result.bindings],
        "evictions": [[e.task, e.action, e.preemptor, e.message] for e in result.evictions],
        "podgroups": statuses,
    }


def _compact_statuses_since(
    statuses: Mapping[str, Any], snapshot: Snapshot, changes: Any, before: Mapping[str, list[str]]
) -> dict[str, list[str]]:
    """``_compact_statuses`` of ``statuses``, from ``before`` (made of ``changes.base``) and the computed ones."""
    computed = set(changes.computed)
    out = {key: entry for key, entry in before.items() if key in statuses and key not in computed}
    out.update(_compact_statuses(((key, statuses[key]) for key in changes.computed), snapshot))
    return out


def _compact_statuses(items: Iterable[tuple[str, Any]], snapshot: Snapshot | None) -> dict[str, list[str]]:
    """The statuses that differ from their podgroup's in ``snapshot`` (every one without it)."""
    podgroups = snapshot.podgroups if snapshot is not None else {}
    get = podgroups.get
    statuses: dict[str, list[str]] = {}
    for key, s in items:
        pg = get(key)
        if pg is not None and pg.phase == s.phase:  # (a StrEnum: compared as its text)
            # the status it came in with: its phase, and its Unschedulable condition's reason and message
            reason = message = ""
            for condition in pg.conditions:
                if condition.type == "Unschedulable":
                    reason, message = condition.reason, condition.message
            if reason == s.reason and message == s.message:
                continue
        statuses[key] = [s.phase, s.reason, s.message]
    return statuses


def _canonical(decisions: Mapping[str, Any]) -> bytes:
    return orjson.dumps(decisions, option=orjson.OPT_SORT_KEYS)


def dump_decisions(decisions: Mapping[str, Any]) -> tuple[bytes, str]:
    """The decisions compressed, and their digest (``decisions_digest``), from one serialisation."""
    text = _canonical(decisions)
    return zlib.compress(text, LEVEL), hashlib.sha256(text).hexdigest()


def load_decisions(data: bytes) -> dict[str, Any]:
    try:
        out = orjson.loads(zlib.decompress(data))
    except (zlib.error, orjson.JSONDecodeError) as exc:
        raise RecordError(f"the recorded decisions cannot be read ({exc})") from None
    if not isinstance(out, dict):
        raise RecordError("the recorded decisions are not a mapping")
    return out


def decisions_digest(decisions: Mapping[str, Any]) -> str:
    """SHA-256 of the decisions' canonical JSON (keys sorted): equal decisions, equal digests."""
    return hashlib.sha256(_canonical(decisions)).hexdigest()


def _status_text(status: Sequence[Any] | None) -> str:
    if status is None:
        return "no status"
    phase, reason, message = [*status, "", "", ""][:3]
    text = str(phase)
    if reason:
        text += f" ({reason}{': ' + message if message else ''})"
    return text


def _placed(binding: Sequence[Any] | None) -> str:
    if binding is None:
        return "not placed"
    return f"{'pipelined' if binding[2] else 'bound'} to {binding[1]}"


def _evicted(eviction: Sequence[Any] | None) -> str:
    if eviction is None:
        return "not evicted"
    return f"evicted ({eviction[1]}{', for ' + eviction[2] if eviction[2] else ''})"


def _pod_differences(
    recorded: Sequence[Sequence[Any]], replayed: Sequence[Sequence[Any]], describe: Callable[[Any], str], done: str
) -> list[str]:
    """One sentence per pod whose row (a binding or an eviction, keyed by its first field) differs; ``done``: the
    verb of ``describe``'s "not" form ("placed", "evicted")."""
    out: list[str] = []
    rec, rep = {r[0]: r for r in recorded}, {r[0]: r for r in replayed}
    for task in sorted(rec.keys() | rep.keys()):
        a, b = rec.get(task), rep.get(task)
        if a == b:
            continue
        if b is None:
            out.append(f"pod {task}: recorded {describe(a)}, not {done} by the replay")
        elif a is None:
            out.append(f"pod {task}: not {done} in the recording, {describe(b)} by the replay")
        elif done == "evicted" and a[:3] == b[:3]:  # the same eviction, told in other words
            out.append(f"pod {task}: evicted in both, recorded message {a[3]!r}, replayed {b[3]!r}")
        else:
            out.append(f"pod {task}: recorded {describe(a)}, {describe(b)} by the replay")
    return out


def differences(recorded: Mapping[str, Any], replayed: Mapping[str, Any]) -> list[str]:
    """Each way the replayed decisions differ from the recorded ones, one sentence each (none: identical)."""
    out = _pod_differences(recorded.get("bindings", []), replayed.get("bindings", []), _placed, "placed")
    out += _pod_differences(recorded.get("evictions", []), replayed.get("evictions", []), _evicted, "evicted")
    rec_s, rep_s = recorded.get("podgroups", {}), replayed.get("podgroups", {})
    for key in sorted(rec_s.keys() | rep_s.keys()):
        a, b = rec_s.get(key), rep_s.get(key)
        if a != b:
            out.append(f"job {key}: recorded {_status_text(a)}, replayed {_status_text(b)}")
    if not out:
        order = ("bindings", "evictions")
        for name in order:
            if [x[0] for x in recorded.get(name, [])] != [x[0] for x in replayed.get(name, [])]:
                out.append(f"the same {name} in another order")
    return out
