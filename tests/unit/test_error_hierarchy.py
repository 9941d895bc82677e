"""Every exception the package defines is a ``PromptPipeError`` (promptpipe/errors.py), so a caller
can tell the package's own errors from a bug's, whichever module raised them. Those that callers
also catch as a built-in (``ValueError`` for a time zone or a flow definition, ``AssertionError`` for
the scripted model running out) keep that base as well."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import promptpipe
from promptpipe.errors import PromptPipeError


def _package_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(promptpipe.__path__, prefix="promptpipe."):
        if info.name.endswith(".__main__"):  # runs the command when imported; defines nothing
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name:
                found[f"{info.name}.{name}"] = value
    return found


def test_every_exception_of_the_package_is_a_promptpipe_error() -> None:
    # Given every exception class defined in a module of the package
    exceptions = _package_exceptions()
    assert len(exceptions) > 20  # the walk reached the subpackages (errors.py alone defines 19)
    # Then each is under the package's base error
    outside = sorted(name for name, cls in exceptions.items() if not issubclass(cls, PromptPipeError))
    assert not outside, f"not under PromptPipeError: {outside}"


def test_the_built_in_bases_callers_catch_are_kept() -> None:
    from promptpipe.adapters.scripted_llm import ScriptExhaustedError
    from promptpipe.controller.problems import DefinitionInvalid
    from promptpipe.rules.timezones import InvalidTimeZone, validate_iana_zone

    assert issubclass(InvalidTimeZone, ValueError)
    assert issubclass(DefinitionInvalid, ValueError)
    assert issubclass(ScriptExhaustedError, AssertionError)
    try:
        validate_iana_zone("Mars/Olympus_Mons")
    except ValueError as exc:  # what scheduling.validate_timezone catches
        assert isinstance(exc, PromptPipeError)
    else:  # pragma: no cover - the zone is not one
        raise AssertionError("an unknown zone was accepted")
