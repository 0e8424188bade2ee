"""The `xcplab` command. Thin: one subcommand, one orchestrator call.

Each subcommand lives in its own module `orchestrator/cli/cmd_<name>.py`
exposing `register(subparsers)`; the module sets `func` on its parser, which
receives the parsed args and returns an exit code. Errors derived from
XcplabError are printed without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from orchestrator import __version__
from xcplab_contract.errors import SpecError, XcplabError

# Order shown in --help.
COMMANDS = [
    "validate", "plan", "run", "sweep", "runs", "clean", "reproduce", "report", "capture",
    "serve", "dashboards", "user", "schema", "generate", "cluster",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="xcplab", description="Emulation testbed for router-assisted congestion control."
    )
    parser.add_argument("--version", action="version", version=f"xcplab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"orchestrator.cli.cmd_{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except SpecError as e:
        print(str(e), file=sys.stderr)
        return 2
    except XcplabError as e:
        print(f"xcplab: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("xcplab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
