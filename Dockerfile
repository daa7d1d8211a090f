# One bot replica: `docker build -t cogito-memory-bot .` (compose.yaml builds and runs two).
# The config is mounted at /config/config.toml; secrets come from the environment
# (TELEGRAM_BOT_TOKEN, TELEGRAM_WEBHOOK_SECRET, DATABASE_URL, OPENAI_API_KEY).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY memory ./memory
COPY bot ./bot
COPY bench ./bench
RUN pip install ".[postgres]"

# Not root: the bot needs no privilege (it listens on 8443, writes only to PostgreSQL and /tmp).
RUN useradd --system --uid 10001 --create-home --home-dir /home/bot bot
USER bot

EXPOSE 8443
# The webhook server's liveness ([telegram] port, default 8443): 200 while the process serves,
# a database outage included, so that nothing restarts replicas that still answer. Whether it
# can store is /healthz/ready: for monitoring. The slim image has no curl: Python asks.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request as r; r.urlopen('http://127.0.0.1:8443/healthz/live', timeout=4)"]
CMD ["python", "-m", "bot", "--config", "/config/config.toml"]
