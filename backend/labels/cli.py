"""``python -m backend labels export|import|info|round|carry``: the label store from the command line.

The store is ``--labels`` (a SQLite file or a ``postgresql://`` URL), else ``$CONFLICTLENS_LABELS``, else the
per-user default file: any path or URL its user names (their own shell), but an existing file that is not a label
store is refused, never turned into one. A URL's password is never printed. Labels are kept per dataset identity
(``backend.labels.identity``); ``carry`` copies those of another version of a dataset onto its unchanged questions.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from backend.paths import write_private

# labels hold analysts' notes and dataset ids: printed without terminal control sequences (backend.terminal)
from backend.terminal import print, write_data  # noqa: A004

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


def _dataset_keys(store, arg: str | None) -> list[str] | None:
    """The identities ``--dataset`` names: a path, that dataset's identity (this version of it); a name, every
    version of that name in the store (of every file so named, and from before an edit)."""
    from backend.labels.identity import dataset_key

    if arg is None:
        return None
    if Path(arg).exists():
        return [dataset_key(_load(arg))]
    return store.identities(arg)


def cmd_export(args: argparse.Namespace) -> int:
    from backend.labels.files import render
    from backend.labels.team import heads

    store = _open(args)
    keys = _dataset_keys(store, args.dataset)
    labels = store.versions() if keys is None else sorted(
        (lab for key in keys for lab in store.versions(key)), key=lambda lab: (lab.created_at, lab.version))
    if args.latest:  # every current label: each analyst's own and the adjudicated one, of each dataset identity
        by_dataset = {}
        for lab in labels:
            by_dataset.setdefault(lab.dataset, []).append(lab)
        labels = [lab for group in by_dataset.values() for lab in heads(group)]
    text = render(labels, args.format)
    if args.out:
        write_private(args.out, text)  # a new file owner-only: everyone's labels
        print(f"wrote {len(labels)} label version(s) to {args.out}", file=sys.stderr)
    else:
        write_data(text)  # exact into a pipe or a file; without control sequences on a terminal
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
        from backend.labels.identity import dataset_key

        dataset = _load(args.dataset)
        key = dataset_key(dataset)
        if other := sorted({lab.dataset for lab in labels} - {key}):
            print(f"error: {args.file} holds labels of {', '.join(other)}, not only {key} (this version of "
                  f"{args.dataset}); import labels of another version without --dataset, then `python -m backend "
                  "labels carry`", file=sys.stderr)
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
    from backend.labels.identity import dataset_key, name_of
    from backend.labels.store import current_revision, other_versions_text

    store = _open(args)
    print(f"store: {store.where} (schema revision {current_revision(store.engine)})")
    names = Counter(name_of(key) for key in store.datasets())
    for key in store.datasets():
        versions = store.versions(key)
        latest = store.latest(key)
        who = Counter(f"{lab.analyst}{'' if lab.analyst_source == 'signed-in' else ' (self-declared)'}"
                      for lab in versions)
        many = f" [{names[name_of(key)]} versions of {name_of(key)}]" if names[name_of(key)] > 1 else ""
        print(f"{key}: {len(latest)} question(s) labelled, {len(versions)} version(s){many}; "
              + ", ".join(f"{a} {n}" for a, n in who.most_common()))
        cases = store.current(key)
        _print_team(store, key, cases, list(cases), "labelled cases")
    if args.dataset:
        dataset = _load(args.dataset)
        key = dataset_key(dataset)
        print(f"{args.dataset} is {key}: {len(store.latest(key))} question(s) labelled")
        cases = store.current(key)
        overlap = _print_team(store, key, cases, [q.id for q in dataset.questions], "cases")
        for q in dataset.questions:
            if case := cases.get(q.id):
                print(f"  {q.id}: {_case_line(case, overlap)}")
        if others := store.other_versions(key):
            print(f"{other_versions_text(others, dataset.name)}; `python -m backend labels carry --dataset "
                  f"{args.dataset}` carries those of unchanged questions over")
    return 0


def _round_text(rnd) -> str:
    if rnd is None:
        return "no round set (1 label per case, no lead)"
    return (f"round {rnd.number}: {rnd.overlap} label{'' if rnd.overlap == 1 else 's'} per case, lead {rnd.lead} "
            f"(set by {rnd.set_by}, {rnd.set_by_source})")


def _print_team(store, key: str, cases: dict, question_ids: list[str], what: str) -> int:
    """The round of ``key`` and its progress over ``question_ids``; the round's overlap."""
    from backend.labels.team import overlap_of, progress

    rnd = store.round(key)
    done = progress(cases, question_ids, overlap_of(rnd))
    adjudicated = sum(cases[qid].adjudicated is not None for qid in question_ids if qid in cases)
    n = done["overlap"]
    print(f"  {_round_text(rnd)}; {done['complete']} of {done['cases']} {what} have {n} of {n} label"
          f"{'' if n == 1 else 's'}; labels per analyst: "
          + (", ".join(f"{a} {c}" for a, c in done["analysts"].items()) or "none")
          + (f"; {adjudicated} adjudicated" if adjudicated else ""))
    return n


def _case_line(case, overlap: int) -> str:
    """'2 of 2 labels (ana, ben) · agreed' (or disputed, or adjudicated by the lead)."""
    from backend.labels.team import case_progress

    status = case.status()
    if status == "adjudicated":
        status = f"adjudicated by {case.adjudicated.analyst}"
    return f"{case_progress(case, overlap)} ({', '.join(sorted(case.analysts))}) · {status}"


def cmd_round(args: argparse.Namespace) -> int:
    """Set a dataset's labelling round, marked as set from the command line: whoever runs this on the server can
    write the store anyway, so ``--as`` is taken as the operator says, but by the same rule as the page: when the
    deployment names leads ($CONFLICTLENS_LEADS), ``--as`` and ``--lead`` must be among them; else anyone sets the
    first round and its lead changes it."""
    from backend import deployment
    from backend.labels.identity import dataset_key
    from backend.labels.model import LabelError
    from backend.labels.team import COMMAND_LINE, round_rule

    dataset = _load(args.dataset)
    key = dataset_key(dataset)
    store = _open(args)
    try:
        rnd = store.set_round(key, args.overlap, args.lead, args.by, by_source=COMMAND_LINE,
                              rule=round_rule(deployment.current().leads, signed_in=False))
    except LabelError as err:
        print("\n".join(f"error: {p}" for p in err.problems), file=sys.stderr)
        return 2
    print(f"{key}: {_round_text(rnd)}")
    return 0


def cmd_carry(args: argparse.Namespace) -> int:
    from backend.labels.identity import dataset_key
    from backend.labels.model import LabelError

    dataset = _load(args.dataset)
    key = dataset_key(dataset)
    store = _open(args)
    others = [o.dataset for o in store.other_versions(key)]
    if args.source is not None and args.source not in others:
        print(f"error: --from: {store.where} has no labels of {args.source} left to carry onto {key} (versions with "
              f"some: {', '.join(others) or 'none'})", file=sys.stderr)
        return 2
    if args.source is None and len(others) > 1:
        print(f"error: labels of {len(others)} other versions of {dataset.name}: choose one with --from "
              f"({', '.join(others)})", file=sys.stderr)
        return 2
    if not others:
        print(f"{key}: no labels for another version of {dataset.name}: nothing to carry over")
        return 0
    try:
        report = store.carry_over(args.source or others[0], dataset)
    except LabelError as err:
        print("\n".join(f"error: {p}" for p in err.problems), file=sys.stderr)
        return 2
    print(f"{key}: {report.text()}")
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    """Inter-annotator agreement of one dataset's current labels (``backend.labels.agreement``): per field α, the
    observed agreement and κ per pair of analysts, and the cases they disagree on."""
    from backend.labels.agreement import FIELDS, agreement
    from backend.report.text import plural
    from backend.terminal import json_text

    store = _open(args)
    keys = _dataset_keys(store, args.dataset)
    if len(keys) > 1:
        print(f"error: {store.where} has labels of {len(keys)} versions of {args.dataset} ({', '.join(keys)}): name "
              "the dataset by its path", file=sys.stderr)
        return 2
    key = keys[0] if keys else args.dataset
    cases = store.current(key) if keys else {}
    result = agreement(cases)
    if args.json:
        print(json_text(result.as_json()))
        return 0
    if result.cases == 0:
        print(f"agreement needs cases labelled by at least 2 analysts; {key} has {result.cases} "
              f"({plural(len(cases), 'question')} labelled, by {plural(len(result.analysts), 'analyst')})")
        return 0
    from rich.table import Table
    from rich.text import Text

    from backend.terminal import console

    pairs = list(next(iter(result.fields.values())).pairs)
    table = Table("field", "α", "cases", "observed", title=Text(
        f"Agreement on {key}: {plural(result.cases, 'case')} labelled by 2 or more of {', '.join(result.analysts)}"))
    for a, b in pairs:  # analysts' names as Text, never as rich markup
        table.add_column(Text(f"κ {a} · {b} (cases)"))
    for name, f in result.fields.items():
        table.add_row(FIELDS[name], "—" if f.alpha is None else f"{f.alpha:.3f}", str(f.cases),
                      "—" if f.observed is None else f"{f.observed:.0%}",
                      *(f"{'—' if p.kappa is None else f'{p.kappa:.3f}'} ({p.cases})" for p in f.pairs.values()))
    out = console(120)
    out.print(table)
    for name, f in result.fields.items():
        why = f" (α: {f.why})" if f.why else ""
        differ = ", ".join(f.disagreements) or "none"
        out.print(Text(f"{FIELDS[name]}: disagree on {differ}{why}"))
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("labels", help="the label store: export, import, info")
    lsub = p.add_subparsers(dest="labels_command", required=True)
    where = dict(help=f"a SQLite file or a postgresql:// URL (default: ${ENV}, else the per-user labels.db)")

    e = lsub.add_parser("export", help="write labels as CSV or JSONL (every version, or --latest)")
    e.add_argument("--labels", **where)
    e.add_argument("--dataset", help="only this dataset's labels: a path (this version of it), or a name (every "
                                     "version of that name)")
    e.add_argument("--format", choices=["csv", "jsonl"], default="csv")
    e.add_argument("--latest", action="store_true", help="only each question's current labels (each analyst's own and "
                                                          "the adjudicated one)")
    e.add_argument("--out", help="file to write (default: standard output)")
    e.set_defaults(func=cmd_export)

    i = lsub.add_parser("import", help="add labels from a CSV or JSONL export (labels already there are skipped)")
    i.add_argument("file")
    i.add_argument("--labels", **where)
    i.add_argument("--dataset", help="check the labels against this dataset (question, document and source ids)")
    i.set_defaults(func=cmd_import)

    n = lsub.add_parser("info", help="where the store is, its schema revision, labels per dataset and analyst")
    n.add_argument("--labels", **where)
    n.add_argument("--dataset", help="also: this dataset's identity, its progress case by case, and labels saved "
                                     "for other versions of it")
    n.set_defaults(func=cmd_info)

    r = lsub.add_parser("round", help="set a dataset's labelling round: labels per case and its lead (with "
                                      "$CONFLICTLENS_LEADS only those leads; else anyone sets the first round and "
                                      "only its lead changes it)")
    r.add_argument("--dataset", required=True, help="the dataset (its path)")
    r.add_argument("--overlap", type=int, required=True, help="how many analysts label each case")
    r.add_argument("--lead", required=True, help="who leads: changes the round and adjudicates disputed cases")
    r.add_argument("--as", dest="by", required=True, metavar="NAME",
                   help="who you are: one of $CONFLICTLENS_LEADS when it is set (the round is marked as set from "
                        "the command line)")
    r.add_argument("--labels", **where)
    r.set_defaults(func=cmd_round)

    c = lsub.add_parser("carry", help="copy labels saved for another version of a dataset (an edited file, or the "
                                      "labels from before identities) onto the questions that did not change")
    c.add_argument("--dataset", required=True, help="the dataset (its path) to carry labels onto")
    c.add_argument("--from", dest="source", metavar="IDENTITY",
                   help="the version to carry from (NAME@HASH, or the bare NAME of labels saved before identities); "
                        "needed when there are several")
    c.add_argument("--labels", **where)
    c.set_defaults(func=cmd_carry)

    a = lsub.add_parser("agreement", help="inter-annotator agreement of a dataset's labels: Krippendorff's α per "
                                          "field, Cohen's κ per pair of analysts, the cases they disagree on")
    a.add_argument("--labels", **where)
    a.add_argument("--dataset", required=True, help="the dataset: a path (this version of it), or a name (when only "
                                                    "one version of that name has labels)")
    a.add_argument("--json", action="store_true", help="print the agreement as JSON")
    a.set_defaults(func=cmd_agreement)
