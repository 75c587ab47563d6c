"""``python -m backend labels export|import|info``: the label store from the command line.

The store is ``--labels`` (a SQLite file or a ``postgresql://`` URL), else ``$CONFLICTLENS_LABELS``, else the
per-user default file. A URL's password is never printed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

ENV = "CONFLICTLENS_LABELS"


def store_location(arg: str | None) -> str | None:
    return arg or os.environ.get(ENV) or None


def _open(args):
    from backend.labels.store import LabelStore, LabelStoreError

    try:
        return LabelStore(store_location(args.labels))
    except LabelStoreError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


def _load(path: str):
    from backend.data import DatasetError, load_dataset

    try:
        return load_dataset(path)
    except DatasetError as err:
        print("\n".join(map(str, err.problems)), file=sys.stderr)
        raise SystemExit(2) from None


def _dataset_name(arg: str | None) -> str | None:
    """A dataset given by name, or by path (its name is what the labels record)."""
    if arg is None:
        return None
    return _load(arg).name if Path(arg).exists() else arg


def cmd_export(args: argparse.Namespace) -> int:
    from backend.labels.files import render
    from backend.labels.gold import newest

    store = _open(args)
    labels = store.versions(_dataset_name(args.dataset))
    if args.latest:
        by_question = {}
        for lab in labels:
            by_question.setdefault(lab.dataset, []).append(lab)
        labels = [lab for group in by_question.values() for lab in newest(group).values()]
    text = render(labels, args.format)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {len(labels)} label version(s) to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from backend.labels.files import LabelFileError, read_labels
    from backend.labels.model import LabelError

    try:
        labels = read_labels(args.file)
    except LabelFileError as err:
        print("\n".join(err.problems), file=sys.stderr)
        return 2
    dataset = None
    if args.dataset:
        dataset = _load(args.dataset)
        if other := sorted({lab.dataset for lab in labels} - {dataset.name}):
            print(f"error: {args.file} holds labels of {', '.join(other)}, not only {dataset.name}", file=sys.stderr)
            return 2
    store = _open(args)
    try:
        report = store.import_labels(labels, dataset=dataset)
    except LabelError as err:
        print("\n".join(f"error: {p}" for p in err.problems), file=sys.stderr)
        return 2
    print(f"{store.where}: added {report.added}, already there {report.skipped}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from backend.labels.store import current_revision

    store = _open(args)
    print(f"store: {store.where} (schema revision {current_revision(store.engine)})")
    for name in store.datasets():
        versions = store.versions(name)
        latest = store.latest(name)
        who = Counter(lab.analyst for lab in versions)
        print(f"{name}: {len(latest)} question(s) labelled, {len(versions)} version(s); "
              + ", ".join(f"{a} {n}" for a, n in who.most_common()))
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("labels", help="the label store: export, import, info")
    lsub = p.add_subparsers(dest="labels_command", required=True)
    where = dict(help=f"a SQLite file or a postgresql:// URL (default: ${ENV}, else the per-user labels.db)")

    e = lsub.add_parser("export", help="write labels as CSV or JSONL (every version, or --latest)")
    e.add_argument("--labels", **where)
    e.add_argument("--dataset", help="only this dataset's labels (its name or path)")
    e.add_argument("--format", choices=["csv", "jsonl"], default="csv")
    e.add_argument("--latest", action="store_true", help="only each question's current label")
    e.add_argument("--out", help="file to write (default: standard output)")
    e.set_defaults(func=cmd_export)

    i = lsub.add_parser("import", help="add labels from a CSV or JSONL export (labels already there are skipped)")
    i.add_argument("file")
    i.add_argument("--labels", **where)
    i.add_argument("--dataset", help="check the labels against this dataset (question, document and source ids)")
    i.set_defaults(func=cmd_import)

    n = lsub.add_parser("info", help="where the store is, its schema revision, labels per dataset and analyst")
    n.add_argument("--labels", **where)
    n.set_defaults(func=cmd_info)
