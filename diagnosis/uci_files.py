"""Read UCI-style dataset folders and Turney's test-cost files.

A pure module (standard library, numpy and ``learners`` only) so that both the
Django import service and the benchmarks can use it.

A folder holds one or more ``.data`` files (comma or whitespace separated,
``?`` = missing), usually a ``.names`` file, and optionally Turney's
``costs/`` folder (``.expense``: full and discounted price, ``.cost``: full
price, ``.group``, ``.delay``), matched to features by test name.

UCI's ``.names`` files for the clinical datasets are prose, not C4.5 format,
so each known dataset has a built-in :class:`_Spec` chosen by the data file's
name; any other folder needs a C4.5-format ``.names`` file (class values on the
first line, then ``name: continuous.`` or ``name: v1, v2.`` per attribute, the
class being the last column of the data).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from learners import CostModel

__all__ = ["UCIDataset", "UCIFormatError", "KNOWN_DATASETS", "load_known", "read_uci_folder"]


class UCIFormatError(ValueError):
    """A UCI file could not be read; the message names the file, row and column."""


@dataclass(frozen=True)
class UCIDataset:
    """One dataset read from a UCI folder.

    Attributes
    ----------
    name : str
    feature_names : list of str
    categorical : list of int
        Indices of nominal features (values are the file's codes).
    X : ndarray of float, shape (n_cases, n_features)
        NaN marks a missing value.
    y : ndarray of int, shape (n_cases,)
        Index into ``class_labels``.
    class_labels : list of str
    costs : learners.CostModel or None
        Turney's prices, or None when the folder has no costs.
    description : str
    """

    name: str
    feature_names: list[str]
    categorical: list[int]
    X: np.ndarray
    y: np.ndarray
    class_labels: list[str]
    costs: CostModel | None
    description: str = ""

    @property
    def class_counts(self) -> dict[str, int]:
        """Number of cases of each class, by label."""
        counts = np.bincount(self.y, minlength=len(self.class_labels))
        return {label: int(n) for label, n in zip(self.class_labels, counts)}


# --------------------------------------------------------------- the specs
@dataclass(frozen=True)
class _Spec:
    """How to read one known dataset's data file (UCI's .names is prose)."""

    key: str
    columns: tuple[str, ...]  # every column of the data file, in order
    class_column: str
    class_labels: Callable[[dict], tuple[str, ...]]
    class_of: Callable[[float, dict], int]  # raw class value -> class index
    categorical: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()  # columns that are neither feature nor class
    zero_is_missing: tuple[str, ...] = ()
    cost_aliases: Mapping[str, str] = field(default_factory=dict)  # cost-file name -> feature
    derived: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    free: Callable[[dict], tuple[str, ...]] = lambda options: ()
    options: Mapping[str, object] = field(default_factory=dict)  # name -> default
    description: str = ""


def _binary_heart(options) -> tuple[str, ...]:
    return ("no disease (num 0)", "disease (num 1-4)") if options["binary"] else (
        "0", "1", "2", "3", "4"
    )


def _heart_class(value: float, options) -> int:
    if value not in (0, 1, 2, 3, 4):
        raise ValueError("num must be 0..4")
    return int(value > 0) if options["binary"] else int(value)


def _coded(codes: Sequence[float]) -> Callable[[float, dict], int]:
    def class_of(value: float, options) -> int:
        if value not in codes:
            raise ValueError(f"class must be one of {list(codes)}")
        return list(codes).index(value)

    return class_of


_THYROID_HISTORY = (
    "age", "sex", "on_thyroxine", "query_on_thyroxine", "on_antithyroid_medication", "sick",
    "pregnant", "thyroid_surgery", "I131_treatment", "query_hypothyroid", "query_hyperthyroid",
    "lithium", "goitre", "tumor", "hypopituitary", "psych",
)

_SPECS: dict[str, _Spec] = {
    "processed.cleveland": _Spec(
        key="heart",
        columns=("age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang",
                 "oldpeak", "slope", "ca", "thal", "num"),
        class_column="num",
        class_labels=_binary_heart,
        class_of=_heart_class,
        categorical=("sex", "cp", "fbs", "restecg", "exang", "slope", "thal"),
        options={"binary": True},
        description="UCI heart disease, Cleveland (303 patients); class num, binarized 0 vs >0 "
        "as in paper 000 unless binary=False.",
    ),
    "hepatitis": _Spec(
        key="hepatitis",
        columns=("class", "age", "sex", "steroid", "antivirals", "fatigue", "malaise", "anorexia",
                 "liver_big", "liver_firm", "spleen_palpable", "spiders", "ascites", "varices",
                 "bilirubin", "alk_phosphate", "sgot", "albumin", "protime", "histology"),
        class_column="class",
        class_labels=lambda options: ("DIE", "LIVE"),
        class_of=_coded((1, 2)),
        categorical=("sex", "steroid", "antivirals", "fatigue", "malaise", "anorexia", "liver_big",
                     "liver_firm", "spleen_palpable", "spiders", "ascites", "varices", "histology"),
        cost_aliases={"antviral": "antivirals"},  # Turney's spelling
        description="UCI hepatitis (155 patients); class in the first column, 1 = DIE, 2 = LIVE.",
    ),
    "ann-thyroid": _Spec(
        key="thyroid",
        columns=(*_THYROID_HISTORY, "TSH", "T3", "TT4", "T4U", "FTI", "class"),
        class_column="class",
        # Class 1/2 names as in paper 003 (its Tables 2-3 match the test counts 73/177).
        class_labels=lambda options: ("hypothyroid", "hyperthyroid", "normal"),
        class_of=_coded((1, 2, 3)),
        categorical=_THYROID_HISTORY[1:],
        derived={"FTI": ("TT4", "T4U")},
        free=lambda options: _THYROID_HISTORY if options["questionnaire_free"] else (),
        options={"questionnaire_free": False},
        description="UCI ann-thyroid (Quinlan/Werner); FTI is derived from TT4 and T4U and costs "
        "their marginal price; questionnaire_free=True makes the 16 history answers free "
        "(paper 003).",
    ),
    "pima-indians-diabetes": _Spec(
        key="pima",
        columns=("pregnancies", "glucose", "blood_pressure", "skin_thickness", "insulin", "bmi",
                 "pedigree", "age", "class"),
        class_column="class",
        class_labels=lambda options: ("negative", "positive"),
        class_of=_coded((0, 1)),
        zero_is_missing=("glucose", "blood_pressure", "skin_thickness", "insulin", "bmi"),
        description="Pima Indians diabetes (768 women; licence unclear); zeros in glucose, blood "
        "pressure, skin thickness, insulin and BMI are missing values.",
    ),
    "bupa": _Spec(
        key="bupa",
        columns=("mcv", "alkphos", "sgpt", "sgot", "gammagt", "drinks", "selector"),
        class_column="drinks",
        class_labels=lambda options: ("drinks < 3", "drinks >= 3"),
        class_of=lambda value, options: int(value >= 3),
        dropped=("selector",),
        description="BUPA liver disorders (345); class = drinks >= 3 half-pints a day (Turney "
        "1995); the selector column is a train/test split marker and is dropped.",
    ),
}


def _spec_for(data_file: Path) -> _Spec | None:
    stem = data_file.name[: -len(".data")]
    if stem in _SPECS:
        return _SPECS[stem]
    if stem.startswith("ann-"):
        return _SPECS["ann-thyroid"]
    return None


# ------------------------------------------------------------ the reader
def read_uci_folder(path, *, name: str | None = None, **options) -> UCIDataset:
    """Read one dataset from a UCI-style folder.

    Parameters
    ----------
    path : str or Path
        The folder.
    name : str, optional
        Stem of the ``.data`` file to read (e.g. ``"ann-train"``) when the
        folder holds several; also the dataset's name (default: the stem).
    **options
        Dataset-specific: ``binary`` (heart, default True),
        ``questionnaire_free`` (thyroid, default False).

    Raises
    ------
    UCIFormatError
        For a missing or malformed file, naming file, row and column.
    TypeError
        For an option the dataset does not have.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise UCIFormatError(f"{folder}: not a folder")
    data_file = _pick_data_file(folder, name)
    spec = _spec_for(data_file)
    if spec is None:
        columns, class_column, class_values, categorical_values = _read_c45_names(folder, data_file)
        return _read_generic(folder, data_file, name, columns, class_column, class_values,
                             categorical_values, options)
    unknown = set(options) - set(spec.options)
    if unknown:
        raise TypeError(f"dataset {spec.key!r} has no option {sorted(unknown)[0]!r}; "
                        f"its options are {sorted(spec.options) or 'none'}")
    settings = {**spec.options, **options}
    rows = _read_rows(data_file, len(spec.columns))
    features = [c for c in spec.columns if c != spec.class_column and c not in spec.dropped]
    columns = {c: i for i, c in enumerate(spec.columns)}
    X = np.empty((len(rows), len(features)))
    y = np.empty(len(rows), dtype=np.int64)
    class_index = columns[spec.class_column]
    for r, (line_number, fields) in enumerate(rows):
        for j, feature in enumerate(features):
            X[r, j] = _number(fields[columns[feature]], data_file, line_number, feature)
        raw = _number(fields[class_index], data_file, line_number, spec.class_column)
        try:
            y[r] = spec.class_of(raw, settings)
        except ValueError as error:
            raise UCIFormatError(
                f"{data_file.name}: row {line_number}, column {spec.class_column!r}: "
                f"class value {fields[class_index]!r}: {error}"
            ) from None
    for feature in spec.zero_is_missing:
        column = X[:, features.index(feature)]
        column[column == 0] = np.nan
    costs = _read_costs(
        folder, features, aliases=spec.cost_aliases, derived=spec.derived,
        free=spec.free(settings),
    )
    return UCIDataset(
        name=name or data_file.name[: -len(".data")],
        feature_names=features,
        categorical=[features.index(c) for c in spec.categorical],
        X=X,
        y=y,
        class_labels=list(spec.class_labels(settings)),
        costs=costs,
        description=spec.description,
    )


def _pick_data_file(folder: Path, name: str | None) -> Path:
    candidates = sorted(folder.glob("*.data"))
    if name is not None:
        chosen = folder / f"{name}.data"
        if chosen not in candidates:
            raise UCIFormatError(
                f"{folder}: no {name}.data (found {[c.name for c in candidates] or 'none'})"
            )
        return chosen
    if len(candidates) != 1:
        raise UCIFormatError(
            f"{folder}: expected one .data file, found {[c.name for c in candidates] or 'none'}; "
            "pass name= to choose"
        )
    return candidates[0]


def _read_rows(data_file: Path, n_columns: int) -> list[tuple[int, list[str]]]:
    try:
        text = data_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UCIFormatError(f"{data_file.name}: cannot be read ({error})") from None
    rows = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        fields = [f.strip() for f in line.split(",")] if "," in line else line.split()
        if len(fields) != n_columns:
            raise UCIFormatError(
                f"{data_file.name}: row {line_number} has {len(fields)} columns, "
                f"expected {n_columns}"
            )
        rows.append((line_number, fields))
    if not rows:
        raise UCIFormatError(f"{data_file.name}: no data rows")
    return rows


def _number(text: str, data_file: Path, line_number: int, column: str) -> float:
    if text == "?":
        return float("nan")
    try:
        value = float(text)
    except ValueError:
        raise UCIFormatError(
            f"{data_file.name}: row {line_number}, column {column!r}: {text!r} is not a number"
        ) from None
    if not np.isfinite(value):
        raise UCIFormatError(
            f"{data_file.name}: row {line_number}, column {column!r}: {text!r} is not finite"
        )
    return value


# ------------------------------------------------- generic C4.5 .names files
_COMMENT = re.compile(r"\|.*$")


def _read_c45_names(folder: Path, data_file: Path):
    names_files = sorted(folder.glob("*.names"))
    if len(names_files) != 1:
        raise UCIFormatError(
            f"{folder}: {data_file.name} is not a known dataset, so exactly one C4.5-format "
            f".names file is needed (found {len(names_files)})"
        )
    names_file = names_files[0]
    entries = []
    for line_number, line in enumerate(names_file.read_text(encoding="utf-8").splitlines(), 1):
        line = _COMMENT.sub("", line).strip()
        if line:
            entries.append((line_number, line.rstrip(".").strip()))
    if not entries:
        raise UCIFormatError(f"{names_file.name}: empty")
    class_line, class_text = entries[0]
    class_values = [v.strip() for v in class_text.split(",") if v.strip()]
    if ":" in class_text or len(class_values) < 2:
        raise UCIFormatError(
            f"{names_file.name}: row {class_line}: the first entry must list the class values "
            "(C4.5 format), e.g. 'sick, healthy.'"
        )
    columns: list[str] = []
    categorical_values: dict[str, list[str] | None] = {}
    for line_number, text in entries[1:]:
        if ":" not in text:
            raise UCIFormatError(
                f"{names_file.name}: row {line_number}: expected 'name: continuous.' or "
                f"'name: v1, v2.', got {text!r}"
            )
        attribute, kind = (part.strip() for part in text.split(":", 1))
        columns.append(attribute)
        if kind == "continuous":
            continue
        if kind == "ignore":
            categorical_values[attribute] = None
            continue
        values = [v.strip() for v in kind.split(",") if v.strip()]
        if not values:
            raise UCIFormatError(
                f"{names_file.name}: row {line_number}: no values for {attribute!r}"
            )
        categorical_values[attribute] = values
    class_column = "class"
    while class_column in columns:
        class_column += "_"
    return [*columns, class_column], class_column, class_values, categorical_values


def _read_generic(folder, data_file, name, columns, class_column, class_values,
                  categorical_values, options) -> UCIDataset:
    if options:
        raise TypeError(f"{data_file.name} is not a known dataset; it has no options")
    rows = _read_rows(data_file, len(columns))
    ignored = {c for c, values in categorical_values.items() if values is None}
    features = [c for c in columns if c != class_column and c not in ignored]
    X = np.empty((len(rows), len(features)))
    y = np.empty(len(rows), dtype=np.int64)
    for r, (line_number, fields) in enumerate(rows):
        for j, feature in enumerate(features):
            text = fields[columns.index(feature)]
            values = categorical_values.get(feature)
            if values is None or text == "?":
                X[r, j] = _number(text, data_file, line_number, feature)
            elif text in values:
                X[r, j] = values.index(text)
            else:
                raise UCIFormatError(
                    f"{data_file.name}: row {line_number}, column {feature!r}: {text!r} is not "
                    f"one of {values}"
                )
        label = fields[-1]
        if label not in class_values:
            raise UCIFormatError(
                f"{data_file.name}: row {line_number}, column {class_column!r}: class {label!r} "
                f"is not one of {class_values}"
            )
        y[r] = class_values.index(label)
    return UCIDataset(
        name=name or data_file.name[: -len(".data")],
        feature_names=features,
        categorical=[j for j, f in enumerate(features) if categorical_values.get(f)],
        X=X,
        y=y,
        class_labels=class_values,
        costs=_read_costs(folder, features),
        description=f"read from {data_file.name} with C4.5 attribute types",
    )


# --------------------------------------------------------- Turney's costs
def _read_costs(folder: Path, features: Sequence[str], *, aliases=None, derived=None,
                free=()) -> CostModel | None:
    cost_folder = folder / "costs"
    if not cost_folder.is_dir():
        return None
    aliases = dict(aliases or {})
    derived = dict(derived or {})

    def only(suffix: str) -> Path | None:
        found = sorted(cost_folder.glob(f"*{suffix}"))
        if len(found) > 1:
            raise UCIFormatError(
                f"{cost_folder}: several {suffix} files: {[f.name for f in found]}"
            )
        return found[0] if found else None

    expense, cost = only(".expense"), only(".cost")
    if expense is None and cost is None:
        raise UCIFormatError(f"{cost_folder}: no .expense or .cost file")
    index = {f: j for j, f in enumerate(features)}
    n = len(features)
    full = [None] * n
    discounted = [None] * n
    for source in (expense, cost):
        if source is None:
            continue
        for line_number, test, values in _cost_lines(source):
            j = _feature_of(test, index, aliases, source, line_number)
            prices = [_price(v, source, line_number, test) for v in values.split(",")]
            if len(prices) not in (1, 2):
                raise UCIFormatError(f"{source.name}: row {line_number}, test {test!r}: "
                                     "expected '<full>' or '<full>, <discounted>'")
            if full[j] is None:
                full[j] = prices[0]
                discounted[j] = prices[-1]
    groups: list[str | None] = [None] * n
    group_file = only(".group")
    if group_file is not None:
        for line_number, test, value in _cost_lines(group_file, skip_first=True):
            groups[_feature_of(test, index, aliases, group_file, line_number)] = value
    delayed = [False] * n
    delay_file = only(".delay")
    if delay_file is not None:
        for line_number, test, value in _cost_lines(delay_file):
            if value not in ("immediate", "delayed"):
                raise UCIFormatError(f"{delay_file.name}: row {line_number}, test {test!r}: "
                                     f"{value!r} is neither 'immediate' nor 'delayed'")
            delayed[_feature_of(test, index, aliases, delay_file, line_number)] = value == "delayed"
    derived_index = {index[t]: tuple(index[s] for s in sources) for t, sources in derived.items()}
    for j in derived_index:
        full[j] = discounted[j] = 0.0  # priced through its inputs by CostModel
        delayed[j] = any(delayed[s] for s in derived_index[j])
    unpriced = [features[j] for j in range(n) if full[j] is None]
    if unpriced:
        raise UCIFormatError(f"{cost_folder}: no price for {unpriced}")
    try:
        return CostModel(full, discounted=discounted, groups=groups, delayed=delayed,
                         derived=derived_index, free=[index[f] for f in free])
    except ValueError as error:
        raise UCIFormatError(f"{cost_folder}: {error}") from None


def _cost_lines(path: Path, *, skip_first: bool = False):
    lines = [(n, _COMMENT.sub("", line).strip())
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
    lines = [(n, line) for n, line in lines if line]
    if skip_first:  # the .group file's first row lists the group symbols
        lines = lines[1:]
    for line_number, line in lines:
        if ":" not in line:
            raise UCIFormatError(f"{path.name}: row {line_number}: expected '<test>: <value>', "
                                 f"got {line!r}")
        test, value = (part.strip() for part in line.split(":", 1))
        yield line_number, test, value.rstrip(".").strip()


def _feature_of(test: str, index: Mapping[str, int], aliases, path: Path, line_number: int) -> int:
    feature = aliases.get(test, test)
    if feature not in index:
        raise UCIFormatError(f"{path.name}: row {line_number}: test {test!r} is not a feature of "
                             f"the data ({list(index)})")
    return index[feature]


def _price(text: str, path: Path, line_number: int, test: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise UCIFormatError(
            f"{path.name}: row {line_number}, test {test!r}: {text.strip()!r} is not a price"
        ) from None
    if not np.isfinite(value) or value < 0:
        raise UCIFormatError(f"{path.name}: row {line_number}, test {test!r}: bad price {value}")
    return value


# ------------------------------------------------------- the known datasets
#: key -> (folder under data/uci, data file stem or None)
KNOWN_DATASETS: dict[str, tuple[str, str | None]] = {
    "heart": ("heart-disease", "processed.cleveland"),
    "hepatitis": ("hepatitis", "hepatitis"),
    "thyroid-train": ("thyroid-disease", "ann-train"),
    "thyroid-test": ("thyroid-disease", "ann-test"),
    "pima": ("pima-indians-diabetes", "pima-indians-diabetes"),
    "bupa": ("liver-disorders", "bupa"),
}

# DATA.md: secondary sources (Turney's raw file was not found).
_PIMA_PRICES = {"glucose": (17.61, 15.51), "insulin": (22.78, 20.68)}


def default_shared_dir() -> Path:
    """``$SHARED_DIR`` if set, else ``<repo>/../shared``."""
    env = os.environ.get("SHARED_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1] / ".." / "shared"


def load_known(key: str, *, shared_dir=None, **options) -> UCIDataset:
    """Load one of :data:`KNOWN_DATASETS` from ``<shared_dir>/data/uci``.

    Parameters
    ----------
    key : {"heart", "hepatitis", "thyroid-train", "thyroid-test", "pima", "bupa"}
    shared_dir : str or Path, optional
        Default :func:`default_shared_dir`.
    **options
        ``binary`` (heart), ``questionnaire_free`` (thyroid).

    Notes
    -----
    Pima has no Turney cost files; it gets DATA.md's secondary prices
    (glucose and insulin one delayed group, the rest 1.00).  BUPA has no
    prices (``costs`` is None).
    """
    if key not in KNOWN_DATASETS:
        raise KeyError(f"unknown dataset {key!r}; known: {sorted(KNOWN_DATASETS)}")
    folder, stem = KNOWN_DATASETS[key]
    base = Path(shared_dir) if shared_dir is not None else default_shared_dir()
    dataset = read_uci_folder(base / "data" / "uci" / folder, name=stem, **options)
    dataset = _rename(dataset, key)
    if key == "pima":
        dataset = _with_costs(dataset, _pima_costs(dataset.feature_names))
    return dataset


def _pima_costs(features: Sequence[str]) -> CostModel:
    full = [_PIMA_PRICES.get(f, (1.0, 1.0))[0] for f in features]
    discounted = [_PIMA_PRICES.get(f, (1.0, 1.0))[1] for f in features]
    groups = ["A" if f in _PIMA_PRICES else None for f in features]
    return CostModel(full, discounted=discounted, groups=groups,
                     delayed=[f in _PIMA_PRICES for f in features])


def _rename(dataset: UCIDataset, name: str) -> UCIDataset:
    return UCIDataset(**{**dataset.__dict__, "name": name})


def _with_costs(dataset: UCIDataset, costs: CostModel) -> UCIDataset:
    return UCIDataset(**{**dataset.__dict__, "costs": costs})
