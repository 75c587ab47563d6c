"""Cost before a run: each method's own estimate (``MethodSpec.estimate``: calls and tokens from its call pattern),
summed over the run's questions, plus a dataset-level preparation not computed yet, priced from litellm's model price
map (``backend.llm.pricing``). Names no method.

``estimate_run(runner, questions, methods)`` returns a ``RunEstimate``: per method the calls (an upper bound where the
replies decide, with the fewest beside it), prompt and completion tokens, the price at the assumed reply lengths and
the ceiling with every reply at its token limit; "price unknown" for a model the map does not list; $0, said so, for
the offline model. The app asks for confirmation above a threshold (``needs_confirmation``); the CLI prints
``lines()`` before sending anything.

A local model (``local/<name>``: llama.cpp on this CPU, ``backend.llm.local``) costs $0 too, but takes time: its
estimate also gives the expected model time at the speeds measured on this machine
(``backend.llm.local.throughput``: prompt and generated tokens per second, measured on its replies and kept in the
cache folder), the sum over the calls of prompt tokens / prompt speed + completion tokens / generation speed, as if
one call ran after another with no prompt cache; before any measurement it says the speeds are not measured yet (the
first calls measure them).

Tokens are counted with the model's tokenizer as litellm knows it (``litellm.token_counter``; its default
tokenizer for a model it does not know, a local model's included: within ~10-25 % of SmolLM2's own count on the
bundled data) and with the offline model's word count for the offline models, which is what they report. The reply
cache is not consulted: calls it can answer cost nothing, so a re-run costs less.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from backend.llm.client import LLMConfig
from backend.llm.local.weights import is_local
from backend.llm.pricing import FREE_NOTE, LOCAL_NOTE, UNKNOWN_NOTE, is_free, price, price_note, usd
from backend.methods import SPECS
from backend.methods.estimate import CallEstimate, Sizes, StepEstimate, word_count
from backend.schema import LLMCall, MethodResult, Question, strip_truth
from backend.schema.base import StrictModel

#: The app's default confirmation threshold (the sidebar's setting).
DEFAULT_THRESHOLD_USD = 0.50


def token_counter(model: str) -> Callable[[str], int]:
    """How ``model`` counts tokens: litellm's tokenizer for it (its default one for a model it does not know, a local
    model's included), or the offline model's word count for the offline models."""
    if is_free(model) and not is_local(model):
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
    #: a local model: the model time of ``calls`` at the measured speeds (None: not local, or not measured yet)
    seconds: float | None = None
    seconds_max: float | None = None  # every reply at its token limit
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
    #: a local model (llama.cpp on this CPU): the run's time comes from the speeds measured on this machine
    local: bool = False
    #: ``Throughput.describe()`` of those speeds; None: not measured yet (or not a local model)
    speed: str | None = None
    #: why the local model cannot run at all (its weights missing: what to install), else None
    unavailable: str | None = None

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

    @property
    def seconds(self) -> float | None:
        """A local model's expected model time at the measured speeds; None when not measured (or not local)."""
        if not self.local or self.speed is None:
            return None
        return sum(m.seconds or 0.0 for m in self.methods.values())

    @property
    def seconds_max(self) -> float | None:
        if not self.local or self.speed is None:
            return None
        return sum(m.seconds_max or 0.0 for m in self.methods.values())

    def time_text(self) -> str:
        """A local model's expected time, in a few words: "~25 s at measured speeds (at most ~4 min if every reply
        ran to its token limit)", or why there is no figure; "" for any other model."""
        if not self.local:
            return ""
        if self.unavailable:
            return f"cannot run: {self.unavailable}"
        if self.seconds is None:
            return NOT_MEASURED
        text = f"~{seconds_text(self.seconds)} at measured speeds"
        if (self.seconds_max or 0) > self.seconds * 1.05:
            text += f" (at most ~{seconds_text(self.seconds_max)} if every reply ran to its token limit)"
        return text

    def time_note(self) -> str:
        """The line under a local model's estimate: what the time rests on."""
        if not self.local or self.unavailable:
            return ""
        if self.speed is None:
            return ("Time: the speeds of this machine are not measured yet: the first calls measure them (prompt and "
                    "generated tokens per second), kept for the next estimates.")
        return (f"Time at {self.speed}: the calls counted one after another, without the server's prompt cache; "
                "a first run also waits a few seconds for the server to start.")

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
                + (f", {self.time_text()}" if self.local else "")
                + (" — an upper bound" if self.upper_bound else ""))

    def lines(self) -> list[str]:
        """The estimate as text, a line per method (the CLI prints it before sending)."""
        out = [f"Estimate: {self.headline()}", f"  {self.price_note}"]
        if note := self.time_note():  # a local model: what its time rests on
            out.append(f"  {note}")
        for name, m in self.methods.items():
            if not m.estimated:
                out.append(f"  {name}: no estimate (the method declares none)")
                continue
            calls = f"{m.calls:,}" if m.calls == m.calls_min else f"{m.calls_min:,}–{m.calls:,}"
            prep = f", of which {m.preparation_calls:,} prepare the dataset" if m.preparation_calls else ""
            cost = usd(m.cost_usd) if self.priced else "price unknown"
            took = f", ~{seconds_text(m.seconds)}" if m.seconds is not None else ""
            out.append(f"  {name}: {calls} call{'' if m.calls == 1 else 's'}{prep}, ~{_tokens(m.prompt_tokens)} prompt + "
                       f"~{_tokens(m.completion_tokens)} completion tokens, {cost}{took}")
            out += [f"    {note}" for note in m.notes]
        return out


#: A local model's estimate before its speeds were measured.
NOT_MEASURED = "time not measured yet: measured on the first calls"


def seconds_text(seconds: float) -> str:
    """An estimated duration, as precise as an estimate is: "3 s", "25 s", "4 min", "1 h 10 min"."""
    if seconds < 0.5:
        return "< 1 s"
    if seconds < 10:
        return f"{round(seconds)} s"
    if seconds < 57.5:
        return f"{5 * round(seconds / 5)} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def local_speed(config: LLMConfig):
    """A local model's measured speeds (``backend.llm.local.throughput.Throughput``, or None before any
    measurement) and why it cannot run (None when it can): its weights are found without starting a server."""
    from backend.llm.local import throughput

    try:
        digest = config.identity.rpartition("#")[2]  # local/<name>#<a hash of its weights>
    except RuntimeError as err:  # LocalModelError, WeightsError: the message says what to install or where
        return None, str(err)
    return throughput.measured(digest), None


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
                      priced=found is not None, price_note=price_note(config.model, config.api_base),
                      local=is_local(config.model))
    speed = None
    if out.local:
        speed, out.unavailable = local_speed(config)
        out.speed = speed.describe() if speed is not None else None
    for name in methods:
        prepare = _needs_preparation(runner, name)
        todo = [q for q in stripped if (q.id, name) not in done]
        got = _method_estimate(runner, name, todo, expected, prepare)
        if got is None:
            out.methods[name] = MethodCost(method=name, estimated=False)
            continue
        est, prep_calls = got
        cost = ceiling_cost = seconds = seconds_max = None
        if found is not None:
            ceiling = ceiling or sizes(runner, ceiling=True)
            top, _ = _method_estimate(runner, name, todo, ceiling, prepare)
            cost = found.of(est.prompt_tokens, est.completion_tokens)
            ceiling_cost = found.of(top.prompt_tokens, top.completion_tokens)
            if speed is not None:  # a local model, measured: its time is what it costs
                seconds = speed.seconds(est.prompt_tokens, est.completion_tokens)
                seconds_max = speed.seconds(top.prompt_tokens, top.completion_tokens)
        out.methods[name] = MethodCost(method=name, calls=est.calls, calls_min=est.calls_min,
                                       prompt_tokens=est.prompt_tokens, completion_tokens=est.completion_tokens,
                                       cost_usd=cost, ceiling_usd=ceiling_cost, upper_bound=est.upper_bound,
                                       preparation_calls=prep_calls, seconds=seconds, seconds_max=seconds_max,
                                       steps=est.steps, notes=est.notes)
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
        if not (math.isfinite(limit_usd) and limit_usd >= 0):  # nan is never reached, inf never stops
            raise ValueError("the cost limit must be a number of US dollars, at least $0 (not nan or inf)")
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


__all__ = ["DEFAULT_THRESHOLD_USD", "FREE_NOTE", "LOCAL_NOTE", "NOT_MEASURED", "UNKNOWN_NOTE", "Budget", "Gate",
           "MethodCost", "RunEstimate", "calls_cost", "cost_text", "estimate_run", "gate", "is_local", "local_speed",
           "seconds_text", "sizes", "token_counter"]
