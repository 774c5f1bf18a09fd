"""URLs of the clinic: the clinician's screens and the model pages.

Included at the root by ``config.urls`` (which adds the admin and login pages).
"""

from django.urls import path

from . import views
from .views import confirmations as confirmation_views
from .views.teams import team_cases

urlpatterns = [
    path("", views.home, name="home"),
    path("models/<int:pk>/", views.model_detail, name="model-detail"),
    path("models/<int:pk>/card/", views.model_card, name="model-card"),
    path("models/<int:pk>/tree/", views.model_tree, name="model-tree"),
    path("models/<int:pk>/trees/", views.model_ensemble, name="model-ensemble"),
    path("models/<int:pk>/decision/", views.model_decision, name="model-decision"),
    path("models/<int:pk>/progress.json", views.model_progress, name="model-progress"),
    path("cases/new/", views.case_new, name="case-new"),
    path("cases/<int:pk>/", views.case_detail, name="case-detail"),
    path("cases/<int:pk>/summary/", views.case_summary, name="case-summary"),
    path(
        "cases/<int:pk>/confirmed-diagnosis/",
        confirmation_views.case_confirmed_diagnosis,
        name="case-confirmed-diagnosis",
    ),
    path(
        "cases/confirmed-diagnoses/",
        confirmation_views.confirmed_diagnoses_upload,
        name="confirmed-diagnoses-upload",
    ),
    path("team/", team_cases, name="team-cases"),  # a lead clinician's teams' cases (read)
]
