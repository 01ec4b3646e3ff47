"""Exact resource amounts: Kubernetes quantities <-> integers in base units.

Every amount the control plane stores or computes is an ``int`` in a base unit, never a float:

* ``cpu`` in millicores (``"500m"`` -> 500, ``"2"`` -> 2000),
* byte-like resources (``memory``, ``ephemeral-storage``, ``storage``, ``hugepages-*``) in bytes,
* every other resource (``nvidia.com/gpu``, ``pods``, ...) in milli-units, as Volcano keeps scalar resources.

A fractional base unit is rounded up, as Kubernetes' ``Quantity.Value()`` does. ``ResourceList`` is an
immutable mapping from resource name to amount with the arithmetic the quota math needs; it prints back
as canonical Kubernetes quantities (``{"cpu": "2500m", "memory": "4Gi", "nvidia.com/gpu": "2"}``).

This module is plain Python (no Django) so the engine, the API, the importer and ``fairway simulate``
share one parser and one set of error messages.
"""

from __future__ import annotations

import functools
import re
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from decimal import MAX_EMAX, MIN_EMIN, ROUND_CEILING, Decimal, InvalidOperation, Overflow, localcontext
from fractions import Fraction

__all__ = [
    "FLAVOR_MARK",
    "MAX_AMOUNT",
    "NOUNS",
    "STANDARD_RESOURCES",
    "UNLIMITED",
    "UNLIMITED_INT64",
    "QuantityError",
    "ResourceList",
    "ResourceNames",
    "check_resource_name",
    "display_factor",
    "format_amount",
    "format_exact_quantity",
    "format_in_unit",
    "format_quantity",
    "is_gpu",
    "is_standard_resource",
    "is_unlimited",
    "json_quantities",
    "milli_scale",
    "nouns",
    "null_unbounded",
    "parse_exact_quantity",
    "parse_in_unit",
    "parse_quantity",
    "parse_resource_list",
    "resource_label",
    "resource_sort_key",
    "sorted_resources",
    "split_flavor",
    "split_unit",
    "unit_decimal",
    "unit_name",
    "whole_gpus",
]

# "Unlimited" is one notion with one test, is_unlimited(): no bound at all (None) or an amount at or above MAX_AMOUNT.
# It has one integer form per number domain, each defined here and nowhere else:
#
# - MAX_AMOUNT (2**62) is the largest amount accepted from input (about 4.6 exabytes or 4.6e15 cores; it leaves room
#   for sums of many such values in int64 arrays), and a bound at MAX_AMOUNT is unlimited: the built-in quota groups'
#   bounds and the elastic engine's inputs use it;
# - UNLIMITED (2**120) is the Python-integer form the queue engines compute with: far above any real amount, so that
#   min/max/sums stay exact and an unlimited amount is still unlimited after real amounts are added or subtracted;
# - UNLIMITED_INT64 (2**63-1) is the int64 form of the elastic engine's arrays, where every sum saturates.
MAX_AMOUNT = 2**62
UNLIMITED = 1 << 120
UNLIMITED_INT64 = 2**63 - 1

_BYTE_RESOURCES = frozenset({"memory", "ephemeral-storage", "storage"})
_NAME_RE = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
# a Kueue ResourceFlavor's name (a DNS-1123 subdomain), as the flavor part of a flavored key (``cpu@spot``)
FLAVOR_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_SUFFIXES = {"E": 10**18, "P": 10**15, "T": 10**12, "G": 10**9, "M": 10**6, "k": 10**3}


class QuantityError(ValueError):
    """A quantity or resource list that cannot be used; ``field`` names where it came from."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


_FIRST = {"cpu": 0, "memory": 1}


def resource_sort_key(name: str) -> tuple[int, str]:
    """The order resources are named in, everywhere: cpu, memory, then the others by name (Volcano's order in its
    messages)."""
    return (_FIRST.get(split_flavor(name)[0], 2), name)


def sorted_resources(names: Iterable[str]) -> list[str]:
    """``names`` in ``resource_sort_key``'s order, ``pods`` left out (a count, not an amount)."""
    return sorted((n for n in names if n != "pods"), key=resource_sort_key)


# A resource given quota in several Kueue ResourceFlavors is counted per flavor under the key ``<resource>@<flavor>``
# (``cpu@spot``): ``@`` is in no resource name, so the key never meets a real one; it has its resource's unit and
# reads ``cpu (spot)`` where people read it (``engine.flavors``).
FLAVOR_MARK = "@"


def split_flavor(key: str) -> tuple[str, str]:
    """``(resource, flavor)`` of a resource key: ``("cpu", "spot")`` for ``cpu@spot``, ``("cpu", "")`` for ``cpu``."""
    resource, _, flavor = key.partition(FLAVOR_MARK)
    return resource, flavor


def resource_label(key: str) -> str:
    """A resource key as people read it: ``cpu (spot)`` for ``cpu@spot``, else the name itself."""
    resource, flavor = split_flavor(key)
    return f"{resource} ({flavor})" if flavor else resource


def milli_scale(resource: str) -> int:
    """How many base units make one whole unit of ``resource`` (1000 for milli-units, 1 for bytes); a flavored key
    (``memory@spot``) has its resource's."""
    if FLAVOR_MARK in resource:
        resource = split_flavor(resource)[0]
    if resource in _BYTE_RESOURCES or resource.startswith("hugepages-"):
        return 1
    return 1000


# -- the units people read ---------------------------------------------------------------------------------------

# The nouns of the resources people count, (one, many); a GPU is any resource named ``gpu`` (nvidia.com/gpu,
# amd.com/gpu). The one table of them: ``engine.wording`` and the dashboard's ``frontend.presenters.units`` read it.
NOUNS: dict[str, tuple[str, str]] = {"cpu": ("core", "cores"), "gpu": ("GPU", "GPUs"), "pods": ("pod", "pods")}


def is_gpu(resource: str) -> bool:
    """``nvidia.com/gpu``, ``amd.com/gpu``, ... (or one of their flavors): a resource counted in whole GPUs."""
    return split_flavor(resource)[0].rsplit("/", 1)[-1] == "gpu"


@functools.cache
def _gpu_scale(resource: str) -> int:
    """The base units of one GPU of ``resource``, 0 when it is no GPU (asked for every amount of a week's values)."""
    return milli_scale(resource) if is_gpu(resource) else 0


def whole_gpus(amounts: Mapping[str, int] | None) -> float:
    """The GPUs in ``amounts`` (base units), every GPU resource together, in whole GPUs (an int 0 without any)."""
    total: float = 0
    for r, v in (amounts or {}).items():
        scale = _gpu_scale(r)
        if scale:
            total += v / scale
    return total


def nouns(resource: str) -> tuple[str, str] | None:
    """(one, many) of ``resource`` in the words people count it with (``("core", "cores")``, ``("GiB", "GiB")`` for
    byte-like resources), or ``None`` for a resource without a noun of its own (``example.com/fpga``)."""
    if milli_scale(resource) == 1:
        return ("GiB", "GiB")
    return NOUNS.get("gpu" if is_gpu(resource) else split_flavor(resource)[0])


def unit_name(resource: str) -> str:
    """The display unit of ``resource`` as a column or an axis names it: ``cores``, ``GiB``, ``GPUs``, ``pods``, else
    the resource's short name (``fpga`` for ``example.com/fpga``)."""
    words = nouns(resource)
    return words[1] if words else resource.rsplit("/", 1)[-1]


def display_factor(resource: str) -> int:
    """Base units of one display unit of ``resource``: a core (1000 millicores), a GiB (for bytes), one whole unit
    (1000 milli-units) of every other resource."""
    return _GIB if milli_scale(resource) == 1 else 1000


def split_unit(resource: str) -> int:
    """The base units of the smallest amount the elastic quota split hands out: Koordinator's calculator reads cpu
    in milli (``MilliValue()``) and every other resource with ``Value()`` (whole units; bytes for memory), so it is 1
    for cpu and byte-like resources and 1000 for the other milli-unit resources (a GPU is split in whole GPUs)."""
    return 1 if resource == "cpu" else milli_scale(resource)


# -- resource names -------------------------------------------------------------------------------------------------

# The resources every Kubernetes cluster knows (plus ``hugepages-<size>``); any other name must be offered by a node.
STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage", "storage", "pods")
_HUGEPAGES_RE = re.compile(r"^hugepages-[0-9]+(\.[0-9]+)?([KMGTPE]i|[kMGTPE])?$")
_QUOTA_PREFIXES = ("requests.", "limits.")


def is_standard_resource(name: str) -> bool:
    """cpu, memory, ephemeral-storage, storage, pods or ``hugepages-<size>`` (``hugepages-2Mi``, ``hugepages-1Gi``)."""
    return name in STANDARD_RESOURCES or bool(_HUGEPAGES_RE.match(name))


class ResourceNames:
    """The resource names a control plane knows: the standard ones and those its nodes offer (``offered``).

    Nodes introduce names (any syntactically valid name); every other object may only use known ones, so a typo such
    as ``nvidia.con/gpu`` is refused instead of becoming a resource nobody offers.
    """

    __slots__ = ("offered",)

    def __init__(self, offered: Iterable[str] = ()) -> None:
        self.offered = frozenset(offered)

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str) and FLAVOR_MARK in name:  # ``cpu@spot``: known when ``cpu`` is
            name = split_flavor(name)[0]
        return isinstance(name, str) and (name in self.offered or is_standard_resource(name))

    def with_offered(self, names: Iterable[str]) -> ResourceNames:
        return ResourceNames(self.offered | frozenset(names))

    def listing(self) -> str:
        """``cpu, memory, ephemeral-storage, storage, pods, hugepages-<size>`` then the offered names, sorted."""
        extra = sorted(n for n in self.offered if not is_standard_resource(n))
        return ", ".join([*STANDARD_RESOURCES, "hugepages-<size>", *extra])

    def unknown(self, names: Iterable[str], *, quota_keys: bool = False) -> list[str]:
        """The names that are not known, in the order given; with ``quota_keys`` a ResourceQuota key's ``requests.``
        or ``limits.`` prefix is looked through (``requests.nvidia.com/gpu`` is known when the GPU is)."""
        out = []
        for name in names:
            base = name
            if quota_keys:
                for prefix in _QUOTA_PREFIXES:
                    if name.startswith(prefix):
                        base = name[len(prefix) :]
                        break
            if base not in self:
                out.append(name)
        return out

    def check(self, data: Iterable[str], field: str, *, quota_keys: bool = False) -> None:
        """Raise ``QuantityError`` naming ``field.<name>`` for the first unknown name of ``data``."""
        bad = self.unknown(data, quota_keys=quota_keys)
        if bad:
            raise QuantityError(f"{field}.{bad[0]}", self.message(bad[0]))

    def message(self, name: str) -> str:
        return f"unknown resource {name!r}: no node offers it; known: {self.listing()}"


def _too_large(value: object, resource: str) -> str:
    """The refusal of an amount above ``MAX_AMOUNT``, with the bound in the resource's unit (never in base units)."""
    if milli_scale(resource) == 1:
        most = "4 EiB"  # MAX_AMOUNT bytes
    else:
        many = (nouns(resource) or ("", resource))[1]
        most = f"about {MAX_AMOUNT / 1000:.1e} {many}".replace("e+", "e")  # 4.6e15 cores
    return f"{value} is too large (at most {most})"


def _to_decimal(text: str, field: str, resource: str = "cpu") -> Decimal:
    # The kubernetes client's parser knows every suffix Kubernetes accepts; it is imported lazily
    # because the whole client costs ~0.3 s to import and most callers never parse text.
    from kubernetes.utils import parse_quantity as k8s_parse_quantity

    if not text.isascii():  # Decimal would accept other scripts' digits; Kubernetes does not
        raise QuantityError(field, f"{text!r} is not a valid quantity (only ASCII digits and suffixes)")
    try:
        with localcontext() as ctx:  # Decimal's full exponent range: "1e-999999999Ki" stays positive, not 0
            ctx.Emax, ctx.Emin = MAX_EMAX, MIN_EMIN
            value: Decimal = k8s_parse_quantity(text)  # type: ignore[no-untyped-call]  # the client has no hints
    except Overflow:  # a suffix multiplied an exponent such as 1e999999999 past Decimal's range
        raise QuantityError(field, _too_large(repr(text), resource)) from None
    except (ValueError, InvalidOperation, TypeError):
        raise QuantityError(field, f"{text!r} is not a valid quantity (examples: 500m, 2, 1.5, 4Gi, 1e3)") from None
    if not value.is_finite():
        raise QuantityError(field, f"{text!r} is not a valid quantity")
    return value


# Most quantities are whole numbers with at most a suffix ("4", "500m", "16Gi", "2k"): exact in integers, without
# Decimal arithmetic or the kubernetes client's import (about 0.1 s, paid by every run of the command line tool that
# reads a manifest). Everything else (a fraction, an exponent, "n" or "u") goes through the client's parser;
# tests/unit/test_resources.py holds the two equal.
_SIMPLE_QUANTITY = re.compile(r"([0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?")
_SUFFIX_FACTORS: dict[str, int] = {"": 1, **_DECIMAL_SUFFIXES, **_BINARY}


def parse_exact_quantity(text: str, field: str) -> Fraction:
    """A Kubernetes quantity as an exact fraction (``"0.75"``, ``"750m"``, ``"1e-3"``), for numbers that are not
    amounts of a resource (Kueue's ``fairSharing.weight``). Raises ``QuantityError`` naming ``field``."""
    return Fraction(_to_decimal(text.strip(), field))


def format_exact_quantity(value: Fraction) -> str:
    """``value`` as a plain decimal quantity (``0.75``, ``2``): exact for every number ``parse_exact_quantity`` reads
    (their decimals end); another fraction is cut at 9 decimals, Kubernetes' finest unit (nano)."""
    rest = value.denominator
    for p in (2, 5):
        while rest % p == 0:
            rest //= p
    places = 0
    while (value * 10**places).denominator != 1 and (rest == 1 or places < 9):
        places += 1
    digits = value.numerator * 10**places // value.denominator
    sign, digits = ("-", -digits) if digits < 0 else ("", digits)
    whole, frac = divmod(digits, 10**places)
    return f"{sign}{whole}" + (f".{frac:0{places}d}".rstrip("0").rstrip(".") if places else "")


def _simple_quantity(value: str, match: re.Match[str], resource: str, field: str) -> int:
    """The base units of a whole number with an optional suffix, rounded up as ``parse_quantity`` rounds."""
    digits, suffix = match.groups()
    number = int(digits)
    if suffix == "m":
        base = -(-number * milli_scale(resource) // 1000)
    else:
        base = number * _SUFFIX_FACTORS[suffix or ""] * milli_scale(resource)
    if base > MAX_AMOUNT:
        raise QuantityError(field, _too_large(repr(value), resource))
    return base


# Whole units beyond 10**_MAX_EXPONENT are over MAX_AMOUNT in any base unit; amounts below 10**-_MIN_EXPONENT round
# up to one base unit. Checked on the exponent first, so that "1e999999999" never reaches Decimal arithmetic (whose
# context would overflow).
_MAX_EXPONENT = 20
_MIN_EXPONENT = 20


def _shown(value: object) -> str:
    """``repr(value)`` for messages; an integer too long to print is described by its size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    return repr(value)


def parse_quantity(value: object, resource: str = "cpu", field: str = "") -> int:
    """Parse a Kubernetes quantity (``"500m"``, ``"2Gi"``, ``1.5``, ``"1e3"``) into base units of ``resource``.

    Raises ``QuantityError`` naming ``field`` for malformed, negative or absurdly large values.
    """
    field = field or resource
    if isinstance(value, bool) or value is None:
        raise QuantityError(field, f"expected a quantity such as '2' or '500m', got {value!r}")
    if isinstance(value, int):
        if value.bit_length() > 128:  # far above MAX_AMOUNT; refused before any conversion
            raise QuantityError(field, _too_large(_shown(value), resource))
        amount = Decimal(value)
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise QuantityError(field, f"{value!r} is not a valid quantity")
        amount = Decimal(repr(value))
    elif isinstance(value, Decimal):
        if not value.is_finite():
            raise QuantityError(field, f"{value!r} is not a valid quantity")
        amount = value
    elif isinstance(value, str):
        text = value.strip()
        if len(text) > 64:
            raise QuantityError(field, "quantity is longer than 64 characters")
        simple = _SIMPLE_QUANTITY.fullmatch(text)
        if simple is not None:
            return _simple_quantity(value, simple, resource, field)
        amount = _to_decimal(text, field, resource)
    else:
        raise QuantityError(field, f"expected a quantity such as '2' or '500m', got {type(value).__name__}")
    if amount < 0:
        raise QuantityError(field, f"{value!r} must be greater than or equal to 0")
    if amount and amount.adjusted() > _MAX_EXPONENT:
        raise QuantityError(field, _too_large(repr(value), resource))
    if amount and amount.adjusted() < -_MIN_EXPONENT:
        return 1  # a positive amount far below one base unit, rounded up as Kubernetes does
    base = (amount * milli_scale(resource)).to_integral_value(rounding=ROUND_CEILING)
    if base > MAX_AMOUNT:
        raise QuantityError(field, _too_large(repr(value), resource))
    return int(base)


def format_quantity(amount: int, resource: str = "cpu") -> str:
    """Print ``amount`` base units of ``resource`` as a canonical Kubernetes quantity."""
    if amount < 0:
        return "-" + format_quantity(-amount, resource)
    scale = milli_scale(resource)
    if scale == 1000:
        whole, milli = divmod(amount, 1000)
        return f"{amount}m" if milli else str(whole)
    if amount == 0:
        return "0"
    for suffix, factor in reversed(_BINARY.items()):
        if amount % factor == 0:
            return f"{amount // factor}{suffix}"
    return _decimal_suffix(amount)


def is_unlimited(amount: int | None) -> bool:
    """``None`` (no bound set) or an amount at or above ``MAX_AMOUNT``: every integer form of "unlimited" (``MAX_AMOUNT``,
    ``UNLIMITED``, ``UNLIMITED_INT64``) and anything derived from them by adding or subtracting real amounts."""
    return amount is None or amount >= MAX_AMOUNT


_GIB = 2**30
_MIB = 2**20


def format_amount(amount: int | None, resource: str = "cpu") -> str:
    """An amount for people: cores and every milli-unit resource in whole units with a decimal fraction only when
    there is one (``2``, ``2.5``, ``0.25``: a GPU reads ``3``, and ``3.2`` only when it truly is fractional), bytes in
    ``Gi`` from one GiB up (``168Gi``, ``1.5Gi``), other byte amounts by the shorter of their binary and decimal
    quantities (``512Mi``, ``2G`` rather than ``1953125Ki``),
    and ``unlimited`` for an unlimited amount (:func:`is_unlimited`). Exact, but for a byte count from one MiB up that
    no suffix shows in five digits (a pro-rata share of memory): it reads to three decimals of ``Gi`` or ``Mi`` with
    ``≈`` and the unit spelled out (``≈2.235 GiB``: no quantity, so nobody copies it as one), never as ten digits of
    bytes."""
    if is_unlimited(amount):
        return "unlimited"
    assert amount is not None
    if amount < 0:
        return "-" + format_amount(-amount, resource)
    if milli_scale(resource) == 1000:
        whole, milli = divmod(amount, 1000)
        return f"{whole}.{milli:03d}".rstrip("0") if milli else str(whole)
    if amount >= _GIB and (amount * 1000) % _GIB == 0:
        whole, rest = divmod(amount, _GIB)
        if not rest:
            return f"{whole}Gi"
        return f"{whole}.{rest * 1000 // _GIB:03d}".rstrip("0") + "Gi"
    exact = format_quantity(amount, resource)
    if split_flavor(resource)[0] not in _BYTE_RESOURCES:
        return exact
    decimal = _decimal_suffix(amount)
    if len(decimal) < len(exact):  # 2G, not 1953125Ki
        exact = decimal
    if amount < _MIB or len(exact.rstrip("kKMGTPEi")) <= 5:
        return exact
    unit, factor = ("GiB", _GIB) if amount >= _GIB else ("MiB", _MIB)  # spelled out: it is no quantity
    return "\u2248" + f"{amount / factor:.3f}".rstrip("0").rstrip(".") + " " + unit


# -- amounts typed where the unit is known (the editor's cells) ----------------------------------------------------

_IN_UNIT = re.compile(r"(?P<number>[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*(?P<unit>[A-Za-z]*)")
_BYTE_WORDS = frozenset({"b", "byte", "bytes"})


def _not_an_amount(text: str, resource: str) -> str:
    if milli_scale(resource) == 1:
        hint = "a number of GiB (600, 1.5) or a quantity with its unit (512Mi, 2Ti)"
    elif resource == "cpu":
        hint = "a number of cores (2, 0.5) or millicores (500m)"
    elif is_gpu(resource):
        hint = "a whole number of GPUs (4)"
    else:
        hint = f"a number of {(nouns(resource) or ('', resource))[1]} (4) or a quantity such as 500m"
    return f"{text!r} is not an amount: write {hint}"


def parse_in_unit(text: str, resource: str, field: str = "", *, whole_gpus: bool = True) -> int:
    """Base units of an amount people typed where its unit is shown (a cell of the editor's column "memory GiB"): a
    bare number is in the resource's display unit (``600`` of memory is 600 GiB, ``2`` of cpu 2 cores, ``4`` of a GPU
    4 GPUs) and may be followed by that unit's name (``600 GiB``, ``2 cores``, ``1 GPU``); a quantity with its unit
    written out reads as Kubernetes reads it (``600Mi``, ``500m``, ``1.5Ti``; for bytes also ``512MiB``, ``2 GB`` and
    ``1001 bytes``). GPUs are whole: ``0.5`` or ``500m`` of a GPU is refused (unless ``whole_gpus`` is false: a
    cell left as it was read, holding a fraction the API accepted). Errors name ``field``."""
    field = field or resource
    typed = text.strip()
    found = _IN_UNIT.fullmatch(typed)
    if found is None:
        raise QuantityError(field, _not_an_amount(typed, resource))
    number, unit = found["number"], found["unit"]
    words = nouns(resource) or ()
    if unit.lower() in {w.lower() for w in words}:
        unit = ""  # "600 GiB", "2 cores", "1 GPU": the display unit itself
    bytes_like = milli_scale(resource) == 1
    if bytes_like and unit.lower() in _BYTE_WORDS:
        amount = parse_quantity(number, resource, field)
    elif unit:
        if bytes_like and len(unit) > 1 and unit[-1] == "B":
            unit = unit[:-1]  # 512MiB, 2GB: the quantity's suffix with its "B"
        try:
            amount = parse_quantity(number + unit, resource, field)
        except QuantityError as exc:
            if "too large" in exc.message or "greater than or equal" in exc.message:
                raise
            raise QuantityError(field, _not_an_amount(typed, resource)) from None
    elif not bytes_like:
        amount = parse_quantity(number, resource, field)  # a bare number is whole cores, GPUs, units already
    else:
        value = _to_decimal(number, field, resource)
        if value < 0:
            raise QuantityError(field, f"{typed!r} must be greater than or equal to 0")
        if value and value.adjusted() > _MAX_EXPONENT:
            raise QuantityError(field, _too_large(repr(typed), resource))
        base = (value * _GIB).to_integral_value(rounding=ROUND_CEILING)
        if base > MAX_AMOUNT:
            raise QuantityError(field, _too_large(repr(typed), resource))
        amount = int(base)
    if whole_gpus and is_gpu(resource) and amount % 1000:
        raise QuantityError(field, f"{typed!r} is not a whole number of GPUs: a GPU is not shared (write 0, 1, 2, ...)")
    return amount


def format_in_unit(amount: int | None, resource: str) -> str:
    """``amount`` as an editor's cell shows it, read back exactly by :func:`parse_in_unit`: cores and other whole
    units as a number (``2.5``, ``4``), bytes as a quantity with its unit (``96Gi``, ``1.5Gi``, ``512Mi``, ``2G``,
    ``2400128783 bytes``); empty for an unlimited amount (a blank cell)."""
    if is_unlimited(amount):
        return ""
    assert amount is not None
    shown = format_amount(amount, resource)
    if milli_scale(resource) == 1000 or not (shown.startswith("\u2248") or (shown.isdigit() and amount)):
        return shown
    return f"{amount} bytes"  # no suffix shows it exactly


def unit_decimal(amount: int | None, resource: str, places: int = 3) -> str | None:
    """The machine form of an average or a share (no Kubernetes quantity, which would write ``47976m`` GPUs): a
    decimal string in the resource's display unit (:func:`display_factor`: cores, GiB, whole units of the rest),
    rounded half-even to ``places`` decimals, trailing zeros dropped (``"47.976"``, ``"2.5"``, ``"4"``); ``None``
    when unlimited."""
    if is_unlimited(amount):
        return None
    assert amount is not None
    value = (Decimal(amount) / display_factor(resource)).quantize(Decimal(1).scaleb(-places))
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def json_quantities(amounts: Mapping[str, int], *, drop_zero: bool = False) -> dict[str, str | None]:
    """A resource list for JSON output: canonical Kubernetes quantities, sorted by name, and ``None`` (JSON null) for
    an unlimited amount instead of a sentinel number."""
    return {
        n: None if is_unlimited(a) else format_quantity(a, n) for n, a in sorted(amounts.items()) if a or not drop_zero
    }


def null_unbounded(value: object) -> object:
    """``value`` (JSON-ready: dicts, lists, numbers, text) with every unbounded amount, an int at or above
    ``MAX_AMOUNT``, replaced by ``None``: the engines' sentinels never reach JSON as numbers."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return None if value >= MAX_AMOUNT else value
    if isinstance(value, Mapping):
        return {k: null_unbounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [null_unbounded(v) for v in value]
    return value


def _decimal_suffix(amount: int) -> str:
    for suffix, factor in _DECIMAL_SUFFIXES.items():
        if amount % factor == 0:
            return f"{amount // factor}{suffix}"
    return str(amount)


def check_resource_name(name: object, field: str) -> str:
    """``name`` when it is a valid resource name, else ``QuantityError`` naming ``field``."""
    return _check_name(name, field)


def _check_name(name: object, field: str) -> str:
    if isinstance(name, str) and FLAVOR_MARK in name:  # a resource in a Kueue ResourceFlavor: ``cpu@spot``
        resource, flavor = split_flavor(name)
        if not flavor or len(flavor) > 253 or not FLAVOR_NAME_RE.match(flavor):
            raise QuantityError(
                field, f"{name!r}: {flavor!r} is not a valid ResourceFlavor name (a DNS-1123 subdomain, e.g. spot)"
            )
        _check_name(resource, field)
        return name
    if not isinstance(name, str) or not name or len(name) > 253 or not _NAME_RE.match(name):
        raise QuantityError(
            field,
            f"{name!r} is not a valid resource name (e.g. cpu, memory, nvidia.com/gpu, or cpu@spot for cpu in the "
            "ResourceFlavor spot)",
        )
    return name


class ResourceList(Mapping[str, int]):
    """An immutable mapping of resource name -> non-negative integer amount in base units.

    Missing names read as 0. Zero entries are kept only when given explicitly, because "defines the
    resource with 0" and "leaves it unset" differ for some rules (a capability of 0 forbids the resource,
    a missing capability does not limit it).
    """

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, int] | Iterable[tuple[str, int]] | None = None) -> None:
        items = dict(data or {})
        for name, amount in items.items():
            if not isinstance(amount, int) or isinstance(amount, bool):
                raise TypeError(f"ResourceList amount for {name!r} must be an int in base units, got {amount!r}")
        self._data: dict[str, int] = items
        self._hash: int | None = None

    # -- construction -------------------------------------------------------------------------------------
    @classmethod
    def trusted(cls, data: dict[str, int]) -> ResourceList:
        """Wrap ``data`` (already int base units, owned by the caller from now on) without checking or copying:
        for hot loops that build many lists from values they computed themselves."""
        obj = cls.__new__(cls)
        obj._data = data
        obj._hash = None
        return obj

    @property
    def raw(self) -> Mapping[str, int]:
        """The underlying dict, without a copy (read-only by convention): the fast path for hot loops."""
        return self._data

    @classmethod
    def parse(cls, data: object, field: str = "resources") -> ResourceList:
        """Parse ``{"cpu": "2", "memory": "4Gi"}`` (or ``None``) into base units, naming ``field`` on error."""
        return parse_resource_list(data, field)

    # -- mapping protocol ---------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> int:
        return self._data.get(name, 0)

    def __contains__(self, name: object) -> bool:
        return name in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ResourceList):
            other_data = other._data
        elif isinstance(other, Mapping):
            other_data = dict(other)
        else:
            return NotImplemented
        names = self._data.keys() | other_data.keys()
        return all(self._data.get(n, 0) == other_data.get(n, 0) for n in names)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset((n, a) for n, a in self._data.items() if a))
        return self._hash

    def __repr__(self) -> str:
        return f"ResourceList({self.to_quantities()!r})"

    # -- arithmetic ---------------------------------------------------------------------------------------
    def __add__(self, other: Mapping[str, int]) -> ResourceList:
        out = dict(self._data)
        for name, amount in other.items():
            out[name] = out.get(name, 0) + amount
        return ResourceList(out)

    def __sub__(self, other: Mapping[str, int]) -> ResourceList:
        """Subtract per resource; may go negative (use ``clamp()`` where a floor of 0 is meant)."""
        out = dict(self._data)
        for name, amount in other.items():
            out[name] = out.get(name, 0) - amount
        return ResourceList(out)

    def clamp(self) -> ResourceList:
        return ResourceList({n: max(a, 0) for n, a in self._data.items()})

    def minimum(self, other: Mapping[str, int]) -> ResourceList:
        """Per-resource minimum over the union of names (a missing name reads as 0)."""
        names = self._data.keys() | other.keys()
        return ResourceList({n: min(self._data.get(n, 0), other.get(n, 0)) for n in names})

    def maximum(self, other: Mapping[str, int]) -> ResourceList:
        names = self._data.keys() | other.keys()
        return ResourceList({n: max(self._data.get(n, 0), other.get(n, 0)) for n in names})

    def fits_in(self, other: Mapping[str, int], names: Iterable[str] | None = None) -> bool:
        """True when every amount (or those of ``names``) is <= the other's (missing reads as 0)."""
        return all(self._data.get(n, 0) <= other.get(n, 0) for n in (names if names is not None else self._data))

    def is_zero(self) -> bool:
        return not any(self._data.values())

    def only(self, names: Iterable[str]) -> ResourceList:
        keep = set(names)
        return ResourceList({n: a for n, a in self._data.items() if n in keep})

    def nonzero(self) -> ResourceList:
        return ResourceList({n: a for n, a in self._data.items() if a})

    @staticmethod
    def total(lists: Iterable[Mapping[str, int]]) -> ResourceList:
        out: dict[str, int] = {}
        for rl in lists:
            for name, amount in rl.items():
                out[name] = out.get(name, 0) + amount
        return ResourceList(out)

    # -- printing -----------------------------------------------------------------------------------------
    def to_quantities(self, *, drop_zero: bool = False) -> dict[str, str]:
        """Canonical Kubernetes quantities, sorted by name."""
        return {n: format_quantity(a, n) for n, a in sorted(self._data.items()) if a or not drop_zero}

    def items(self) -> ItemsView[str, int]:
        return self._data.items()

    def keys(self) -> KeysView[str]:
        return self._data.keys()

    def values(self) -> ValuesView[int]:
        return self._data.values()

    def get(self, name: str, default: int | None = None) -> int:  # type: ignore[override]
        """Like ``self[name]``: a missing name reads as 0 (the default is ignored, as it always was)."""
        return self._data.get(name, 0)

    def to_dict(self) -> dict[str, int]:
        """Base-unit integers, sorted by name (the stored form)."""
        return dict(sorted(self._data.items()))

    def describe(self, name: str) -> str:
        """One resource as a quantity, e.g. ``describe("memory") == "2Gi"``."""
        return format_quantity(self[name], name)


def parse_resource_list(data: object, field: str = "resources") -> ResourceList:
    """Parse a mapping of resource name -> quantity; ``None`` or ``{}`` is the empty list.

    Errors name the exact field path, e.g. ``capability.cpu: '-1' must be greater than or equal to 0``.
    """
    if data is None:
        return ResourceList()
    if isinstance(data, ResourceList):
        return data
    if not isinstance(data, Mapping):
        raise QuantityError(field, f"expected an object of resource name to quantity, got {type(data).__name__}")
    if len(data) > 64:
        raise QuantityError(field, "at most 64 resource names")
    out: dict[str, int] = {}
    for name, value in data.items():
        _check_name(name, f"{field}.{name}" if isinstance(name, str) else field)
        out[name] = parse_quantity(value, name, f"{field}.{name}")
    return ResourceList(out)


def parse_resource_list_each(data: object, field: str = "resources") -> tuple[ResourceList, list[QuantityError]]:
    """Like ``parse_resource_list`` but every entry on its own: the entries that parse, and one error per entry
    that does not (so a form or a request learns of every bad quantity at once, not of the first)."""
    if data is None or isinstance(data, ResourceList) or not isinstance(data, Mapping) or len(data) > 64:
        try:
            return parse_resource_list(data, field), []
        except QuantityError as exc:
            return ResourceList(), [exc]
    out: dict[str, int] = {}
    errors: list[QuantityError] = []
    for name, value in data.items():
        try:
            _check_name(name, f"{field}.{name}" if isinstance(name, str) else field)
            out[name] = parse_quantity(value, name, f"{field}.{name}")
        except QuantityError as exc:
            errors.append(exc)
    return ResourceList(out), errors
