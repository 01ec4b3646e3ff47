"""The what-if page's rows: the engine's before/after values of every node that changes (``engine.changes``),
printed in display units, and the engine's refusals named by the staged change they concern."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.changes import ProposalError
from frontend.presenters import units
from frontend.presenters.links import node_url

SECTIONS = (("queues", "queue", "Queues"), ("quota_groups", "quota", "Quota groups"), ("namespaces", "", "Namespaces"))
ENTITLED = {"queues": "deserved", "quota_groups": "runtime", "namespaces": "deserved"}
FIELD_LABELS = {
    "request": "request",
    "allocated": "allocated",
    "deserved": "deserved",
    "guarantee": "guarantee",
    "real_capability": "real capability",
    "share": "share",
    "borrowed": "borrowed",
    "lent": "lent",
    "limited_request": "limited request",
    "used": "used",
    "runtime": "runtime",
    "auto_scaled_min": "auto-scaled min",
    "weight": "weight",
    "reserved": "reserved by admitted jobs",
    "reserved_jobs": "admitted jobs reserving",
    "pipelined": "pipelined",
    "pipelined_pods": "pipelined pods",
}


def diff_rows(before: Mapping[str, Any], after: Mapping[str, Any], diff: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per (section, node, field, resource) that changes, amounts printed in display units."""
    rows: list[dict[str, Any]] = []
    for section, kind, title in SECTIONS:
        for name, fields in diff.get(section, {}).items():
            url = node_url(kind, name) if kind and name in after.get(section, {}) else ""
            if "added" in fields or "removed" in fields:
                rows.append(
                    {
                        "section": title,
                        "node": name,
                        "url": url,
                        "field": "node",
                        "before": "—" if "added" in fields else "exists",
                        "after": "created" if "added" in fields else "deleted",
                        "delta": "",
                        "css": "",
                    }
                )
                continue
            b, a = before[section][name], after[section][name]
            for field in fields:
                if isinstance(b.get(field), Mapping) or isinstance(a.get(field), Mapping):
                    old, new = b.get(field) or {}, a.get(field) or {}
                    for r in units.resource_order(set(old) | set(new)):
                        if old.get(r, 0) == new.get(r, 0):
                            continue
                        was, now = old.get(r, 0), new.get(r, 0)
                        delta = now - was
                        # one rounding for the three numbers, so that they add up (228.6 → 243, +14.4)
                        digits = max(units.places(was, r), units.places(now, r), units.places(delta, r))
                        endless = units.is_unlimited(was) or units.is_unlimited(now)
                        rows.append(
                            {
                                "section": title,
                                "node": name,
                                "url": url,
                                "field": f"{FIELD_LABELS.get(field, field)} · {r}",
                                "before": units.human(was, r, decimals=digits),
                                "after": units.human(now, r, decimals=digits),
                                "delta": "" if endless else units.human(delta, r, signed=True, decimals=digits),
                                "css": "up" if delta > 0 else "down",
                            }
                        )
                else:
                    old_v, new_v = b.get(field), a.get(field)
                    rows.append(
                        {
                            "section": title,
                            "node": name,
                            "url": url,
                            "field": FIELD_LABELS.get(field, field),
                            "before": str(old_v),
                            "after": str(new_v),
                            "delta": "",
                            "css": "",
                        }
                    )
    return rows


def entitled_rows(
    before: Mapping[str, Any], after: Mapping[str, Any], diff: Mapping[str, Any], section: str, resource: str
) -> list[tuple[str, int, int]]:
    """The 25 nodes of ``section`` whose entitlement of ``resource`` moves most: (name, before, after)."""
    key = ENTITLED[section]
    rows = []
    for name, fields in diff.get(section, {}).items():
        b = before.get(section, {}).get(name, {}).get(key, {}).get(resource, 0)
        a = after.get(section, {}).get(name, {}).get(key, {}).get(resource, 0)
        if b != a and ("added" in fields or "removed" in fields or key in fields):
            rows.append((name, b, a))
    rows.sort(key=lambda row: -abs(row[2] - row[1]))
    return rows[:25]


def errors(exc: ProposalError, entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The engine's refusal as lines that name the staged change by its place and summary."""
    out = []
    for err in exc.errors:
        parts = err.field.split(".")
        if len(parts) >= 2 and parts[0] == "changes" and parts[1].isdigit():
            i = int(parts[1])
            summary = entries[i]["summary"] if i < len(entries) else ""
            out.append(f"change {i + 1} ({summary}): {err.message}")
        else:
            out.append(err.message)
    return out
