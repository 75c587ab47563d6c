"""Blind labelling that cannot be taken back: ``seen_others`` marks a label version its analyst saved after the other
analysts' labels of the case could be shown to them (they had a label of their own there, and another analyst had
one: ``backend.labels.team.saw_others``). Agreement and gold count each analyst's newest version saved blind, never
a marked one. Existing rows are marked by the same rule from the order they were written in (``version``), so a
copy saved before this revision does not count either; no other field of any row changes.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    with op.batch_alter_table("labels") as batch:
        batch.add_column(sa.Column("seen_others", sa.Boolean, nullable=False, server_default=sa.false()))
    labels = sa.table("labels", sa.column("id", sa.Integer), sa.column("dataset", sa.String),
                      sa.column("question_id", sa.String), sa.column("version", sa.Integer),
                      sa.column("analyst", sa.String), sa.column("kind", sa.String),
                      sa.column("seen_others", sa.Boolean))
    conn = op.get_bind()
    rows = conn.execute(sa.select(labels.c.id, labels.c.dataset, labels.c.question_id, labels.c.analyst,
                                  labels.c.kind).order_by(labels.c.dataset, labels.c.question_id,
                                                          labels.c.version)).all()
    marked, earlier, question = [], set(), None
    for row in rows:  # the rule of backend.labels.team.saw_others, frozen here as a migration must be
        if (row.dataset, row.question_id) != question:
            question, earlier = (row.dataset, row.question_id), set()
        if row.kind != "analyst":
            continue
        if row.analyst in earlier and earlier - {row.analyst}:
            marked.append(row.id)
        earlier.add(row.analyst)
    for start in range(0, len(marked), 500):
        conn.execute(sa.update(labels).where(labels.c.id.in_(marked[start:start + 500])).values(seen_others=True))


def downgrade() -> None:
    with op.batch_alter_table("labels") as batch:
        batch.drop_column("seen_others")
