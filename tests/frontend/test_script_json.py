"""The pages' ``script_json`` filter writes exactly what Django's ``json_script`` writes, for any JSON value."""

from __future__ import annotations

from typing import Any

from django.utils.html import json_script
from hypothesis import given
from hypothesis import strategies as st

from frontend.templatetags.fairway import script_json

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON, st.text(min_size=1, max_size=12))
def test_script_json_is_json_script(value: Any, element_id: str) -> None:
    assert str(script_json(value, element_id)) == str(json_script(value, element_id))


def test_markup_in_the_data_cannot_close_the_script() -> None:
    out = str(script_json({"name": "</script><script>alert(1)</script>", "and": "a & b"}, "fig-x"))
    assert out.count("</script>") == 1 and "<script>alert" not in out and "&" not in out.split(">", 1)[1]
