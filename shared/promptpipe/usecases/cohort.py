"""A cohort's rows checked before they are enrolled (docs/console.md, "Managing participants"): each
row's problems, read by the same rules the enrolment applies (the request's fields with its time
zone check, the phone number in the deployment's region, consent when required), plus a number given
twice in the file or already enrolled. Nothing is written: the caller then enrols the rows without
problems, one ``POST /conversation/participants`` each (``usecases/participants.enrollment``)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from promptpipe.errors import InvalidPhoneNumber, ValidationFailed
from promptpipe.models.api import EnrollmentRequest, RowProblems
from promptpipe.rules.phone import canonicalize_phone
from promptpipe.usecases.context import AppContext


def _field_problems(exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "row"
        problems.append(f"{where}: {error['msg']}")
    return problems


def check_rows(app: AppContext, rows: list[dict[str, Any]]) -> list[RowProblems]:
    """Every row with its problems (an empty list: it can be enrolled)."""
    seen: dict[str, int] = {}
    checked: list[RowProblems] = []
    for number, row in enumerate(rows, start=1):
        problems: list[str] = []
        try:
            request = EnrollmentRequest.model_validate(row)
        except ValidationError as exc:
            checked.append(RowProblems(row=number, problems=_field_problems(exc)))
            continue
        if app.config.consent_required and request.consent is None:
            problems.append("consent: required by this deployment")
        try:
            phone = canonicalize_phone(request.phone_number, app.config.default_phone_region)
        except (InvalidPhoneNumber, ValidationFailed) as exc:
            problems.append(f"phone_number: {exc}")
        else:
            if phone in seen:
                problems.append(f"phone_number: the same number as row {seen[phone]}")
            else:
                seen[phone] = number
                if app.repo.find_id_by_phone(phone):
                    problems.append("phone_number: already enrolled")
        checked.append(RowProblems(row=number, problems=problems))
    return checked
