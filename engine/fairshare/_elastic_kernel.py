"""Vectorised kernels of the elastic-quota engine: exact int64 segment arithmetic with numpy.

A *level* is a batch of sibling sets processed together: every (sibling set, resource) pair is one *segment* of
a flat int64 array (resource-major, then the siblings in name order), so one call handles all sibling sets of a
tree level and all resources at once. Segments are contiguous and never empty.

Exactness: every amount is an int64 <= 2**62. Products ``weight * pool`` can need 124 bits; :func:`muldiv`
computes ``floor(a*b/c)`` exactly from a float64 estimate corrected with the remainder computed modulo 2**64,
which is exact whenever ``c <= 2**50`` (weights are first divided by their gcd per segment, so sums of weights
stay small), and with Python ints for larger divisors.
Sums that could pass 2**62 are checked; the rare sibling sets concerned are handed to the plain-Python
functions of :mod:`engine.fairshare.elastic_sets`, so results never depend on wrapped int64 values.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from engine.fairshare import elastic_sets as ref
from engine.resources import MAX_AMOUNT, UNLIMITED_INT64

I64 = npt.NDArray[np.int64]
BOOL = npt.NDArray[np.bool_]

_BIG = MAX_AMOUNT
_EMPTY_I = np.zeros(0, np.int64)


def run_starts(seg: I64) -> I64:
    """Offsets where each run of equal values starts in a non-decreasing array."""
    if seg.size == 0:
        return _EMPTY_I
    cut = np.flatnonzero(seg[1:] != seg[:-1]) + 1
    return np.concatenate((np.zeros(1, np.int64), cut.astype(np.int64)))


def counts_of(starts: I64, n: int) -> I64:
    """Segment lengths from start offsets over an array of length ``n``."""
    return np.diff(np.append(starts, n)).astype(np.int64)


def segsum(x: I64, starts: I64, counts: I64) -> tuple[I64, BOOL]:
    """Exact per-segment sums of non-negative values, saturated at 2**63-1; ``big`` marks sums >= 2**62."""
    sums = np.add.reduceat(x, starts) if x.size else _EMPTY_I
    big = np.zeros(sums.shape, np.bool_)
    if x.size == 0:
        return sums, big
    top = int(x.max())
    if top == 0 or top <= _BIG // int(counts.max()):
        return sums, big
    approx = np.add.reduceat(x.astype(np.float64), starts)
    for j in np.flatnonzero(approx >= 2.0**61):
        s = int(starts[j])
        exact = sum(int(v) for v in x[s : s + int(counts[j])])
        sums[j] = min(exact, UNLIMITED_INT64)
        big[j] = exact >= _BIG
    return sums, big


def sat_add(a: I64, b: I64) -> I64:
    """``a + b`` for non-negative int64 arrays, saturated at 2**63-1."""
    return np.minimum(a, UNLIMITED_INT64 - b) + b


def muldiv(a: I64, b: I64, c: I64) -> tuple[I64, I64]:
    """Exact ``floor(a*b/c)`` and ``a*b mod c`` for int64 arrays with ``0 <= a <= c``, ``b >= 0``, ``c > 0``."""
    fast = c <= _FLOAT_C
    if fast.all():
        return _muldiv_corrected(a, b, c)
    q = np.empty(a.shape, np.int64)
    r = np.empty(a.shape, np.int64)
    i = np.flatnonzero(fast)
    if i.size:
        q[i], r[i] = _muldiv_corrected(a[i], b[i], c[i])
    for k in np.flatnonzero(~fast).tolist():  # divisors above 2**50: exact Python ints (rare)
        q[k], r[k] = divmod(int(a[k]) * int(b[k]), int(c[k]))
    return q, r


_FLOAT_C = 2**50  # up to this divisor a float64 quotient is close enough to be corrected exactly


def _muldiv_corrected(a: I64, b: I64, c: I64) -> tuple[I64, I64]:
    """``floor(a*b/c)`` for ``c <= 2**50``: a float64 estimate corrected with the exact wrapped remainder.

    The estimate q' of q = floor(a*b/c) <= b <= 2**62 has a relative error below 2**-51, so |q - q'| <= 2**11 + 1
    and the true remainder ``a*b - q'*c`` lies within (2**11 + 2) * c < 2**63 of 0: computed modulo 2**64
    (uint64 wrap-around) and read as int64 it is exact. A second float estimate of ``remainder // c`` is then
    off by at most one, which the last two comparisons fix. No integer division is needed.
    """
    fc = c.astype(np.float64)
    est = np.floor(a.astype(np.float64) * b.astype(np.float64) / fc)
    q = np.clip(est, 0, 2.0**62).astype(np.int64)
    rem = (a.view(np.uint64) * b.view(np.uint64) - q.view(np.uint64) * c.view(np.uint64)).view(np.int64)
    off = np.flatnonzero((rem < 0) | (rem >= c))
    if off.size:  # the estimate was off (large products): correct those
        ro, co = rem[off], c[off]
        fix = np.floor(ro / fc[off]).astype(np.int64)
        ro = ro - fix * co
        low = ro < 0
        fix -= low
        ro += co * low
        high = ro >= co
        fix += high
        ro -= co * high
        q[off] += fix
        rem[off] = ro
    return q, rem


def hamilton(pool: I64, w: I64, starts: I64, counts: I64) -> I64:
    """Largest-remainder split of ``pool[s]`` over the positive weights of each segment ``s``.

    ``w`` is in name order inside each segment (the tie-break), every weight > 0, and ``sum(w)`` per segment
    must fit in int64 (callers check). Returns the per-element shares; they add up to ``pool`` per segment.
    """
    total = np.add.reduceat(w, starts)
    width = int(counts.max())
    if int(total.max()) > _FLOAT_C or float(total.sum(dtype=np.float64)) * width >= 2.0**62:
        # large weights: divide each segment's weights by their gcd (same shares, smaller numbers)
        w = normalise_weights(w, starts, counts)
        total = np.add.reduceat(w, starts)
    base, rem = muldiv(w, np.repeat(pool, counts), np.repeat(total, counts))
    residual = pool - np.add.reduceat(base, starts)
    if not residual.any():
        return base
    n = w.size
    seg = np.repeat(np.arange(starts.size, dtype=np.int64), counts)
    first = np.repeat(starts, counts)
    local = np.arange(n, dtype=np.int64) - first
    # One unique int64 key per element: segment, then remainder descending, then name order.
    span = np.cumsum(total) - total  # exclusive prefix: each segment owns [span, span + total)
    if float(total.sum(dtype=np.float64)) * width < 2.0**62:
        key = (np.repeat(span, counts) + (np.repeat(total, counts) - 1 - rem)) * width + local
        order = np.argsort(key)
    else:
        order = np.lexsort((local, -rem, seg))
    winners = order[local < np.repeat(residual, counts)]  # sorted position p has rank local[p] in its segment
    base[winners] += 1
    return base


def normalise_weights(w: I64, starts: I64, counts: I64) -> I64:
    """Divide each segment's (positive) weights by their gcd: same proportions, smaller products."""
    g: I64 = np.gcd.reduceat(w, starts)
    out: I64 = w // np.repeat(g, counts)
    return out


def scale_mins(total: I64, mins: I64, exempt: BOOL, seg: I64, starts: I64, counts: I64) -> I64:
    """Koordinator's min scaling for a level (see :func:`elastic_sets.scale_mins`), exact integer floor."""
    need_sum, big_s = segsum(mins, starts, counts)
    need = total < need_sum
    if not need.any():
        return mins.copy()
    out = mins.copy()
    ex_sum, big_d = segsum(np.where(exempt, mins, 0), starts, counts)
    en_sum, big_e = segsum(np.where(exempt, 0, mins), starts, counts)
    slow = need & (big_s | big_d | big_e)
    for j in np.flatnonzero(slow).tolist():
        a, k = int(starts[j]), int(counts[j])
        out[a : a + k] = ref.scale_mins(
            int(total[j]), [int(v) for v in mins[a : a + k]], [bool(v) for v in exempt[a : a + k]]
        )
    fast = need & ~slow
    idx = np.flatnonzero(fast[seg] & ~exempt)
    if idx.size == 0:
        return out
    s = seg[idx]
    left = total[s] - ex_sum[s]
    enabled = en_sum[s]
    m = mins[idx]
    zero = (left <= 0) | (enabled <= 0) | (m <= 0)
    keep = np.flatnonzero(~zero)
    res = np.zeros(idx.size, np.int64)
    if keep.size:
        ks = s[keep]
        mk, ek = m[keep], enabled[keep]
        if int(ek.max()) > _FLOAT_C:  # divide by the gcd of the segment's mins (it divides their sum too)
            st = run_starts(ks)
            g = np.repeat(np.gcd.reduceat(mk, st), counts_of(st, ks.size))
            mk, ek = mk // g, ek // g
        res[keep], _ = muldiv(mk, left[keep], ek)
    out[idx] = res
    return out


def waterfill(
    total: I64, floors: I64, limited: I64, weights: I64, lends: BOOL, seg: I64, starts: I64, counts: I64
) -> I64:
    """Runtime distribution of a level (see :func:`elastic_sets.waterfill`), exact."""
    hungry = limited > floors
    runtime = np.where(hungry | ~lends, floors, limited)
    taken, _ = segsum(runtime, starts, counts)
    pool = total - taken  # taken saturates above any total, so an overcommitted set gets pool < 0
    act = hungry & (weights > 0)
    act &= pool[seg] > 0
    idx = np.flatnonzero(act)
    if idx.size == 0:
        return runtime
    s = seg[idx]
    st = run_starts(s)
    cn = counts_of(st, idx.size)
    w = weights[idx]
    if int(w.max()) > _BIG // int(cn.max()):  # some segment's weight sum may not fit: plain Python for those
        _, big = segsum(w, st, cn)
        if big.any():
            for j in np.flatnonzero(big):
                sid = int(s[st[j]])
                a, k = int(starts[sid]), int(counts[sid])
                runtime[a : a + k] = ref.waterfill(
                    int(total[sid]),
                    [int(v) for v in floors[a : a + k]],
                    [int(v) for v in limited[a : a + k]],
                    [int(v) for v in weights[a : a + k]],
                    [bool(v) for v in lends[a : a + k]],
                )
            keep = ~np.repeat(big, cn)
            idx, s, w = idx[keep], s[keep], w[keep]
    while idx.size:
        st = run_starts(s)
        cn = counts_of(st, idx.size)
        useg = s[st]
        share = hamilton(pool[useg], w, st, cn)
        new = runtime[idx] + share
        cap = limited[idx]
        over = new >= cap
        runtime[idx] = np.minimum(new, cap)
        pool[useg] = np.add.reduceat(np.where(over, new - cap, 0), st)
        keep = ~over & (pool[s] > 0)
        idx, s, w = idx[keep], s[keep], w[keep]
    return runtime
