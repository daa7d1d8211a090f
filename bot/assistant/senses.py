"""Hearing and sight: a voice note's words and a photo's one-line description.

``Transcriber`` sends audio to an OpenAI-compatible ``/v1/audio/transcriptions`` endpoint
(``[transcription]``: OpenAI's whisper-1, a local whisper server) through the openai SDK, and
returns the text or raises ``NotHeard`` with the reason in a stable ``kind`` (``timeout``,
``failed``, ``empty``) and a detail safe to show (an HTTP status, never a key). It is made only
when ``[transcription] base_url`` is set, and the SDK is imported then (about a second).

``describe_photo`` asks the chat model of ``[llm]`` (with ``vision = true``) for one line
describing an image; any failure is None: the photo is still remembered, and the reply asks for
a caption instead. A description is the model's words, and the bot says so wherever it shows
one (``bot.chat.media``).
"""

from __future__ import annotations

import base64
import logging
from typing import TYPE_CHECKING

from bot.config import TranscriptionConfig

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

MAX_DESCRIPTION = 200  # characters of a photo's description
DESCRIBE_PROMPT = (
    "Describe this photo in one short line (at most 20 words), plainly, so that its owner can "
    "find it again by searching. Answer in {language}. No preamble."
)
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}


class NotHeard(Exception):
    """A voice note could not be transcribed: ``kind`` is ``timeout``, ``failed`` or ``empty``."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail


class Transcriber:
    """Speech to text on the endpoint of ``[transcription]``."""

    def __init__(self, config: TranscriptionConfig) -> None:
        import openai  # only when transcription is configured

        self.config = config
        self._openai = openai
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "not-needed",  # a local server may want none
            timeout=openai.Timeout(config.timeout, connect=min(config.timeout, 10.0)),
            max_retries=1,
        )

    async def transcribe(self, audio: bytes, filename: str) -> str:
        """The words of ``audio`` (an OGG/Opus voice note, an MP3 ...); ``NotHeard`` if none."""
        openai = self._openai
        try:
            result = await self._client.audio.transcriptions.create(
                model=self.config.model, file=(filename, audio)
            )
        except openai.APITimeoutError as e:
            raise NotHeard("timeout") from e
        except openai.APIStatusError as e:
            raise NotHeard("failed", f"HTTP {e.status_code}") from e
        except openai.APIError as e:  # connection refused, a body that is not a transcription
            raise NotHeard("failed", type(e).__name__) from e
        text = " ".join(str(getattr(result, "text", "") or "").split())
        if not text:
            raise NotHeard("empty")
        return text

    async def close(self) -> None:
        """Let the HTTP client go."""
        await self._client.close()


async def describe_photo(
    client: AsyncOpenAI, model: str, image: bytes, language: str, *, timeout: float
) -> str | None:
    """One line describing ``image`` (JPEG bytes), by the chat model; None if it cannot."""
    import openai

    url = "data:image/jpeg;base64," + base64.b64encode(image).decode("ascii")
    prompt = DESCRIBE_PROMPT.format(language=LANGUAGE_NAMES.get(language, "English"))
    try:
        response = await client.chat.completions.create(
            model=model,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": prompt},
                        {"type": "image_url", "image_url": {"url": url}},
                    ],
                }
            ],
            max_tokens=80,
            timeout=timeout,
        )
    except openai.APIError as e:
        log.warning("could not describe a photo: %s", type(e).__name__)
        return None
    choices = response.choices or []
    text = (choices[0].message.content or "") if choices else ""
    line = " ".join(text.strip().splitlines()[0].split()) if text.strip() else ""
    if not line:
        return None
    return line if len(line) <= MAX_DESCRIPTION else line[: MAX_DESCRIPTION - 1].rstrip() + "…"
