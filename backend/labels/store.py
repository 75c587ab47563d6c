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
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, OperationalError

from backend.labels.model import Label, LabelDraft, LabelError, check
from backend.labels.tables import labels as T
from backend.paths import default_data_dir

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: Any: save on top of whatever the newest version is (imports, scripts). The page passes what the analyst saw.
ANY = object()
_MIGRATION_LOCK = 7_150_001  # pg_advisory_xact_lock key for schema upgrades
READS = "conflictlens_reads"  # execution option of the store's read-only connections
CONNECT_TIMEOUT_S = 10


class LabelStoreError(RuntimeError):
    """The store cannot be opened or used (bad URL, server down, a schema newer than this code)."""


class LabelConflict(LabelError):
    """Someone saved a newer version of this question's label since the analyst loaded it."""

    def __init__(self, current: Label):
        self.current = current
        super().__init__([f"{current.dataset} / {current.question_id}: {current.analyst} saved version "
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
    except ArgumentError as err:
        raise LabelStoreError(f"{text!r} is neither a file path nor a database URL ({err})") from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise LabelStoreError(f"{url.get_backend_name()}: labels are kept in SQLite or PostgreSQL only")
    return url


def _sqlite_engine(url: URL) -> Engine:
    path = Path(url.database or "")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise LabelStoreError(f"{path.parent}: cannot create the label store's folder ({err.strerror})") from None
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


class LabelStore:
    """Labels in one database. ``where``: a SQLite file path, a ``sqlite:///`` or ``postgresql://`` URL, or None
    for the per-user default file."""

    def __init__(self, where: str | Path | None = None):
        self.url = store_url(where)
        try:
            if self.url.get_backend_name() == "sqlite":
                self.engine = _sqlite_engine(self.url)
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
        """The store's address for messages (a password never shown)."""
        if self.url.get_backend_name() == "sqlite":
            return str(self.url.database)
        return self.url.render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    # --- writing ---------------------------------------------------------------------------------------------

    def save(self, draft: LabelDraft, dataset=None, methods: Iterable[str] | None = None,
             expected: str | None | object = ANY) -> Label:
        """Store ``draft`` as the question's newest label version and return it. ``dataset``/``methods``: check
        the question, documents, sources and method exist (``LabelError``). ``expected``: the uid of the version
        the analyst edited (None: they saw none); if another is newest now, ``LabelConflict``."""
        draft = check(draft, dataset, methods)
        for _ in range(50):
            try:
                with self.engine.begin() as conn:
                    current = self._newest(conn, draft.dataset, draft.question_id)
                    if expected is not ANY and (current.uid if current else None) != expected:
                        raise LabelConflict(current) if current else LabelError(
                            [f"{draft.dataset} / {draft.question_id}: the label being edited no longer exists"])
                    label = Label(**draft.model_dump(), uid=uuid.uuid4().hex,
                                  version=current.version + 1 if current else 1,
                                  supersedes=current.uid if current else None, created_at=_now())
                    conn.execute(sa.insert(T).values(**_row(label)))
                return label
            except IntegrityError:
                continue  # another writer took this version number meanwhile: look again
        raise LabelStoreError(f"{self.where}: could not save after 50 attempts (too many concurrent writers)")

    def import_labels(self, labels: Iterable[Label], dataset=None, methods: Iterable[str] | None = None
                      ) -> ImportReport:
        """Add labels exported from a store (in timestamp order). A label whose uid is already here is skipped, so
        importing a file twice adds nothing. Each imported label keeps its uid, analyst, text and time, and becomes
        the newest version of its question here (its ``supersedes`` is this store's previous newest)."""
        items = sorted(labels, key=lambda lab: (lab.created_at, lab.version))
        for lab in items:  # all or nothing: every label is checked before any is written
            check(lab.draft(), dataset, methods)
        added = skipped = 0
        with self.engine.begin() as conn:
            for lab in items:
                if conn.execute(sa.select(T.c.id).where(T.c.uid == lab.uid)).first():
                    skipped += 1
                    continue
                current = self._newest(conn, lab.dataset, lab.question_id)
                row = lab.model_copy(update={"version": current.version + 1 if current else 1,
                                             "supersedes": current.uid if current else None})
                conn.execute(sa.insert(T).values(**_row(row)))
                added += 1
        return ImportReport(added, skipped)

    # --- reading ---------------------------------------------------------------------------------------------

    def _newest(self, conn, dataset: str, question_id: str) -> Label | None:
        row = conn.execute(sa.select(T).where(T.c.dataset == dataset, T.c.question_id == question_id)
                           .order_by(T.c.version.desc()).limit(1)).mappings().first()
        return _label(row) if row else None

    def _select(self, query) -> list[Label]:
        with self._reads.connect() as conn:
            return [_label(r) for r in conn.execute(query).mappings()]

    def latest(self, dataset: str, question_ids: Iterable[str] | None = None) -> dict[str, Label]:
        """The current label of each labelled question of ``dataset`` (optionally only ``question_ids``)."""
        newest = (sa.select(T.c.question_id, sa.func.max(T.c.version).label("v")).where(T.c.dataset == dataset)
                  .group_by(T.c.question_id).subquery())
        query = sa.select(T).join(newest, sa.and_(T.c.question_id == newest.c.question_id,
                                                  T.c.version == newest.c.v)).where(T.c.dataset == dataset)
        if question_ids is not None:
            query = query.where(T.c.question_id.in_(list(question_ids)))
        return {lab.question_id: lab for lab in self._select(query)}

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
        with self._reads.connect() as conn:
            return list(conn.execute(sa.select(T.c.dataset).distinct().order_by(T.c.dataset)).scalars())


# --- rows <-> labels -----------------------------------------------------------------------------------------

def _now() -> datetime:
    return datetime.now(timezone.utc)


def _row(label: Label) -> dict:
    return label.model_dump(mode="python")


def _label(row) -> Label:
    data = dict(row)
    data.pop("id", None)
    created = data["created_at"]
    # SQLite keeps no zone (we only ever write UTC); PostgreSQL answers in the session's zone
    data["created_at"] = created.replace(tzinfo=timezone.utc) if created.tzinfo is None else created.astimezone(
        timezone.utc)
    return Label(**data)


def _first_line(err: Exception) -> str:
    text = str(getattr(err, "orig", None) or err).strip()
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


__all__ = ["LabelStore", "LabelStoreError", "LabelConflict", "ImportReport", "ANY", "default_store_path",
           "store_url", "migrate", "current_revision", "head_revision"]
