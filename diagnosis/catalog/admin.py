"""Admin: datasets with their priced tests, groups and error matrices; imports (the trainings'
admin, and what a dataset's page says of its models, are ``diagnosis/training/admin.py``).

Templates for the two extra admin pages are inline strings (the project's
``templates/`` folder belongs to the screens).
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect
from django.template import engines
from django.template.response import TemplateResponse
from django.urls import path, reverse

from diagnosis.permissions import is_model_admin

from .admin_audit import CatalogHistoryMixin
from .admin_forms import (
    DatasetForm,
    DiagnosticTestForm,
    DiagnosticTestFormSet,
    ErrorMatrixForm,
    ErrorMatrixFormSet,
    ImportForm,
)
from .admin_price_form import PriceGenerationForm
from .models import Dataset, DiagnosticTest, ErrorMatrix, TestGroup
from .services import datasets as dataset_services
from .services import price_generation

_CHANGE_LIST = engines["django"].from_string(
    """{% extends "admin/change_list.html" %}
{% block object-tools-items %}
<li><a href="{% url 'admin:catalog_dataset_import' %}"
       class="addlink">Import CSV or UCI folder</a></li>
{{ block.super }}
{% endblock %}"""
)

# The admin's base template already shows {{ title }} as the page heading, and the form's
# own errors (non-field ones first) are listed once, each naming its field.
_IMPORT_PAGE = engines["django"].from_string(
    """{% extends "admin/base_site.html" %}
{% block content %}
<p>A CSV needs a header row; numeric columns are detected, the others become categories.
Every test costs 1 until you set its price. A UCI folder brings Turney's prices when it has a
<code>costs/</code> folder. Nothing is saved when the file has an error.</p>
<form method="post" enctype="multipart/form-data">{% csrf_token %}
{% if form.errors %}<p class="errornote">Nothing was imported; correct the errors below.</p>
{% endif %}
<table>{{ form.as_table }}</table>
<div class="submit-row"><input type="submit" value="Import" class="default"></div>
</form>
{% endblock %}"""
)

# The price generator's settings, asked after the action is chosen on the datasets list.
_GENERATE_PRICES_PAGE = engines["django"].from_string(
    """{% extends "admin/base_site.html" %}
{% block content %}
<p>The automatic price generator of paper 000 (§4.1) draws a price, a group and a delay for
every test of {% for d in datasets %}<strong>{{ d.name }}</strong>{% if not forloop.last %},
{% endif %}{% endfor %}. It <strong>replaces their current prices, groups and delays</strong>;
derived tests keep costing their inputs. The prices are marked “generated” wherever they are
shown. Models trained before keep the prices they were trained with until retrained. Nothing is
changed if one dataset cannot be priced.</p>
<form method="post">{% csrf_token %}
{% if form.errors %}<p class="errornote">No prices were changed; correct the errors below.</p>
{% endif %}
<table>{{ form.as_table }}</table>
{% for d in datasets %}<input type="hidden" name="_selected_action" value="{{ d.pk }}">{% endfor %}
<input type="hidden" name="action" value="generate_prices">
<div class="submit-row"><input type="submit" name="apply" value="Generate prices" class="default">
</div>
</form>
{% endblock %}"""
)

# The tests inline: prices and groups in columns, the rarely edited fields folded under "More".
_TESTS_INLINE = "admin/catalog/dataset/tests_inline.html"
_MAIN_TEST_FIELDS = (
    "index",
    "name",
    "label",
    "unit",
    "kind",
    "price",
    "discounted_price",
    "group",
    "delayed",
)


class TestGroupInline(admin.TabularInline):
    model = TestGroup
    extra = 0
    verbose_name = "test group"
    verbose_name_plural = "test groups (tests cheaper together)"


class DiagnosticTestInline(admin.TabularInline):
    model = DiagnosticTest
    form = DiagnosticTestForm
    formset = DiagnosticTestFormSet
    extra = 0
    template = _TESTS_INLINE
    #: Columns of the table; the other fields are under each row's "More".
    main_fields = _MAIN_TEST_FIELDS
    fieldsets = [
        (None, {"fields": main_fields}),
        (
            "More",
            {
                "fields": [f for f in DiagnosticTestForm.Meta.fields if f not in _MAIN_TEST_FIELDS],
            },
        ),
    ]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "group":
            dataset_id = request.resolver_match.kwargs.get("object_id")
            kwargs["queryset"] = TestGroup.objects.filter(dataset_id=dataset_id or 0)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ErrorMatrixInline(admin.StackedInline):
    """One block per matrix: its name, the K x K grid, the cost of referring."""

    model = ErrorMatrix
    form = ErrorMatrixForm
    formset = ErrorMatrixFormSet
    extra = 0
    fields = ["name", "matrix", "reject_cost"]
    verbose_name = "error matrix"
    verbose_name_plural = "error matrices"


# The page's full width goes to the forms (the app list stays on the admin's home page).
admin.site.enable_nav_sidebar = False


class ModelAdminsOnly(admin.ModelAdmin):
    """Only model administrators, whatever Django permissions a staff user was given."""

    def has_module_permission(self, request) -> bool:
        return is_model_admin(request.user) and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return is_model_admin(request.user) and super().has_view_permission(request, obj)

    def has_add_permission(self, request) -> bool:
        return is_model_admin(request.user) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return is_model_admin(request.user) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return is_model_admin(request.user) and super().has_delete_permission(request, obj)

    def response_action(self, request, queryset):
        """An action on rows whose posted ids are not ids (a hand-made or damaged form) is
        refused with a message, instead of failing as the rows are read."""
        for selected in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME):
            try:
                self.model._meta.pk.to_python(selected)
            except ValidationError:
                self.message_user(
                    request,
                    f"The chosen rows could not be read ({selected[:40]!r} is not a row's id); "
                    "tick them again and repeat the action.",
                    messages.ERROR,
                )
                return None  # the list is shown again with the message
        return super().response_action(request, queryset)


class DatasetMedia:
    """The dataset page's own styles (compact tests table, matrix grids)."""

    css = {"all": ["css/admin.css"]}


@admin.register(Dataset)
class DatasetAdmin(CatalogHistoryMixin, ModelAdminsOnly):
    form = DatasetForm
    inlines = [TestGroupInline, DiagnosticTestInline, ErrorMatrixInline]
    list_display = ["name", "n_cases", "n_tests", "classes", "prices", "created_at"]
    search_fields = ["name", "description"]
    change_list_template = _CHANGE_LIST
    change_form_template = "admin/catalog/dataset/change_form.html"
    actions = ["generate_prices"]
    Media = DatasetMedia

    @admin.action(description="Generate test prices automatically (paper 000 §4.1)")
    def generate_prices(self, request, queryset):
        """Ask for the generator's settings, then price the chosen datasets (all or nothing)."""
        datasets = list(queryset.order_by("name"))
        form = PriceGenerationForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            try:
                priced = price_generation.generate_dataset_prices(
                    user=request.user, datasets=datasets, params=form.cleaned_data["params"]
                )
            except ValidationError as exc:
                for message in exc.messages:
                    form.add_error(None, message)
            else:
                names = ", ".join(d.name for d in priced)
                self.message_user(
                    request,
                    f"Generated prices for {names} (seed {form.cleaned_data['seed']}); they are "
                    "marked “generated”. Models trained before keep their old prices until "
                    "retrained.",
                    messages.SUCCESS,
                )
                return None
        context = {
            **self.admin_site.each_context(request),
            "form": form,
            "datasets": datasets,
            "title": "Generate test prices",
            "opts": self.model._meta,
        }
        return TemplateResponse(request, _GENERATE_PRICES_PAGE, context)

    @admin.display(description="prices")
    def prices(self, obj: Dataset) -> str:
        recipe = obj.price_generation or {}
        if not recipe:
            return "entered"
        generated = obj.tests.filter(price_generated=True).count()
        if not generated:
            return "entered (generated ones since edited)"
        mode = "gain-proportional" if recipe.get("mode") == "gain" else "uniform"
        return f"generated ({generated} tests, {mode}, seed {recipe.get('seed')})"

    @admin.display(description="cases")
    def n_cases(self, obj: Dataset) -> int:
        return obj.cases.count()

    @admin.display(description="tests")
    def n_tests(self, obj: Dataset) -> int:
        return obj.tests.count()

    @admin.display(description="classes")
    def classes(self, obj: Dataset) -> str:
        return ", ".join(obj.class_labels)

    def get_urls(self):
        extra = [
            path(
                "import/",
                self.admin_site.admin_view(self.import_view),
                name="catalog_dataset_import",
            ),
        ]
        return extra + super().get_urls()

    def import_view(self, request):
        """Import a CSV upload or a UCI folder through the import service."""
        if not is_model_admin(request.user):
            raise PermissionDenied
        form = ImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                if data["source"] == "csv":
                    dataset = dataset_services.import_csv(
                        user=request.user,
                        name=data["name"],
                        file=data["file"],
                        class_column=data["class_column"],
                        categorical=form.categorical_columns(),
                        description=data["description"],
                    )
                else:
                    dataset = dataset_services.import_uci_folder(
                        user=request.user, name=data["name"], path=data["folder"]
                    )
            except ValidationError as exc:
                for message in exc.messages:
                    form.add_error(None, message)
            else:
                self.message_user(
                    request,
                    f"Imported {dataset.name}: {dataset.cases.count()} cases, "
                    f"{dataset.tests.count()} tests. Check the prices below.",
                    messages.SUCCESS,
                )
                return redirect(reverse("admin:catalog_dataset_change", args=[dataset.pk]))
        context = {
            **self.admin_site.each_context(request),
            "form": form,
            "title": "Import a dataset",
            "opts": self.model._meta,
        }
        return TemplateResponse(request, _IMPORT_PAGE, context)
