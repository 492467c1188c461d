"""The LLM behind an OpenAI-compatible endpoint, through the ``openai`` client.

Endpoint and key come from ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (OpenAI,
Ollama, vLLM, llama.cpp server ...); the model from ``CITEBOT_MODEL``.  Every
failure becomes an ``LLMError`` whose message says what happened and what to
try, so the chat can print it and go on.
"""
from __future__ import annotations

import os
from collections.abc import Iterator


class LLMError(RuntimeError):
    pass


class LLM:
    def __init__(self, model: str, timeout: float = 30.0, retries: int = 2):
        import openai

        self._openai = openai
        self.model = model
        self.calls = 0
        self.client = openai.OpenAI(
            base_url=os.environ.get("OPENAI_BASE_URL") or None,
            api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",  # local servers ignore it
            timeout=timeout, max_retries=retries)

    def stream(self, system: str, user: str) -> Iterator[str]:
        """Yield the answer's text as it is written."""
        o = self._openai
        self.calls += 1
        try:
            response = self.client.chat.completions.create(
                model=self.model, temperature=0, stream=True,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])
            for event in response:
                if event.choices and event.choices[0].delta and event.choices[0].delta.content:
                    yield event.choices[0].delta.content
        except o.RateLimitError:
            raise LLMError("the model server is rate-limiting requests (429) even after retries; wait a moment and ask again") from None
        except o.APITimeoutError:
            raise LLMError("the model server did not answer in time; ask again, or raise CITEBOT_LLM_TIMEOUT") from None
        except o.APIConnectionError:
            raise LLMError(f"cannot reach the model server at {self.client.base_url}; check OPENAI_BASE_URL "
                           "(unset it to use the offline extractive answerer)") from None
        except o.AuthenticationError:
            raise LLMError("the model server refused the API key (401); check OPENAI_API_KEY") from None
        except o.NotFoundError:
            raise LLMError(f"the model server has no model {self.model!r}; set CITEBOT_MODEL") from None
        except o.APIStatusError as e:
            raise LLMError(f"the model server failed ({e.status_code}); ask again in a moment") from None

    def complete(self, system: str, user: str) -> str:
        return "".join(self.stream(system, user)).strip()


def make(cfg) -> LLM | None:
    """An LLM when an endpoint or key is configured, else None (offline)."""
    return LLM(cfg.model, cfg.llm_timeout, cfg.llm_retries) if cfg.has_llm else None

