"""The bot in a container: the command every replica runs, and what the deployment files hold.

``Dockerfile``, ``compose.yaml`` and ``deploy/`` at the top of the repository run this command
line, and the replica benchmark starts its processes with the same one; ``tests/test_deploy.py``
checks that the files say what this module and ``bot.config`` say (the port, the health check
paths, the environment variables).
"""

from __future__ import annotations

COMMAND = ("python", "-m", "bot", "--config")  # + the config file
CONFIG_PATH = "/config/config.toml"  # where compose.yaml mounts deploy/bot.toml
CONTAINER_COMMAND = (*COMMAND, CONFIG_PATH)  # the image's CMD
PORT = 8443  # [telegram] port's default: the webhook server, with its health checks
# What the image's HEALTHCHECK and the balancer ask: 200 while the process serves, database
# outage or not (a replica that is up keeps taking updates and answering what it can).
LIVE_PATH = "/healthz/live"
# What monitoring asks: 200 while the bot runs and reaches its store, else 503 and the reason.
READY_PATH = "/healthz/ready"

__all__ = ["COMMAND", "CONFIG_PATH", "CONTAINER_COMMAND", "LIVE_PATH", "PORT", "READY_PATH"]
