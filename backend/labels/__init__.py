"""Labels of disagreement cases: the model (``model``), the store on SQLite or PostgreSQL (``store``), export and
import (``files``), labels as gold answers (``gold``) and the review queue (``queue``)."""

from backend.labels.model import CONFLICT_TYPES, ConflictType, Label, LabelDraft, LabelError, check
from backend.labels.store import ANY, ImportReport, LabelConflict, LabelStore, LabelStoreError, default_store_path

__all__ = ["CONFLICT_TYPES", "ConflictType", "Label", "LabelDraft", "LabelError", "check", "ANY", "ImportReport",
           "LabelConflict", "LabelStore", "LabelStoreError", "default_store_path"]
