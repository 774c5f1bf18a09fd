"""Pure helpers both sides of the app use: translators and parsers that read and write nothing.

The typed seams and their stored JSON: a model's prices (``costs.CostSnapshot``), the advice
(``advice.Advice``), a model's codes to words (``vocabulary``); money to text (``money``), the
training form's learners (``learner_registry``, ``learner_names``), request and upload parsing
(``validation``, ``csv_table``), the bench's two baselines (``baselines``).
A module here imports no other part of ``diagnosis`` (no models, no services, no selectors);
what needs the database is a read (``selectors``) or a write (``services``).
``tests/diagnosis/test_layers.py`` checks it.
"""
