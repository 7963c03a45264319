"""The argument parser every command builds: a flag is matched as spelled, never as the start of a longer one
(argparse would take `--max-turn 5` for `--max-turns 5`, or `--epoch 2` for `--epochs 2`, without a word)."""

from __future__ import annotations

import argparse
from typing import Any


class Parser(argparse.ArgumentParser):
    """argparse's parser without prefix matching; its subcommands' parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
