"""The integrators' JSON APIs: the session step API, /api/v1 (bearer tokens, OpenAPI) and the
CDS Hooks service at /cds-services (the EHR's JWTs). Included at the root by ``config.urls``."""

from django.urls import include, path

from diagnosis.integration import api, api_v1, cds_views, smart_views

urlpatterns = [
    path("api/cases/<int:pk>/step", api.case_step, name="api-case-step"),
    # Bearer-token API with an OpenAPI schema (see diagnosis/integration/api_v1.py).
    path("api/v1/", include((api_v1.urlpatterns, "api-v1"), namespace="api-v1")),
    # CDS Hooks 2.0 (see diagnosis/integration/cds_views.py)
    path("cds-services", cds_views.discovery, name="cds-discovery"),
    path("cds-services/<str:service_id>", cds_views.service, name="cds-service"),
    path("cds-services/<str:service_id>/feedback", cds_views.feedback, name="cds-feedback"),
    # SMART App Launch 2, EHR launch (see diagnosis/integration/smart_views.py)
    path("smart/launch", smart_views.launch, name="smart-launch"),
    path("smart/callback", smart_views.callback, name="smart-callback"),
]
