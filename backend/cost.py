"""Cost before a run: each method's own estimate (``MethodSpec.estimate``: calls and tokens from its call pattern),
summed over the run's questions, plus a dataset-level preparation not computed yet, priced from litellm's model price
map (``backend.llm.pricing``). Names no method.

``estimate_run(runner, questions, methods)`` returns a ``RunEstimate``: per method the calls (an upper bound where the
replies decide, with the fewest beside it), prompt and completion tokens, the price at the assumed reply lengths and
the ceiling with every reply at its token limit; "price unknown" for a model the map does not list; $0, said so, for
the offline model. The app asks for confirmation above a threshold (``needs_confirmation``); the CLI prints
``lines()`` before sending anything.

Tokens are counted with the model's tokenizer as litellm knows it (``litellm.token_counter``; its default
tokenizer for a model it does not know) and with the offline model's word count for the free models, which is what
they report. The reply cache is not consulted: calls it can answer cost nothing, so a re-run costs less.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from backend.llm.client import LLMConfig
from backend.llm.pricing import FREE_NOTE, UNKNOWN_NOTE, is_free, price, price_note, usd
from backend.methods import SPECS
from backend.methods.estimate import CallEstimate, Sizes, StepEstimate, word_count
from backend.schema import LLMCall, MethodResult, Question, strip_truth
from backend.schema.base import StrictModel

#: The app's default confirmation threshold (the sidebar's setting).
DEFAULT_THRESHOLD_USD = 0.50


def token_counter(model: str) -> Callable[[str], int]:
    """How ``model`` counts tokens: litellm's tokenizer for it (its default one for a model it does not know), or
    the offline model's word count for the free models."""
    if is_free(model):
        return word_count
    import litellm

    def count(text: str) -> int:
        return litellm.token_counter(model=model, text=text) if text else 0

    return count


class MethodCost(StrictModel):
    """One method's estimate over a run."""

    method: str
    calls: int = 0                 # at most (every conditional step taken)
    calls_min: int = 0             # at least (only the steps that always happen)
    prompt_tokens: int = 0         # over ``calls``
    completion_tokens: int = 0     # over ``calls``, at the assumed reply lengths
    cost_usd: float | None = None  # at the assumed reply lengths; None: price unknown
    ceiling_usd: float | None = None  # every reply at its token limit
    upper_bound: bool = False      # the replies decide how many calls happen
    preparation_calls: int = 0     # of ``calls``: the dataset-level preparation (once per dataset and model)
    estimated: bool = True         # False: the method declares no estimate (its calls are not counted)
    steps: list[StepEstimate] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class RunEstimate(StrictModel):
    """What a run of ``methods`` on ``questions`` questions will send, and what it will cost."""

    model: str
    questions: int
    free: bool                     # the offline model: $0
    priced: bool                   # litellm's map lists the model (or it is free)
    price_note: str
    methods: dict[str, MethodCost] = Field(default_factory=dict)

    @property
    def calls(self) -> int:
        return sum(m.calls for m in self.methods.values())

    @property
    def calls_min(self) -> int:
        return sum(m.calls_min for m in self.methods.values())

    @property
    def tokens(self) -> int:
        return sum(m.tokens for m in self.methods.values())

    @property
    def upper_bound(self) -> bool:
        return any(m.upper_bound for m in self.methods.values())

    @property
    def cost_usd(self) -> float | None:
        return None if not self.priced else sum(m.cost_usd or 0.0 for m in self.methods.values())

    @property
    def ceiling_usd(self) -> float | None:
        return None if not self.priced else sum(m.ceiling_usd or 0.0 for m in self.methods.values())

    def needs_confirmation(self, threshold_usd: float) -> bool:
        """Ask before sending: a priced run above the threshold, or a hosted model whose price is unknown."""
        if self.free or not self.calls:
            return False
        return self.cost_usd is None or self.cost_usd > threshold_usd

    def headline(self) -> str:
        """One line: calls, tokens and price of the whole run."""
        calls = f"{self.calls:,}" if self.calls == self.calls_min else f"{self.calls_min:,}–{self.calls:,}"
        cost = usd(self.cost_usd) if self.priced else "price unknown"
        if self.priced and not self.free and (self.ceiling_usd or 0) > (self.cost_usd or 0):
            cost += f" (at most {usd(self.ceiling_usd)} if every reply ran to its token limit)"
        return (f"{calls} model calls, ~{_tokens(self.tokens)} tokens to {self.model}: {cost}"
                + (" — an upper bound" if self.upper_bound else ""))

    def lines(self) -> list[str]:
        """The estimate as text, a line per method (the CLI prints it before sending)."""
        out = [f"Estimate: {self.headline()}", f"  {self.price_note}"]
        for name, m in self.methods.items():
            if not m.estimated:
                out.append(f"  {name}: no estimate (the method declares none)")
                continue
            calls = f"{m.calls:,}" if m.calls == m.calls_min else f"{m.calls_min:,}–{m.calls:,}"
            prep = f", of which {m.preparation_calls:,} prepare the dataset" if m.preparation_calls else ""
            cost = usd(m.cost_usd) if self.priced else "price unknown"
            out.append(f"  {name}: {calls} call{'' if m.calls == 1 else 's'}{prep}, ~{_tokens(m.prompt_tokens)} prompt + "
                       f"~{_tokens(m.completion_tokens)} completion tokens, {cost}")
            out += [f"    {note}" for note in m.notes]
        return out


def _tokens(n: int) -> str:
    """12,345 / 4.8 M / 1.2 B."""
    if n >= 10**9:
        return f"{n / 1e9:.1f} B"
    if n >= 10**6:
        return f"{n / 1e6:.1f} M"
    return f"{n:,}"


def sizes(runner, ceiling: bool = False) -> Sizes:
    """What the estimates know of ``runner``'s run: the model's token counter, evidence mode, k, reply cap, the
    dataset's sources and its mean document (the placeholder for documents only a search will find)."""
    dataset = runner.stripped
    texts = [d.text for q in dataset.questions for d in q.documents]
    count = token_counter(runner.llm.model)
    typical = round(sum(word_count(t) for t in texts) / len(texts)) if texts else 100
    if count is not word_count and texts:  # the mean in the model's tokens, from a sample of the documents
        sample = texts[:: max(1, len(texts) // 200)]
        typical = round(sum(count(t) for t in sample) / len(sample))
    return Sizes(count=count, evidence_mode=runner.evidence_mode, top_k=runner.top_k, max_tokens=runner.llm.max_tokens,
                 document_tokens=typical, sources=tuple(dataset.source_names()), ceiling=ceiling)


def _merge(method: str, estimates: list[CallEstimate]) -> CallEstimate:
    """One estimate summing the others step by step (same step and condition), notes once each."""
    merged = CallEstimate(method=method)
    for step, conditional in dict.fromkeys((s.step, s.conditional) for e in estimates for s in e.steps):
        same = [s for e in estimates for s in e.steps if (s.step, s.conditional) == (step, conditional)]
        merged.add(step, sum(s.calls for s in same), sum(s.prompt_tokens for s in same),
                   sum(s.completion_tokens for s in same), conditional)
    merged.notes = list(dict.fromkeys(n for e in estimates for n in e.notes))
    return merged


def _method_estimate(runner, name: str, questions: list[Question], sized: Sizes,
                     prepare: bool) -> tuple[CallEstimate, int] | None:
    """``name``'s calls on ``questions`` (and its preparation, when ``prepare``); None without an estimate hook."""
    spec, method = SPECS[name], runner.method(name)
    if spec.estimate is None:
        return None
    per_question = [spec.estimate(method, q, sized) for q in questions]
    prepared = (spec.estimate_prepare(method, runner.stripped, sized)
                if prepare and spec.estimate_prepare is not None else CallEstimate(method=name))
    return _merge(name, [*per_question, prepared]), prepared.calls


def _needs_preparation(runner, name: str) -> bool:
    """The method's dataset-level artefact is needed and not computed yet (in memory or on disk)."""
    try:
        return runner.prepare_key(name) is not None and runner.prepared(name) is None
    except Exception:  # noqa: BLE001 - the run itself reports why it cannot prepare; count the preparation then
        return True


def estimate_run(runner, questions: list[Question], methods: list[str],
                 done: set[tuple[str, str]] | frozenset = frozenset()) -> RunEstimate:
    """What running ``methods`` on ``questions`` with ``runner``'s settings will send and cost (see the module
    docstring). The questions are stripped of their truth first: an estimate reads what a method reads. ``done``:
    (question id, method) pairs that will not run (a resumed batch's rows)."""
    config: LLMConfig = runner.llm
    stripped = [strip_truth(q) for q in questions]
    found = price(config.model, config.api_base)
    expected, ceiling = sizes(runner), None
    out = RunEstimate(model=config.model, questions=len(questions), free=is_free(config.model),
                      priced=found is not None, price_note=price_note(config.model, config.api_base))
    for name in methods:
        prepare = _needs_preparation(runner, name)
        todo = [q for q in stripped if (q.id, name) not in done]
        got = _method_estimate(runner, name, todo, expected, prepare)
        if got is None:
            out.methods[name] = MethodCost(method=name, estimated=False)
            continue
        est, prep_calls = got
        cost = ceiling_cost = None
        if found is not None:
            ceiling = ceiling or sizes(runner, ceiling=True)
            top, _ = _method_estimate(runner, name, todo, ceiling, prepare)
            cost = found.of(est.prompt_tokens, est.completion_tokens)
            ceiling_cost = found.of(top.prompt_tokens, top.completion_tokens)
        out.methods[name] = MethodCost(method=name, calls=est.calls, calls_min=est.calls_min,
                                       prompt_tokens=est.prompt_tokens, completion_tokens=est.completion_tokens,
                                       cost_usd=cost, ceiling_usd=ceiling_cost, upper_bound=est.upper_bound,
                                       preparation_calls=prep_calls, steps=est.steps, notes=est.notes)
    return out


Gate = Literal["go", "ask", "refuse"]


def gate(estimate: RunEstimate, *, yes: bool = False, max_cost: float | None = None, interactive: bool = False,
         stops_at_limit: bool = False, threshold_usd: float = DEFAULT_THRESHOLD_USD) -> tuple[Gate, str]:
    """Whether the CLI sends a run: ("go" | "ask" | "refuse", why). The offline model and ``yes`` go. A ``max_cost``
    needs a known price; above it, a run that ``stops_at_limit`` (evaluate, attack) goes and stops there, any other is
    refused. Otherwise a run that needs confirmation (``RunEstimate.needs_confirmation``) is asked about at a
    terminal; without one, a priced run above the threshold is refused (a script says ``--yes`` or ``--max-cost``)
    and a run whose price is unknown goes, with the estimate printed."""
    if estimate.free or yes or not estimate.calls:
        return "go", ""
    cost = estimate.cost_usd
    if max_cost is not None:
        if cost is None:
            return "refuse", (f"the price of {estimate.model} is unknown, so --max-cost cannot be kept; give its "
                              "price with --price IN,OUT (dollars per million tokens) or pass --yes")
        if cost > max_cost and not stops_at_limit:
            return "refuse", f"the estimate {usd(cost)} is above --max-cost {usd(max_cost)}"
        return "go", "" if cost <= max_cost else f"the estimate {usd(cost)} is above --max-cost: the run stops there"
    if not estimate.needs_confirmation(threshold_usd):
        return "go", ""
    if interactive:
        return "ask", f"Send {estimate.calls:,} calls ({usd(cost) if cost is not None else 'price unknown'})?"
    if cost is None:
        return "go", f"the price of {estimate.model} is unknown; sending (pass --max-cost to require a known price)"
    return "refuse", (f"the estimate {usd(cost)} is above {usd(threshold_usd)}: pass --yes to send it, or --max-cost "
                      "USD to cap it")


# --- after the run: what the calls cost -----------------------------------------------------------------------

def calls_cost(calls: list[LLMCall]) -> dict[str, Any]:
    """What ``calls`` cost (``LLMCall.cost_usd``): ``cost_usd`` the sum of the known costs (None when no call has
    one: the price is unknown), ``saved_usd`` what the cache hits saved (None when none is known), and
    ``cost_unknown_calls`` the calls whose cost is unknown (left out of the sum)."""
    known = [c.cost_usd for c in calls if c.cost_usd is not None]
    saved = [c.saved_usd for c in calls if c.saved_usd is not None]
    return {"cost_usd": round(sum(known), 6) if known else None,
            "saved_usd": round(sum(saved), 6) if saved else None,
            "cost_unknown_calls": len(calls) - len(known)}


def cost_text(calls: list[LLMCall]) -> str:
    """What ``calls`` cost, as the tables show it: "$0.0123", "$0" (the offline model, or all from the cache), "price
    unknown", with what the cache saved ("$0 (saved $0.0040)")."""
    if not calls:
        return "—"
    if all(is_free(c.model) for c in calls):   # also records written before costs were
        return "$0"
    spent = calls_cost(calls)
    text = usd(spent["cost_usd"]) if spent["cost_usd"] is not None else "price unknown"
    if spent["cost_usd"] is not None and spent["cost_unknown_calls"]:
        text += f" + {spent['cost_unknown_calls']} unpriced"
    if spent["saved_usd"]:
        text += f" (saved {usd(spent['saved_usd'])})"
    return text


class Budget:
    """A run's spending limit (``evaluate --max-cost``): ``charge`` each result as it is written; once the spent sum
    reaches the limit, ``reached`` is true and ``stopped`` says why. Only known costs count, so a limit needs a model
    whose price is known (``require_price``)."""

    def __init__(self, limit_usd: float) -> None:
        if limit_usd < 0:
            raise ValueError("the cost limit must be at least $0")
        self.limit_usd, self.spent_usd, self.stopped = float(limit_usd), 0.0, None

    @staticmethod
    def require_price(model: str, api_base: str | None = None) -> None:
        """Raise ``ValueError`` when ``model``'s price is unknown: its spending could not be counted."""
        if price(model, api_base) is None:
            raise ValueError(f"the price of {model} is unknown (litellm's model price map does not list it), so a "
                             "cost limit cannot be kept; register its price (litellm.register_model; the command "
                             "line's --price) or run without one")

    def charge(self, result: MethodResult) -> None:
        self.spent_usd += sum(c.cost_usd or 0.0 for c in result.calls)

    @property
    def reached(self) -> bool:
        return self.spent_usd >= self.limit_usd

    def stop(self, pending: int) -> str:
        """Record (and return) why the run stopped with ``pending`` questions not started."""
        self.stopped = (f"stopped at the cost limit: {usd(self.spent_usd)} spent, limit {usd(self.limit_usd)}; "
                        f"{pending} question{'' if pending == 1 else 's'} not started (resume to continue)")
        return self.stopped


__all__ = ["DEFAULT_THRESHOLD_USD", "FREE_NOTE", "UNKNOWN_NOTE", "Budget", "Gate", "MethodCost", "RunEstimate",
           "calls_cost", "cost_text", "estimate_run", "gate", "sizes", "token_counter"]
