"""The tokens of DRF's ``rest_framework.authtoken`` (kept in clear in ``authtoken_token``) moved into ApiToken: their
SHA-256 and first characters only, named "token from before", expiring after the default lifetime from now; then the
plaintext table is dropped. The keys keep working (same ``Authorization: Token <key>`` header).

Not reversible into plaintext (nothing keeps the keys): going back leaves the hashed tokens in place."""

import datetime
import hashlib

from django.conf import settings
from django.db import migrations
from django.utils import timezone

TABLE = "authtoken_token"


def _aware(created):
    """SQLite's cursor gives the stored UTC time without its zone."""
    if isinstance(created, str):
        created = datetime.datetime.fromisoformat(created)
    return timezone.make_aware(created, datetime.UTC) if timezone.is_naive(created) else created


def hash_drf_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("security", "ApiToken")
    quote = schema_editor.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {quote('key')}, {quote('user_id')}, {quote('created')} FROM {quote(TABLE)}")
        rows = cursor.fetchall()
    expires = timezone.now() + datetime.timedelta(days=settings.FAIRWAY["TOKEN_LIFETIME_DAYS"])
    ApiToken.objects.bulk_create(
        ApiToken(
            user_id=user_id,
            name="token from before",
            prefix=key[:12],
            digest=hashlib.sha256(key.encode("utf-8")).hexdigest(),
            created=_aware(created),
            expires=expires,
        )
        for key, user_id, created in rows
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {quote(TABLE)}")


class Migration(migrations.Migration):

    dependencies = [
        ('security', '0001_api_tokens'),
    ]

    operations = [
        migrations.RunPython(hash_drf_tokens, migrations.RunPython.noop),
    ]
