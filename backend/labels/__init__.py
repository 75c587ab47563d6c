"""Labels of disagreement cases: the model (``model``), what a label is keyed by (``identity``: the dataset's name
and content hash), the store on SQLite or PostgreSQL (``store``), export and import (``files``), labels as gold
answers (``gold``) and the review queue (``queue``)."""

from backend.labels.identity import dataset_key, question_fingerprint
from backend.labels.model import (CONFLICT_TYPES, SELF_DECLARED, SIGNED_IN, AnalystSource, ConflictType, Label,
                                  LabelDraft, LabelError, check)
from backend.labels.store import ANY, ImportReport, LabelConflict, LabelStore, LabelStoreError, default_store_path

__all__ = ["CONFLICT_TYPES", "ConflictType", "AnalystSource", "SIGNED_IN", "SELF_DECLARED", "Label", "LabelDraft",
           "LabelError", "check", "ANY", "ImportReport", "LabelConflict", "LabelStore", "LabelStoreError",
           "default_store_path", "dataset_key", "question_fingerprint"]
