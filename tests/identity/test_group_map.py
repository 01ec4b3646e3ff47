"""FAIRWAY_OIDC_GROUP_MAP: its two forms, and a sentence naming the entry for each mistake; the settings check that
stops a process whose OpenID Connect settings cannot work; the groups claim read from nested claims."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from identity import provider
from identity.mapping import Grant, GroupMapError, groups_of, parse_group_map


def test_the_list_form_reads_roles_and_teams() -> None:
    text = "fairway-admins=admin, research-leads=department-lead:research-dept\nnlp=member:nlp,nlp-leads = team-lead : nlp,"
    assert parse_group_map(text) == (
        Grant("fairway-admins", "admin"),
        Grant("research-leads", "department-lead", "research-dept"),
        Grant("nlp", "member", "nlp"),
        Grant("nlp-leads", "team-lead", "nlp"),
    )
    assert parse_group_map("  ") == ()


def test_the_json_form_takes_group_names_with_commas_and_several_teams() -> None:
    text = '{"CN=ML, OU=Groups": ["member:nlp", "member:vision"], "Admins": "admin"}'
    assert parse_group_map(text) == (
        Grant("CN=ML, OU=Groups", "member", "nlp"),
        Grant("CN=ML, OU=Groups", "member", "vision"),
        Grant("Admins", "admin"),
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("nlp=owner:nlp", "the role 'owner'; the roles are admin, department-lead, team-lead, member"),
        ("nlp=member", "names no team: write nlp=member:<team>"),
        ("ops=admin:nlp", "gives admin a team"),
        ("nlp", "has no '='"),
        ("=member:nlp", "names no provider group"),
        ('{"a": 1}', "the role of 'a' is not a string"),
        ("{nope", "not valid JSON"),
    ],
)
def test_each_mistake_gets_a_sentence_naming_the_entry(text: str, says: str) -> None:
    with pytest.raises(GroupMapError) as caught:
        parse_group_map(text)
    assert "FAIRWAY_OIDC_GROUP_MAP" in str(caught.value) and says in str(caught.value)


def test_the_settings_check_refuses_what_cannot_work(settings) -> None:
    settings.FAIRWAY_OIDC = {"CLIENT_ID": ""}
    provider.check_settings()  # off: nothing to check
    good = {"CLIENT_ID": "fairway", "ISSUER": "https://idp.example/realms/x", "SCOPES": "openid groups"}
    settings.FAIRWAY_OIDC = good
    provider.check_settings()
    for change, says in [
        ({"ISSUER": ""}, "neither FAIRWAY_OIDC_ISSUER nor FAIRWAY_OIDC_DISCOVERY_URL"),
        ({"SIGN_ALGO": "HS256"}, "FAIRWAY_OIDC_SIGN_ALGO"),
        ({"SCOPES": "email"}, "must include openid"),
        ({"GROUP_MAP": "x=boss:y"}, "FAIRWAY_OIDC_GROUP_MAP"),
        ({"TIMEOUT_SECONDS": 0}, "FAIRWAY_OIDC_TIMEOUT_SECONDS"),
    ]:
        settings.FAIRWAY_OIDC = {**good, **change}
        with pytest.raises(ImproperlyConfigured, match=says):
            provider.check_settings()


def test_the_groups_claim_may_be_a_path_into_nested_claims() -> None:
    claims = {"groups": ["a", "b"], "resource_access": {"fairway": {"roles": ["lead"]}}, "one": "x", "n": {"k": 3}}
    assert groups_of(claims, "groups") == ["a", "b"]
    assert groups_of(claims, "resource_access.fairway.roles") == ["lead"]
    assert groups_of(claims, "one") == ["x"]
    assert groups_of(claims, "missing") == [] and groups_of(claims, "n.k") == [] and groups_of(claims, "one.x") == []
