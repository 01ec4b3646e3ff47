"""API tokens and security events, squashed from ``0001_api_tokens`` .. ``0004_roles_synced_event`` (``replaces``: a
database that applied them all takes this one as applied).

Left out: ``0002_hash_drf_tokens``, which moved the keys of DRF's ``authtoken_token`` table (if the database had
one) into ``ApiToken`` and dropped that table. A new database has no such table; one that had it applied 0002."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('security', '0001_api_tokens'),
        ('security', '0002_hash_drf_tokens'),
        ('security', '0003_security_events'),
        ('security', '0004_roles_synced_event'),
    ]

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ApiToken',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(help_text='What the token is for, as its owner named it.', max_length=100)),
                ('prefix', models.CharField(db_index=True, help_text="The key's first characters.", max_length=12)),
                ('digest', models.CharField(help_text='SHA-256 of the key (hex).', max_length=64, unique=True)),
                ('read_only', models.BooleanField(default=False, help_text='Only safe methods (GET, HEAD, OPTIONS).')),
                ('created', models.DateTimeField(default=django.utils.timezone.now)),
                ('expires', models.DateTimeField()),
                ('last_used', models.DateTimeField(blank=True, null=True)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_tokens', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'API token',
                'ordering': ['-created', '-id'],
            },
        ),
        migrations.CreateModel(
            name='SecurityEvent',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('time', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ('actor', models.CharField(db_index=True, help_text="Who acted: a username, or 'anonymous' (not signed in).", max_length=150)),
                ('remote_address', models.CharField(blank=True, default='', help_text="The client's address (REMOTE_ADDR); empty outside a request.", max_length=64)),
                ('kind', models.CharField(choices=[('login', 'login'), ('logout', 'logout'), ('login_failed', 'login failed'), ('lockout', 'lockout (too many failed logins)'), ('token_created', 'token created'), ('token_revoked', 'token revoked'), ('token_refused', 'token refused (bad, expired or malformed)'), ('token_throttled', 'token requests throttled'), ('token_scope_refused', 'read-only token refused a write'), ('admin_change', 'admin change'), ('roles_synced', 'roles synced at a sign-in with OpenID Connect')], db_index=True, max_length=32)),
                ('target', models.CharField(blank=True, default='', help_text="What it was about: the username tried, the token, the admin's object, the path refused.", max_length=255)),
                ('outcome', models.CharField(choices=[('success', 'success'), ('failure', 'failure'), ('refused', 'refused')], max_length=16)),
                ('detail', models.TextField(blank=True, default='', help_text='The rest of the log line (key=value ...).')),
            ],
            options={
                'ordering': ['-time', '-id'],
                'indexes': [models.Index(fields=['kind', '-time'], name='security_event_kind_time')],
            },
        ),
    ]
