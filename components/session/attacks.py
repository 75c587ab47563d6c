"""Attacks over a dataset started from the Evaluate page: each runs ``backend.whatif.campaign.attack_dataset`` on a
worker thread owned by the session (page reruns, clicks and visits to other pages never interrupt it), writing into
``<cache>/attacks/<dataset>-<timestamp>``, or resuming an earlier folder there; the page follows the job.

On a server with sign-in each analyst's attacks live in a folder of their own, ``<cache>/attacks/by-<hash>`` (a
hash of the signed-in identity, never the identity itself in a path): the page lists, resumes and opens only the
signed-in analyst's, and a typed path into another analyst's folder (or the shared one) is refused."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from backend.evaluate import EvaluationError
from backend.outputs import AttackError, AttackResult, find_attacks, open_attack
from backend.deployment import shown_path
from backend.paths import default_cache_dir
from backend.schema import Question
from backend.whatif.campaign import attack_dataset, attacked_questions
from components.session.evaluations import out_folder, start_batch
from components.session import signin
from components.session.jobs import Job
from components.session.state import Selection

JOB_KEY = "evaluate.attack_job"
KIND = "attacks"


def owner_folder(analyst: str) -> str:
    """The name of an analyst's own attacks folder: a hash of their identity (``Identity.analyst``, used as an
    opaque key), so no identity text ever becomes part of a path."""
    return "by-" + hashlib.sha256(analyst.encode("utf-8")).hexdigest()[:32]


def attacks_base() -> Path:
    """Where every attack folder of the page lives: ``<cache>/attacks``."""
    return default_cache_dir() / KIND


def attacks_root() -> Path:
    """Where this session's attack folders live: ``<cache>/attacks``; with sign-in the signed-in analyst's own
    folder under it (``owner_folder``)."""
    who = signin.current()
    return attacks_base() if who is None else attacks_base() / owner_folder(who.analyst)


def _refuse_others(text: str) -> None:
    """With sign-in: ``AttackError`` for a path inside the page's attack folders but not the analyst's own."""
    if signin.current() is None:
        return
    try:
        resolved = Path(text).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return  # open_attack refuses it, saying why
    if resolved.is_relative_to(attacks_base().resolve()) and not resolved.is_relative_to(attacks_root().resolve()):
        raise AttackError(f"{text}: another analyst's attack (on this server each analyst opens only their own)")


def open_folder(path: str | Path) -> AttackResult:
    """Open on the page: a folder of the session's own (``find_attacks`` under ``attacks_root()``, as the picker
    lists them) as it is; any other path typed on the page only inside the deployment's open folders, and never
    another analyst's attack folder. ``AttackError``."""
    own = {str(folder) for folder, _ in find_attacks(attacks_root())}
    text = str(path).strip()
    if text not in own:
        _refuse_others(text)
    return open_attack(path, confined=text not in own)


@dataclass(frozen=True)
class Batch:
    """What an attack works on (its job's ``about``)."""
    dataset: str
    questions: list[Question]
    methods: list[str]
    ks: list[int]
    placement: str
    source: str | None
    out_dir: Path
    resume: bool = False


def _work(job: Job, run) -> None:
    b: Batch = job.about  # any other exception is the job's error, shown on the page
    try:
        attack_dataset(run, b.questions, b.methods, b.out_dir, ks=b.ks, placement=b.placement, source=b.source,
                       resume=b.resume,
                       on_progress=job.progress("Attacking", "attacked question", "method runs", len(b.methods)))
        attack: AttackResult = open_attack(b.out_dir)
        job.value = attack
    except EvaluationError as err:  # the folder or its settings: the message says what to do
        job.error = str(err)
    except OSError as err:  # the folder cannot be made or written (a file in the way, no space, no permission)
        job.error = f"cannot write the attack folder {shown_path(b.out_dir)}: {err.strerror or err}"


def start(selection: Selection, methods: list[str], limit: int, ks: list[int], placement: str,
          source: str | None = None, resume_from: Path | None = None) -> Job:
    """Attack the first ``limit`` questions of the selected dataset with each k in ``ks`` and run ``methods`` on
    them with the session's runner, into a new folder, or into ``resume_from`` (running only its missing rows); the
    job's ``value`` is then the ``AttackResult``."""
    ds = selection.dataset
    about = Batch(dataset=ds.name, questions=ds.questions[:limit], methods=list(methods), ks=sorted(set(ks)),
                  placement=placement, source=source if placement == "one_source" else None,
                  out_dir=resume_from or out_folder(ds.name, root=attacks_root().parent, kind=attacks_root().name),
                  resume=resume_from is not None)
    return start_batch(selection, about, _work, JOB_KEY, "conflictlens-attack")


def attacked(selection: Selection, choice) -> list[Question]:
    """The attacked questions an attack with ``choice``'s settings (``components.attack.Choices``) runs the methods
    on, for its estimate before it starts."""
    ds = selection.dataset
    return attacked_questions(ds, ds.questions[:choice.limit], choice.ks, choice.placement, choice.source)[0]


def current() -> Job | None:
    return st.session_state.get(JOB_KEY)
