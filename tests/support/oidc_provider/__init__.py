"""A small, real OpenID Connect provider for the sign-in tests: a Django project of its own with django-oauth-toolkit
(OIDC on, RS256 with the key the test generates), run by ``tests.support.oidc_server`` in a separate process. Its
users and their groups live in its own SQLite database; its ID tokens and userinfo carry a ``groups`` claim (scope
``groups``, as Dex asks for)."""
