"""The chatty offline voice beside the plain one (issue 25 §2): every registered method over ``ramdocs_dev`` and
``scenarios``, once with ``offline/reader`` (replies in exactly the format each reader expects) and once with
``offline/chatty`` (the same content dressed as chat models write it, ``backend.llm.chatty``).

    .venv/bin/python benchmarks/chatty.py [--limit N] [--datasets ramdocs_dev,scenarios] [--methods all]
        [--cache-dir DIR] [--examples K]

Per method per dataset: the (question, method) pairs, the share whose final answers are identical in both voices
(the same answers, in the same order), the chatty voice's calls and the share of them its reader could not read
(status ``unreadable``: the call's ``read_status`` when the client records it, else the task's reader run on the
reply here), and the share it misread: read, but to another value than the plain reply it dresses gives (the
content a careful reader takes, ``content``). Targets: >= 99 % identical, <= 1 % unreadable. A table of the dress
styles behind the unreadable and misread calls follows, with up to K example replies per style (``--examples``):
where a reader falls short. Calls, index and prepared artefacts go to a temporary folder unless ``--cache-dir``
names one. The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import unicodedata
from collections import Counter, defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see reader_accuracy.py: shared 2-core machine

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PLAIN, CHATTY = "offline/reader", "offline/chatty"
DATASETS = ("ramdocs_dev", "scenarios")
TARGET_IDENTICAL, TARGET_UNREADABLE = 99.0, 1.0


# ------------------------------------------------------------------------------- what a careful reader takes

def content(task: str, result: Any) -> Any:
    """The part of a reader's result a method decides on, comparable between the plain and the dressed reply: the
    answer (and a MADAM agent's explanation, whose subject the others weigh), the list items, the probability to two decimals, the option, the
    groups' documents and stated sources. Works on ``Parsed`` results and on the older result types alike."""
    value = getattr(result, "value", result) if hasattr(result, "status") else result
    if task == "generate_passage":
        return tuple(getattr(value, "kept", value) or ())
    if task == "debate_turn":   # the explanation too: the other agents (and the offline model) read its subject
        return (_idk_none(value[0]), _prose(value[1])) if isinstance(value, tuple) else value
    if task == "aggregate":
        return tuple(value[0]) if isinstance(value, tuple) else value
    if task in ("cf_answer", "cf_quality", "cf_usage"):   # a refusal is a refusal, however it is worded
        reject = bool(getattr(value, "reject", False))
        return (None if reject else _strip(getattr(value, "answer", "")), tuple(getattr(value, "passages", ())), reject)
    if task in ("cf_judge", "cf_probability"):
        v = value[0] if isinstance(value, tuple) else value
        return round(v, 2) if isinstance(v, float) else v
    if task == "soft_bias":
        return tuple(round(x, 2) for x in value) if value else value
    if task == "reflect":
        return tuple(value[1]) if isinstance(value, tuple) else value
    if task in ("sub_queries", "multi_answer"):
        return tuple(value or ())
    if task == "consolidate":
        groups = getattr(result, "groups", getattr(value, "groups", None))   # a Consolidation is a Parsed of groups
        if groups is None:
            return value
        return (tuple((tuple(g.documents), g.stated_source) for g in groups),
                bool(getattr(result, "conflict", getattr(value, "conflict", False))))
    if task == "consolidate_answer":
        return tuple(getattr(value, "answers", value) or ())
    if task in ("closed_book", "keyword_answer"):
        return _idk_none(value)
    if task == "ping":
        return str(value or "").strip(" .!*").lower()
    return value


def _prose(text: str | None) -> str:
    """Running text as compared: spacing, Unicode compatibility forms (NFKC), zero-width characters, typographic
    quotes and a final full stop do not count."""
    flat = unicodedata.normalize("NFKC", str(text or "")).translate(_INVISIBLE)
    return " ".join(flat.split()).rstrip(". ")


_INVISIBLE = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "\u200b": None, "\u200c": None, "\u200d": None,
                            "\ufeff": None})


def _strip(text: str | None) -> str:
    return (text or "").strip()


def _idk_none(answer: str | None) -> str | None:
    from backend.answers import is_idk

    return None if answer is None or is_idk(answer) else answer


def status_of(result: Any) -> str:
    """exact | lenient | unreadable for any reader's result (older readers: inferred from what they return)."""
    status = getattr(result, "status", None)
    if status in ("exact", "lenient", "unreadable"):
        return status
    how = getattr(result, "how", None) or getattr(result, "parse", None)   # Astute's FinalAnswer / Consolidation
    if how is not None:
        return {"tag": "exact", "structured": "exact", "failed": "unreadable"}.get(how, "lenient")
    if isinstance(result, tuple) and len(result) == 2 and (result[1] is None or isinstance(result[1], str)):
        note = result[1] or ""
        return "exact" if not note else "unreadable" if note.startswith("no ") else "lenient"
    return "exact"   # RC-RAG's CFReply says nothing of how it read


# ------------------------------------------------------------------------------------------------ recording

@contextmanager
def recording(calls: list[tuple[Any, dict]], dressed: dict[int, tuple[str, tuple[str, ...]]]):
    """Record every call with its fields (for the reader) and every chatty dress with its plain reply and styles,
    keyed by the request's seed."""
    from backend.llm import chatty
    from backend.llm.client import LLMClient

    acomplete, complete, dress = LLMClient.acomplete, LLMClient.complete, chatty.dress

    async def arecord(self, messages, *, task, step, question, fields=None, **kw):
        call = await acomplete(self, messages, task=task, step=step, question=question, fields=fields, **kw)
        calls.append((call, {"question": question, **(fields or {})}))
        return call

    def record(self, messages, *, task, step, question, fields=None, **kw):
        call = complete(self, messages, task=task, step=step, question=question, fields=fields, **kw)
        calls.append((call, {"question": question, **(fields or {})}))
        return call

    def record_dress(reply, messages, fields):
        seed = chatty.request_seed(messages, fields.get("task"))
        out = chatty.render(reply, fields, seed)
        dressed[seed] = (reply, out.styles)
        return out.text

    LLMClient.acomplete, LLMClient.complete, chatty.dress = arecord, record, record_dress
    try:
        yield
    finally:
        LLMClient.acomplete, LLMClient.complete, chatty.dress = acomplete, complete, dress


# ----------------------------------------------------------------------------------------------------- runs

def run_voice(dataset, questions, methods: list[str], model: str, cache) -> tuple[dict, list, dict]:
    """{(method, question id): answers (None on error)}, the calls with their fields, the dresses."""
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    runner = Runner(dataset, llm=LLMConfig(model=model, cache_mode="live"), cache=cache)
    answers: dict[tuple[str, str], list[str] | None] = {}
    calls: list[tuple[Any, dict]] = []
    dressed: dict[int, tuple[str, tuple[str, ...]]] = {}
    t0 = time.perf_counter()
    with recording(calls, dressed):
        runner.prepare_all(methods)
        for i, q in enumerate(questions, start=1):
            for name, r in runner.run(q, methods).items():
                answers[(name, q.id)] = None if r.error else list(r.answers)
            if i % 20 == 0:
                print(f"  {model} {dataset.name}: {i}/{len(questions)} questions, {time.perf_counter() - t0:.0f} s",
                      file=sys.stderr)
    return answers, calls, dressed


def read_calls(calls: list[tuple[Any, dict]], dressed: dict) -> list[dict]:
    """Per call: method, task, status, misread (dressed read != plain read), styles, reply."""
    from backend.llm.chatty import request_seed
    from backend.llm.tasks import TASKS

    rows = []
    for call, fields in calls:
        if call.error or call.response is None:
            rows.append({"method": call.method, "task": call.task, "status": "error", "misread": False,
                         "styles": (), "reply": call.error})
            continue
        reader = TASKS[call.task].reader
        read = reader(call.response, **fields)
        recorded = getattr(call, "read_status", None)
        status = recorded if recorded in ("exact", "lenient", "unreadable") else status_of(read)
        plain, styles = dressed.get(request_seed(call.messages, call.task), (call.response, ("plain",)))
        misread = plain != call.response and content(call.task, read) != content(call.task, reader(plain, **fields))
        rows.append({"method": call.method, "task": call.task, "status": status, "misread": misread,
                     "styles": styles, "reply": call.response, "plain": plain})
    return rows


def pct(n: int, d: int) -> float:
    return round(100.0 * n / d, 1) if d else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="first N questions of each dataset only")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--methods", default="all")
    ap.add_argument("--cache-dir", default=None, help="default: a new temporary folder")
    ap.add_argument("--examples", type=int, default=2, help="example replies per failing dress style")
    args = ap.parse_args(argv)

    if args.cache_dir is None:
        args.cache_dir = tempfile.mkdtemp(prefix="conflictlens-chatty-")
    os.environ["CONFLICTLENS_CACHE_DIR"] = args.cache_dir   # the call cache, the index and prepared artefacts

    from backend.data import load_dataset
    from backend.llm.client import default_cache
    from backend.methods import resolve
    from backend.paths import SAMPLE_DATA

    methods = resolve(args.methods)
    cache = default_cache(args.cache_dir)
    table, failing = [], defaultdict(list)
    totals = Counter()
    t0 = time.perf_counter()
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        ds = load_dataset(SAMPLE_DATA / name)
        questions = ds.questions[: args.limit] if args.limit else ds.questions
        plain, plain_calls, _ = run_voice(ds, questions, methods, PLAIN, cache)
        chatty, chatty_calls, dressed = run_voice(ds, questions, methods, CHATTY, cache)
        plain_rows, chatty_rows = read_calls(plain_calls, {}), read_calls(chatty_calls, dressed)
        for m in methods:
            pairs = [k for k in plain if k[0] == m]
            same = sum(plain[k] is not None and plain[k] == chatty.get(k) for k in pairs)
            rows = [r for r in chatty_rows if r["method"] == m]
            bad = [r for r in rows if r["status"] == "unreadable"]
            wrong = [r for r in rows if r["misread"]]
            plain_bad = sum(r["status"] == "unreadable" for r in plain_rows if r["method"] == m)
            table.append({"dataset": ds.name, "method": m, "pairs": len(pairs), "identical_pct": pct(same, len(pairs)),
                          "calls": len(rows), "unreadable_pct": pct(len(bad), len(rows)),
                          "misread_pct": pct(len(wrong), len(rows)),
                          "plain_unreadable_pct": pct(plain_bad, sum(r["method"] == m for r in plain_rows))})
            totals.update(pairs=len(pairs), same=same, calls=len(rows), unreadable=len(bad), misread=len(wrong))
            for r in bad + [w for w in wrong if w["status"] != "unreadable"]:
                for style in r["styles"] or ("plain",):
                    failing[(r["task"], style)].append(r)

    print(f"\nchatty vs plain offline voice: {', '.join(methods)}; {time.perf_counter() - t0:.0f} s; "
          f"cache {args.cache_dir}")
    print(f"{'dataset':13}{'method':16}{'pairs':>7}{'identical %':>13}{'calls':>8}{'unreadable %':>14}"
          f"{'misread %':>11}{'plain unreadable %':>20}")
    for row in table:
        print(f"{row['dataset']:13}{row['method']:16}{row['pairs']:>7}{row['identical_pct']:>13}{row['calls']:>8}"
              f"{row['unreadable_pct']:>14}{row['misread_pct']:>11}{row['plain_unreadable_pct']:>20}")
    overall = {"pairs": totals["pairs"], "identical_pct": pct(totals["same"], totals["pairs"]),
               "calls": totals["calls"], "unreadable_pct": pct(totals["unreadable"], totals["calls"]),
               "misread_pct": pct(totals["misread"], totals["calls"])}
    print(f"{'all':13}{'':16}{overall['pairs']:>7}{overall['identical_pct']:>13}{overall['calls']:>8}"
          f"{overall['unreadable_pct']:>14}{overall['misread_pct']:>11}")
    met = overall["identical_pct"] >= TARGET_IDENTICAL and overall["unreadable_pct"] <= TARGET_UNREADABLE
    print(f"targets (>= {TARGET_IDENTICAL} % identical, <= {TARGET_UNREADABLE} % unreadable): "
          f"{'met' if met else 'NOT met'}")

    gaps = []
    if failing:
        print("\ndress styles behind unreadable or misread chatty calls (task, style: calls unreadable / misread)")
        for (task, style), rows in sorted(failing.items(), key=lambda kv: -len(kv[1])):
            n_bad = sum(r["status"] == "unreadable" for r in rows)
            print(f"  {task:20} {style:34} {n_bad:>5} / {sum(r['misread'] for r in rows):>5}")
            gaps.append({"task": task, "style": style, "unreadable": n_bad, "misread": sum(r["misread"] for r in rows)})
            for r in rows[: args.examples]:
                print("      " + json.dumps(r["reply"][:300], ensure_ascii=False)
                      + ("   <- plain: " + json.dumps(r["plain"][:120], ensure_ascii=False) if r["misread"] else ""))
    print(json.dumps({"methods": methods, "limit": args.limit, "rows": table, "overall": overall, "gaps": gaps}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
