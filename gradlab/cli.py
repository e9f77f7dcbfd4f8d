"""The ``gradlab`` command: ``gradlab lessons DEST`` copies the course into DEST.

>>> main(["--help"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
SystemExit: 0
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .course import copy_course, lesson_paths


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradlab", description="The gradlab course tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    lessons = commands.add_parser(
        "lessons", help="copy the lessons and their checks into a folder",
        description="Copy the lesson notebooks and their checks (_checks) into DEST; start Jupyter "
                    "there (e.g. `cd DEST && jupyter lab`) and every lesson runs.")
    lessons.add_argument("dest", metavar="DEST", help="the folder to copy into (created if missing)")
    lessons.add_argument("--overwrite", action="store_true",
                         help="replace lessons already in DEST (kept by default: they may hold your work)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``gradlab ...``; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "lessons":
        copied = copy_course(args.dest, overwrite=args.overwrite)
        kept = len(lesson_paths()) - len(copied)
        print(f"gradlab: {len(copied)} lessons and their checks copied into {args.dest}"
              + (f" ({kept} already there kept; --overwrite replaces them)" if kept else ""))
        print(f"gradlab: start the course with:  cd {args.dest} && jupyter lab")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
