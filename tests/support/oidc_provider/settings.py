"""The test provider's settings: everything from the environment ``tests.support.oidc_server`` sets."""

from __future__ import annotations

import os

SECRET_KEY = os.environ["PROVIDER_SECRET_KEY"]
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
    "tests.support.oidc_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "tests.support.oidc_provider.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["PROVIDER_DATABASE"]}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Its database is new each time and only the test reads it: the tables are made straight from the models at start-up
# (wsgi.py; no migration files run, 0.3 s instead of 3), and passwords and client secrets are hashed with MD5 (the
# provider's own hashing is not what the tests are about; PBKDF2 cost about a second per sign-in).
MIGRATION_MODULES = {app: None for app in ("auth", "contenttypes", "sessions", "oauth2_provider")}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
USE_TZ = True
LOGIN_URL = "/accounts/login/"
# its own cookie names: a browser keeps cookies per host, not per port, and Fairway runs on the same machine
SESSION_COOKIE_NAME = "provider_session"
CSRF_COOKIE_NAME = "provider_csrf"

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": os.environ["PROVIDER_RSA_KEY"],
    "OIDC_ISS_ENDPOINT": os.environ["PROVIDER_ISSUER"],
    "PKCE_REQUIRED": True,
    "SCOPES": {
        "openid": "OpenID Connect",
        "email": "e-mail address",
        "profile": "name",
        "groups": "group memberships",
    },
    "OAUTH2_VALIDATOR_CLASS": "tests.support.oidc_provider.validator.GroupsValidator",
}
