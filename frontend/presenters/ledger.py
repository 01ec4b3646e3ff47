"""Who borrows from whom: a pro-rata reading of the engine's borrowed and lent amounts within one sibling set.

The engines report, per tree node and resource, what it ``borrowed`` (use above its entitlement) and what it
``lent`` (unused entitlement that the borrowing of its siblings consumes). In a sibling set the borrowers first
take the capacity nobody is entitled to (the *unreserved* pool) and the rest comes out of the lenders, so
``sum(lent) <= sum(borrowed)``. Nobody tracks individual loans (Kueue dropped "lent" for that reason), so the
dashboard attributes them pro rata: borrower ``b`` took ``borrowed[b] * lent[l] / sum(borrowed)`` from lender
``l`` and ``borrowed[b] * (sum(borrowed) - sum(lent)) / sum(borrowed)`` from the unreserved pool. Row sums are
each borrower's borrowed amount and column sums each lender's lent amount (floats; the pages print them rounded
with a "≈").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

POOL = ""  # the lender name of the unreserved capacity


@dataclass(frozen=True)
class Loan:
    """An attributed loan of one resource inside one sibling set."""

    borrower: str
    lender: str  # ``POOL`` for the unreserved capacity
    resource: str
    amount: float  # base units


def attribute(
    borrowed: Mapping[str, Mapping[str, int]],
    lent: Mapping[str, Mapping[str, int]],
    members: Iterable[str],
    *,
    only: str | None = None,
) -> list[Loan]:
    """The pro-rata loans among ``members`` (one sibling set), every resource, largest first; with ``only``,
    just the loans that member takes or gives (linear in the set's size instead of borrowers x lenders)."""
    names = sorted(set(members))
    resources = sorted({r for n in names for r in (*borrowed.get(n, {}), *lent.get(n, {}))})
    loans: list[Loan] = []
    for r in resources:
        takers = {n: borrowed.get(n, {}).get(r, 0) for n in names}
        givers = {n: lent.get(n, {}).get(r, 0) for n in names}
        total_b = sum(v for v in takers.values() if v > 0)
        if total_b <= 0:
            continue
        total_l = min(sum(v for v in givers.values() if v > 0), total_b)
        scale = total_l / max(sum(v for v in givers.values() if v > 0), 1)
        for b, amount_b in takers.items():
            if amount_b <= 0 or (only is not None and b != only and givers.get(only, 0) <= 0):
                continue
            lenders = givers.items() if only is None or b == only else [(only, givers.get(only, 0))]
            for lender, amount_l in lenders:
                if amount_l > 0 and lender != b:
                    loans.append(Loan(b, lender, r, amount_b * amount_l * scale / total_b))
            pool = amount_b * (total_b - total_l) / total_b
            if pool > 0 and (only is None or b == only):
                loans.append(Loan(b, POOL, r, pool))
    loans.sort(key=lambda loan: (-loan.amount, loan.resource, loan.borrower, loan.lender))
    return loans
