from django.contrib.auth import views as auth_views
from django.urls import include, path

from tests.support.oidc_provider import seed

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("seed/user/", seed.user),
    path("seed/client/", seed.client),
]
