"""The label and round tables as SQLAlchemy Core metadata (the store's queries use it; the migrations create it)."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

#: One row per label *version*; rows are inserted, never updated or deleted. A question's current label is its
#: highest ``version``; the unique (dataset, question_id, version) makes two concurrent edits of one question
#: collide instead of both becoming "version 2".
labels = sa.Table(
    "labels", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("uid", sa.String(32), nullable=False, unique=True),
    sa.Column("dataset", sa.String(200), nullable=False),
    sa.Column("question_id", sa.String(500), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("supersedes", sa.String(32), nullable=True),
    sa.Column("answers", sa.JSON, nullable=False),
    sa.Column("unanswerable", sa.Boolean, nullable=False),
    sa.Column("conflict_type", sa.String(40), nullable=True),
    sa.Column("wrong_documents", sa.JSON, nullable=False),
    sa.Column("wrong_sources", sa.JSON, nullable=False),
    sa.Column("best_method", sa.String(100), nullable=True),
    sa.Column("note", sa.Text, nullable=False),
    sa.Column("analyst", sa.String(100), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    # 0002: where the analyst's name came from, what the question looked like, what a carried label came from
    sa.Column("analyst_source", sa.String(20), nullable=False, server_default="self-declared"),
    sa.Column("question_fingerprint", sa.String(64), nullable=True),
    sa.Column("carried_from", sa.String(32), nullable=True),
    # 0003: an analyst's own label or the lead's adjudicated one, and the labels an adjudicated one settled
    sa.Column("kind", sa.String(20), nullable=False, server_default="analyst"),
    sa.Column("settles", sa.JSON, nullable=True),
    # 0004: saved after the other analysts' labels of the case could be shown to its analyst (not counted)
    sa.Column("seen_others", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.UniqueConstraint("dataset", "question_id", "version", name="uq_labels_question_version"),
    sa.Index("ix_labels_question", "dataset", "question_id"),
)

#: 0003: labelling rounds, one row per setting (inserted, never updated): a dataset's current round is its highest
#: ``number``; the unique (dataset, number) makes two leads changing it at once collide instead of both winning.
rounds = sa.Table(
    "rounds", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("dataset", sa.String(200), nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("overlap", sa.Integer, nullable=False),
    sa.Column("lead", sa.String(100), nullable=False),
    sa.Column("set_by", sa.String(100), nullable=False),
    sa.Column("set_by_source", sa.String(20), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("dataset", "number", name="uq_rounds_dataset_number"),
)
