"""Attacks over a dataset started from the Evaluate page: each runs ``backend.whatif.campaign.attack_dataset`` on a
worker thread owned by the session (page reruns, clicks and visits to other pages never interrupt it), writing into
``<cache>/attacks/<dataset>-<timestamp>``, or resuming an earlier folder there; the page polls the job's progress."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from backend.evaluate import EvaluationError
from backend.paths import default_cache_dir
from backend.schema import Question
from backend.whatif.campaign import attack_dataset
from components.attack import Attack, open_attack
from components.session.evaluations import BatchJob, out_folder
from components.session.state import Selection

JOB_KEY = "evaluate.attack_job"
KIND = "attacks"


def attacks_root() -> Path:
    """Where the page's attack folders live: ``<cache>/attacks``."""
    return default_cache_dir() / KIND


@dataclass
class AttackJob(BatchJob):
    dataset: str
    questions: list[Question]
    methods: list[str]
    ks: list[int]
    placement: str
    source: str | None
    out_dir: Path
    resume: bool = False
    attack: Attack | None = None
    unit: str = field(default="attacked question", kw_only=True)


def _work(job: AttackJob, run) -> None:
    try:
        job.prepare_first(run, job.methods)
        attack_dataset(run, job.questions, job.methods, job.out_dir, ks=job.ks, placement=job.placement,
                       source=job.source, resume=job.resume,
                       on_progress=job.progress("Attacking", "attacked question"))
        job.attack = open_attack(job.out_dir)
    except EvaluationError as err:  # the folder or its settings: the message says what to do
        job.error = str(err)
    except OSError as err:  # the folder cannot be made or written (a file in the way, no space, no permission)
        job.error = f"cannot write the attack folder {job.out_dir}: {err.strerror or err}"
    except Exception as err:  # noqa: BLE001 - shown on the page
        job.error = f"{type(err).__name__}: {err}"
    finally:
        job.finished = time.perf_counter()


def start(selection: Selection, methods: list[str], limit: int, ks: list[int], placement: str,
          source: str | None = None, resume_from: Path | None = None) -> AttackJob:
    """Attack the first ``limit`` questions of the selected dataset with each k in ``ks`` and run ``methods`` on
    them with the session's runner, into a new folder, or into ``resume_from`` (running only its missing rows)."""
    ds = selection.dataset
    job = AttackJob(dataset=ds.name, questions=ds.questions[:limit], methods=list(methods), ks=sorted(set(ks)),
                    placement=placement, source=source if placement == "one_source" else None,
                    out_dir=resume_from or out_folder(ds.name, kind=KIND), resume=resume_from is not None)
    return job.launch(selection, _work, JOB_KEY, "conflictlens-attack")


def current() -> AttackJob | None:
    return st.session_state.get(JOB_KEY)
