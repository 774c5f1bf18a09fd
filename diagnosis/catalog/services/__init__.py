"""Writes: every change to datasets, trainings and cases goes through these functions.

Each is keyword-only, atomic, checks permissions and raises ``ValidationError``
with a message a person can act on.
"""
