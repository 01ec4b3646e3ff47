from django.urls import path

from identity import views

# The names mozilla-django-oidc reverses (the callback's absolute URL is the redirect URI to register at the provider).
urlpatterns = [
    path("authenticate/", views.SignIn.as_view(), name="oidc_authentication_init"),
    path("callback/", views.Callback.as_view(), name="oidc_authentication_callback"),
]
