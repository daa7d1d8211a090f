"""The deployment files (Dockerfile, compose.yaml, deploy/) stay in step with the code.

No container runs here: these read the files and check that they run the command line of
``bot.deploy``, on the port and health check path the webhook server has, with only the
environment variables ``bot.config`` reads, against the PostgreSQL service they define.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from bot import config as bot_config
from bot import deploy

ROOT = Path(__file__).resolve().parents[1]
# Read by bot.config for the webhook server (checked by the last test).
WEBHOOK_VARIABLES = {"TELEGRAM_WEBHOOK_SECRET"}


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text("utf-8"))
    return loaded


def bot_services() -> dict[str, dict[str, Any]]:
    """The services that run the bot: those with its command line."""
    services = compose()["services"]
    return {n: s for n, s in services.items() if s.get("command") == list(deploy.CONTAINER_COMMAND)}


def dockerfile() -> list[tuple[str, str]]:
    """The Dockerfile's instructions, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text("utf-8"))
    lines = [line.strip() for line in text.splitlines()]
    found = []
    for line in lines:
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def instruction(name: str) -> list[str]:
    return [rest for word, rest in dockerfile() if word == name]


def caddy_site() -> str:
    return (ROOT / "deploy" / "Caddyfile").read_text("utf-8")


def mounted_config() -> Path:
    """The file compose.yaml mounts at the config path of every replica."""
    [volume] = {
        v for s in bot_services().values() for v in s["volumes"] if ":" + deploy.CONFIG_PATH in v
    }
    source = volume.split(":")[0]
    return ROOT / source


def environment_names() -> set[str]:
    """Every variable the bot's config reads."""
    return {*bot_config.ENVIRONMENT, "DATABASE_URL", *WEBHOOK_VARIABLES}


def test_the_image_runs_the_bot_as_a_user_on_the_deploy_command() -> None:
    assert instruction("FROM") == ["python:3.11-slim"]
    assert any('pip install ".[postgres]"' in run for run in instruction("RUN"))
    [user] = instruction("USER")
    assert user not in ("root", "0")
    [command] = instruction("CMD")
    assert json.loads(command) == list(deploy.CONTAINER_COMMAND)
    assert instruction("EXPOSE") == [str(deploy.PORT)]
    [health] = instruction("HEALTHCHECK")
    assert f"http://127.0.0.1:{deploy.PORT}{deploy.LIVE_PATH}'" in health


def test_compose_runs_two_replicas_of_one_image_and_config() -> None:
    replicas = bot_services()
    assert len(replicas) >= 2
    first, *others = ({k: v for k, v in s.items() if k != "hostname"} for s in replicas.values())
    assert all(other == first for other in others)  # same image, config, environment
    # Each its own host name: the replica's identity (its host and port), never shared.
    hostnames = [service.get("hostname") for service in replicas.values()]
    assert all(hostnames) and len(set(hostnames)) == len(hostnames)
    assert first["build"] == "." and first["image"]
    assert str(deploy.PORT) in [str(port) for port in first["expose"]]
    assert mounted_config().is_file()
    assert set(first["environment"]) <= environment_names()
    assert {"TELEGRAM_BOT_TOKEN", "DATABASE_URL"} <= set(first["environment"])


def test_the_replicas_use_the_postgresql_service_of_compose() -> None:
    services = compose()["services"]
    [replica, *_] = bot_services().values()
    url = urlsplit(replica["environment"]["DATABASE_URL"])
    assert url.scheme == "postgresql"
    database = services[url.hostname]
    assert database["image"] == "postgres:16"
    assert replica["depends_on"][url.hostname] == {"condition": "service_healthy"}
    environment = database["environment"]
    assert url.username == environment["POSTGRES_USER"]
    variable = re.compile(r"\$\{(\w+)")  # the same ${POSTGRES_PASSWORD} on both sides
    assert variable.findall(str(url.password)) == variable.findall(environment["POSTGRES_PASSWORD"])
    assert url.path == "/" + environment["POSTGRES_DB"]
    assert "pg_isready" in " ".join(database["healthcheck"]["test"])
    [data] = database["volumes"]
    assert data.split(":")[0] in compose()["volumes"]  # a named volume: it outlives containers


def test_caddy_balances_the_replicas_with_health_checks_and_forwards_the_webhook_path() -> None:
    services = compose()["services"]
    [proxy] = [s for s in services.values() if str(s.get("image", "")).startswith("caddy")]
    assert "./deploy/Caddyfile:/etc/caddy/Caddyfile:ro" in proxy["volumes"]
    assert {"80:80", "443:443"} <= set(proxy["ports"])
    site = caddy_site()
    [upstreams] = re.findall(r"reverse_proxy ([^{\n]+)\{", site)
    assert set(upstreams.split()) == {f"{name}:{deploy.PORT}" for name in bot_services()}
    assert re.search(rf"health_uri {re.escape(deploy.LIVE_PATH)}\n", site)
    with mounted_config().open("rb") as file:
        telegram = tomllib.load(file)["telegram"]
    assert re.search(rf"handle {re.escape(urlsplit(telegram['webhook_url']).path)} \{{", site)
    assert telegram["port"] == deploy.PORT


def test_the_replica_benchmark_starts_the_same_command() -> None:
    from bench import replicas

    assert tuple(replicas.COMMAND) == deploy.COMMAND


def test_the_deploy_constants_are_the_webhook_server_s() -> None:
    fields = {f.name: f for f in dataclasses.fields(bot_config.TelegramConfig)}
    assert fields["port"].default == deploy.PORT
    assert (bot_config.LIVE_PATH, bot_config.READY_PATH) == (deploy.LIVE_PATH, deploy.READY_PATH)
    assert set(bot_config.ENVIRONMENT) >= WEBHOOK_VARIABLES
    config = bot_config.load_config(mounted_config(), environ={"TELEGRAM_BOT_TOKEN": "1:x"})
    assert config.telegram.webhook_url
