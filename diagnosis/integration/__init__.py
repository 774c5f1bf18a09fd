"""Integration: the JSON step API, /api/v1 for other systems, and the bearer tokens they present."""
