"""The bot in a container: the command every replica runs, and what the deployment files hold.

``Dockerfile``, ``compose.yaml`` and ``deploy/`` at the top of the repository run this command
line, and the replica benchmark starts its processes with the same one; ``tests/test_deploy.py``
checks that the files say what this module and ``bot.config`` say (the port, the health check
path, the environment variables).
"""

from __future__ import annotations

COMMAND = ("python", "-m", "bot", "--config")  # + the config file
CONFIG_PATH = "/config/config.toml"  # where compose.yaml mounts deploy/bot.toml
CONTAINER_COMMAND = (*COMMAND, CONFIG_PATH)  # the image's CMD
PORT = 8443  # [telegram] port's default: the webhook server, with its health check
HEALTH_PATH = "/healthz"  # 200 while the bot runs and reaches its store, else 503

__all__ = ["COMMAND", "CONFIG_PATH", "CONTAINER_COMMAND", "HEALTH_PATH", "PORT"]
