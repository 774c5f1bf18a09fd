"""The UCI reader matches SOURCES.md's counts and DATA.md's prices, and names bad input."""

from __future__ import annotations

import numpy as np
import pytest

from datasets import UCIFormatError, default_shared_dir, load_known, read_uci_folder

UCI = default_shared_dir() / "data" / "uci"


def test_heart_rows_missing_values_and_binary_class():
    """Heart: 303 rows, 6 missing (4 in ca, 2 in thal), 164 healthy vs 139 sick."""
    heart = load_known("heart")
    assert heart.X.shape == (303, 13)
    assert int(np.isnan(heart.X).sum()) == 6
    assert int(np.isnan(heart.X[:, heart.feature_names.index("ca")]).sum()) == 4
    assert int(np.isnan(heart.X[:, heart.feature_names.index("thal")]).sum()) == 2
    assert np.bincount(heart.y).tolist() == [164, 303 - 164]
    multi = load_known("heart", binary=False)
    assert np.bincount(multi.y).tolist() == [164, 55, 36, 35, 13]


def test_heart_prices_groups_and_delays_match_data_md():
    """Heart: each test's full/discounted price, group and delay as in DATA.md's table."""
    costs = load_known("heart").costs
    names = load_known("heart").feature_names
    expected = {
        "age": (1.00, 1.00, None, False),
        "sex": (1.00, 1.00, None, False),
        "cp": (1.00, 1.00, None, False),
        "trestbps": (1.00, 1.00, None, False),
        "chol": (7.27, 5.17, "A", True),
        "fbs": (5.20, 3.10, "A", True),
        "restecg": (15.50, 15.50, None, True),
        "thalach": (102.90, 1.00, "B", True),
        "thal": (102.90, 1.00, "B", True),
        "exang": (87.30, 1.00, "C", True),
        "oldpeak": (87.30, 1.00, "C", True),
        "slope": (87.30, 1.00, "C", True),
        "ca": (100.90, 100.90, None, True),
    }
    assert sorted(names) == sorted(expected)
    for j, name in enumerate(names):
        full, discounted, group, delayed = expected[name]
        assert costs.costs[j] == pytest.approx(full), name
        assert costs.discounted[j] == pytest.approx(discounted), name
        assert costs.groups[j] == group, name
        assert bool(costs.delayed[j]) is delayed, name
    exang, oldpeak = names.index("exang"), names.index("oldpeak")
    assert costs.marginal_cost(oldpeak, {exang}) == pytest.approx(1.00)


def test_hepatitis_class_is_first_column():
    """Hepatitis: 155 rows, 32 DIE, 167 missing cells, and Turney's 'antviral' matched."""
    hepatitis = load_known("hepatitis")
    assert hepatitis.X.shape == (155, 19)
    assert hepatitis.class_labels == ["DIE", "LIVE"]
    assert np.bincount(hepatitis.y).tolist() == [32, 123]
    assert int(np.isnan(hepatitis.X).sum()) == 167
    protime = hepatitis.feature_names.index("protime")
    assert hepatitis.costs.costs[protime] == pytest.approx(8.30)
    assert hepatitis.costs.discounted[protime] == pytest.approx(6.20)
    assert hepatitis.costs.costs[hepatitis.feature_names.index("antivirals")] == 1.0


def test_thyroid_counts_and_derived_fti():
    """Thyroid: train counts 93/191/3488, test 73/177/3178; FTI costs its missing inputs."""
    train, test = load_known("thyroid-train"), load_known("thyroid-test")
    assert train.X.shape == (3772, 21) and test.X.shape == (3428, 21)
    assert np.bincount(train.y).tolist() == [93, 191, 3488]
    assert np.bincount(test.y).tolist() == [73, 177, 3178]
    costs, names = train.costs, train.feature_names
    fti, tt4, t4u, tsh = (names.index(n) for n in ("FTI", "TT4", "T4U", "TSH"))
    assert fti == 20 and tt4 == 18 and t4u == 19
    assert costs.marginal_cost(fti) == pytest.approx(14.51 + 9.31)
    assert costs.marginal_cost(fti, {tt4}) == pytest.approx(9.31)
    assert costs.marginal_cost(tsh) == pytest.approx(22.78)
    assert costs.marginal_cost(0) == pytest.approx(1.0)
    free = load_known("thyroid-train", questionnaire_free=True).costs
    assert [free.marginal_cost(j) for j in range(16)] == [0.0] * 16
    assert free.total_cost() == pytest.approx(22.78 + 9.31 + 12.41 + 9.31)


def test_pima_secondary_prices_and_zero_as_missing():
    """Pima: glucose and insulin one delayed group; zeros in five columns become missing."""
    pima = load_known("pima")
    names = pima.feature_names
    glucose, insulin = names.index("glucose"), names.index("insulin")
    assert pima.costs.marginal_cost(glucose) == pytest.approx(17.61)
    assert pima.costs.marginal_cost(insulin, {glucose}) == pytest.approx(20.68)
    assert bool(pima.costs.delayed[insulin]) and not pima.costs.delayed[names.index("age")]
    assert np.bincount(pima.y).tolist() == [500, 268]
    assert not np.any(pima.X[:, [glucose, insulin]] == 0)
    assert np.isnan(pima.X[:, insulin]).sum() > 0
    assert np.any(pima.X[:, names.index("pregnancies")] == 0)  # zero pregnancies is a value


def test_bupa_class_is_drinks_and_selector_dropped():
    """BUPA: 345 rows, 176 with drinks >= 3, five features, no prices."""
    bupa = load_known("bupa")
    assert bupa.X.shape == (345, 5)
    assert "selector" not in bupa.feature_names and "drinks" not in bupa.feature_names
    assert np.bincount(bupa.y).tolist() == [345 - 176, 176]
    assert bupa.costs is None


def test_unknown_key_and_option_are_rejected():
    """Unknown dataset keys and options raise with the alternatives named."""
    with pytest.raises(KeyError, match="known"):
        load_known("diabetes")
    with pytest.raises(TypeError, match="binary"):
        load_known("hepatitis", binary=True)


def test_several_data_files_need_a_name():
    """The thyroid folder holds two .data files; reading it without name= says so."""
    with pytest.raises(UCIFormatError, match="name="):
        read_uci_folder(UCI / "thyroid-disease")


# ------------------------------------------------------ small written folders
C45_NAMES = """| a toy C4.5 names file
sick, well.

temp: continuous.
cough: no, yes.
note: ignore.
"""


def _folder(tmp_path, data: str, names: str = C45_NAMES, costs: dict | None = None):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "toy.data").write_text(data)
    (tmp_path / "toy.names").write_text(names)
    if costs:
        (tmp_path / "costs").mkdir()
        for suffix, text in costs.items():
            (tmp_path / "costs" / f"toy{suffix}").write_text(text)
    return tmp_path


def test_generic_c45_folder_with_costs(tmp_path):
    """A C4.5 .names file gives types and class values; cost files are matched by name."""
    folder = _folder(
        tmp_path,
        "37.5, yes, x, sick\n36.6, no, y, well\n?, ?, z, well\n",
        costs={
            ".expense": "temp:\t2.00,\t1.50\ncough:\t3.00,\t1.00\n",
            ".group": "A.\n\ntemp:\tA.\ncough:\tA.\n",
            ".delay": "temp:\tdelayed.\ncough:\timmediate.\n",
        },
    )
    data = read_uci_folder(folder)
    assert data.feature_names == ["temp", "cough"]
    assert data.categorical == [1]
    assert data.class_labels == ["sick", "well"]
    assert data.y.tolist() == [0, 1, 1]
    np.testing.assert_array_equal(data.X, [[37.5, 1.0], [36.6, 0.0], [np.nan, np.nan]])
    assert data.costs.marginal_cost(1, {0}) == pytest.approx(1.0)
    assert data.costs.delayed.tolist() == [True, False]


def test_no_costs_folder_means_no_costs(tmp_path):
    """Without a costs/ folder the dataset's costs are None."""
    assert read_uci_folder(_folder(tmp_path, "1, no, x, sick\n")).costs is None


def test_wrong_column_count_names_file_and_row(tmp_path):
    """A short row is reported with its file name and line number."""
    folder = _folder(tmp_path, "1, no, x, sick\n2, yes, well\n")
    with pytest.raises(UCIFormatError, match=r"toy\.data: row 2 has 3 columns, expected 4"):
        read_uci_folder(folder)


def test_non_numeric_value_names_the_column(tmp_path):
    """A word in a continuous column is reported with row and column name."""
    folder = _folder(tmp_path, "1, no, x, sick\nhot, yes, x, well\n")
    with pytest.raises(UCIFormatError, match=r"toy\.data: row 2, column 'temp': 'hot'"):
        read_uci_folder(folder)


def test_unknown_category_and_class_are_reported(tmp_path):
    """Values outside the declared lists are errors, not silent codes."""
    with pytest.raises(UCIFormatError, match=r"row 1, column 'cough': 'maybe'"):
        read_uci_folder(_folder(tmp_path, "1, maybe, x, sick\n"))
    with pytest.raises(UCIFormatError, match=r"row 1, column 'class': class 'dead'"):
        read_uci_folder(_folder(tmp_path, "1, no, x, dead\n"))


def test_prose_names_file_is_rejected(tmp_path):
    """An unknown dataset whose .names is not C4.5 format gets a clear message."""
    with pytest.raises(UCIFormatError, match="class values"):
        read_uci_folder(_folder(tmp_path, "1, no, x, sick\n", names="1. Title: toy: data\n"))


def test_bad_cost_files_are_reported(tmp_path):
    """A cost for a test that is not a feature, a bad price, or a missing price are errors."""
    base = "1, no, x, sick\n"
    with pytest.raises(UCIFormatError, match=r"toy\.cost: row 2: test 'pulse'"):
        read_uci_folder(_folder(tmp_path / "a", base, costs={".cost": "temp: 1.\npulse: 2.\n"}))
    with pytest.raises(UCIFormatError, match=r"toy\.cost: row 1, test 'temp': 'cheap'"):
        read_uci_folder(_folder(tmp_path / "b", base, costs={".cost": "temp: cheap.\ncough: 1.\n"}))
    with pytest.raises(UCIFormatError, match=r"no price for \['cough'\]"):
        read_uci_folder(_folder(tmp_path / "c", base, costs={".cost": "temp: 1.\n"}))


def test_malformed_known_dataset_row(tmp_path):
    """A known dataset's file with a bad cell is reported by row and column name."""
    (tmp_path / "hepatitis.data").write_text(
        "2,30,2,1,2,2,2,2,1,2,2,2,2,2,1.00,85,18,4.0,?,1\n"
        "1,40,x,1,2,2,2,2,1,2,2,2,2,2,1.00,85,18,4.0,?,1\n"
    )
    with pytest.raises(UCIFormatError, match=r"hepatitis\.data: row 2, column 'sex': 'x'"):
        read_uci_folder(tmp_path)
    (tmp_path / "hepatitis.data").write_text("3,30,2,1,2,2,2,2,1,2,2,2,2,2,1.00,85,18,4.0,?,1\n")
    with pytest.raises(UCIFormatError, match=r"row 1, column 'class'"):
        read_uci_folder(tmp_path)
