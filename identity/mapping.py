"""The identity provider's groups mapped to Fairway's roles, and the re-sync of an account's roles at each sign-in.

Fairway's roles, as the rest of the product defines them (``quotas.access``):

* ``admin``: a staff account (``is_staff``; also ``is_superuser`` for the admin site);
* ``department-lead``: a member of a team that has teams below it (``research-dept``, linked to the ``research``
  queue and quota group) — it reads its department's teams side by side and approves their change requests;
* ``team-lead`` and ``member``: a member of a team (``nlp``). Fairway gives both the same rights today (every member
  of a team files change requests and acts on its jobs); both names are accepted so that a mapping can follow the
  provider's own groups.

``FAIRWAY_OIDC_GROUP_MAP`` lists ``<provider group>=<role>[:<team>]`` entries, separated by commas or new lines
(``fairway-admins=admin, research-leads=department-lead:research-dept, nlp=member:nlp``), or is a JSON object
``{"<provider group>": "<role>[:<team>]" or a list of them}`` for group names that hold commas. A provider group may
appear in several entries (one group, two teams).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import Group

from quotas.access import teams_below

ADMIN = "admin"
DEPARTMENT_LEAD = "department-lead"
TEAM_LEAD = "team-lead"
MEMBER = "member"
ROLES = (ADMIN, DEPARTMENT_LEAD, TEAM_LEAD, MEMBER)
SETTING = "FAIRWAY_OIDC_GROUP_MAP"


class GroupMapError(ValueError):
    """``FAIRWAY_OIDC_GROUP_MAP`` cannot be read: the message names the entry and what is wrong with it."""


@dataclass(frozen=True)
class Grant:
    """One entry of the map: members of the provider group ``idp_group`` get ``role`` (in ``team``, but for
    ``admin``)."""

    idp_group: str
    role: str
    team: str = ""


def _grant(idp_group: str, target: str, entry: str) -> Grant:
    idp_group, target = idp_group.strip(), target.strip()
    if not idp_group:
        raise GroupMapError(f"{SETTING}: the entry {entry!r} names no provider group before '='.")
    role, _, team = target.partition(":")
    role, team = role.strip(), team.strip()
    if role not in ROLES:
        raise GroupMapError(f"{SETTING}: the entry {entry!r} has the role {role!r}; the roles are {', '.join(ROLES)}.")
    if role == ADMIN and team:
        raise GroupMapError(f"{SETTING}: the entry {entry!r} gives admin a team; admin is for the whole cluster.")
    if role != ADMIN and not team:
        raise GroupMapError(
            f"{SETTING}: the entry {entry!r} names no team: write {idp_group}={role}:<team> (a Fairway team's name)."
        )
    return Grant(idp_group, role, team)


def parse_group_map(text: str) -> tuple[Grant, ...]:
    """The grants of ``FAIRWAY_OIDC_GROUP_MAP`` (see the module's docstring); raises ``GroupMapError``."""
    text = text.strip()
    if not text:
        return ()
    grants: list[Grant] = []
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GroupMapError(f"{SETTING}: not valid JSON ({exc.msg} at character {exc.pos}).") from None
        if not isinstance(data, dict):
            raise GroupMapError(f"{SETTING}: the JSON form is an object of provider group to role.")
        for idp_group, targets in data.items():
            for target in targets if isinstance(targets, list) else [targets]:
                if not isinstance(target, str):
                    raise GroupMapError(f"{SETTING}: the role of {idp_group!r} is not a string: {target!r}.")
                grants.append(_grant(idp_group, target, f"{idp_group}={target}"))
        return tuple(grants)
    for line in text.replace("\n", ",").split(","):
        entry = line.strip()
        if not entry:
            continue
        idp_group, eq, target = entry.rpartition("=")
        if not eq:
            raise GroupMapError(f"{SETTING}: the entry {entry!r} has no '=': write <provider group>=<role>[:<team>].")
        grants.append(_grant(idp_group, target, entry))
    return tuple(grants)


def groups_of(claims: Mapping[str, Any], claim: str) -> list[str]:
    """The provider groups in ``claims[claim]``: a list of names (or one name); ``claim`` may be a dotted path into
    nested objects (Keycloak's client roles: ``resource_access.fairway.roles``). None when the claim is absent."""
    value: Any = claims
    for part in claim.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return []
        value = value[part]
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [str(v) for v in value if isinstance(v, str | int)]
    return []


@dataclass
class SyncResult:
    """What a sign-in's re-sync gave the account, for the security log."""

    admin: bool = False
    teams: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def sync_roles(user: Any, idp_groups: Iterable[str], grants: Iterable[Grant]) -> SyncResult:
    """Makes ``user``'s roles what the provider's groups say, in the caller's transaction: admin exactly when a
    held group maps to ``admin``; membership of every team the map names exactly when a held group maps to it (a
    group removed at the provider removes the membership at the next sign-in). Teams the map does not name are
    left as an admin set them. An entry is skipped (and reported) when its team does not exist, or when it makes a
    ``team-lead`` or ``member`` of a team with teams below it: that membership would make the user a department
    lead, which only a ``department-lead`` entry grants."""
    grants = tuple(grants)
    held = set(idp_groups)
    matched = [g for g in grants if g.idp_group in held]
    result = SyncResult(admin=any(g.role == ADMIN for g in matched))
    teams = {team.name: team for team in Group.objects.filter(name__in={g.team for g in grants if g.team})}
    wanted: set[int] = set()
    for grant in matched:
        if grant.role == ADMIN:
            continue
        team = teams.get(grant.team)
        if team is None:
            result.skipped.append(f"{grant.idp_group}={grant.role}:{grant.team} (no team of that name)")
            continue
        if grant.role != DEPARTMENT_LEAD and teams_below(team):
            result.skipped.append(
                f"{grant.idp_group}={grant.role}:{grant.team} (a department: only department-lead joins it)"
            )
            continue
        wanted.add(team.pk)
    current = set(user.groups.filter(pk__in=[t.pk for t in teams.values()]).values_list("pk", flat=True))
    names = {t.pk: t.name for t in teams.values()}
    if wanted - current:
        user.groups.add(*(wanted - current))
    if current - wanted:
        user.groups.remove(*(current - wanted))
    result.added = sorted(names[pk] for pk in wanted - current)
    result.removed = sorted(names[pk] for pk in current - wanted)
    result.teams = sorted(names[pk] for pk in wanted)
    if user.is_staff != result.admin or user.is_superuser != result.admin:
        user.is_staff = user.is_superuser = result.admin
        user.save(update_fields=["is_staff", "is_superuser"])
    return result
