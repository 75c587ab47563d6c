"""Every method's trace model, one module per method, told apart by the ``kind`` field.

A new method adds ``traces/<method>.py`` with a model whose ``kind`` is ``Literal["<method>"]`` and names it in
``TRACES`` below; ``MethodResult.trace`` then accepts it and the contract test round-trips it.
"""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field

from backend.schema.traces.astute import (
                                         AstuteDropped,
                                         AstuteGeneration,
                                         AstuteGroup,
                                         AstutePassage,
                                         AstuteRound,
                                         AstuteTrace,
)
from backend.schema.traces.baselines import BaselineTrace
from backend.schema.traces.bridge import (
                                         BridgeCycle,
                                         BridgeDemo,
                                         BridgeKnowledge,
                                         BridgeNode,
                                         BridgeSubQuery,
                                         BridgeTrace,
                                         PairScore,
)
from backend.schema.traces.counterfactual import (
                                         CFBranch,
                                         CFFusion,
                                         CFMatch,
                                         CFPassage,
                                         CFReply,
                                         CFRound,
                                         CounterfactualTrace,
)
from backend.schema.traces.madam import (
                                         MadamAgent,
                                         MadamAggregation,
                                         MadamAnswerSupport,
                                         MadamRound,
                                         MadamTrace,
                                         MadamTurn,
)
from backend.schema.traces.ra_rag import (
                                         RAEntailment,
                                         RARAGTrace,
                                         RASourceAnswer,
                                         RAVote,
                                         RAWalkStep,
                                         ReliabilityEstimate,
                                         ReliabilityIteration,
                                         SourceReliability,
)

TRACES = (BaselineTrace, RARAGTrace, AstuteTrace, MadamTrace, CounterfactualTrace, BridgeTrace)

#: The union ``MethodResult.trace`` holds, discriminated by ``kind``.
Trace = Annotated[Union[TRACES], Field(discriminator="kind")]  # noqa: UP007 - Union over a runtime tuple

__all__ = ["TRACES", "Trace", "BridgeCycle", "BridgeDemo", "BridgeKnowledge", "BridgeNode", "BridgeSubQuery",
           "BridgeTrace", "PairScore", "AstuteDropped", "AstuteGeneration", "AstuteGroup", "AstutePassage",
           "AstuteRound",
           "AstuteTrace", "CFBranch", "CFFusion", "CFMatch", "CFPassage", "CFReply", "CFRound", "CounterfactualTrace",
           "BaselineTrace", "MadamAgent", "MadamAggregation", "MadamAnswerSupport", "MadamRound",
           "MadamTrace", "MadamTurn", "RAEntailment", "RARAGTrace", "RASourceAnswer", "RAVote", "RAWalkStep",
           "ReliabilityEstimate", "ReliabilityIteration", "SourceReliability"]
