"""The catalog's change history (who read or changed a case is the clinic's
:class:`~diagnosis.clinic.models.audit.CaseAccess`).

The historical models are the catalog app's and keep the tables the diagnosis app gave them
(``diagnosis_historical<model>``, named in ``table_name``), with their rows.

* Every edit of a dataset (class labels), a test (price, discounted price, group,
  choices...), a group or an error matrix is kept with its old and new values by
  django-simple-history: the historical tables registered below.
"""

from __future__ import annotations

from simple_history import register

from .datasets import Dataset, DiagnosticTest, ErrorMatrix, TestGroup

# The catalog's change history (old and new values, who, when) by django-simple-history.
# Registered here rather than on the models so the catalog's own module stays as it is.
CATALOG_MODELS = (Dataset, TestGroup, DiagnosticTest, ErrorMatrix)
for _model in CATALOG_MODELS:
    if not hasattr(_model, "history"):
        register(  # into the model's own app (the catalog)
            _model,
            records_class=None,
            table_name=f"diagnosis_historical{_model._meta.model_name}",
        )
