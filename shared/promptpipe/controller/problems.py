"""What is wrong with a flow definition: one ``Problem`` per place, raised together as
``DefinitionInvalid``. Apart from ``definition`` so that the participants API can answer the
error without importing the definition's models at its cold start (docs/benchmarks.md)."""

# Annotations as objects, not strings: pydantic evaluates none at the participants API's cold start
# (models/api.py).
from promptpipe.errors import PromptPipeError
from promptpipe.lazy_model import LazyModel


class Problem(LazyModel):
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class DefinitionInvalid(PromptPipeError, ValueError):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = problems
