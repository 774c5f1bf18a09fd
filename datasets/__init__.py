"""Readers for the dataset files the project uses: UCI folders and Turney's test costs.

Pure Python (standard library, numpy and ``learners`` only): neither Django nor Celery is
needed to import it, so the Django import service, the benchmarks and the tests share it.

- :mod:`datasets.dataset`: :class:`UCIDataset` (what a reader returns) and :class:`UCIFormatError`.
- :mod:`datasets.uci_data`: ``.data`` files (rows of values, ``?`` = missing).
- :mod:`datasets.uci_names`: C4.5-format ``.names`` files (class values, attribute types).
- :mod:`datasets.uci_specs`: how to read the known clinical datasets, whose ``.names`` is prose.
- :mod:`datasets.turney_costs`: Turney's ``costs/`` folder (prices, groups, delays).
- :mod:`datasets.uci_folder`: :func:`read_uci_folder`, one dataset from one folder.
- :mod:`datasets.known`: :func:`load_known`, the project's datasets under ``shared/data/uci``.
- :mod:`datasets.plausible`: the demo datasets' plausible ranges and whole-number counts.
"""

from .dataset import UCIDataset, UCIFormatError
from .known import KNOWN_DATASETS, default_shared_dir, load_known
from .uci_folder import read_uci_folder

__all__ = [
    "KNOWN_DATASETS",
    "UCIDataset",
    "UCIFormatError",
    "default_shared_dir",
    "load_known",
    "read_uci_folder",
]
