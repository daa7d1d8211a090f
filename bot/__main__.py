"""``python -m bot``: run the bot (placeholder until the bot lands)."""

import argparse


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    parser.add_argument("--config", default="config.toml", help="path of the TOML config")
    parser.parse_args()


if __name__ == "__main__":
    main()
