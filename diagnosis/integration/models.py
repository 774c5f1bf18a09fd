"""Bearer tokens for programs (an electronic health record) calling /api/v1 as a user."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A secret a program presents as ``Authorization: Bearer <token>``; only its hash is kept."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="Which system uses it (e.g. 'ward EHR').")
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token.")
    prefix = models.CharField(max_length=12, help_text="The token's first characters, to tell it.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="issued_api_tokens",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # the table it has had since before the integration was an app of its own
        db_table = "diagnosis_apitoken"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) for {self.user}"


# ----------------------------------------------------------------- codes on the catalog
#: FHIR code systems the catalog's codes may come from.
LOINC = "http://loinc.org"
SNOMED_CT = "http://snomed.info/sct"
ICD_10 = "http://hl7.org/fhir/sid/icd-10"
UCUM = "http://unitsofmeasure.org"
#: This service's own code systems, for a test or a class no standard code names (said in
#: the mapping's note).
LOCAL_TESTS = "urn:cost-aware-diagnosis:tests"
LOCAL_CLASSES = "urn:cost-aware-diagnosis:classes"


class TestCode(models.Model):
    """The code an electronic health record knows a test by (LOINC where one exists) and the
    UCUM unit its numeric results come in."""

    __test__ = False  # a model, not a test class

    SYSTEM_CHOICES = [(LOINC, "LOINC"), (LOCAL_TESTS, "local (no standard code)")]

    test = models.OneToOneField(
        "catalog.DiagnosticTest", on_delete=models.CASCADE, related_name="fhir_code"
    )
    system = models.CharField(max_length=200, choices=SYSTEM_CHOICES, default=LOINC)
    code = models.CharField(max_length=100)
    display = models.CharField(max_length=200, blank=True)
    unit = models.CharField(
        max_length=50, blank=True, help_text="UCUM code of a numeric result's unit (mg/dL)."
    )
    note = models.TextField(blank=True, help_text="Why this code (or why a local one).")

    class Meta:
        verbose_name = "test code (LOINC or local)"
        verbose_name_plural = "test codes (LOINC or local)"

    def __str__(self) -> str:
        return f"{self.test} = {self.code} ({self.get_system_display()})"


class ClassCode(models.Model):
    """The code of one class of a dataset (its index in ``class_labels``): SNOMED CT, ICD-10
    or the local system."""

    SYSTEM_CHOICES = [
        (SNOMED_CT, "SNOMED CT"),
        (ICD_10, "ICD-10"),
        (LOCAL_CLASSES, "local (no standard code)"),
    ]

    dataset = models.ForeignKey(
        "catalog.Dataset", on_delete=models.CASCADE, related_name="class_codes"
    )
    label_index = models.PositiveIntegerField(help_text="The class's index in the class labels.")
    system = models.CharField(max_length=200, choices=SYSTEM_CHOICES, default=SNOMED_CT)
    code = models.CharField(max_length=100)
    display = models.CharField(max_length=200, blank=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["dataset", "label_index"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "label_index"], name="classcode_once"),
        ]

    def __str__(self) -> str:
        return f"{self.dataset} class {self.label_index} = {self.code}"


# ----------------------------------------------------------------------- CDS Hooks
class CdsClient(models.Model):
    """An electronic health record allowed to call /cds-services: the issuer of its JWTs, the
    keys they are signed with (a JWKS inline and/or at a URL), the browser origins its cards
    may be fetched from, the FHIR servers its calls may send us to, and the clinician whose
    cases its calls open and step."""

    name = models.CharField(max_length=100)
    issuer = models.CharField(max_length=500, unique=True, help_text="The JWTs' iss claim.")
    jwks = models.JSONField(
        null=True, blank=True, help_text='The public keys, as a JWKS: {"keys": [...]}.'
    )
    jwks_url = models.URLField(max_length=500, blank=True, help_text="Where its JWKS is served.")
    allowed_origins = models.JSONField(
        default=list, blank=True, help_text='Browser origins for CORS: ["https://ehr.example"].'
    )
    fhir_servers = models.JSONField(
        default=list,
        blank=True,
        help_text="The FHIR base URLs a hook call may name as fhirServer (the service reads "
        'observations there): ["https://ehr.example/fhir"]. Any other is refused.',
    )
    clinician = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="cds_clients"
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "CDS Hooks client"
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.issuer})"


class SeenJti(models.Model):
    """A JWT id already presented by a client, kept until its token expires: a replay is
    refused."""

    client = models.ForeignKey(CdsClient, on_delete=models.CASCADE, related_name="seen_jtis")
    jti = models.CharField(max_length=255)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["client", "jti"], name="seenjti_once")]


class CdsPatientCase(models.Model):
    """The case a client's hooks step for one FHIR patient with one model (a new one once it
    closes)."""

    client = models.ForeignKey(CdsClient, on_delete=models.CASCADE, related_name="patient_cases")
    patient_id = models.CharField(max_length=64)
    trained_model = models.ForeignKey("training.TrainedModel", on_delete=models.CASCADE)
    case = models.OneToOneField(
        "clinic.DiagnosisCase", on_delete=models.CASCADE, related_name="cds_link"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["client", "patient_id", "trained_model"], name="cdscase_lookup")
        ]


class CdsCard(models.Model):
    """A card this service answered with (its uuid is what feedback names)."""

    uuid = models.UUIDField(unique=True)
    client = models.ForeignKey(CdsClient, on_delete=models.CASCADE, related_name="cards")
    case = models.ForeignKey(
        "clinic.DiagnosisCase", on_delete=models.CASCADE, related_name="cds_cards"
    )
    service_id = models.CharField(max_length=100)
    hook = models.CharField(max_length=50)
    hook_instance = models.CharField(max_length=100)
    summary = models.CharField(max_length=140)
    suggestions = models.JSONField(default=list, help_text="The uuids of its suggestions.")
    version = models.PositiveIntegerField(help_text="The case version the card was made from.")
    conclusion = models.JSONField(
        null=True,
        blank=True,
        help_text='A conclusion card\'s step, taken when it is accepted: {"action": "classify", '
        '"label": 1} or {"action": "refer"}.',
    )
    created_at = models.DateTimeField(auto_now_add=True)


class CdsFeedback(models.Model):
    """What the clinician did with a card (CDS Hooks feedback): accepted or overridden, and
    why; part of the case's audit."""

    ACCEPTED = "accepted"
    OVERRIDDEN = "overridden"

    card = models.ForeignKey(CdsCard, on_delete=models.CASCADE, related_name="feedback")
    case = models.ForeignKey(
        "clinic.DiagnosisCase", on_delete=models.CASCADE, related_name="cds_feedback"
    )
    outcome = models.CharField(
        max_length=12, choices=[(ACCEPTED, "accepted"), (OVERRIDDEN, "overridden")]
    )
    accepted_suggestions = models.JSONField(default=list)
    override_reason = models.JSONField(null=True, blank=True, help_text="The Coding sent.")
    user_comment = models.TextField(blank=True)
    outcome_timestamp = models.DateTimeField()
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["case", "outcome_timestamp", "id"]
        verbose_name_plural = "CDS feedback"

    def __str__(self) -> str:
        return f"card {self.card.uuid} {self.outcome} (case {self.case_id})"


# ------------------------------------------------------------------ SMART App Launch
class SmartClient(models.Model):
    """An EHR that opens the case screen inside itself (SMART App Launch 2, EHR launch): its
    FHIR base URL (the launch's ``iss``), the client id it registered us under, and the model
    its patients' cases start with."""

    name = models.CharField(max_length=100)
    iss = models.URLField(max_length=500, unique=True, help_text="The EHR's FHIR base URL.")
    client_id = models.CharField(max_length=200)
    trained_model = models.ForeignKey(
        "training.TrainedModel",
        on_delete=models.PROTECT,
        help_text="The model a launched patient's case starts with.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "SMART launch client"

    def __str__(self) -> str:
        return f"{self.name} ({self.iss})"
