"""Loans: a time-bounded transfer of guarantee (a queue's ``guarantee`` or ``deserved``, a quota group's ``min``) from
a sibling, asked by the borrower's lead, approved by the lender's lead (or the common parent's, or an admin), and
returned automatically when it ends.

A loan is a change request whose changes are derived, never written by hand: the lender's field less the amounts,
the borrower's plus them, every other resource kept. They are derived again from the tree as it is at each step
(filing, approval, return), so a loan moves amounts rather than setting values, and the parent's sums never change.
The return is the same two changes reversed, through the same services and rules, in one transaction
(``return_due``, a periodic task): when the tree moved so that the return no longer passes the rules (the borrower
handed the borrowed guarantee to a new child), nothing is written, the request says why, and the return is tried
again at every check until it passes or an admin settles it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from engine import rules, wording
from engine.resources import ResourceList, format_quantity

KINDS = {"queue": ("guarantee", "deserved"), "quota_group": ("min",)}
WHAT = {"queue": "queue", "quota_group": "quota group"}
_LENGTH = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$")


@dataclass(frozen=True)
class Loan:
    """A loan as asked: ``amounts`` in base units, ``seconds`` its length from the approval."""

    kind: str
    lender: str
    borrower: str
    field: str
    amounts: dict[str, int]
    seconds: int

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "from": self.lender,
            "to": self.borrower,
            "field": self.field,
            "amounts": dict(sorted(self.amounts.items())),
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Loan:
        return cls(
            kind=str(data["kind"]),
            lender=str(data["from"]),
            borrower=str(data["to"]),
            field=str(data["field"]),
            amounts={str(k): int(v) for k, v in data["amounts"].items()},
            seconds=int(data["seconds"]),
        )

    def amounts_text(self) -> str:
        return ", ".join(wording.amount(v, r) for r, v in sorted(self.amounts.items()))

    def summary(self) -> str:
        return (
            f"loan: {WHAT[self.kind]} {self.borrower} borrows {self.amounts_text()} of {self.field} from "
            f"{self.lender} for {wording.spelled_duration(self.seconds)}"
        )


def max_seconds() -> int:
    return int(settings.FAIRWAY["LOAN_MAX_DAYS"]) * 86400


def parse_length(value: Any) -> int | None:
    """``"3d"``, ``"12h"``, ``"1d12h"``, ``"90m"`` in seconds; None when it is not such a length."""
    if not isinstance(value, str):
        return None
    match = _LENGTH.match(value.strip())
    if match is None or not any(match.groups()):
        return None
    days, hours, minutes = (int(g or 0) for g in match.groups())
    return days * 86400 + hours * 3600 + minutes * 60


def _err(field: str, message: str, code: str = "invalid") -> rules.FieldError:
    return rules.FieldError(f"loan.{field}" if field else "loan", message, code)


def read(data: Any) -> tuple[Loan | None, list[rules.FieldError]]:
    """A loan from its API form (``kind``, ``from``, ``to``, ``field``, ``amounts`` as quantities, ``duration``),
    or the errors naming each field."""
    if not isinstance(data, Mapping):
        return None, [_err("", "loan must be an object with kind, from, to, field, amounts and duration", "required")]
    errors: list[rules.FieldError] = []
    allowed = {"kind", "from", "to", "field", "amounts", "duration"}
    errors += [
        _err(str(k), f"a loan has no field {k!r} (it has: {', '.join(sorted(allowed))})")
        for k in data
        if k not in allowed
    ]
    kind = data.get("kind")
    if kind not in KINDS:
        errors.append(_err("kind", f"a loan is of a queue or a quota_group, not {kind!r}", "required"))
        kind = None
    names = {}
    for key in ("from", "to"):
        value = data.get(key)
        if not isinstance(value, str) or not value:
            errors.append(
                _err(key, f"{key}: the name of the {'lender' if key == 'from' else 'borrower'} is required", "required")
            )
        names[key] = value
    if names.get("from") and names.get("from") == names.get("to"):
        errors.append(_err("to", "a node cannot borrow from itself"))
    field = data.get("field", KINDS[kind][0] if kind else None)
    if kind and field not in KINDS[kind]:
        errors.append(_err("field", f"a {WHAT[kind]} lends its {' or '.join(KINDS[kind])}, not {field!r}"))
    amounts: dict[str, int] = {}
    raw = data.get("amounts")
    if not isinstance(raw, Mapping) or not raw:
        errors.append(_err("amounts", 'amounts must name what is lent, e.g. {"nvidia.com/gpu": "2"}', "required"))
    else:
        try:
            parsed = ResourceList.parse(raw)
        except (TypeError, ValueError) as exc:
            errors.append(_err("amounts", str(exc)))
        else:
            for name, amount in parsed.items():
                if amount <= 0:
                    errors.append(_err(f"amounts.{name}", "an amount lent must be more than 0"))
                amounts[name] = int(amount)
    seconds = parse_length(data.get("duration"))
    if seconds is None or seconds <= 0:
        errors.append(_err("duration", "duration must be a length such as 3d, 12h, 1d12h or 90m", "required"))
    elif seconds > max_seconds():
        errors.append(
            _err("duration", f"a loan lasts at most {settings.FAIRWAY['LOAN_MAX_DAYS']} days (FAIRWAY_LOAN_MAX_DAYS)")
        )
    if errors:
        return None, errors
    return Loan(str(kind), str(names["from"]), str(names["to"]), str(field), amounts, int(seconds or 0)), []


def check_tree(loan: Loan, tree: Mapping[str, Any]) -> list[rules.FieldError]:
    """The loan against the tree as it is: both nodes exist and are siblings."""
    lender, borrower = tree.get(loan.lender), tree.get(loan.borrower)
    what = WHAT[loan.kind]
    errors = []
    if borrower is None:
        errors.append(_err("to", f"{what} {loan.borrower} does not exist", "not_found"))
    if lender is None:
        errors.append(_err("from", f"{what} {loan.lender} does not exist", "not_found"))
    if errors:
        return errors
    if lender.parent != borrower.parent or lender.parent is None:
        errors.append(
            _err(
                "from",
                f"{what} {loan.lender} is not a sibling of {loan.borrower} (their parents: {lender.parent or 'none'} "
                f"and {borrower.parent or 'none'}); a loan is between the children of one parent",
            )
        )
    return errors


def changes(loan: Loan, tree: Mapping[str, Any], *, returning: bool = False) -> tuple[list[dict[str, Any]], list]:
    """The two changes of the loan (or of its return) on the tree as it is, or the errors: the giver must hold
    the amounts in its field."""
    giver, taker = (loan.borrower, loan.lender) if returning else (loan.lender, loan.borrower)
    given = dict(getattr(tree[giver], loan.field).items())
    taken = dict(getattr(tree[taker], loan.field).items())
    errors = []
    for name, amount in sorted(loan.amounts.items()):
        has = int(given.get(name, 0))
        if has < amount:
            errors.append(
                _err(
                    f"amounts.{name}",
                    f"{WHAT[loan.kind]} {giver} has {wording.amount(has, name)} of {loan.field}; "
                    f"it cannot {'return' if returning else 'lend'} {wording.amount(amount, name)}",
                )
            )
        given[name] = has - amount
        taken[name] = int(taken.get(name, 0)) + amount
    if errors:
        return [], errors

    def spec(values: Mapping[str, int]) -> dict[str, str]:
        return {r: format_quantity(v, r) for r, v in sorted(values.items())}

    return [
        {"op": "update", "kind": loan.kind, "name": giver, "spec": {loan.field: spec(given)}},
        {"op": "update", "kind": loan.kind, "name": taker, "spec": {loan.field: spec(taken)}},
    ], []


def ends_at(approved: datetime, loan: Loan) -> datetime:
    return approved + timedelta(seconds=loan.seconds)
