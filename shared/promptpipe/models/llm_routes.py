"""Where a model call goes: the routes (model settings per purpose) and the endpoints a deployment
allows. Apart from ``models.llm`` (the calls themselves) because the settings read them: a function
that never calls the model does not build the call models at its cold start (docs/benchmarks.md)."""

from pydantic import ConfigDict, Field

from promptpipe.lazy_model import LazyModel


class LLMRoute(LazyModel):
    """Model settings for one purpose (intake, feedback, generator, classifier, synthesis); unset
    fields fall back to the next level (participant → study → purpose → ``GENAI_*``)."""

    # Strict: from the API, ``false`` is not a temperature nor ``"60"`` a token count.
    model_config = ConfigDict(extra="forbid", strict=True)

    model: str | None = None
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    max_tokens: int | None = Field(None, ge=16, le=32000)
    base_url: str | None = None  # an endpoint of LLM_ENDPOINTS (none: the default endpoint)

    def over(self, base: "LLMRoute") -> "LLMRoute":
        """This route with ``base`` filling what it leaves unset."""
        return LLMRoute(
            model=self.model or base.model,
            temperature=base.temperature if self.temperature is None else self.temperature,
            max_tokens=base.max_tokens if self.max_tokens is None else self.max_tokens,
            base_url=self.base_url or base.base_url,
        )


class LLMEndpoint(LazyModel):
    """An OpenAI-compatible endpoint this deployment allows model routes to name besides the default
    one (``LLM_ENDPOINTS``): its base URL, the models routes may ask of it, and the Secrets Manager
    secret that holds its key (JSON ``{"API_KEY": "…"}``). The default endpoint's key is never
    sent anywhere else."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(pattern=r"^https?://[^\s/?#]+[^\s?#]*$")
    models: tuple[str, ...] = Field(min_length=1)
    secret_name: str = Field(min_length=1, max_length=512)

    @property
    def url(self) -> str:
        return endpoint_url(self.base_url)


def endpoint_url(base_url: str) -> str:
    """A base URL as endpoints are compared: without trailing slashes."""
    return base_url.rstrip("/")
