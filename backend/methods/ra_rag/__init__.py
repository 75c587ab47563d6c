"""RA-RAG: Retrieval-Augmented Generation with Estimation of Source Reliability.

Paper: *Retrieval-Augmented Generation with Estimation of Source Reliability* (code: ml-postech/RA-RAG); spec:
``docs/methods/ra_rag.md``, whose §3.1-§3.4 follow the paper's sections of the same numbers. Implemented in this
package, in the paper's order (``answering`` → ``voting`` → ``stage1`` → ``method``):

* §3.1 keyword-based system prompt (App. G structure; our wording and examples) -> ``keyword_prompt``,
  ``generate_answer``: one call per source (task ``keyword_answer``) on that source's top-3 documents;
* §3.2 misalignment filtration -> ``f_align``: ROUGE-1 precision of the answer against the source's
  documents; below 0.9 the answer becomes "I don't know" (IDK);
* eq. 1 weighted majority voting -> ``weighted_vote`` (MV is WMV with every weight 1);
* §3.3 / Algorithm 1 iterative reliability estimation -> ``stage1.estimate_reliability`` (numpy, no labels)
  and ``stage1.calibrate`` (the per-source answers of the calibration questions, asked concurrently), run
  as the method's dataset-level preparation (``RARAG.prepare``), with the released code's stable
  initialisation (``stable_init=True``) and order-free ties (``ties="skip"``, [ours]; ``ties="source_order"``
  is the released code's behaviour; see ``stage1``);
* §3.4 / Algorithm 2 κ-RRSS -> ``kappa_rrss``, then WMV over the selected sources;
* App. I bidirectional-entailment answer clustering -> ``cluster_by_entailment`` (off by default).

Variants (``variant=``): ``rrss`` (RA-RAG, default), ``wmv`` (all sources, estimated weights), ``mv``
(all sources, weight 1), ``oracle_wmv`` (all sources, weights N·p_i − 1 from true reliabilities that
evaluation code passes explicitly as ``true_reliability=``; the method never reads them from data).

Stage-1 weights reach the method through ``RunContext.prepared`` (a ``ReliabilityEstimate``): the runner
calls ``RARAG.prepare`` once per dataset + model + evidence mode + stage-1 parameters on a truth-stripped
dataset and keeps the result in memory and on disk (``RARAG.prepare_key``). They are an unsupervised
estimate, not ground truth.

Two readings of each keyword reply (``backend.methods.reading``; the rules and their sources in ``parse``): each
source's answer is one decision, read by both (``answering.tolerant_reading`` / ``answering.paper_reading``) and
decided by ``ctx.readings.decide``. ``tolerant`` (default): f_align scores the answer ``parse_short_answer`` reads
from the reply. ``paper``: f_align scores, and the vote counts, the reply as the released code passes it to its
filter (``extract_final_answer``: lower case, "answer:" and articles deleted, a final "." dropped), IDK when it
contains "i don't know". The entailment judgement (our yes/no prompt, no paper rule) is one rule for both
(``Readings.same``). Stage 1 reads the calibration replies the same way, under its run's reading:

* [ours] the reading is part of stage 1's key (``calibration_params``) only when it is ``paper``, so tolerant
  keys, the shipped estimates' included, are unchanged and a paper run never reuses a tolerant estimate;
* [ours] the calibration answers the other reading would read differently are counted in the estimate
  (``ReliabilityEstimate.readings``: count and the first ``STAGE_EXAMPLES`` in calibration order), not on the
  results of the questions it serves (their ``reading_differences`` are their own stage-2 decisions); the stage-2
  trace's ``weights_note`` says how many there were. ``decisions_read`` of a result counts its own decisions only.

[ours] choices (``docs/methods/ra_rag.md`` §8; each "§8.n" below is its item n):

* IDK is never a vote candidate: IDK sources cast no vote; the winner is IDK only when every filtered
  answer is IDK; eq. 4 counts a match only for non-IDK answers, so ŵ ≤ 1 (§8.1).
* Answer equality: SQuAD normalisation (``backend.answers.normalize``); a cluster is one normalised
  string (docs/methods/ra_rag.md §3.5). IDK: ``formats.is_idk`` on the reply, or an answer that normalises to nothing.
* f_align: the source's documents concatenated, lower-cased ``\\w+`` tokens, no stemming, clipped
  counts, kept when P ≥ τ (§8.9). Votes use the filtered, normalised answers (§8.18).
* Ties (argmax): the higher score, then the candidate whose best supporter has the higher weight,
  then the lower source index (dataset order; per-document mode uses a hash order, since RAMDocs' document
  order correlates with the labels); scores are compared rounded to 1e-9. κ-RRSS ranks equal
  weights by source index (stable sort) (§8.4).
* A source that is IDK on every calibration question has no evidence: ŵ = None, v = 0 (neutral; no NaN)
  (§8.2). Negative weights (ŵ < 1/N) are kept (§8.3). Scale N in v = N·ŵ − 1 = the number of sources (§8.10).
* Stage 1 stops at a fixed point of the pseudo-labels, when they repeat an earlier state (a cycle,
  flagged), or after T = 100 iterations (§8.5).
* Stage 1 is blind to the order in which sources are listed: the first iteration (all v = 1) uses only
  questions with a clear majority (the released code's ``stable_initialization``, on by default), and a
  later tie under equal weights leaves that question without a pseudo-label for that iteration instead of
  giving it to the first-listed source (``ties="skip"``). ``ties="source_order"`` is the released code's
  behaviour: a tie goes to the answer seen first in source order, so with ``stable_init=True`` it is the released
  estimator (``iterative_weighted_majority_voting``); with ``stable_init=False`` as well it is this project's first
  release. Stage 2 (one question) still breaks exact ties by source index, as above.
* Calibration set: the first ``calibration_size`` (200, the paper's M1) questions of the dataset. On
  the bundled 200-question sets it is the whole set, so inspected questions were also calibration
  questions: transductive, but no label is used.
* Evidence ``given``: the question's own documents of that source (the first top-k in dataset order);
  a source with none answers IDK without a model call, recorded as such. ``retrieve``: top-k from the
  chromadb index restricted to the source (the paper's setting).
* κ-RRSS asks sources in rounds: each round asks the next (κ − selected) sources concurrently. The
  sequential lazy walk would ask every one of them, so calls and result equal the lazy walk's.
* ``compare_all=True`` (the dashboard) also asks the sources the walk never reached, in a separate
  step ``compare_answer``, only to show MV/WMV beside κ-RRSS; the walk still marks them not queried and
  ``compare_calls`` counts them apart from ``walk_calls``.
* No stage-1 weights in the context: v = 1 for every source (= MV order and votes), said in the trace.
* Documents naming no source (RAMDocs): each document is its own source, sources never recur across
  questions, so there is nothing to estimate: RA-RAG reduces to MV with f_align over all documents.
* A question whose documents name a source the dataset does not list (a what-if edit or an attack that adds
  one, ``backend.whatif``): RA-RAG queries the dataset's sources only, so that source is never read; the trace
  says so.
* Entailment clustering: greedy (Farquhar et al.), strict (both directions must entail), IDK never
  merged; our prompt asks "yes"/"no" (the task contract's ``yes_no`` output); an unparseable judgement
  counts as "no".
* An answer cluster is shown in the wording of its highest-ranked member. Decoding: the client's
  temperature 0.
"""

from backend.methods.ra_rag.answering import (
                                              KEYWORD_SYSTEM,
                                              Alignment,
                                              answer_source,
                                              cluster_by_entailment,
                                              f_align,
                                              keyword_prompt,
                                              source_documents,
)
from backend.methods.ra_rag.method import RARAG, VARIANTS, Variant
from backend.methods.ra_rag.stage1 import (
                                              TIES,
                                              Estimate,
                                              Ties,
                                              calibration_key,
                                              estimate_reliability,
                                              wmv_rows,
)
from backend.methods.ra_rag.voting import Vote, kappa_rrss, rank_sources, weighted_vote

__all__ = ["KEYWORD_SYSTEM", "Alignment", "answer_source", "cluster_by_entailment", "f_align", "keyword_prompt",
           "source_documents", "VARIANTS", "RARAG", "Variant", "TIES", "Estimate", "Ties", "calibration_key",
           "estimate_reliability", "wmv_rows", "Vote", "kappa_rrss", "rank_sources", "weighted_vote"]
