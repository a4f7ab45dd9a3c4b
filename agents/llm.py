"""An OpenAI-compatible chat endpoint (any server that speaks chat completions), with retries.

Rate limits, server errors, timeouts and dropped connections are retried with exponential
backoff (tenacity); anything else, or running out of tries, becomes one :class:`LlmError` line
naming the endpoint and what failed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from kgp.errors import ConfigurationError, LlmError
from kgp.settings import Settings, redact_url
from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

Message = dict[str, str]


def _retryable(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)  # includes timeouts


class ChatClient:
    """Chat completions against ``settings.llm_base_url`` with ``settings.llm_model``."""

    def __init__(self, settings: Settings, *, max_wait: float = 20.0) -> None:
        if not settings.llm_base_url or not settings.llm_model:
            raise ConfigurationError(
                "no language model is configured; set KGP_LLM_BASE_URL and KGP_LLM_MODEL "
                "(any OpenAI-compatible endpoint)"
            )
        import openai

        self.base_url = redact_url(settings.llm_base_url)  # for messages: never a password
        self.model = settings.llm_model
        self.retries = settings.llm_retries
        self.max_wait = max_wait
        self._client = openai.OpenAI(
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key.get_secret_value() or "none",
            timeout=settings.llm_timeout,
            max_retries=0,  # tenacity retries, so the policy is ours and tested
        )

    def _create(self, messages: Sequence[Message], **options: Any) -> Any:
        """One chat-completions call, retried by the policy; failures become one LlmError."""
        retrying = Retrying(
            retry=retry_if_exception(_retryable),
            stop=stop_after_attempt(self.retries + 1),
            wait=wait_exponential(multiplier=0.5, max=self.max_wait),
            reraise=False,
        )
        try:
            return retrying(
                self._client.chat.completions.create,
                model=self.model,
                messages=list(messages),
                **options,
            )
        except RetryError as exc:
            last = exc.last_attempt.exception()
            tries = f" failed after {self.retries + 1} tries" if self.retries else ""
            raise LlmError(f"language model at {self.base_url}{tries}: {_describe(last)}") from None
        except Exception as exc:  # the openai package's own errors, translated here
            raise LlmError(f"language model at {self.base_url}: {_describe(exc)}") from None

    def complete(
        self, messages: Sequence[Message], *, max_tokens: int = 256, temperature: float = 0.0
    ) -> str:
        """The assistant's reply to ``messages``."""
        response = self._create(messages, max_tokens=max_tokens, temperature=temperature)
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            raise LlmError(
                f"language model at {self.base_url} sent a reply without a message"
            ) from None
        return str(content or "").strip()

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int = 256, temperature: float = 0.0
    ) -> Iterator[str]:
        """The assistant's reply to ``messages`` as the server sends it, piece by piece. The
        request is retried like ``complete``; a reply cut off midway is one LlmError."""
        chunks = self._create(messages, max_tokens=max_tokens, temperature=temperature, stream=True)
        ended = False
        try:
            for chunk in chunks:
                choices = getattr(chunk, "choices", None) or []
                if not choices:
                    continue
                ended = ended or getattr(choices[0], "finish_reason", None) is not None
                text = getattr(getattr(choices[0], "delta", None), "content", None)
                if text:
                    yield str(text)
            if not ended:  # the connection closed before the chunk that says why it ended
                raise LlmError(
                    f"language model at {self.base_url}: the reply stopped midway "
                    "(no finish_reason)"
                )
        except LlmError:
            raise
        except Exception as exc:
            raise LlmError(
                f"language model at {self.base_url}: the reply stopped midway ({_describe(exc)})"
            ) from None
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()


def _describe(exc: BaseException | None) -> str:
    import openai

    if exc is None:
        return "unknown error"
    if isinstance(exc, openai.APITimeoutError):
        return "timed out (KGP_LLM_TIMEOUT)"
    if isinstance(exc, openai.APIConnectionError):
        return "cannot connect; check KGP_LLM_BASE_URL and that the server is running"
    if isinstance(exc, openai.AuthenticationError):
        return "authentication failed; check KGP_LLM_API_KEY"
    if isinstance(exc, openai.NotFoundError):
        return "not found; check KGP_LLM_BASE_URL and KGP_LLM_MODEL"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {' '.join(str(exc.message).split())[:200]}"
    return " ".join(str(exc).split())[:200] or type(exc).__name__
