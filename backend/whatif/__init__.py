"""The what-if and attack lab: change a question's evidence and watch every method react.

* ``edits``: remove / add / rewrite documents, flip a source to another answer; a new, marked question every time
  (``<id>~<tag>``, ``meta["edited_from"]``), never a change to the loaded dataset; exportable as a dataset file.
* ``overlay``: the retrieval index as an edited question sees it (the runner uses it for methods that search).
* ``compare``: what changed per method (answers, verdict, the trace's ``key_facts``).
* ``influence``: leave each document out in turn: the document × method matrix of answer / keep-abstain flips.
* ``attack``: PoisonedRAG-style presets (target answer, k passages, placement).
* ``campaign``: an attack over a dataset, resumable: ``python -m backend attack``.
"""
