"""How long a method's run took, as recorded when its replies were made (issue 27): a run answered from the reply
cache reads in milliseconds, and its wall time says nothing about the method.

Two records make the first run's time visible on every later one: the reply cache keeps, beside each reply, how long
its call took (``LLMCall.recorded_latency_s`` on a hit), and, per method run, the wall time of the run that made all
its replies (``MethodResult.first_run_s``, looked up by the run's requests: ``LLMClient.first_run_s``). The report
shows the first run's wall time; when it was not recorded (replies cached before it was, or made by several partial
runs) it falls back to the model time summed over the calls, which exceeds the wall time of a method that sends
calls side by side (MADAM's agents) and is labelled as such.
"""

from __future__ import annotations

from backend.report.text import duration
from backend.schema import MethodResult


def cached(result: MethodResult) -> int:
    return sum(c.cache_hit for c in result.calls)


def model_seconds(result: MethodResult) -> float | None:
    """Σ of the time each call took when its reply was made; None when a cache hit has no recorded latency (a reply
    cached before latencies were recorded)."""
    total = 0.0
    for call in result.calls:
        if call.cache_hit:
            if call.recorded_latency_s is None:
                return None
            total += call.recorded_latency_s
        else:
            total += call.latency_s
    return total


def first_run_text(result: MethodResult) -> str:
    """The run's time as first recorded: ``"2.27 s"``; ``"≈ 4.49 s model time"`` (calls summed) when the first
    run's wall time was not recorded; ``"not recorded"``."""
    if not cached(result):
        return duration(result.wall_s)
    if result.first_run_s is not None:
        return duration(result.first_run_s)
    seconds = model_seconds(result)
    return "not recorded" if seconds is None else f"≈ {duration(seconds)} model time"


def run_text(result: MethodResult) -> str:
    """This run's wall time and how much of it was a cache read: ``"0.22 s (from the reply cache)"``."""
    hits, n = cached(result), len(result.calls)
    where = "" if not hits else " (from the reply cache)" if hits == n else f" ({hits} of {n} calls from the cache)"
    return duration(result.wall_s) + where


def timing_sentence(result: MethodResult) -> str:
    """One line for a method's section: the time as first recorded, and what this run took."""
    n, hits = len(result.calls), cached(result)
    calls = f"{n:,} model call{'s' if n != 1 else ''}"
    if not n:
        return f"No model call; the run took {duration(result.wall_s)}."
    if not hits:
        return f"{calls}; the run took {duration(result.wall_s)}."
    read = f"all {n:,} replies" if hits == n else f"{hits:,} of {n:,} replies"
    this = f"this run read {read} from the reply cache in {duration(result.wall_s)}"
    if result.first_run_s is not None:
        return f"{calls}; the run that made the replies took {duration(result.first_run_s)} ({this})."
    seconds = model_seconds(result)
    if seconds is not None:
        return (f"{calls}; the first run's wall time was not recorded, its calls took {duration(seconds)} of model "
                f"time summed ({this}).")
    return f"{calls}; the first run's time was not recorded (replies cached before timings were kept): {this}."
