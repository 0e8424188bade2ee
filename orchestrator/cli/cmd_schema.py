"""`xcplab schema [--write | --check]`: the spec's JSON Schema."""

from __future__ import annotations

import argparse
import sys

from orchestrator.spec.schema import SCHEMA_PATH, schema_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schema", help="print (or --write) the JSON Schema of experiment specs")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true",
                   help=f"regenerate {SCHEMA_PATH.name} in the repo")
    g.add_argument("--check", action="store_true", help="exit 1 if the exported schema is stale")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    text = schema_text()
    if args.write:
        SCHEMA_PATH.parent.mkdir(parents=True, exist_ok=True)
        SCHEMA_PATH.write_text(text)
        print(SCHEMA_PATH)
        return 0
    if args.check:
        current = SCHEMA_PATH.read_text() if SCHEMA_PATH.exists() else ""
        if current != text:
            print(f"{SCHEMA_PATH} is stale: run `xcplab schema --write`", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0
