"""The core's reads: ``raw_rows``, the SQL of the hot reads generated from the models' own
fields.  The domain's reads are the apps' (``diagnosis.catalog.selectors``,
``diagnosis.training.selectors``, ``diagnosis.clinic.selectors``, ...).
"""
