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


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every subcommand, or `only` that one: each module imports what its command needs
    (pandas, matplotlib, networkx...: 2-3 s of imports for all of them), so a command
    named on the command line registers alone."""
    parser = argparse.ArgumentParser(
        prog="xcplab", description="Emulation testbed for router-assisted congestion control."
    )
    parser.add_argument("--version", action="version", version=f"xcplab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in [only] if only in COMMANDS else COMMANDS:
        importlib.import_module(f"orchestrator.cli.cmd_{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    parser = build_parser(args_in[0] if args_in else None)
    args = parser.parse_args(args_in)
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
