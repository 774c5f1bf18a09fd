"""A dataset: its cases, its tests with their prices, and its error-cost matrices."""

from __future__ import annotations

from django.db import models


class Dataset(models.Model):
    """A table of past patients with a class each; the tests are its columns."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    class_labels = models.JSONField(
        default=list, help_text="Class names; the position in the list is the class code."
    )
    source = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    price_generation = models.JSONField(
        default=dict,
        blank=True,
        help_text=(
            "How the automatic price generator (paper 000 §4.1) last priced the tests: its "
            "parameters, seed, when and by whom. Empty = never."
        ),
    )

    class Meta:
        db_table = "diagnosis_dataset"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class DatasetCase(models.Model):
    """One past patient: a value per test (None = missing) and the true class."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="cases")
    values = models.JSONField(help_text="One value per test in index order; null = missing.")
    label = models.PositiveIntegerField(help_text="Index into the dataset's class labels.")

    class Meta:
        db_table = "diagnosis_datasetcase"
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.dataset} case {self.pk}"


class TestGroup(models.Model):
    """Tests sharing a set-up (a blood draw, an exercise test): cheaper together."""

    __test__ = False  # not a pytest test class

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="groups")
    name = models.CharField(max_length=100)

    class Meta:
        db_table = "diagnosis_testgroup"
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "name"], name="unique_group_name_per_dataset"
            )
        ]

    def __str__(self) -> str:
        return self.name


def range_text(low: float | None, high: float | None, unit: str = "") -> str:
    """A range in words: "40–400 mg/dl", "at least 21 years", "at most 3"; "" for no bound."""
    unit = f" {unit}" if unit else ""
    if low is not None and high is not None:
        return f"{low:g}–{high:g}{unit}"
    if low is not None:
        return f"at least {low:g}{unit}"
    if high is not None:
        return f"at most {high:g}{unit}"
    return ""


class DiagnosticTest(models.Model):
    """One test (feature) of a dataset, with its price and how its result looks."""

    __test__ = False

    NUMERIC = "numeric"
    NOMINAL = "nominal"
    KIND_CHOICES = [(NUMERIC, "Numeric"), (NOMINAL, "Nominal (coded categories)")]
    #: What an admin or an import sets of a test, in the admin's column order: the admin's
    #: test rows and ``services.datasets.create_dataset``'s test specs both take these.
    EDITABLE_FIELDS = (
        "name",
        "label",
        "unit",
        "kind",
        "min_value",
        "max_value",
        "plausible_min",
        "plausible_max",
        "integer_only",
        "choices",
        "price",
        "discounted_price",
        "group",
        "delayed",
        "derived_from",
        "formula",
        "formula_tolerance",
    )

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="tests")
    index = models.PositiveIntegerField(help_text="Column position in the dataset's cases.")
    name = models.CharField(max_length=100, help_text="Machine name, unique in the dataset.")
    label = models.CharField(max_length=200, blank=True, help_text="Name shown to clinicians.")
    unit = models.CharField(max_length=50, blank=True)
    kind = models.CharField(max_length=10, choices=KIND_CHOICES, default=NUMERIC)
    min_value = models.FloatField(null=True, blank=True)
    max_value = models.FloatField(null=True, blank=True)
    #: Inside the hard range (min/max: refused outside), the values a clinician would expect;
    #: a value outside this range is saved only once the clinician confirms it.
    plausible_min = models.FloatField(
        "plausible from",
        null=True,
        blank=True,
        help_text="Lowest value expected; a lower one (still in range) must be confirmed.",
    )
    plausible_max = models.FloatField(
        "plausible to",
        null=True,
        blank=True,
        help_text="Highest value expected; a higher one (still in range) must be confirmed.",
    )
    integer_only = models.BooleanField(
        "whole numbers only",
        default=False,
        help_text="A count (vessels, pregnancies): a value such as 1.5 is refused.",
    )
    choices = models.JSONField(
        default=list, blank=True, help_text='Nominal only: [{"code": 0, "label": "..."}, ...]'
    )
    price = models.FloatField(default=1.0)
    discounted_price = models.FloatField(
        default=1.0, help_text="Charged when another test of the same group is already done."
    )
    group = models.ForeignKey(
        TestGroup, null=True, blank=True, on_delete=models.SET_NULL, related_name="tests"
    )
    delayed = models.BooleanField(default=False, help_text="The result arrives later (lab).")
    price_generated = models.BooleanField(
        default=False,
        help_text=(
            "The price was made by the automatic price generator, not taken from a fee "
            "schedule; editing the price clears this."
        ),
    )
    derived_from = models.JSONField(
        default=list, blank=True, help_text="Names of the tests this one is computed from."
    )
    formula = models.CharField(
        max_length=200,
        blank=True,
        help_text=(
            "Derived tests only: how the value follows from the inputs, with test names, "
            "numbers, + - * / and parentheses, e.g. TT4 / T4U. Empty = typed in with its inputs."
        ),
    )
    formula_tolerance = models.FloatField(
        default=0.05,
        help_text=(
            "A typed value may differ from the formula's by this fraction at most "
            "(0.05 = 5%); beyond it the value is refused as contradicting its inputs."
        ),
    )

    class Meta:
        db_table = "diagnosis_diagnostictest"
        ordering = ["dataset_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "index"], name="unique_test_index"),
            models.UniqueConstraint(fields=["dataset", "name"], name="unique_test_name"),
        ]

    def __str__(self) -> str:
        return self.display_label

    @property
    def display_label(self) -> str:
        """The human label, falling back to the machine name."""
        return self.label or self.name

    @property
    def is_nominal(self) -> bool:
        return self.kind == self.NOMINAL

    def plausible_text(self) -> str:
        """The plausible range in words ("40–400 mg/dl", "at least 21 years"), "" without one."""
        return range_text(self.plausible_min, self.plausible_max, self.unit)

    def choice_label(self, code: float | int | None, choices: list | None = None) -> str:
        """Label of a nominal code (the code itself when unknown).

        ``choices`` are the words a trained model keeps for this test
        (``shared.vocabulary``); without them, today's.
        """
        if code is None:
            return ""
        for choice in (self.choices if choices is None else choices) or []:
            if int(choice["code"]) == int(code):
                return str(choice["label"])
        return f"{code:g}" if isinstance(code, float) else str(code)


class ErrorMatrix(models.Model):
    """What each error costs: ``matrix[actual][predicted]``, plus the cost of referring."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="error_matrices")
    name = models.CharField(max_length=100)
    matrix = models.JSONField(help_text="K x K list of lists, matrix[actual][predicted].")
    reject_cost = models.FloatField(
        null=True, blank=True, help_text="Cost of referring a patient; empty = never refer."
    )

    class Meta:
        db_table = "diagnosis_errormatrix"
        ordering = ["dataset_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="unique_matrix_name")
        ]

    def __str__(self) -> str:
        return f"{self.dataset}: {self.name}"
