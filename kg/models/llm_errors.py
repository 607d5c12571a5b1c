"""Typed errors of the LLM client (all under ``core.errors.LivekgError``).

LLMError                       anything that went wrong talking to a language model
 +-- LLMUnavailable            the server cannot be reached (also a ServiceUnavailable)  [retryable]
 +-- LLMTimeout                no answer within the client's timeout                     [retryable]
 +-- LLMServerError            HTTP 5xx / 429 from the server                            [retryable]
 +-- LLMResponseError          HTTP 4xx, or a body that is not an OpenAI completion
      +-- StructuredOutputError  the model's output stayed invalid for the schema after repairs
           +-- OutputTruncated   the output hit ``max_tokens`` (``finish_reason == "length"``)

``retryable`` marks the failures a caller (a stream agent) may retry later; the client
has already retried each of them ``max_retries`` times with backoff before raising.
"""

from __future__ import annotations

from core.errors import LivekgError, ServiceUnavailable


class LLMError(LivekgError):
    retryable: bool = False


class LLMUnavailable(LLMError, ServiceUnavailable):
    retryable = True


class LLMTimeout(LLMError):
    retryable = True


class LLMServerError(LLMError):
    retryable = True

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class LLMResponseError(LLMError):
    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class StructuredOutputError(LLMResponseError):
    """Carries the last raw output and the validation problems, for logs and the DLQ."""

    def __init__(self, message: str, *, raw: str = "", problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.raw = raw
        self.problems = problems or []


class OutputTruncated(StructuredOutputError):
    pass
