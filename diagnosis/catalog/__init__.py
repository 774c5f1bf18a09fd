"""The catalog: datasets, their priced tests and groups, error matrices, their import, the
automatic prices, and the catalog's change history."""
