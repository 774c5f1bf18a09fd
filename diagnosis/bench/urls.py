"""The bench's pages: experiments comparing learners over folds and error costs, and the
research figures.  Included at the root by ``config.urls``."""

from django.urls import path

from diagnosis.bench.views import experiments as experiment_views
from diagnosis.bench.views.research import research

urlpatterns = [
    path("research/", research, name="research"),
    # The bench (issue 14): experiments comparing learners over folds and error costs.
    path("experiments/", experiment_views.experiment_list, name="experiment-list"),
    path("experiments/new/", experiment_views.experiment_new, name="experiment-new"),
    path("experiments/compare/", experiment_views.experiment_compare, name="experiment-compare"),
    path("experiments/<int:pk>/", experiment_views.experiment_detail, name="experiment-detail"),
    path(
        "experiments/<int:pk>/progress.json",
        experiment_views.experiment_progress,
        name="experiment-progress",
    ),
    path(
        "experiments/<int:pk>/export.csv",
        experiment_views.experiment_export_csv,
        name="experiment-export-csv",
    ),
    path(
        "experiments/<int:pk>/export.json",
        experiment_views.experiment_export_json,
        name="experiment-export-json",
    ),
]
