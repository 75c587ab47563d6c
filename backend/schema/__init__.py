"""Typed data model shared by the library, the CLI and the dashboard.

``from backend.schema import X`` works for every model. The shared models live in ``base`` (strict base,
evidence modes), ``data`` (question, document, source, dataset, truth stripping), ``call`` (one model call) and
``result`` (``MethodResult``); each method's trace models live in ``traces/<method>.py``.

Ground truth lives in a few named fields only (``TRUTH_FIELDS``); ``strip_truth`` removes all of them, and
methods and models only ever receive stripped questions.
"""

from backend.schema.base import EvidenceMode, StrictModel
from backend.schema.call import LLMCall
from backend.schema.data import (
           TRUTH_FIELDS,
           Dataset,
           DocLabel,
           DocType,
           Document,
           Question,
           Source,
           strip_truth,
)
from backend.schema.result import TIMING_FIELDS, MethodResult, Preparation, ReadingDifference, without_timings
from backend.schema.traces import *  # noqa: F403 - every trace model, by name
from backend.schema.traces import __all__ as _traces

__all__ = ["EvidenceMode", "StrictModel", "LLMCall", "TRUTH_FIELDS", "Dataset", "DocLabel", "DocType", "Document",
           "Question", "Source", "strip_truth", "TIMING_FIELDS", "MethodResult", "Preparation", "ReadingDifference", "without_timings",
           *_traces]
