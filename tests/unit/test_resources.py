"""ResourceList and Kubernetes quantities: exact integers in base units, clear errors naming the field."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.resources import (
    MAX_AMOUNT,
    UNLIMITED,
    UNLIMITED_INT64,
    QuantityError,
    ResourceList,
    format_amount,
    format_quantity,
    is_unlimited,
    parse_quantity,
    parse_resource_list,
)


@pytest.mark.parametrize(
    ("text", "resource", "expected"),
    [
        ("500m", "cpu", 500),
        ("2", "cpu", 2000),
        ("1.5", "cpu", 1500),
        (1.5, "cpu", 1500),
        (3, "cpu", 3000),
        ("0.1m", "cpu", 1),  # a fraction of the base unit rounds up, as Quantity.Value() does
        ("2Gi", "memory", 2 * 2**30),
        ("1.5Gi", "memory", 1536 * 2**20),
        ("1e3", "memory", 1000),
        ("1E3", "memory", 1000),
        ("2k", "memory", 2000),
        ("128974848", "memory", 128974848),
        ("129M", "memory", 129_000_000),
        ("1", "nvidia.com/gpu", 1000),  # scalar resources are milli-units, as in Volcano
        ("110", "pods", 110_000),
        ("10Gi", "ephemeral-storage", 10 * 2**30),
        ("2Mi", "hugepages-2Mi", 2 * 2**20),
        ("0", "cpu", 0),
    ],
)
def test_parse_quantity(text: object, resource: str, expected: int) -> None:
    assert parse_quantity(text, resource) == expected


def _through_the_client(digits: str, suffix: str, resource: str) -> int | str:
    """``parse_quantity`` of ``digits + suffix`` by the kubernetes client's parser alone (a ".0" makes it skip the
    integer path without changing the amount); an error as its message."""
    try:
        return parse_quantity(f"{digits}.0{suffix}", resource, "f")
    except QuantityError as error:
        return str(error)


@given(
    digits=st.one_of(st.integers(0, 10**6).map(str), st.text("0123456789", min_size=1, max_size=30)),
    suffix=st.sampled_from(["", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]),
    resource=st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "pods", "hugepages-2Mi"]),
)
def test_whole_quantities_read_as_the_kubernetes_client_reads_them(digits: str, suffix: str, resource: str) -> None:
    """The integer path for a whole number and a suffix gives the client's amount (rounded up), or the same
    error, for every resource kind."""
    try:
        ours: int | str = parse_quantity(digits + suffix, resource, "f")
    except QuantityError as error:
        ours = str(error).replace(repr(digits + suffix), "X")
    theirs = _through_the_client(digits, suffix, resource)
    if isinstance(theirs, str):
        theirs = theirs.replace(repr(f"{digits}.0{suffix}"), "X")
    assert ours == theirs


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("-1", "must be greater than or equal to 0"),
        (-2, "must be greater than or equal to 0"),
        ("abc", "is not a valid quantity"),
        ("1Zi", "is not a valid quantity"),
        ("", "is not a valid quantity"),
        ("1e40", "is too large"),
        ("9" * 30, "is too large"),
        ("1" * 70, "longer than 64 characters"),
        (True, "expected a quantity"),
        (None, "expected a quantity"),
        ([1], "expected a quantity"),
        (float("nan"), "is not a valid quantity"),
        ("２", "is not a valid quantity"),  # full-width digit
    ],
)
def test_parse_quantity_rejects_with_field(value: object, message: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(value, "cpu", "spec.capability.cpu")
    assert info.value.field == "spec.capability.cpu"
    assert str(info.value).startswith("spec.capability.cpu: ")
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("amount", "resource", "text"),
    [
        (2500, "cpu", "2500m"),
        (2000, "cpu", "2"),
        (4 * 2**30, "memory", "4Gi"),
        (1536 * 2**20, "memory", "1536Mi"),
        (1000, "memory", "1k"),
        (1001, "memory", "1001"),
        (2000, "nvidia.com/gpu", "2"),
        (500, "nvidia.com/gpu", "500m"),
        (0, "memory", "0"),
    ],
)
def test_format_quantity(amount: int, resource: str, text: str) -> None:
    assert format_quantity(amount, resource) == text


@given(st.integers(min_value=0, max_value=MAX_AMOUNT), st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "pods"]))
def test_format_then_parse_is_identity(amount: int, resource: str) -> None:
    assert parse_quantity(format_quantity(amount, resource), resource) == amount


def test_resource_list_parse_names_the_field() -> None:
    with pytest.raises(QuantityError) as info:
        parse_resource_list({"cpu": "1", "memory": "-1Gi"}, "guarantee")
    assert info.value.field == "guarantee.memory"
    with pytest.raises(QuantityError, match="not a valid resource name"):
        parse_resource_list({"CPU ": "1"}, "max")
    with pytest.raises(QuantityError, match="expected an object"):
        parse_resource_list(["cpu"], "min")


def test_resource_list_arithmetic_and_printing() -> None:
    a = parse_resource_list({"cpu": "2", "memory": "4Gi"})
    b = parse_resource_list({"cpu": "500m", "nvidia.com/gpu": "1"})
    assert (a + b).to_quantities() == {"cpu": "2500m", "memory": "4Gi", "nvidia.com/gpu": "1"}
    assert (a - b)["nvidia.com/gpu"] == -1000
    assert (a - b).clamp()["nvidia.com/gpu"] == 0
    assert a.minimum(b) == {"cpu": 500, "memory": 0, "nvidia.com/gpu": 0}
    assert b.fits_in(a + b) and not (a + b).fits_in(a)
    assert a["missing"] == 0 and "missing" not in a
    assert ResourceList({"cpu": 0}) == ResourceList() and hash(ResourceList({"cpu": 0})) == hash(ResourceList())
    assert ResourceList.total([a, b, a])["cpu"] == 4500
    assert a.describe("memory") == "4Gi"
    with pytest.raises(TypeError):
        ResourceList({"cpu": 1.5})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    "amount", [None, MAX_AMOUNT, UNLIMITED, UNLIMITED_INT64, UNLIMITED - 10**15, UNLIMITED_INT64 - 1]
)
def test_every_form_of_unlimited_reads_unlimited(amount: int | None) -> None:
    # one test for the three integer forms, and for what real amounts added or subtracted leave of them
    assert is_unlimited(amount)
    assert format_amount(amount, "nvidia.com/gpu") == "unlimited"


@given(st.integers(min_value=0, max_value=MAX_AMOUNT - 1))
def test_every_accepted_amount_below_the_ceiling_is_limited(amount: int) -> None:
    assert not is_unlimited(amount)


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (2400128783, "≈2.235 GiB"),  # a pro-rata share of memory: never ten digits of bytes, nor a false quantity
        (2 * 10**9, "2G"),  # not "1953125Ki"
        (2 * 10**9 + 2**20, "≈1.864 GiB"),
        (123456789, "≈117.738 MiB"),
        (3 * 2**29, "1.5Gi"),
        (3000 * 2**20, "3000Mi"),
        (100 * 10**6, "100M"),
        (1000, "1k"),  # below a MiB: the canonical quantity
    ],
)
def test_byte_amounts_read_in_gi_or_mi(amount: int, text: str) -> None:
    assert format_amount(amount, "memory") == text


def test_milli_units_are_never_approximated() -> None:
    assert format_amount(2400128783, "cpu") == "2400128.783"
    assert format_amount(2400128783, "nvidia.com/gpu") == "2400128.783"
