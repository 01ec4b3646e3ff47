"""Sign-in with the organisation's identities: OpenID Connect through mozilla-django-oidc, the identity provider's
groups mapped to Fairway's teams and the admin role (docs/security.md#sign-in-with-openid-connect)."""
