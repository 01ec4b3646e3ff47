"""Per-user limits inside a queue or a quota group (YuniKorn's ``limits``: ``maxresources`` and ``maxapplications``
per user or group): the data, how it is written (the API's form and the stored form), how it is checked, and the
words people read. The counting itself is ``engine.session.userlimits.UserLimitBook``, the one computation that the
session's admission (``enqueue``) and placement (``allocate``, and every action's ``allocatable`` gate) ask, and
that the pages use for each user's current use.

A tree node (queue or quota group) holds a list of limits, each for

* one **user** by name, or every user (``*``: each user counts alone, and a user with a limit of their own by name
  is held to that one instead), or
* one **group** by name, or every group (``*``: each group counts alone, and a group with a limit of its own by
  name is held to that one instead);

each with a maximum of resources (``max_resources``: a resource left out is unlimited) and a maximum of running jobs
(``max_jobs``: ``None`` is unlimited). A job counts in a node when it is in the node's subtree (its queue is the node
or below it; for a quota group, one of its pods is in the group or below it), for its user and for each of its
user's groups. A job *runs* (for ``max_jobs``) from its admission (Inqueue) or its first placed pod until it ends;
it *uses* what its placed pods request, and an admitted job with nothing placed yet uses its ``minResources``
(its reservation).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.resources import (
    MAX_AMOUNT,
    QuantityError,
    ResourceList,
    format_amount,
    format_in_unit,
    milli_scale,
    parse_in_unit,
    parse_quantity,
)
from engine.wording import amount, plural

__all__ = [
    "EVERYONE",
    "MAX_JOBS",
    "MAX_LIMITS",
    "SubjectKind",
    "UserLimit",
    "job_refusal_text",
    "parse_user_limits",
    "parse_user_limits_text",
    "resource_refusal_text",
    "stored_user_limits",
    "subject_words",
    "user_limit_errors",
    "user_limits_from_stored",
    "user_limits_json",
    "user_limits_text",
]

SubjectKind = Literal["user", "group"]
EVERYONE = "*"
MAX_JOBS = 2**31 - 1
MAX_LIMITS = 1000  # entries of one node: a list people write by hand
MAX_NAME = 253
# a user or group name as identity providers and Kubernetes write them (alice, alice@example.org,
# system:serviceaccount:ns:sa, CN=ml,OU=groups): printable, no spaces at either end, no control characters
_NAME_RE = re.compile(r"^[^\s\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f])?$")


@dataclass(frozen=True, slots=True)
class UserLimit:
    """One limit of a tree node: for a ``user`` or a ``group`` (``kind``) named ``name`` (``*``: each one), at most
    ``max_resources`` (a resource left out: unlimited) and at most ``max_jobs`` running jobs (None: unlimited)."""

    kind: SubjectKind
    name: str
    max_resources: ResourceList = field(default_factory=ResourceList)
    max_jobs: int | None = None

    @property
    def wildcard(self) -> bool:
        return self.name == EVERYONE


# -- words ---------------------------------------------------------------------------------------------------------


def subject_words(limit: UserLimit, name: str | None = None) -> str:
    """Who a limit binds, for people: ``user alice``, ``group ml-interns``, ``each user`` (``each user (bob)`` when
    ``name`` says which one it binds now)."""
    if limit.wildcard:
        each = f"each {limit.kind}"
        return f"{each} ({name})" if name else each
    return f"{limit.kind} {limit.name}"


def job_refusal_text(limit: UserLimit, name: str, running: int, where: str) -> str:
    """``user alice runs 3 of at most 3 jobs in queue nlp`` (``where``: ``queue nlp``, ``quota group team-a``)."""
    assert limit.max_jobs is not None
    allowed = "" if not limit.wildcard else f", the limit of each {limit.kind}"
    return f"{limit.kind} {name} runs {running} of at most {plural(limit.max_jobs, 'job')} in {where}{allowed}"


def resource_refusal_text(limit: UserLimit, name: str, resource: str, would_use: int, where: str) -> str:
    """``would use 9 of at most 8 GPUs allowed to group ml-interns in queue nlp``."""
    most = limit.max_resources[resource]
    used = amount(would_use, resource) if milli_scale(resource) == 1 else format_amount(would_use, resource)
    return f"would use {used} of at most {amount(most, resource)} allowed to {subject_words(limit, name)} in {where}"


# -- the forms: the API's (quantities) and the stored one (base units) ---------------------------------------------


def user_limits_json(limits: Iterable[UserLimit]) -> list[dict[str, Any]]:
    """The API's form: ``[{"user": "alice", "max_resources": {"nvidia.com/gpu": "4"}, "max_jobs": 3}]``."""
    return [
        {
            limit.kind: limit.name,
            "max_resources": limit.max_resources.to_quantities(),
            "max_jobs": limit.max_jobs,
        }
        for limit in limits
    ]


def stored_user_limits(limits: Sequence[UserLimit]) -> list[dict[str, Any]] | None:
    """The stored form (base units; null when there is none)."""
    if not limits:
        return None
    return [
        {
            "kind": limit.kind,
            "name": limit.name,
            "max_resources": limit.max_resources.to_dict(),
            "max_jobs": limit.max_jobs,
        }
        for limit in limits
    ]


def user_limits_from_stored(value: Any) -> tuple[UserLimit, ...]:
    """A stored list (``stored_user_limits``) back as the spec holds it."""
    if not value:
        return ()
    return tuple(
        UserLimit(
            kind="group" if entry.get("kind") == "group" else "user",
            name=str(entry.get("name", "")),
            max_resources=ResourceList({str(k): int(v) for k, v in (entry.get("max_resources") or {}).items()}),
            max_jobs=entry.get("max_jobs"),
        )
        for entry in value
    )


def parse_user_limits(data: object, field: str = "user_limits") -> tuple[tuple[UserLimit, ...], list[QuantityError]]:
    """The API's form (``user_limits_json``; null is no limit) read into limits, with one error per problem, each
    naming its place (``user_limits.1.max_resources.nvidia.com/gpu``): an entry names exactly one of ``user`` and
    ``group``, a name people can read (``*`` for each one), a maximum of resources (Kubernetes quantities) and/or of
    running jobs (a whole number, 0 or more), and no subject twice. Already-parsed limits pass through checked."""
    if data is None:
        return (), []
    if isinstance(data, tuple) and all(isinstance(x, UserLimit) for x in data):
        return data, user_limit_errors(data, field)
    if not isinstance(data, list):
        return (), [QuantityError(field, 'expected a list of limits, e.g. [{"user": "alice", "max_jobs": 3}]')]
    if len(data) > MAX_LIMITS:
        return (), [QuantityError(field, f"at most {MAX_LIMITS} limits")]
    out: list[UserLimit] = []
    places: list[int] = []  # each limit's index in ``data`` (an entry that does not read is left out)
    errors: list[QuantityError] = []
    for i, entry in enumerate(data):
        at = f"{field}.{i}"
        if not isinstance(entry, Mapping):
            errors.append(QuantityError(at, "expected an object with user or group, max_resources and max_jobs"))
            continue
        unknown = sorted(str(k) for k in entry if k not in ("user", "group", "max_resources", "max_jobs"))
        if unknown:
            errors.append(
                QuantityError(
                    f"{at}.{unknown[0]}", f"unknown key {unknown[0]!r} (known: group, max_jobs, max_resources, user)"
                )
            )
            continue
        kinds = [k for k in ("user", "group") if k in entry]
        if len(kinds) != 1:
            errors.append(QuantityError(at, 'name exactly one of user and group ("*" for each user or each group)'))
            continue
        kind: SubjectKind = "user" if kinds[0] == "user" else "group"
        name = entry[kind]
        resources = ResourceList()
        raw = entry.get("max_resources")
        if raw is not None and not isinstance(raw, Mapping):
            errors.append(QuantityError(f"{at}.max_resources", "expected an object of resource name to quantity"))
            continue
        parsed: dict[str, int] = {}
        for r, q in (raw or {}).items():
            try:
                parsed[str(r)] = parse_quantity(q, str(r), f"{at}.max_resources.{r}")
            except QuantityError as exc:
                errors.append(exc)
        resources = ResourceList(parsed)
        jobs = entry.get("max_jobs")
        if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int)):
            errors.append(QuantityError(f"{at}.max_jobs", f"max_jobs must be a whole number or null, got {jobs!r}"))
            continue
        if not isinstance(name, str):
            errors.append(QuantityError(f"{at}.{kind}", f"{kind} must be a name, got {name!r}"))
            continue
        out.append(UserLimit(kind=kind, name=name, max_resources=resources, max_jobs=jobs))
        places.append(i)
    result = tuple(out)
    errors.extend(e for e in user_limit_errors(result, field, places) if not any(e.field == x.field for x in errors))
    return result, errors


def user_limit_errors(
    limits: Sequence[UserLimit], field: str = "user_limits", places: Sequence[int] | None = None
) -> list[QuantityError]:
    """What is wrong with ``limits``, each error at its entry (``places``: each limit's index in what was written,
    by default its own): names, amounts, maxima, duplicates."""
    errors: list[QuantityError] = []
    seen: dict[tuple[str, str], int] = {}
    for n, limit in enumerate(limits):
        i = places[n] if places is not None else n
        at = f"{field}.{i}"
        name = limit.name
        if not name or len(name) > MAX_NAME or not _NAME_RE.match(name):
            errors.append(
                QuantityError(
                    f"{at}.{limit.kind}",
                    f"{limit.kind} {name!r} is not a {limit.kind} name: 1 to {MAX_NAME} printable characters without "
                    f'spaces at either end ("*" for each {limit.kind})',
                )
            )
            continue
        key = (limit.kind, name)
        if key in seen:
            errors.append(
                QuantityError(
                    f"{at}.{limit.kind}",
                    f"{subject_words(limit)} has a limit already (entry {seen[key]}); give each {limit.kind} one",
                )
            )
            continue
        seen[key] = i
        if limit.max_jobs is not None and not 0 <= limit.max_jobs <= MAX_JOBS:
            errors.append(
                QuantityError(f"{at}.max_jobs", f"max_jobs must be between 0 and {MAX_JOBS}, got {limit.max_jobs}")
            )
        for r, a in limit.max_resources.items():
            if a >= MAX_AMOUNT:
                errors.append(QuantityError(f"{at}.max_resources.{r}", f"{r}: leave a resource out for unlimited"))
        if not limit.max_resources and limit.max_jobs is None:
            errors.append(
                QuantityError(at, f"the limit of {subject_words(limit)} limits nothing: give max_resources or max_jobs")
            )
    return errors


# -- the editor's text form: one line per limit, amounts in the units the editor's cells use ----------------------

_LINE_HELP = "write one limit a line: 'user alice: jobs=3, nvidia.com/gpu=4, memory=64' ('*' for each user or group)"


def user_limits_text(limits: Iterable[UserLimit]) -> str:
    """``user alice: jobs=3, nvidia.com/gpu=4, memory=64Gi`` one line per limit (read back by
    ``parse_user_limits_text``; amounts as the editor's cells show them)."""
    lines = []
    for limit in limits:
        parts = [] if limit.max_jobs is None else [f"jobs={limit.max_jobs}"]
        parts += [f"{r}={format_in_unit(a, r)}" for r, a in limit.max_resources.items()]
        lines.append(f"{limit.kind} {limit.name}: {', '.join(parts)}")
    return "\n".join(lines)


def parse_user_limits_text(text: str, field: str = "user_limits") -> tuple[tuple[UserLimit, ...], list[QuantityError]]:
    """The editor's lines (``user_limits_text``) read into limits: a bare number is in the resource's unit as in
    the editor's cells (``memory=64`` is 64 GiB, ``cpu=2`` two cores; ``engine.resources.parse_in_unit``), with every
    problem at its line (``user_limits.1.max_jobs``); then the checks of ``user_limit_errors``."""
    out: list[UserLimit] = []
    places: list[int] = []
    errors: list[QuantityError] = []
    for i, line in enumerate(x.strip() for x in text.splitlines() if x.strip()):
        at = f"{field}.{i}"
        head, sep, rest = line.partition(":")
        kind, _, name = head.strip().partition(" ")
        if not sep or kind not in ("user", "group"):
            errors.append(QuantityError(at, f"line {i + 1} {line!r}: {_LINE_HELP}"))
            continue
        jobs: int | None = None
        amounts: dict[str, int] = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = (s.strip() for s in part.partition("="))
            if not eq or not key or not value:
                errors.append(QuantityError(at, f"line {i + 1}: {part!r} is not name=amount; {_LINE_HELP}"))
            elif key == "jobs":
                if not value.isdigit():
                    errors.append(QuantityError(f"{at}.max_jobs", f"line {i + 1}: jobs={value} is not a whole number"))
                else:
                    jobs = int(value)
            else:
                try:
                    amounts[key] = parse_in_unit(value, key, f"{at}.max_resources.{key}")
                except QuantityError as exc:
                    errors.append(QuantityError(exc.field, f"line {i + 1}: {exc.message}"))
        out.append(UserLimit("user" if kind == "user" else "group", name.strip(), ResourceList(amounts), jobs))
        places.append(i)
    result = tuple(out)
    errors.extend(e for e in user_limit_errors(result, field, places) if not any(e.field == x.field for x in errors))
    return result, errors
