"""The labels table: one row per label version (see backend/labels/tables.py).

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "labels",
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
        sa.UniqueConstraint("dataset", "question_id", "version", name="uq_labels_question_version"),
    )
    op.create_index("ix_labels_question", "labels", ["dataset", "question_id"])


def downgrade() -> None:
    op.drop_index("ix_labels_question", table_name="labels")
    op.drop_table("labels")
