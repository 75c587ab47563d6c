"""The method registry: one ``MethodSpec`` per method, declared beside the method's class.

``register(MethodSpec(...))`` in the method's own module is all it takes for a method to exist everywhere: the CLI's
``--methods all``, the contract test, batch evaluation, Inspect's columns, the colours of every chart and the app's
navigation read ``SPECS``. Registering also registers the method's own model tasks (``backend.llm.tasks``); its
trace registers itself by subclassing ``backend.schema.trace.Trace``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from backend.llm.tasks import TASKS, TaskSpec, register_task
from backend.methods.estimate import Estimator, PrepareEstimator
from backend.schema.trace import Trace

if TYPE_CHECKING:
    from backend.methods.base import Method

T = TypeVar("T")
#: Where a method sorts when it gives no ``order``: after the five papers' methods, before the baselines.
DEFAULT_ORDER = 60


@dataclass(frozen=True)
class MethodSpec:
    cls: type[Method]
    trace: type[Trace]
    title: str                                # display name, e.g. "RA-RAG"
    description: str                          # one line: what the method does
    color: str                                # its colour on every chart comparing methods
    #: its own model tasks (general tasks several methods share live in ``backend.llm.tasks``)
    tasks: tuple[TaskSpec, ...] = ()
    #: step name (as in ``Method.steps``, ``{round}``-style fields allowed) -> what the call is, in the paper's
    #: words; the same fields may appear in the role ("reflection {round}")
    step_roles: Mapping[str, str] = field(default_factory=dict)
    #: may abstain by design (selective answering): batch evaluation reports its risk and coverage
    selective: bool = False
    #: the metric its own paper reports (a ``backend.scoring.PAPER_METRICS`` key, or "risk" for risk and coverage):
    #: the summary, the Evaluate page and the reports show it beside the project's lenient match. None: no paper's
    paper_metric: str | None = None
    #: a reference point every paper compares against: no page of its own, its details on the Model calls page
    baseline: bool = False
    #: the keep-every-answer reference for selective methods' risk: labels a question a method abstained on
    reference: bool = False
    #: few model calls per question: the Label page's default queue builders
    quick: bool = False
    order: int = DEFAULT_ORDER
    #: loads what the method's first run needs beyond the shared libraries (the app calls it in the background,
    #: ``backend.warmup``); None: nothing of its own
    warm: Callable[[], object] | None = None
    #: ``estimate(method, question, sizes) -> CallEstimate``: the calls and tokens a run on one question will send,
    #: following the method's call pattern (``backend.methods.estimate``; ``backend.cost`` sums and prices them)
    estimate: Estimator | None = None
    #: ``estimate_prepare(method, dataset, sizes) -> CallEstimate``: the same for the dataset-level preparation
    estimate_prepare: PrepareEstimator | None = None
    #: ``story(result, ctx) -> backend.story.Turn | None``: the run's turning point in one clause, for the question's
    #: story (``backend.story``; ``ctx.truth`` is None unless the truth overlay is on); None: the generic sentence
    story: Callable[..., object] | None = None

    @property
    def name(self) -> str:
        return self.cls.name

    @property
    def home(self) -> str | None:
        """The method's module under ``backend/methods`` (``ra_rag``, ``madam``, ``baselines``): the app looks for its
        view in ``components/<home>.py``. None for a method defined elsewhere (a test's toy)."""
        prefix = "backend.methods."
        module = self.cls.__module__
        return module[len(prefix):].split(".")[0] if module.startswith(prefix) else None

    def role(self, step: str) -> str:
        """What a call of ``step`` is (the Model calls table); the step itself when no role is declared."""
        for pattern, role in self.step_roles.items():
            fields = re.findall(r"\{(\w+)\}", pattern)
            regex = re.escape(pattern)
            for name in fields:
                regex = regex.replace(re.escape("{" + name + "}"), rf"(?P<{name}>\d+)", 1)
            if m := re.fullmatch(regex, step):
                return role.format(**m.groupdict())
        return step


_REGISTRY: dict[str, MethodSpec] = {}


def register(spec: MethodSpec) -> MethodSpec:
    """Add ``spec`` (and its tasks). Registering the same class again (a module reloaded) replaces it."""
    known = _REGISTRY.get(spec.name)
    if known is not None and _qualname(known.cls) != _qualname(spec.cls):
        raise ValueError(f"method {spec.name!r} is already registered by {_qualname(known.cls)}")
    undeclared = [s for s in spec.step_roles if s not in spec.cls.steps]
    if undeclared:
        raise ValueError(f"{spec.name}: step_roles name steps it does not declare: {undeclared}")
    for task in spec.tasks:
        register_task(task)
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a method and its own tasks (tests that register a toy clean up after themselves)."""
    spec = _REGISTRY.pop(name, None)
    for task in spec.tasks if spec else ():
        if TASKS.get(task.name) is task:  # only what this spec added
            TASKS.pop(task.name)


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class _Registered(Mapping[str, T]):
    """A live view of the registry in display order (``order``, then registration): each method's ``pick(spec)``."""

    def __init__(self, what: str, pick: Callable[[MethodSpec], T]) -> None:
        self._what, self._pick = what, pick

    def __getitem__(self, name: str) -> T:
        return self._pick(_REGISTRY[name])

    def __iter__(self) -> Iterator[str]:
        return iter([n for _, _, n in sorted((s.order, i, n) for i, (n, s) in enumerate(_REGISTRY.items()))])

    def __len__(self) -> int:
        return len(_REGISTRY)

    def __contains__(self, name: object) -> bool:
        return name in _REGISTRY

    def __repr__(self) -> str:
        return f"{self._what}({', '.join(self)})"


#: every registered method's spec, by name, in display order
SPECS: Mapping[str, MethodSpec] = _Registered("SPECS", lambda spec: spec)
#: every registered method's class, by name, in display order
METHODS: Mapping[str, type[Method]] = _Registered("METHODS", lambda spec: spec.cls)


def title(name: str) -> str:
    """A method's display name (``RA-RAG``) for its id (``ra_rag``); an unknown id as it is."""
    return SPECS[name].title if name in SPECS else name
