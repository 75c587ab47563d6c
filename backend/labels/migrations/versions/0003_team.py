"""Labelling as a team: each label version is an analyst's own (``kind`` ``analyst``; every existing label) or the
final label a round's lead recorded (``adjudicated``, with the uids of the labels it ``settles``), and a ``rounds``
table saying, per dataset, how many analysts label each case and who leads. Existing rows are kept as they are:
their ``supersedes`` chains (an edit by another analyst replaced the label) still say which labels are current.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    with op.batch_alter_table("labels") as batch:
        batch.add_column(sa.Column("kind", sa.String(20), nullable=False, server_default="analyst"))
        batch.add_column(sa.Column("settles", sa.JSON, nullable=True))
    op.create_table(
        "rounds",
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


def downgrade() -> None:
    op.drop_table("rounds")
    with op.batch_alter_table("labels") as batch:
        batch.drop_column("settles")
        batch.drop_column("kind")
