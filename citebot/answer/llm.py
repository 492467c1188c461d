"""The LLM behind an OpenAI-compatible endpoint, through the ``openai`` client.

Endpoint and key come from ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (OpenAI,
Ollama, vLLM, llama.cpp server ...); the model from ``CITEBOT_MODEL``.  A
reply is checked, not trusted: every failure becomes an ``LLMError`` whose
message says what happened and what to try, so the chat can print it and go
on; a stream that ends without a normal finish raises ``LLMIncomplete``
after its text, so the answer is marked incomplete, never shown as whole.
``timeout`` bounds each wait for the server; ``deadline`` the whole answer,
so a server that trickles text forever cannot hold the chat.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

from citebot.terminal import writable


class LLMError(RuntimeError):
    def __init__(self, message: str, down: bool = False):
        super().__init__(message)
        self.down = down  # the server could not be reached or did not answer: asking again this turn waits again


class LLMIncomplete(LLMError):
    """The stream stopped before the model finished (cut off, length limit,
    an error after some text); the message says why, in a few words."""


class LLM:
    def __init__(self, model: str, timeout: float = 30.0, retries: int = 2, deadline: float = 180.0):
        import openai

        self._openai = openai
        self.model = model
        self.timeout, self.retries, self.deadline = timeout, retries, deadline
        self.tries = 0
        # Retries are ours (see _create): the client's own wait up to two minutes each,
        # on a server's Retry-After, before the deadline's clock could start.
        base_url = os.environ.get("OPENAI_BASE_URL") or None
        if base_url is not None:
            check_url(base_url)
        self.client = openai.OpenAI(
            base_url=base_url,
            api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",  # local servers ignore it
            timeout=timeout, max_retries=0)

    @property
    def where(self) -> str:
        """The server's address as messages show it: without a user and password in it."""
        return shown_url(str(self.client.base_url))

    def _create(self, system: str, user: str, start: float):
        """The stream, retried where the client would retry (429, 5xx, a
        timeout, a dropped connection), never waiting past the deadline."""
        o = self._openai
        for attempt in range(self.retries + 1):
            self.tries = attempt + 1  # how many times the server was asked, for the message
            left = self.deadline - (time.monotonic() - start)
            try:
                return self.client.with_options(timeout=max(0.05, min(self.timeout, left))).chat.completions.create(
                    model=self.model, temperature=0, stream=True,
                    messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])
            except (o.RateLimitError, o.InternalServerError, o.APIConnectionError) as e:
                wait = _retry_after(e) or min(0.5 * 2 ** attempt, 8.0)
                if attempt == self.retries or time.monotonic() - start + wait >= self.deadline:
                    raise
                time.sleep(wait)
        raise AssertionError("unreachable")

    def stream(self, system: str, user: str) -> Iterator[str]:
        """Yield the answer's text as it is written."""
        finish = None
        events = 0  # a reply with none was no stream at all (a whole JSON reply, a web page)
        sent = False  # whether text went out: a failure after it leaves an incomplete answer, not none
        start = time.monotonic()
        late = LLMIncomplete(f"the model was still writing after {self.deadline:g} s (CITEBOT_LLM_DEADLINE)")
        expired, watchdog, response = threading.Event(), None, None
        try:
            response = self._create(system, user, start)

            def expire() -> None:
                expired.set()
                response.close()
            # Keep-alive comments never reach the loop, and each byte restarts the
            # read timeout: past the deadline the watchdog closes the stream.
            watchdog = threading.Timer(max(0.0, self.deadline - (time.monotonic() - start)), expire)
            watchdog.daemon = True
            watchdog.start()
            for event in response:
                if expired.is_set() or time.monotonic() - start > self.deadline:
                    raise late  # every event counts, text or not
                events += 1
                choice = event.choices[0] if event.choices else None
                if choice is None:
                    continue
                text = choice.delta.content if choice.delta is not None else None
                if text is not None and not isinstance(text, str):
                    raise TypeError("content is not text")
                if text:
                    sent = True
                    # A lone surrogate is valid JSON ("\ud800") but no UTF-8: printed, it
                    # ended the chat and emptied --json.  It becomes U+FFFD where text enters.
                    yield writable(text)
                finish = choice.finish_reason or finish
                if finish is not None:
                    break  # finished: what a server sends after the finish is not part of the answer
            if expired.is_set():
                raise late
        except LLMIncomplete:
            raise
        except self._openai.APIError as e:
            if expired.is_set():
                raise late from None
            error = self._explain(e)
        except (AttributeError, TypeError, ValueError, KeyError, IndexError):
            error = LLMError("the model server sent a reply citebot cannot read (not an OpenAI-style stream); "
                             "check OPENAI_BASE_URL points at an OpenAI-compatible endpoint")
        except Exception as e:  # noqa: BLE001 - a connection cut mid-stream surfaces as the transport's own error
            if expired.is_set():
                raise late from None  # the watchdog closed the stream under the read
            raise LLMIncomplete(f"the connection broke ({type(e).__name__})") from None
        else:
            if events == 0:
                raise LLMError("the model server sent no stream of events (a whole reply, or not an OpenAI-style "
                               "API); check OPENAI_BASE_URL points at an OpenAI-compatible endpoint that streams")
            if finish != "stop":
                why = {"length": "it hit the length limit", "content_filter": "the server's content filter stopped it",
                       None: "the stream ended before the model finished"}.get(finish, f"finish_reason {finish!r}")
                raise LLMIncomplete(why)
            return
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if response is not None:
                response.close()  # a stream left at its finish goes back, not left open
        # Text already on screen stays there, marked incomplete; with none, it is a failure.
        raise (LLMIncomplete(str(error)) if sent else error) from None

    def _explain(self, e) -> LLMError:
        o = self._openai
        if isinstance(e, o.RateLimitError):
            return LLMError("the model server is rate-limiting requests (429) even after retries; wait a moment and ask again")
        if isinstance(e, o.APITimeoutError):
            # Asked three times, the wait was three timeouts and the pauses between them, not one.
            times = f", asked {self.tries} times" if self.tries > 1 else ""
            return LLMError(f"the model server did not answer within {self.timeout:g} s{times}; check that it is running "
                            "(for a slow model, raise CITEBOT_LLM_TIMEOUT)", down=True)
        if isinstance(e, o.APIConnectionError):
            return LLMError(f"cannot reach the model server at {self.where} (or it closed the connection); check OPENAI_BASE_URL "
                            "(unset it to use the offline extractive answerer)", down=True)
        says = _server_says(e)
        if isinstance(e, o.AuthenticationError):
            return LLMError(f"the model server refused the API key (401{says}); check OPENAI_API_KEY")
        if isinstance(e, o.NotFoundError):  # no such model, or no API at that path (a base URL without /v1)
            return LLMError(f"the model server at {self.where} answered 404{says}: no model {self.model!r} "
                            "there, or no OpenAI-style API at that address; set CITEBOT_MODEL, and check "
                            "OPENAI_BASE_URL (most servers end it in /v1)")
        if isinstance(e, o.APIStatusError) and e.status_code < 500:
            # A request the server will not take (too long a context, a forbidden model): asking again cannot help.
            return LLMError(f"the model server refused the request ({e.status_code}{says}); check CITEBOT_MODEL "
                            "and the server's limits")
        if isinstance(e, o.APIStatusError):
            return LLMError(f"the model server failed ({e.status_code}{says}); ask again in a moment")
        return LLMError(f"the model server sent an error mid-answer ({type(e).__name__}); ask again")

    def complete(self, system: str, user: str) -> str:
        """The whole reply; an empty or cut-off one is an ``LLMError``."""
        text = "".join(self.stream(system, user)).strip()
        if not text:
            raise LLMError("the model returned an empty reply")
        return text


def check_url(url: str) -> None:
    """A ``ConfigError`` unless ``url`` is an http(s) address with a host
    (and a port that is a number): the client raised a traceback at startup."""
    from urllib.parse import urlsplit

    from citebot.config import ConfigError

    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(f"OPENAI_BASE_URL {shown_url(url)!r} is not an http(s) address; give one such as "
                          "http://localhost:11434/v1, or unset it to answer offline")


def shown_url(url: str) -> str:
    """``url`` without the user and password it may carry (they are a credential)."""
    from urllib.parse import urlsplit, urlunsplit

    if "@" not in url:
        return url
    try:
        parts = urlsplit(url)
        return urlunsplit(parts._replace(netloc="…@" + parts.netloc.rpartition("@")[2]))
    except ValueError:
        scheme, sep, rest = url.rpartition("://") if "://" in url else ("", "", url)
        return scheme + sep + "…@" + rest.rpartition("@")[2]


def _server_says(e) -> str:
    """The server's own error message, briefly (": context length exceeded"), or ""."""
    body = getattr(e, "body", None)
    message = body.get("message") if isinstance(body, dict) else body if isinstance(body, str) else None
    text = " ".join(str(message).split())[:200] if message else ""
    return f": {text}" if text else ""


def _retry_after(e) -> float | None:
    """The wait a server asked for (``retry-after-ms`` or ``retry-after`` in
    seconds), when it named one."""
    headers = getattr(getattr(e, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        try:
            wait = float(value) / scale if value is not None else -1.0
        except ValueError:
            continue
        if 0 <= wait < float("inf"):
            return wait
    return None


def make(cfg) -> LLM | None:
    """An LLM when an endpoint is configured (``Config.has_llm``), else None (offline)."""
    return LLM(cfg.model, cfg.llm_timeout, cfg.llm_retries, cfg.llm_deadline) if cfg.has_llm else None
