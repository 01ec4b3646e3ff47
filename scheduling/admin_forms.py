"""The cluster's admin form: the kubeconfig is write-only there too (docs/security.md)."""

from __future__ import annotations

from typing import Any

from django import forms

from scheduling.kubeconfig import KUBECONFIG_MAX_CHARS, kubeconfig_problem
from scheduling.models import Cluster


class SecretTextarea(forms.Textarea):
    """A textarea that never renders a value, not even the one just typed into a form shown again with an error
    (``PasswordInput(render_value=False)`` for several lines: a kubeconfig is YAML); its text is masked where the
    browser can."""

    def get_context(self, name: str, value: Any, attrs: Any) -> dict[str, Any]:
        return super().get_context(name, None, attrs)


class ClusterAdminForm(forms.ModelForm):
    kubeconfig = forms.CharField(
        required=False,
        strip=False,
        max_length=KUBECONFIG_MAX_CHARS,
        widget=SecretTextarea(
            attrs={"rows": 6, "autocomplete": "off", "spellcheck": "false", "style": "-webkit-text-security: disc"}
        ),
    )
    clear_kubeconfig = forms.BooleanField(
        required=False,
        label="Remove the stored kubeconfig",
        help_text="The adapter then connects with the pod's in-cluster service account.",
    )

    class Meta:
        model = Cluster
        fields = "__all__"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        stored = self.instance.pk is not None and self.instance.kubeconfig_set
        self.fields["kubeconfig"].help_text = (
            f"Currently: {'set' if stored else 'not set'} (never shown). Type or paste a kubeconfig (YAML, its "
            "current-context naming one of its contexts) to replace it; leave blank to keep what is stored."
        )

    def clean_kubeconfig(self) -> str:
        value: str = self.cleaned_data.get("kubeconfig") or ""
        if value.strip():
            problem = kubeconfig_problem(value)
            if problem:
                raise forms.ValidationError(problem, code="invalid")  # never quotes the text: it holds credentials
        return value

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("clear_kubeconfig") and (cleaned.get("kubeconfig") or "").strip():
            raise forms.ValidationError(
                {"clear_kubeconfig": "either type a new kubeconfig or remove the stored one, not both"}
            )
        return cleaned

    def save(self, commit: bool = True) -> Cluster:
        value = self.cleaned_data.get("kubeconfig") or ""
        if value.strip():
            self.instance.kubeconfig = value
        elif self.cleaned_data.get("clear_kubeconfig"):
            self.instance.kubeconfig = ""
        return super().save(commit=commit)
