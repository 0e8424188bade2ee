"""`xcplab user`: manage API users (`add` prints the new token once)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    # --data-dir/--db are accepted before or after the action (`user add X --db URL`).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS,
                        help="as for `xcplab serve` (default XCPLAB_DATA_DIR)")
    common.add_argument("--db", dest="db_url", default=argparse.SUPPRESS,
                        help="as for `xcplab serve` (default XCPLAB_DB_URL)")
    p = sub.add_parser("user", help="manage web API users and their tokens", parents=[common])
    us = p.add_subparsers(dest="user_command", metavar="ACTION", required=True)
    add = us.add_parser("add", help="create a user; prints its bearer token once",
                        parents=[common])
    add.add_argument("name")
    add.add_argument("--admin", action="store_true", help="may see and cancel every run")
    add.set_defaults(func=_add)
    tok = us.add_parser("token", help="issue an additional token for an existing user",
                        parents=[common])
    tok.add_argument("name")
    tok.set_defaults(func=_token)
    rev = us.add_parser("revoke", help="revoke every token of a user", parents=[common])
    rev.add_argument("name")
    rev.set_defaults(func=_revoke)
    ls = us.add_parser("list", help="list users", parents=[common])
    ls.set_defaults(func=_list)


def _sessions(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from orchestrator.service.db import make_engine, session_factory
    from orchestrator.service.settings import settings_from_env

    settings = settings_from_env(data_dir=getattr(args, "data_dir", None),
                                 db_url=getattr(args, "db_url", None))
    return session_factory(make_engine(settings.database_url))


def _add(args: argparse.Namespace) -> int:
    from orchestrator.service.users import create_user

    with _sessions(args)() as db:
        _, token = create_user(db, args.name, admin=args.admin)
        db.commit()
    print(token)
    return 0


def _token(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from orchestrator.service.models import User
    from orchestrator.service.users import issue_token
    from xcplab_contract.errors import XcplabError

    with _sessions(args)() as db:
        user = db.scalar(select(User).where(User.name == args.name))
        if user is None:
            raise XcplabError(f"user {args.name!r} does not exist")
        token = issue_token(db, user)
        db.commit()
    print(token)
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from orchestrator.service.users import revoke_tokens

    with _sessions(args)() as db:
        n = revoke_tokens(db, args.name)
        db.commit()
    print(f"revoked {n} token(s) of {args.name}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from orchestrator.service.users import list_users

    with _sessions(args)() as db:
        for u in list_users(db):
            print(f"{u.name}\t{'admin' if u.admin else 'user'}\t{u.created_at:%Y-%m-%d}")
    return 0
