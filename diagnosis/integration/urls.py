"""The integrators' JSON APIs: the session step API and /api/v1 (bearer tokens, OpenAPI).
Included at the root by ``config.urls``."""

from django.urls import include, path

from diagnosis.integration import api, api_v1

urlpatterns = [
    path("api/cases/<int:pk>/step", api.case_step, name="api-case-step"),
    # Bearer-token API with an OpenAPI schema (see diagnosis/integration/api_v1.py).
    path("api/v1/", include((api_v1.urlpatterns, "api-v1"), namespace="api-v1")),
]
