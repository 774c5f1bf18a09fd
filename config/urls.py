"""Root URLs: the diagnosis app's pages and API, Django's admin and the login pages."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("diagnosis.urls")),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
]
