"""The one line ``promptpipe chat`` and ``serve`` print for a failed turn: the root cause found through a
failed batch and the exception chain, and what happens next."""

from __future__ import annotations

from promptpipe.errors import ConfigurationError, LLMError
from promptpipe.local.failures import describe_failure


class BatchFailed(Exception):
    """Like Powertools' BatchProcessingError: the records' errors in ``child_exceptions``."""

    def __init__(self, children: list[object]) -> None:
        super().__init__("All records failed processing.")
        self.child_exceptions = children


def _chained(outer: Exception, inner: BaseException) -> Exception:
    try:
        try:
            raise inner
        except BaseException as exc:
            raise outer from exc
    except Exception as raised:
        return raised


def test_a_model_failure_in_a_failed_batch_is_named_with_the_retry_rule() -> None:
    # Given a batch whose first record failed on a wrapped model error, as (type, error, traceback)
    error = _chained(RuntimeError("turn failed"), LLMError("HTTP 503 from the model"))
    line = describe_failure(BatchFailed([(type(error), error, None)]), max_retries=2)
    assert line.startswith("the coach's model did not answer (HTTP 503 from the model). Each model call is tried 3 ")
    assert "(GENAI_MAX_RETRIES=2)" in line and line.endswith(
        "check OPENAI_BASE_URL / OPENAI_API_KEY and send it again."
    )


def test_a_configuration_error_is_named_by_its_first_line() -> None:
    error = BatchFailed([ConfigurationError("no OpenAI API key\nmore detail")])
    assert describe_failure(error, max_retries=0) == "configuration problem: no OpenAI API key"


def test_any_other_failure_names_its_type_and_says_it_is_redelivered() -> None:
    line = describe_failure(KeyError(), max_retries=2)
    assert line.startswith("a turn failed (KeyError: KeyError); it is redelivered up to ")
    assert line.endswith("set aside in the dead-letter queue (--verbose shows the logs).")
