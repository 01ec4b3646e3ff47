"""The clusters' kubeconfigs are encrypted at rest (Fernet with ``FAIRWAY_SECRET_KEYS``), readable only through
``Cluster.read_kubeconfig()``, write-only in the admin, and survive a key rotation (``manage.py rotate_secrets``)."""

from __future__ import annotations

import html
import re
from io import StringIO
from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client

from scheduling.models import Cluster
from security.crypto import SecretUnreadable, validate_keys

pytestmark = pytest.mark.django_db

SECRET = "s3cr3t-t0ken-of-the-adapter"
KUBECONFIG = f"""apiVersion: v1
kind: Config
clusters: [{{name: east, cluster: {{server: "https://127.0.0.1:6443"}}}}]
users: [{{name: fairway, user: {{token: {SECRET}}}}}]
contexts: [{{name: east, context: {{cluster: east, user: fairway}}}}]
current-context: east
"""


def stored(cluster: Cluster) -> str:
    """What the database holds for the kubeconfig (every column of the row, as text)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM scheduling_cluster WHERE id = %s", [cluster.pk])
        return " ".join(str(v) for v in cursor.fetchone())


def test_the_kubeconfig_is_encrypted_at_rest_and_read_through_one_accessor() -> None:
    cluster = Cluster.objects.create(name="east", source="kubernetes", kubeconfig=KUBECONFIG)
    assert SECRET not in stored(cluster) and "current-context" not in stored(cluster)
    cluster = Cluster.objects.get(pk=cluster.pk)
    assert cluster.kubeconfig_set and cluster.read_kubeconfig() == KUBECONFIG
    with pytest.raises(AttributeError, match="write-only"):
        _ = cluster.kubeconfig
    cluster.kubeconfig = ""
    cluster.save()
    assert not Cluster.objects.get(pk=cluster.pk).kubeconfig_set


def test_rotation_re_encrypts_with_the_first_key_so_the_old_key_can_go(settings: Any) -> None:
    from scheduling.kube.adapter import Adapter

    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FAIRWAY_SECRET_KEYS = [old]
    cluster = Cluster.objects.create(name="east", source="kubernetes", kubeconfig=KUBECONFIG)
    Cluster.objects.create(name="west")  # none stored: nothing to rotate
    settings.FAIRWAY_SECRET_KEYS = [new, old]  # the new key first, the old one still there to decrypt
    out = StringIO()
    call_command("rotate_secrets", stdout=out)
    assert out.getvalue().strip() == "re-encrypted 1 kubeconfig with the first key"
    settings.FAIRWAY_SECRET_KEYS = [new]  # the old key removed from the settings
    cluster = Cluster.objects.get(pk=cluster.pk)
    assert cluster.read_kubeconfig() == KUBECONFIG
    adapter = Adapter(cluster)  # the adapter reads it through read_kubeconfig()
    assert adapter.api.configuration.host == "https://127.0.0.1:6443"
    assert adapter.api.configuration.api_key["BearerToken"] == f"Bearer {SECRET}"


def test_without_rotation_a_removed_key_leaves_the_secret_unreadable(settings: Any) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FAIRWAY_SECRET_KEYS = [old]
    cluster = Cluster.objects.create(name="east", source="kubernetes", kubeconfig=KUBECONFIG)
    settings.FAIRWAY_SECRET_KEYS = [new]
    with pytest.raises(SecretUnreadable, match="cannot be decrypted with any key of FAIRWAY_SECRET_KEYS"):
        Cluster.objects.get(pk=cluster.pk).read_kubeconfig()
    with pytest.raises(CommandError, match=r"cluster east: .*nothing was re-encrypted"):
        call_command("rotate_secrets", stdout=StringIO())


def test_keys_that_are_not_fernet_keys_are_refused_naming_the_variable() -> None:
    with pytest.raises(ValueError, match=r"FAIRWAY_SECRET_KEYS: key 2 is not a Fernet key"):
        validate_keys([Fernet.generate_key().decode(), "short"])
    with pytest.raises(ValueError, match="holds no key"):
        validate_keys([])


@pytest.fixture
def admin_client(make_user: Any) -> Client:
    user = make_user("root", staff=True)
    user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


def form_data(page: str) -> dict[str, str]:
    """The change form's fields as the browser would send them back (inputs, selects and textareas)."""
    data: dict[str, str] = {}
    for name, value in re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', page):
        data.setdefault(name, value)
    for tag in re.findall(r"<input[^>]*>", page):
        if 'type="checkbox"' in tag and "checked" in tag:
            data[re.search(r'name="([^"]+)"', tag).group(1)] = "on"  # type: ignore[union-attr]
    for name, body in re.findall(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', page, re.S):
        chosen = re.search(r'<option value="([^"]*)"[^>]*selected', body)
        data[name] = chosen.group(1) if chosen else ""
    for name, text in re.findall(r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', page, re.S):
        data[name] = html.unescape(text.strip("\n"))
    return {k: v for k, v in data.items() if k not in {"_addanother", "_continue", "_save"}}


def test_the_admin_never_shows_the_kubeconfig_and_replaces_it_only_when_one_is_typed(admin_client: Client) -> None:
    cluster = Cluster.objects.create(name="east", source="kubernetes", kubeconfig=KUBECONFIG)
    url = f"/admin/scheduling/cluster/{cluster.pk}/change/"
    page = admin_client.get(url).content.decode()
    assert SECRET not in page and "current-context: east" not in page and "Currently: set (never shown)" in page
    data = form_data(page)
    assert data["kubeconfig"] == ""
    data["description"] = "edited"
    r = admin_client.post(url, data)  # saved without typing a kubeconfig: the stored one stays
    assert r.status_code == 302, r.content.decode()[:2000]
    cluster = Cluster.objects.get(pk=cluster.pk)
    assert cluster.description == "edited" and cluster.read_kubeconfig() == KUBECONFIG

    replacement = KUBECONFIG.replace(SECRET, "another-token")
    r = admin_client.post(url, {**form_data(admin_client.get(url).content.decode()), "kubeconfig": replacement})
    assert r.status_code == 302
    assert Cluster.objects.get(pk=cluster.pk).read_kubeconfig() == replacement

    broken = KUBECONFIG.replace("current-context: east", "current-context: west")
    r = admin_client.post(url, {**form_data(admin_client.get(url).content.decode()), "kubeconfig": broken})
    assert r.status_code == 200 and "is not one of its contexts" in r.content.decode()
    assert SECRET not in r.content.decode()  # the form shown again does not echo what was typed
    assert Cluster.objects.get(pk=cluster.pk).read_kubeconfig() == replacement

    r = admin_client.post(url, {**form_data(admin_client.get(url).content.decode()), "clear_kubeconfig": "on"})
    assert r.status_code == 302
    assert not Cluster.objects.get(pk=cluster.pk).kubeconfig_set
    assert "Currently: not set" in admin_client.get(url).content.decode()


def test_no_dashboard_page_shows_the_kubeconfig(admin_client: Client) -> None:
    Cluster.objects.create(name="east", source="kubernetes", kubeconfig=KUBECONFIG)
    for path in ("/overview/?cluster=east", "/nodes/?cluster=east", "/admin/scheduling/cluster/", "/api/v1/clusters/"):
        r = admin_client.get(path)
        assert r.status_code == 200, path
        assert SECRET not in r.content.decode(), path
