"""Root URLs: each app's pages and APIs, Django's admin and the login pages."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("diagnosis.training.urls")),
    path("", include("diagnosis.clinic.urls")),
    path("", include("diagnosis.bench.urls")),
    path("", include("diagnosis.integration.urls")),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
]

# JSON under /api/, pages elsewhere; 503 with Retry-After when the database is out.
handler400 = "diagnosis.views.errors.bad_request"
handler403 = "diagnosis.views.errors.permission_denied"
handler404 = "diagnosis.views.errors.not_found"
handler500 = "diagnosis.views.errors.server_error"
