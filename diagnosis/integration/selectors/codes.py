"""A model's codes as an EHR reads them: its dataset's tests by (system, code) and back, its
classes' codes (``TestCode``, ``ClassCode``; reads only)."""

from __future__ import annotations

from dataclasses import dataclass, field

from diagnosis.catalog.models import DiagnosticTest
from diagnosis.integration.models import LOCAL_CLASSES, LOCAL_TESTS, ClassCode, TestCode

__all__ = ["CodeBook", "code_book"]


@dataclass(frozen=True)
class Coded:
    """One test's code: what an Observation or a ServiceRequest carries."""

    system: str
    code: str
    display: str
    unit: str


@dataclass
class CodeBook:
    """The codes of one dataset's tests (``by_code`` (system, code) -> test; ``of_test`` test
    name -> its code, the local one when none is mapped) and classes (index -> code)."""

    tests: list[DiagnosticTest]
    by_code: dict[tuple[str, str], DiagnosticTest] = field(default_factory=dict)
    of_test: dict[str, Coded] = field(default_factory=dict)
    classes: dict[int, Coded] = field(default_factory=dict)

    def test_named(self, name: str | None) -> DiagnosticTest | None:
        return next((t for t in self.tests if t.name == name), None)

    def class_code(self, index: int, label: str) -> Coded:
        return self.classes.get(index) or Coded(LOCAL_CLASSES, label, label, "")


def code_book(dataset_id: int, class_labels: list[str]) -> CodeBook:
    """Every test of dataset ``dataset_id`` with its code (the local one, the test's name,
    when an admin mapped none), and its classes' codes."""
    # each test with its code, if any, in one query (a left join on the one-to-one)
    tests = list(
        DiagnosticTest.objects.filter(dataset_id=dataset_id)
        .select_related("fhir_code")
        .order_by("index")
    )
    book = CodeBook(tests=tests)
    for test in tests:
        row: TestCode | None = getattr(test, "fhir_code", None)  # None: no code mapped
        coded = (
            Coded(row.system, row.code, row.display or test.display_label, row.unit)
            if row is not None
            else Coded(LOCAL_TESTS, test.name, test.display_label, "")
        )
        book.of_test[test.name] = coded
        book.by_code.setdefault((coded.system, coded.code), test)
    for code in ClassCode.objects.filter(dataset_id=dataset_id):
        if code.label_index < len(class_labels):
            book.classes[code.label_index] = Coded(
                code.system, code.code, code.display or class_labels[code.label_index], ""
            )
    return book
