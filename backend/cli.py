"""Command line: ``python -m backend COMMAND ...`` (see DESIGN.md, "CLI contract").

Each command imports what it needs lazily, so ``validate`` stays fast and never loads torch.
Exit codes: 0 success, 2 bad input (dataset, arguments), 1 anything else reported as one line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import backend  # noqa: F401  (offline environment variables)


def _cmd_validate(args: argparse.Namespace) -> int:
    from backend.data import DatasetError, load_dataset

    try:
        ds = load_dataset(args.dataset, format=args.format)
    except DatasetError as err:
        for problem in err.problems:
            print(problem, file=sys.stderr)
        return 2
    for note in ds.notes:
        print(f"note: {note}", file=sys.stderr)
    n_docs = sum(len(q.documents) for q in ds.questions)
    print(f"{args.dataset}: ok ({ds.format} format): {len(ds.questions)} questions, {n_docs} documents, "
          f"{len(ds.source_names())} named sources")
    return 0


def _cmd_build_sample(args: argparse.Namespace) -> int:
    from backend.sample import build_sample

    for line in build_sample(Path(args.out)):
        print(line)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m backend", description="ConflictLens command line")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="load and check a dataset (exit 2 on bad input)")
    p.add_argument("dataset", help="a .jsonl file or a folder with questions.jsonl [+ sources.json]")
    p.add_argument("--format", choices=["auto", "project", "ramdocs"], default="auto")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("build-sample", help="regenerate sample_data/ deterministically")
    from backend.paths import SAMPLE_DATA

    p.add_argument("--out", default=str(SAMPLE_DATA), help="output folder (default: sample_data/)")
    p.set_defaults(func=_cmd_build_sample)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
