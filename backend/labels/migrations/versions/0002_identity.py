"""Labels keyed by what the dataset is: where the analyst's name came from (``analyst_source``: every existing label
was typed, so ``self-declared``), the fingerprint of the question a label judged (``question_fingerprint``: none
for existing labels, which carry over by question id only) and the label a carried-over one was copied from
(``carried_from``). Existing rows are kept as they are: their ``dataset`` is the bare name they were saved under,
which ``backend.labels.identity`` reads as another version of that dataset.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    with op.batch_alter_table("labels") as batch:
        batch.add_column(sa.Column("analyst_source", sa.String(20), nullable=False, server_default="self-declared"))
        batch.add_column(sa.Column("question_fingerprint", sa.String(64), nullable=True))
        batch.add_column(sa.Column("carried_from", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("labels") as batch:
        batch.drop_column("carried_from")
        batch.drop_column("question_fingerprint")
        batch.drop_column("analyst_source")
