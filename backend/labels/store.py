"""The label store: one repository over SQLAlchemy 2, the same code on SQLite (default) and PostgreSQL (teams).

* **SQLite** (a file, default ``<data dir>/labels.db``): WAL journal, so readers never block the writer and a
  kill loses nothing committed; ``synchronous=FULL``; every write transaction starts with ``BEGIN IMMEDIATE``,
  so two processes writing at once queue on the busy timeout instead of failing with "database is locked".
* **PostgreSQL** (``postgresql://user@host/db``, driver psycopg 3): one shared store for a team of analysts.

Nothing is overwritten: ``save`` inserts a new version of the question's label. Two analysts editing the same
question at once collide on the unique (dataset, question, version): with ``expected`` given (the version the
analyst was looking at) the later save raises ``LabelConflict`` naming the newer label; without it the save is
retried on top of the newer version. The schema is versioned with Alembic (``backend/labels/migrations``);
opening a store upgrades it to the newest revision, under a lock so two processes opening it at once do not race.

Labels are saved under the dataset's identity (``backend.labels.identity``: name and content hash), with the
fingerprint of the question judged, so labels of another file with the same name, or of an edited version, never
show up as this one's; ``other_versions`` and ``carry_over`` tell about them and carry the unchanged ones over.

A SQLite path names a new store or an existing ConflictLens store, never another file: an existing file that is not
one of our stores (an empty file included) is refused untouched, and a new store is built under a temporary name
beside it and linked into place complete, so a file at the path is always a whole store (two processes creating
one at once both end up on the same store).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, OperationalError

from backend.errors import mask_secrets, mask_url
from backend.labels.identity import dataset_key, is_key, name_of, question_fingerprint
from backend.labels.model import (ADJUDICATED, ANALYST, MAX_ANALYST, MAX_NOTE, SELF_DECLARED, SIGNED_IN,
                                  AnalystSource, Label, LabelDraft, LabelError, LabelKind, check, problems)
from backend.labels.tables import labels as T
from backend.labels.tables import rounds as R
from backend.llm.urls import BadURL, check_text
from backend.labels.analysts import named
from backend.labels.team import (MAX_OVERLAP, CaseLabels, Round, RoundSource, by_case, heads, leads, may_set_round,
                                 round_rule, saw_others)
from backend.paths import create_private, default_data_dir, private_dir

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: Any: save on top of whatever the newest version is (imports, scripts). The page passes what the analyst saw.
ANY = object()
_MIGRATION_LOCK = 7_150_001  # pg_advisory_xact_lock key for schema upgrades
READS = "conflictlens_reads"  # execution option of the store's read-only connections
CONNECT_TIMEOUT_S = 10
SQLITE_HEADER = b"SQLite format 3\x00"
#: The tables every ConflictLens label store has (from its first revision on).
STORE_TABLES = frozenset({"labels", "alembic_version"})  # rounds: from revision 0003 on
#: How the name of a new SQLite store may end (the Label page refuses others).
NEW_SUFFIXES = (".db", ".sqlite", ".sqlite3")
FileState = Literal["missing", "store", "other"]


class LabelStoreError(RuntimeError):
    """The store cannot be opened or used (bad URL, server down, a schema newer than this code)."""


class LabelConflict(LabelError):
    """Someone saved a newer version of this question's label since the analyst loaded it."""

    def __init__(self, current: Label):
        self.current = current
        super().__init__([f"{name_of(current.dataset)} / {current.question_id}: {current.analyst} saved version "
                          f"{current.version} at {current.created_at:%Y-%m-%d %H:%M:%S} UTC meanwhile; "
                          "look at it before saving over it"])


def default_store_path() -> Path:
    return default_data_dir() / "labels.db"


def store_url(where: str | Path | None = None) -> URL:
    """A SQLAlchemy URL from a path (SQLite file) or a URL; ``postgresql://`` uses psycopg 3."""
    if where is None or str(where).strip() == "":
        where = default_store_path()
    text = str(where).strip()
    if "://" not in text:
        path = Path(text).expanduser().resolve()
        return URL.create("sqlite+pysqlite", database=str(path))
    try:
        url = make_url(text)
    except (ArgumentError, ValueError) as err:  # ValueError: a port that is not a number
        # SQLAlchemy's message repeats the text: both masked (a password given as user:pw@ or ?password=)
        raise LabelStoreError(f"{mask_secrets(text)!r} is neither a file path nor a database URL "
                              f"({mask_secrets(str(err))})") from None
    try:  # one URL, parsed once (by SQLAlchemy, which connects): no whitespace or control character in it
        check_text(text, "label store URL")
    except BadURL as err:
        raise LabelStoreError(str(err)) from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise LabelStoreError(f"{url.get_backend_name()}: labels are kept in SQLite or PostgreSQL only")
    return url


def sqlite_file_state(path: str | Path) -> FileState:
    """What is at ``path``, only looking (a pipe or device is never opened, a file only read): ``missing`` (a new
    store may be made there), ``store`` (a ConflictLens label store: a SQLite file with our tables) or ``other``
    (a folder, a device, an empty file, any other file: never made into a store)."""
    path = Path(path)
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except OSError:
        return "other"
    if not stat.S_ISREG(info.st_mode) or info.st_size < 100:  # a SQLite file starts with a 100-byte header
        return "other"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            head = os.read(fd, len(SQLITE_HEADER))
        finally:
            os.close(fd)
    except OSError:
        return "other"
    if head != SQLITE_HEADER:
        return "other"
    # read-only and immutable: looking changes nothing, not even a -wal or -shm file beside it. A store whose tables
    # are still only in its write-ahead log (a writer killed before a checkpoint) is read through the log.
    wal = os.path.exists(f"{path}-wal")
    for options in ("mode=ro&immutable=1", "mode=ro") if wal else ("mode=ro&immutable=1",):
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?{options}", uri=True, timeout=60)
            try:
                names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            finally:
                conn.close()
        except sqlite3.Error:
            continue
        if STORE_TABLES <= names:
            return "store"
    return "other"


def not_a_store(path: str | Path) -> str:
    """The one line refusing an existing file that is not a label store."""
    return (f"{path}: an existing file that is not a ConflictLens label store (it is left as it is); name a new "
            f"file ({', '.join(NEW_SUFFIXES)}) or an existing store")


def _create_sqlite(path: Path) -> None:
    """A new, migrated store at ``path``, built under a temporary name beside it and linked into place whole; a
    store (or any file) made at ``path`` meanwhile is kept and this one dropped."""
    try:
        private_dir(path.parent)
    except OSError as err:
        raise LabelStoreError(f"{path.parent}: cannot create the label store's folder ({err.strerror})") from None
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.new")
    # owner-only from the start, linked into place as it is; SQLite gives its -wal and -shm the database's mode
    try:
        create_private(tmp)
    except OSError as err:
        raise LabelStoreError(f"{path.parent}: cannot create the label store ({err.strerror})") from None
    engine = _sqlite_engine(URL.create("sqlite+pysqlite", database=str(tmp)))
    try:
        try:
            migrate(engine)
        finally:
            engine.dispose()
        with sqlite3.connect(tmp) as conn:  # everything into the one file before it is linked (WAL again on open)
            conn.execute("PRAGMA journal_mode=DELETE")
        conn.close()
        try:
            os.link(tmp, path)  # never replaces what is there
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not os.path.lexists(path):
                os.replace(tmp, path)
    finally:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")):
            leftover.unlink(missing_ok=True)


def _sqlite_store_engine(url: URL) -> Engine:
    """The engine of the SQLite store at ``url``: an existing ConflictLens store, or a new one made there; any other
    file is refused untouched."""
    database = url.database or ""
    if database in ("", ":memory:"):
        return _sqlite_engine(url)
    path = Path(database)
    state = sqlite_file_state(path)
    if state == "missing":
        _create_sqlite(path)
        state = sqlite_file_state(path)
    if state != "store":
        raise LabelStoreError(not_a_store(path))
    return _sqlite_engine(url)


def _sqlite_engine(url: URL) -> Engine:
    engine = sa.create_engine(url, connect_args={"timeout": 60})

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi, _record):
        dbapi.isolation_level = None  # we issue BEGIN ourselves (below), pysqlite's implicit BEGIN is deferred
        cur = dbapi.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=FULL")
        cur.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(conn):
        # writers take the write lock up front; readers (``READS``) do not queue behind them (WAL)
        conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get(READS) else "BEGIN IMMEDIATE")

    return engine


@dataclass
class ImportReport:
    added: int
    skipped: int  # already in the store (same uid)


@dataclass(frozen=True)
class OtherVersion:
    """Labels saved for another version of a dataset (same name, other content: an edited or another file)."""
    dataset: str          # its identity (a bare name: labels saved before identities existed)
    questions: int        # questions labelled there that have no label in this version
    unfingerprinted: int  # of those, labels without the question's fingerprint: they carry over by id only


def saved_elsewhere(n: int, name: str) -> str:
    """'N labels were saved for another version of NAME' (one label: 'was')."""
    return f"{n} label{'' if n == 1 else 's'} {'was' if n == 1 else 'were'} saved for another version of {name}"


def other_versions_text(others: list[OtherVersion], name: str) -> str:
    """'N labels were saved for another version of NAME' (which), and how many carry over by question id only."""
    by_id = sum(o.unfingerprinted for o in others)
    text = (f"{saved_elsewhere(sum(o.questions for o in others), name)} "
            f"({', '.join(o.dataset for o in others)}): the file changed, or another file has this name")
    if by_id:
        text += (f"; {by_id} of them were saved before ConflictLens recorded the question's content and carry over "
                 "by question id only")
    return text


@dataclass
class CarryReport:
    """What ``carry_over`` did, question by question (each counted once)."""
    source: str
    carried: int = 0
    by_id_only: int = 0   # of the carried: no fingerprint to compare (saved before it was recorded)
    changed: int = 0      # the question's content differs here: left where it was
    gone: int = 0         # no question with that id here
    already: int = 0      # the question already has a label here: left as it is

    def text(self) -> str:
        """One line saying what happened."""
        parts = [f"carried over {self.carried} label(s) from {self.source}"]
        if self.by_id_only:
            parts.append(f"{self.by_id_only} of them by question id only (saved before ConflictLens recorded the "
                         "question's content: check them)")
        for n, what in ((self.changed, "question(s) changed"), (self.gone, "question(s) no longer there"),
                        (self.already, "question(s) already labelled here")):
            if n:
                parts.append(f"{n} {what}: left as they were")
        return "; ".join(parts)


class LabelStore:
    """Labels in one database. ``where``: a SQLite file path, a ``sqlite:///`` or ``postgresql://`` URL, or None
    for the per-user default file."""

    def __init__(self, where: str | Path | None = None):
        self.url = store_url(where)
        try:
            if self.url.get_backend_name() == "sqlite":
                self.engine = _sqlite_store_engine(self.url)
            else:
                self.engine = sa.create_engine(self.url, pool_pre_ping=True,
                                               connect_args={"connect_timeout": CONNECT_TIMEOUT_S})
            self._reads = self.engine.execution_options(**{READS: True})
            for attempt in range(20):  # two processes creating one SQLite file at once: switching it to WAL and
                try:                   # the first migration can find it locked without waiting; look again
                    migrate(self.engine)
                    break
                except OperationalError as err:
                    if "locked" not in str(err) or attempt == 19:
                        raise
                    time.sleep(0.1 * (attempt + 1))
        except OperationalError as err:
            raise LabelStoreError(f"{self.where}: cannot open the label store ({_first_line(err)})") from None

    @property
    def where(self) -> str:
        """The store's address for messages (a password never shown, in ``user:pw@`` or ``?password=``)."""
        if self.url.get_backend_name() == "sqlite":
            return str(self.url.database)
        return mask_url(self.url.render_as_string(hide_password=True))

    def close(self) -> None:
        self.engine.dispose()

    # --- writing ---------------------------------------------------------------------------------------------

    def save(self, draft: LabelDraft, dataset=None, methods: Iterable[str] | None = None,
             expected: str | None | object = ANY, analyst_source: AnalystSource = SELF_DECLARED) -> Label:
        """Store ``draft`` as the newest version of its analyst's own label of the question and return it.

        Each analyst's labels of a question form their own chain (``backend.labels.team``): a save supersedes the
        analyst's previous version, never another analyst's label. ``dataset`` (a ``backend.schema.Dataset``): the
        label is checked against it (question, documents, sources) and saved under its identity
        (``identity.dataset_key``; the draft may name the dataset by identity or by name) with the fingerprint of
        the question. Without it the draft must already name an identity. ``methods``: the best method must be one
        of them. ``expected``: the uid of the analyst's own version the form showed (None: they had none); if
        another of theirs is newest now (another tab), ``LabelConflict``. ``analyst_source``: ``"signed-in"`` when
        ``draft.analyst`` is the identity the user signed in with (the app's sign-in), else ``"self-declared"``."""
        return self._write(draft, dataset, methods, expected, analyst_source, ANALYST, [])

    def adjudicate(self, draft: LabelDraft, settles: Iterable[str], dataset=None,
                   methods: Iterable[str] | None = None, expected: str | None | object = ANY,
                   analyst_source: AnalystSource = SELF_DECLARED) -> Label:
        """Record the final label of a case whose analysts' labels disagree: a version of its own kind
        (``adjudicated``) by ``draft.analyst``, who must be the lead the dataset's round names, naming the analysts'
        labels it settles (``settles``: their uids, labels of this question). ``expected``: the adjudicated version
        the lead was looking at (None: none), as for ``save``."""
        settles = list(dict.fromkeys(settles))
        key = dataset_key(dataset) if dataset is not None else draft.dataset
        rnd = self.round(key)
        who = draft.analyst.strip()
        if rnd is None:
            raise LabelError([f"{name_of(key)} / {draft.question_id}: only a round's lead adjudicates, and "
                              f"{name_of(key)} has no labelling round: set one first (it names the lead)"])
        if not leads(rnd, who):
            raise LabelError([f"{name_of(key)} / {draft.question_id}: only the round's lead ({rnd.lead}) records an "
                              f"adjudicated label; you are {who or 'unnamed'}"])
        known = {lab.uid for lab in self.history(key, draft.question_id) if lab.kind == ANALYST}
        if unknown := [u for u in settles if u not in known]:
            raise LabelError([f"{name_of(key)} / {draft.question_id}: settles {', '.join(unknown)}, not analysts' "
                              "labels of this question"])
        return self._write(draft, dataset, methods, expected, analyst_source, ADJUDICATED, settles)

    def _write(self, draft: LabelDraft, dataset, methods, expected, analyst_source: AnalystSource, kind: LabelKind,
               settles: list[str]) -> Label:
        if analyst_source not in (SIGNED_IN, SELF_DECLARED):
            raise LabelError([f"analyst_source must be {SIGNED_IN!r} or {SELF_DECLARED!r}"])
        draft = check(draft, dataset, methods)
        fingerprint = None
        if dataset is not None:
            draft = draft.model_copy(update={"dataset": dataset_key(dataset)})
            fingerprint = question_fingerprint(next(q for q in dataset.questions if q.id == draft.question_id))
        elif not is_key(draft.dataset):
            raise LabelError([f"{draft.dataset} / {draft.question_id}: a label is saved under its dataset's identity "
                              "(name@content hash): pass the dataset, or name it by backend.labels.identity."
                              "dataset_key"])
        for _ in range(50):
            try:
                with self.engine.begin() as conn:
                    newest = self._newest(conn, draft.dataset, draft.question_id)
                    mine = self._chain_head(conn, draft.dataset, draft.question_id, kind, draft.analyst)
                    if expected is not ANY and (mine.uid if mine else None) != expected:
                        raise LabelConflict(mine) if mine else LabelError(
                            [f"{name_of(draft.dataset)} / {draft.question_id}: the label being edited is not "
                             f"{'the adjudicated label' if kind == ADJUDICATED else draft.analyst + chr(39) + 's'}"
                             " (it was replaced, or is another analyst's)"])
                    if kind == ADJUDICATED:  # settles what the analysts' labels are now, not what they were
                        now = self.current_heads(conn, draft.dataset, draft.question_id)
                        if changed := sorted({a for a, uid in now.items() if uid not in settles}):
                            raise LabelError([f"{name_of(draft.dataset)} / {draft.question_id}: the analysts' labels "
                                              f"changed since you looked ({', '.join(changed)} saved a new one); "
                                              "look again"])
                        if gone := [u for u in settles if u not in now.values()]:
                            raise LabelError([f"{name_of(draft.dataset)} / {draft.question_id}: the analysts' labels "
                                              f"changed since you looked ({len(gone)} no longer current); look "
                                              "again"])
                    # blind labelling: a label saved once the others' could be shown to its analyst is marked (it
                    # never counts); read in this transaction, so a label saved meanwhile collides on the version
                    seen = saw_others(self.history_in(conn, draft.dataset, draft.question_id), draft.analyst, kind)
                    label = Label(**draft.model_dump(), uid=uuid.uuid4().hex,
                                  version=newest.version + 1 if newest else 1,
                                  supersedes=mine.uid if mine else None, created_at=_now(),
                                  analyst_source=analyst_source, question_fingerprint=fingerprint, kind=kind,
                                  settles=settles, seen_others=seen)
                    conn.execute(sa.insert(T).values(**_row(label)))
                return label
            except IntegrityError:
                continue  # another writer took this version number meanwhile: look again
        raise LabelStoreError(f"{self.where}: could not save after 50 attempts (too many concurrent writers)")

    def import_labels(self, labels: Iterable[Label], dataset=None, methods: Iterable[str] | None = None
                      ) -> ImportReport:
        """Add labels exported from a store (in timestamp order). A label whose uid is already here is skipped, so
        importing a file twice adds nothing. Each imported label keeps its uid, analyst, kind, text and time, and
        becomes the newest version of its chain here (its ``supersedes`` is this store's current label of the same
        analyst, or the current adjudicated label)."""
        items = sorted(labels, key=lambda lab: (lab.created_at, lab.version))
        for lab in items:  # all or nothing: every label is checked before any is written
            check(lab.draft(), dataset, methods)
        added = skipped = 0
        batch = {lab.uid for lab in items}
        with self.engine.begin() as conn:
            for lab in items:
                if conn.execute(sa.select(T.c.id).where(T.c.uid == lab.uid)).first():
                    skipped += 1
                    continue
                newest = self._newest(conn, lab.dataset, lab.question_id)
                # the export's own chain where the label it replaced came along (or is here): the file and the store
                # then say the same labels are current; else on this store's current label of the same chain
                kept = lab.supersedes and (lab.supersedes in batch or conn.execute(
                    sa.select(T.c.id).where(T.c.uid == lab.supersedes)).first())
                mine = None if kept else self._chain_head(conn, lab.dataset, lab.question_id, lab.kind, lab.analyst)
                row = lab.model_copy(update={"version": newest.version + 1 if newest else 1,
                                             "supersedes": lab.supersedes if kept else mine.uid if mine else None})
                conn.execute(sa.insert(T).values(**_row(row)))
                added += 1
        return ImportReport(added, skipped)

    # --- reading ---------------------------------------------------------------------------------------------

    def _newest(self, conn, dataset: str, question_id: str) -> Label | None:
        row = conn.execute(sa.select(T).where(T.c.dataset == dataset, T.c.question_id == question_id)
                           .order_by(T.c.version.desc()).limit(1)).mappings().first()
        return _label(row) if row else None

    def history_in(self, conn, dataset: str, question_id: str) -> list[Label]:
        """Every version of one question's label, oldest first, read on ``conn`` (inside a write)."""
        rows = conn.execute(sa.select(T).where(T.c.dataset == dataset, T.c.question_id == question_id)
                            .order_by(T.c.version)).mappings().all()
        return [_label(r) for r in rows]

    def current_heads(self, conn, dataset: str, question_id: str) -> dict[str, str]:
        """Analyst -> the uid of their current label of a question (what an adjudication settles)."""
        rows = conn.execute(sa.select(T).where(T.c.dataset == dataset, T.c.question_id == question_id)
                            .order_by(T.c.version)).mappings().all()
        case = by_case(_label(r) for r in rows).get(question_id, CaseLabels(question_id))
        return {a: lab.uid for a, lab in case.analysts.items()}

    def _chain_head(self, conn, dataset: str, question_id: str, kind: str, analyst: str) -> Label | None:
        """The current label of one chain of a question: the analyst's own, or the adjudicated one (any lead)."""
        rows = conn.execute(sa.select(T).where(T.c.dataset == dataset, T.c.question_id == question_id)
                            .order_by(T.c.version)).mappings().all()
        current = [lab for lab in heads(_label(r) for r in rows)
                   if lab.kind == kind and (kind == ADJUDICATED or lab.analyst == analyst)]
        return current[-1] if current else None

    def _select(self, query) -> list[Label]:
        with self._reads.connect() as conn:
            return [_label(r) for r in conn.execute(query).mappings()]

    def latest(self, dataset: str, question_ids: Iterable[str] | None = None) -> dict[str, Label]:
        """The newest label version of each labelled question of ``dataset``, by anyone (optionally only
        ``question_ids``): whether a question is labelled at all. Each analyst's own: ``mine``; all: ``current``."""
        newest = (sa.select(T.c.question_id, sa.func.max(T.c.version).label("v")).where(T.c.dataset == dataset)
                  .group_by(T.c.question_id).subquery())
        query = sa.select(T).join(newest, sa.and_(T.c.question_id == newest.c.question_id,
                                                  T.c.version == newest.c.v)).where(T.c.dataset == dataset)
        if question_ids is not None:
            query = query.where(T.c.question_id.in_(list(question_ids)))
        return {lab.question_id: lab for lab in self._select(query)}

    def current(self, dataset: str, question_ids: Iterable[str] | None = None) -> dict[str, CaseLabels]:
        """Each labelled question's current labels (``backend.labels.team``): every analyst's own and the
        adjudicated one."""
        query = sa.select(T).where(T.c.dataset == dataset).order_by(T.c.version)
        if question_ids is not None:
            query = query.where(T.c.question_id.in_(list(question_ids)))
        return by_case(self._select(query))

    def mine(self, dataset: str, analyst: str) -> dict[str, Label]:
        """``analyst``'s current label of each question they labelled."""
        if not analyst:
            return {}
        return {qid: case.analysts[analyst] for qid, case in self.current(dataset).items() if analyst in case.analysts}

    # --- rounds ------------------------------------------------------------------------------------------------

    def round(self, dataset: str) -> Round | None:
        """The dataset's current labelling round (None: none set: overlap 1, no lead)."""
        with self._reads.connect() as conn:
            row = conn.execute(sa.select(R).where(R.c.dataset == dataset).order_by(R.c.number.desc()).limit(1)
                               ).mappings().first()
        return _round(row) if row else None

    def rounds(self, dataset: str) -> list[Round]:
        """Every setting of the dataset's round, oldest first."""
        with self._reads.connect() as conn:
            return [_round(r) for r in conn.execute(sa.select(R).where(R.c.dataset == dataset)
                                                    .order_by(R.c.number)).mappings()]

    def set_round(self, dataset: str, overlap: int, lead: str, by: str, by_source: RoundSource = SELF_DECLARED,
                  expected: int | None | object = ANY, rule: tuple[str, ...] | None | object = ANY) -> Round:
        """Set the dataset's round: ``overlap`` analysts per case, led by ``lead``, by ``by``. ``rule``: who may
        (``backend.labels.team.round_rule``; default: the deployment's leads, if it names any): the named leads
        only, and the lead one of them; no rule: anyone the first round, a later change only its lead.
        ``expected``: the round number the page showed (None: none); a change set meanwhile raises ``LabelError``
        instead of being overwritten."""
        lead, by = lead.strip(), by.strip()
        if rule is ANY:
            from backend import deployment

            rule = round_rule(deployment.current().leads, signed_in=False)
        where = f"{name_of(dataset)}"
        found = []
        if not by:
            found.append(f"{where}: say who sets the round (your name is empty)")
        elif len(by) > MAX_ANALYST:
            found.append(f"{where}: the name of who sets the round is over {MAX_ANALYST} characters")
        if not lead:
            found.append(f"{where}: name the round's lead")
        elif len(lead) > MAX_ANALYST:
            found.append(f"{where}: the lead's name is over {MAX_ANALYST} characters")
        if not isinstance(overlap, int) or not 1 <= overlap <= MAX_OVERLAP:
            found.append(f"{where}: overlap must be a whole number from 1 to {MAX_OVERLAP} (analysts per case)")
        if rule is not None and by and not may_set_round(None, by, rule):
            found.append(f"{where}: only a lead this server's deployment names sets or changes a round; you are {by}"
                         if rule else f"{where}: this server names no leads, so nobody sets a round (whoever runs it "
                         "names them: [deployment] leads, or $CONFLICTLENS_LEADS)")
        elif rule and lead and not named(lead, rule):
            found.append(f"{where}: the round's lead must be one of the leads this server's deployment names")
        if found:
            raise LabelError(found)
        for _ in range(50):
            try:
                with self.engine.begin() as conn:
                    row = conn.execute(sa.select(R).where(R.c.dataset == dataset).order_by(R.c.number.desc())
                                       .limit(1)).mappings().first()
                    current = _round(row) if row else None
                    if expected is not ANY and (current.number if current else None) != expected:
                        raise LabelError([f"{where}: {current.set_by if current else 'someone'} changed the round "
                                          "meanwhile; look at it before changing it"])
                    if rule is None and not may_set_round(current, by, rule):
                        raise LabelError([f"{where}: only the round's lead ({current.lead}) changes it; you are {by}"])
                    rnd = Round(dataset=dataset, number=current.number + 1 if current else 1, overlap=overlap,
                                lead=lead, set_by=by, set_by_source=by_source, created_at=_now())
                    conn.execute(sa.insert(R).values(**rnd.model_dump()))
                return rnd
            except IntegrityError:
                continue
        raise LabelStoreError(f"{self.where}: could not set the round after 50 attempts (too many concurrent writers)")

    def history(self, dataset: str, question_id: str) -> list[Label]:
        """Every version of one question's label, oldest first."""
        return self._select(sa.select(T).where(T.c.dataset == dataset, T.c.question_id == question_id)
                            .order_by(T.c.version))

    def versions(self, dataset: str | None = None) -> list[Label]:
        """Every stored version (of one dataset, or all), in the order they were written."""
        query = sa.select(T).order_by(T.c.id)
        return self._select(query.where(T.c.dataset == dataset) if dataset is not None else query)

    def count(self, dataset: str | None = None) -> int:
        query = sa.select(sa.func.count()).select_from(T)
        if dataset is not None:
            query = query.where(T.c.dataset == dataset)
        with self._reads.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def datasets(self) -> list[str]:
        """Every dataset identity (or bare name, for labels saved before identities) with labels here."""
        with self._reads.connect() as conn:
            return list(conn.execute(sa.select(T.c.dataset).distinct().order_by(T.c.dataset)).scalars())

    def identities(self, name: str) -> list[str]:
        """The identities with labels here that are versions of the dataset name ``name``."""
        return [d for d in self.datasets() if name_of(d) == name]

    # --- other versions of a dataset ---------------------------------------------------------------------------

    def other_versions(self, key: str) -> list[OtherVersion]:
        """Labels saved for other versions of the dataset whose identity is ``key`` (same name, other content), of
        questions not labelled in ``key`` (a version whose every question is labelled here too is left out)."""
        out = []
        here = None
        for other in self.identities(name_of(key)):
            if other != key:
                here = set(self.latest(key)) if here is None else here
                pending = [lab for qid, lab in self.latest(other).items() if qid not in here]
                if pending:
                    out.append(OtherVersion(other, len(pending),
                                            sum(lab.question_fingerprint is None for lab in pending)))
        return out

    def carry_over(self, source: str, dataset) -> CarryReport:
        """Copy the current labels of ``source`` (another version of ``dataset``'s name) onto ``dataset``, as new
        label versions noting where they came from, for the questions whose id and content are unchanged (the
        label's question fingerprint equals the question's here; a label without one, saved before fingerprints
        were recorded, is carried by question id alone). A question that already has a label here, changed, or is
        gone is left as it is. Every current label of a question is carried (each analyst's and the adjudicated
        one, which then names the copies it settles; a settled label no longer current is not carried, nor named). Nothing
        is removed from ``source``; its round is not carried."""
        target = dataset_key(dataset)
        if source == target or name_of(source) != name_of(target):
            raise LabelError([f"{source}: not another version of {name_of(target)}"])
        per_question: dict[str, list[Label]] = {}
        versions = self.versions(source)
        counted = {(q, a): lab for q, case in by_case(versions).items() for a, lab in case.counted().items()}
        blind_of: dict[str, Label] = {}  # a current label saved after seeing the others' -> its analyst's blind one
        for lab in heads(versions):  # every analyst's current label, and the adjudicated one
            if lab.seen_others and (blind := counted.get((lab.question_id, lab.analyst))) is not None:
                per_question.setdefault(lab.question_id, []).append(blind)  # carried too: it is what counts
                blind_of[lab.uid] = blind
            per_question.setdefault(lab.question_id, []).append(lab)
        questions = {q.id: q for q in dataset.questions}
        for _ in range(50):
            report = CarryReport(source)
            try:
                with self.engine.begin() as conn:
                    for qid, current in sorted(per_question.items()):
                        q = questions.get(qid)
                        if q is None:
                            report.gone += 1
                            continue
                        fingerprint = question_fingerprint(q)
                        by_id = any(lab.question_fingerprint is None for lab in current)  # each label's own check
                        drafts = [lab.draft().model_copy(update={
                            "dataset": target, "note": _carried_note(lab, lab.question_fingerprint is None)})
                            for lab in current]
                        if any(lab.question_fingerprint not in (None, fingerprint) or problems(d, dataset)
                               for lab, d in zip(current, drafts)):
                            report.changed += 1
                            continue
                        if self._newest(conn, target, qid) is not None:
                            report.already += 1
                            continue
                        copied: dict[str, str] = {}  # old uid -> new, so an adjudicated label names the copies
                        pairs = sorted(zip(current, drafts), key=lambda p: p[0].kind == ADJUDICATED)  # analysts first
                        for n, (lab, draft) in enumerate(pairs, 1):
                            blind = blind_of.get(lab.uid)  # its copy comes first: this one's copy supersedes it
                            label = Label(**draft.model_dump(), uid=uuid.uuid4().hex, version=n, created_at=_now(),
                                          analyst_source=lab.analyst_source, question_fingerprint=fingerprint,
                                          carried_from=lab.uid, kind=lab.kind, seen_others=lab.seen_others,
                                          supersedes=copied.get(blind.uid) if blind else None,
                                          settles=[copied[u] for u in lab.settles if u in copied])
                            conn.execute(sa.insert(T).values(**_row(label)))
                            copied[lab.uid] = label.uid
                        report.carried += 1
                        report.by_id_only += by_id
                return report
            except IntegrityError:
                continue  # an analyst labelled one of these questions meanwhile: look again
        raise LabelStoreError(f"{self.where}: could not carry over after 50 attempts (too many concurrent writers)")


# --- rows <-> labels -----------------------------------------------------------------------------------------

def _now() -> datetime:
    return datetime.now(timezone.utc)


def _carried_note(label: Label, by_id: bool) -> str:
    """The label's note with a line saying where it was carried over from (left off if the note has no room)."""
    line = f"[carried over from {label.dataset}, version {label.version}" + (
        ", by question id only: saved before the question's content was recorded]" if by_id else "]")
    note = f"{label.note}\n{line}" if label.note else line
    return note if len(note) <= MAX_NOTE else label.note


def _row(label: Label) -> dict:
    return label.model_dump(mode="python")


def _fields(row) -> dict:
    """A row's fields without the row id, its time in UTC: SQLite keeps no zone (we only ever write UTC);
    PostgreSQL answers in the session's zone."""
    data = dict(row)
    data.pop("id", None)
    created = data["created_at"]
    data["created_at"] = created.replace(tzinfo=timezone.utc) if created.tzinfo is None else created.astimezone(
        timezone.utc)
    return data


def _label(row) -> Label:
    data = _fields(row)
    data["settles"] = data.get("settles") or []
    return Label(**data)


def _round(row) -> Round:
    return Round(**_fields(row))


def _first_line(err: Exception) -> str:
    text = mask_secrets(str(getattr(err, "orig", None) or err).strip())  # a driver may repeat the address
    return text.splitlines()[0] if text else type(err).__name__


# --- schema versions -----------------------------------------------------------------------------------------

def _alembic_config(conn):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = conn
    return cfg


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config(None)).get_current_head()


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.execution_options(**{READS: True}).connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision`` (default: the newest). A database stamped with a revision this code does
    not know (written by a newer ConflictLens) is refused rather than touched."""
    from alembic import command
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(_alembic_config(None))
    target = scripts.get_current_head() if revision == "head" else revision
    current = current_revision(engine)
    if current == target:
        return  # the common case: no lock, no write
    known = {s.revision for s in scripts.walk_revisions()}
    if current is not None and current not in known:
        raise LabelStoreError(f"the label store is at schema revision {current!r}, which this version of "
                              f"ConflictLens does not know (it knows up to {scripts.get_current_head()!r}): "
                              "update ConflictLens")
    with engine.begin() as conn:  # SQLite: BEGIN IMMEDIATE is the lock; PostgreSQL: an advisory lock
        if engine.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})
        command.upgrade(_alembic_config(conn), target)


__all__ = ["LabelStore", "LabelStoreError", "LabelConflict", "ImportReport", "OtherVersion", "CarryReport", "ANY",
           "default_store_path", "store_url", "migrate", "current_revision", "head_revision", "sqlite_file_state",
           "not_a_store", "NEW_SUFFIXES"]
