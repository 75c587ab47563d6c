"""MADAM-RAG: multi-agent debate for ambiguity and misinformation in RAG.

Paper: Wang, Prasad, Stengel-Eskin, Bansal, *Retrieval-Augmented Generation with Conflicting Evidence*
(arXiv 2504.13079). Implements the paper's §4 (agents, aggregator, multi-round debate, early stop) with
the App. E prompts; spec: docs/methods/madam.md (§3 loop, §4 prompts, §8 choices; every §3.x and §8.x below is
that file's section, §4 and App. E the paper's). [C] below is
the released code (HanNight/RAMDocs ``run_madam_rag.py``).

Steps, in the paper's order, each appending to the ``MadamTrace``:
``debate_round`` (one agent per document, all agents of a round concurrently) -> ``aggregate`` (one call
over the round's responses) -> ``check_convergence`` (from round 2) -> ``finalize`` (final answers, the
agents/documents behind each, the rejected answers).

Choices the paper leaves open ([ours]):
* ``history_mode`` (§8.1): "other_agents" (default; [C] and the App. E prompt: the other agents' raw
  round t-1 responses as ``Agent k: ...`` lines; an agent never sees its own answer nor the aggregator),
  "aggregator" (§4's text: the aggregator's round t-1 summary as one ``Aggregator: All Correct Answers:
  [...]. Explanation: ...`` line) or "both". Not offered: showing an agent its own previous answer.
* Scheduling: in "other_agents" mode round t+1 does not need round t's aggregation, so that call runs
  concurrently with round t+1's agents; the other modes wait for it. ``parents`` record only real
  inputs: an agent's call lists the calls in its history, an aggregation the round's agent calls.
* Shuffle (§8.3): [P] shuffles the responses for the aggregator, [C] does not. Default ``shuffle=True``
  (the paper's method); the order comes from ``sha256(f"{seed}|{question}|{round}")`` (never the salted
  ``hash()``), agents keep their stable label ``Agent k`` (k = document position) so the aggregator's
  references stay traceable, and the permutation is stored. ``shuffle=False`` reproduces [C].
* Stop rule (§3.5, §8.4): [C]'s test (normalised answers, substring containment either way; answers
  only, not explanations), except that an unknown/unparsed answer is unchanged only if the previous one
  was unknown too. Never tested after round 1. On convergence at round t the round-(t-1) aggregation is
  final and round t is not aggregated ([C], saves a call; the trace says so);
  ``aggregate_converged_round=True`` aggregates round t and uses that instead (§8.5).
* Prompts: [C]'s two agent templates (round 1 "based only on this document"; later rounds with the
  history block) in the paper's App. E wording, and the App. E aggregator prompt with its Michael Jordan
  example; one user message, no system prompt ([C]). ``max_tokens=128`` as [C] (§8.9).
* Parsing never raises (``formats.parse_agent_response`` / ``parse_all_correct_answers``); each fallback
  is kept on the turn and listed in ``trace.notes``. A lone agent (one document) still debates; its
  history is empty and the prompt says so. No documents: unknown, no calls (§8.12).
* Two readings (``backend.methods.reading``; decided by ``ctx.readings``): every agent's answer, every
  aggregation's answers and every stop test (from round 2, with ``early_stop``) is read both ways. ``tolerant``:
  the readers above and our stop test (``same_answer``). ``paper``: [C]'s answer slicing, ``released_slice``
  (``response[find("Answer: ") + 8 : find("Explanation")].strip()``: "3,559." from "Answer: 3,559. Explanation:
  …"; the first 7 characters cut when "Answer: " is missing, the last one when "Explanation" is), and [C]'s stop
  test on those slices, ``released_unchanged`` (SQuAD-normalised, containment either way, so an empty slice is
  unchanged against anything). The stop round is the run's reading's: the debate stops when that reading's test
  passes. [ours] in the paper reading: (a) an agent's answer as the trace keeps it is the slice without a trailing
  full stop, and an unknown ("Unknown.") is None, as in the tolerant reading (the stop test compares the slices
  verbatim, and normalising removes the stop anyway); its explanation is [C]'s slice after "Explanation: ";
  (b) [C] keeps the aggregation as text and has no reader for it, so the paper reading slices it the same way:
  the text between "All Correct Answers: " and "Explanation" (no label as asked, case and colon included: no
  answer), read as a JSON list when it is one (after a trailing full stop) and else as one answer; unknowns
  dropped (``read_aggregation_paper``); (c) a structured reply (the call asked for the task's JSON schema instead
  of the paper's format) is read from the schema's fields; (d) the stop test is a decision only with
  ``early_stop``; without it the changed marks follow the run's reading and nothing is recorded; (e) a
  difference is recorded where it happens: the rounds the other reading's stop would have run, or not, are not
  simulated.
* Support and rejection use ``answers.contains_match`` (containment without the token-F1 rule, so
  "3,559 people" never supports "10,000 people"): an answer is supported by the last round's agents
  whose answer matches it; every answer any agent proposed in any round that matches no final answer is
  listed as rejected with its agents and rounds.
* A failed model call fails the run (``MethodResult.error``), as for every method.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import string

from pydantic import BaseModel, Field

from backend.answers import IDK, cluster, contains_match, is_idk, normalize
from backend.llm.formats import (Parsed, exact, lenient, parse_agent_response, parse_all_correct_answers, schema_object,
                                 unreadable)
from backend.methods.base import Method, Outcome, RunContext, gather_all, passages_field
from backend.methods.reading import Readings
from backend.methods.estimate import CallEstimate, Sizes
from backend.schema import (Document, MadamAgent, MadamAggregation, MadamAnswerSupport, MadamRound, MadamTrace,
                            MadamTurn, Question)
from backend.llm.tasks import TaskSpec
from backend.methods.madam_story import madam_story
from backend.methods.spec import MethodSpec, register

HISTORY_MODES = ("other_agents", "aggregator", "both")

_AGENT_HEAD = """You are an agent reading a document to answer a question.

Question: {question}

Document: {document}

"""
_FORMAT = "Please follow the format: 'Answer: {{}}. Explanation: {{}}.'"  # braces kept by str.format
#: Round 1 ([C]'s first template): the document only.
AGENT_PROMPT_FIRST = (_AGENT_HEAD + "Answer the question based only on this document. Provide your answer and a "
                      "step-by-step reasoning explanation.\n\n" + _FORMAT)
#: Rounds >= 2: the document plus the history (App. E; [C]'s second template).
AGENT_PROMPT_LATER = (_AGENT_HEAD + "The following responses are from other agents as additional information.\n"
                      "{history}\n\nAnswer the question based on the document and other agents' responses. "
                      "Provide your answer and a step-by-step reasoning explanation.\n\n"
                      + _FORMAT)
NO_OTHER_AGENTS = "(none: you are the only agent)"

AGGREGATOR_PROMPT = """You are an aggregator reading answers from multiple agents.

If there are multiple answers, please provide all possible correct answers and also provide a step-by-step reasoning explanation. If there is no correct answer, please reply 'unknown'.

Please follow the format: "All Correct Answers: []. Explanation: {{}}."

The following are examples:

Question: In which year was Michael Jordan born?

Agent responses:

Agent 1: Answer: 1963. Explanation: The document clearly states that Michael Jeffrey Jordan was born on February 17, 1963.

Agent 2: Answer: 1956. Explanation: The document states that Michael Irwin Jordan was born on February 25, 1956. However, it's important to note that this document seems to be about a different Michael Jordan, who is an American scientist, not a basketball player. The other agents' responses do not align with the information provided in the document.

Agent 3: Answer: 1998. Explanation: According to the document provided, Michael Jeffrey Jordan was born on February 17, 1998.

Agent 4: Answer: Unknown. Explanation: The provided document focuses on Jordan's college and early professional career, mentioning his college championship in 1982 and his entry into the NBA in 1984, but it does not include information about his birth year.

All Correct Answers: ["1963", "1956"]. Explanation: Agent 1 is talking about the basketball player Michael Jeffrey Jordan, who was born on February 17, 1963, so 1963 is correct. Agent 2 is talking about another person named Michael Jordan, who is an American scientist, and he was born in 1956. Therefore, the answer 1956 from Agent 2 is also correct. Agent 3 provides an error stating Michael Jordan's birth year as 1998, which is incorrect. Based on the correct information from Agent 1, Michael Jeffrey Jordan was born on February 17, 1963. Agent 4 does not provide any useful information.

Question: {question}

Agent responses:
{responses}"""


def agent_prompt(question: str, document: str, history: str | None) -> list[dict[str, str]]:
    if history is None:
        text = AGENT_PROMPT_FIRST.format(question=question, document=document)
    else:
        text = AGENT_PROMPT_LATER.format(question=question, document=document, history=history or NO_OTHER_AGENTS)
    return [{"role": "user", "content": text}]


def aggregator_prompt(question: str, responses: list[str]) -> list[dict[str, str]]:
    return [{"role": "user", "content": AGGREGATOR_PROMPT.format(question=question, responses="\n".join(responses))}]


def response_line(agent: int, raw: str) -> str:
    return f"Agent {agent}: {raw}"


def aggregator_line(agg: MadamAggregation) -> str:
    """The aggregator's summary as a history line, in the format it was asked for (§8.1)."""
    return (f"Aggregator: All Correct Answers: {json.dumps(agg.answers, ensure_ascii=False)}. "
            f"Explanation: {agg.explanation}")


def shuffled_order(n: int, question: str, round_: int, seed: int, shuffle: bool) -> list[int]:
    """Agent numbers in the order the aggregator reads them (reproducible across processes)."""
    order = list(range(1, n + 1))
    if shuffle:
        digest = hashlib.sha256(f"{seed}|{question}|{round_}".encode()).hexdigest()
        random.Random(int(digest, 16)).shuffle(order)
    return order


def same_answer(previous: str | None, new: str | None) -> bool:
    """The stop test for one agent (see the module docstring)."""
    a, b = normalize(previous or ""), normalize(new or "")
    if not a or not b:
        return not a and not b
    return a in b or b in a


# -- the released code's rules ([C] ``run_madam_rag.py``): the paper reading ----------------------------------

ANSWER_LABEL = "Answer: "
AGGREGATION_LABEL = "All Correct Answers: "


def released_slice(response: str, label: str = ANSWER_LABEL) -> str:
    """[C]'s answer slicing, the released code's rule (docs/methods/madam.md §3.5; spec §3.5 "Answer extraction in
    [C]"; ``multi_agent_debate``): ``response[response.find("Answer: ") + len("Answer: "):response.find("Explanation")]
    .strip()``, verbatim: "3,559." from "Answer: 3,559. Explanation: …". Python's ``find`` gives -1 for a missing
    label, so without "Answer: " the slice starts at character 7 (``len(label) - 1``), without "Explanation" it
    loses the reply's last character, and an "Explanation" before the label gives "". Case-sensitive: "**Answer:**"
    and "answer:" are not the label, "explanation" is not the end. The one definition: the paper reading of the
    agents' answers and (with ``AGGREGATION_LABEL``, ``read_aggregation_paper``) of the aggregations uses it."""
    return response[response.find(label) + len(label):response.find("Explanation")].strip()


def released_explanation(response: str) -> str:
    """[C]'s explanation: ``response[response.find("Explanation: ") + len("Explanation: "):]`` (the released code's
    rule; without the label, the reply from character 12)."""
    return response[response.find("Explanation: ") + len("Explanation: "):]


def released_normalize(text: str) -> str:
    """[C]'s ``normalize_answer`` (SQuAD's), the released code's rule: lower case, ASCII punctuation
    (``string.punctuation``) removed, articles a/an/the removed, whitespace collapsed. Unlike
    ``answers.normalize`` it keeps curly quotes and dashes."""
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def released_unchanged(previous: str, new: str) -> bool:
    """[C]'s stop test for one agent, the released code's rule (docs/methods/madam.md §3.5; spec §3.5): unchanged
    when either normalised answer slice contains the other (a Python substring test). An empty slice is contained
    in every slice, so it is always unchanged (our ``same_answer`` differs there)."""
    a, b = released_normalize(new), released_normalize(previous)
    return a in b or b in a


def paper_slice(raw: str, structured: bool = False) -> str:
    """What the paper reading's stop test compares for one reply: ``released_slice`` (a structured reply: the
    schema's "answer" field)."""
    if structured:
        return str((schema_object(raw) or {}).get("answer") or "").strip()
    return released_slice(raw)


def _without_full_stop(text: str) -> str:
    text = text.strip()
    return text[:-1].rstrip() if text.endswith(".") else text


def _as_answer(text: str) -> str | None:
    """A slice as the trace keeps an answer [ours]: without a trailing full stop; an unknown is None."""
    text = _without_full_stop(text)
    return None if is_idk(text) else text


def read_agent_response_paper(raw: str, structured: bool = False) -> Parsed[tuple[str | None, str]]:
    """An agent's (answer, explanation) as the paper reading reads it: ``released_slice`` and
    ``released_explanation`` (the released code's rule), the answer kept as ``_as_answer`` ([ours]: no trailing
    full stop, an unknown is None). Exact: "Answer: " then "Explanation: " as the prompt writes them; otherwise the
    slice is what it is (lenient, noted), or nothing (unreadable: unknown). ``structured``: the schema's "answer"
    and "explanation" fields."""
    if structured:
        obj = schema_object(raw) or {}
        answer = _as_answer(str(obj.get("answer") or ""))
        read = (answer, str(obj.get("explanation") or ""))
        return exact(read) if answer or "answer" in obj else unreadable(read, "no 'answer' field in the JSON reply; "
                                                                              "the method used its default: unknown")
    sliced, explanation = released_slice(raw), released_explanation(raw).strip()
    answer = _as_answer(sliced)
    start, end = raw.find(ANSWER_LABEL), raw.find("Explanation: ")
    if 0 <= start < end:
        return exact((answer, explanation))
    if not answer:
        return unreadable((None, explanation), f"the released code's slice of the reply is {sliced!r}; the method "
                                               "used its default: unknown")
    return lenient((answer, explanation), f"not 'Answer: X. Explanation: Y': the released code's slice is {sliced!r}")


def read_aggregation_paper(raw: str, structured: bool = False) -> Parsed[tuple[list[str], str]]:
    """The aggregator's (answers, explanation) as the paper reading reads it. [C] keeps the aggregation as text and
    has no reader for it; [ours]: the released code's slicing (``released_slice``) with the label the prompt asks for,
    ``All Correct Answers: ``: the text from it to the first "Explanation", read as a JSON list when it is one (a
    trailing full stop dropped: ``["1963", "1956"].``), else as one answer; "unknown" / "[]" / "None" and unknown
    items are no answer. No label as asked (case, colon and space included): no answer. The explanation is
    ``released_explanation``. ``structured``: the schema's "all_correct_answers" and "explanation" fields."""
    if structured:
        obj = schema_object(raw) or {}
        listed = obj.get("all_correct_answers")
        items = [str(a).strip() for a in listed] if isinstance(listed, list) else []
        read = ([a for a in items if not is_idk(a)], str(obj.get("explanation") or ""))
        return exact(read) if isinstance(listed, list) else unreadable(
            read, "no 'all_correct_answers' list in the JSON reply; the method used its default: no answer (unknown)")
    if AGGREGATION_LABEL not in raw:
        return unreadable(([], raw), f"no {AGGREGATION_LABEL.strip()!r} label as the prompt writes it; the method "
                                     "used its default: no answer (unknown)")
    sliced = released_slice(raw, AGGREGATION_LABEL)
    body = _without_full_stop(sliced)
    explanation = released_explanation(raw).strip() if "Explanation: " in raw else ""
    try:
        listed = json.loads(body)
    except (ValueError, RecursionError):
        listed = None
    if isinstance(listed, list):
        answers = [str(a).strip() for a in listed if not isinstance(a, (list, dict))]
        return exact(([a for a in answers if not is_idk(a)], explanation))
    answers = [] if is_idk(body) else [body]
    return lenient((answers, explanation), f"the text after {AGGREGATION_LABEL.strip()!r} is not a JSON list: "
                                           f"{body!r} read as {'no answer' if not answers else 'one answer'}")


def _answer_key(answer: str | None) -> str:
    return normalize(answer or "")


def _quoted(answer: str) -> str:
    """An agent's answer as a difference shows it: quoted, so a slice's own punctuation shows ("3,559." against
    "3,559"), on one line."""
    return f"“{' '.join(answer.split())}”"


def parse_turn(agent: int, round_: int, raw: str, history: str | None, call_id: str | None,
               readings: Readings | None = None, structured: bool = False) -> MadamTurn:
    """One agent's turn, its answer read both ways when ``readings`` is given (the run's reading's kept, a
    difference recorded), else by the tolerant reader alone (a released trace, a test)."""
    parsed = parse_agent_response(raw)
    if readings is not None:
        parsed = readings.decide(f"debate_round_{round_}", parsed, read_agent_response_paper(raw, structured),
                                 call_id=call_id, key=lambda p: _answer_key(p.value[0]),
                                 show=lambda p: _quoted(p.value[0]) if p.value[0] else "unknown",
                                 what=f"agent {agent}'s answer")
    answer, explanation = parsed.value
    return MadamTurn(agent=agent, round=round_, raw=raw, answer=answer, explanation=explanation,
                     parse_ok=parsed.ok, parse_note=parsed.note, history=history, call_id=call_id,
                     released_answer=paper_slice(raw, structured))


def parse_aggregation(round_: int, order: list[int], raw: str, call_id: str | None,
                      readings: Readings | None = None, structured: bool = False) -> MadamAggregation:
    """One aggregation, its answers read both ways when ``readings`` is given (compared as normalised sets)."""
    parsed = parse_all_correct_answers(raw)
    if readings is not None:
        parsed = readings.decide(f"aggregate_round_{round_}", parsed, read_aggregation_paper(raw, structured),
                                 call_id=call_id, key=lambda p: tuple(sorted({normalize(a) for a in p.value[0]})),
                                 show=lambda p: "; ".join(p.value[0]) if p.value[0] else "no answer (unknown)",
                                 what="the aggregator's answers")
    answers, explanation = parsed.value
    return MadamAggregation(round=round_, order=order, raw=raw, answers=answers, explanation=explanation,
                            parse_ok=parsed.ok, parse_note=parsed.note, call_id=call_id)


def _stop_shown(changed: tuple[tuple[int, bool], ...]) -> str:
    moved = [str(agent) for agent, c in changed if c]
    return "stop: no agent changed its answer" if not moved else f"go on: agent(s) {', '.join(moved)} changed"


def check_convergence(current: MadamRound, previous: MadamRound, readings: Readings | None = None,
                      decide: bool = True) -> bool:
    """Mark each agent's change against the previous round; True when no agent changed (§3.5).

    Without ``readings``: our test (``same_answer``) on the turns' answers. With ``readings``: both readings' tests,
    each on its own reading of the replies (tolerant: ``same_answer`` on ``parse_agent_response``'s answers; paper:
    ``released_unchanged`` on the turns' ``released_answer`` slices), the run's reading's marks kept; ``decide``:
    the stop is a decision (``readings.decide``: counted, a difference recorded), else only the marks."""
    before = {t.agent: t for t in previous.turns}
    if readings is None:
        changed = tuple((t.agent, not same_answer(before[t.agent].answer if t.agent in before else None, t.answer))
                        for t in current.turns)
    else:
        def tolerant_answer(turn: MadamTurn | None) -> str | None:
            return parse_agent_response(turn.raw).value[0] if turn is not None else None

        tolerant = tuple((t.agent, not same_answer(tolerant_answer(before.get(t.agent)), tolerant_answer(t)))
                         for t in current.turns)
        paper = tuple((t.agent, not released_unchanged(
            (before[t.agent].released_answer or "") if t.agent in before else "", t.released_answer or ""))
            for t in current.turns)
        if decide:
            changed = readings.decide(f"debate_round_{current.round}", tolerant, paper,
                                      key=lambda v: not any(c for _, c in v), show=_stop_shown,
                                      what=f"stop the debate at round {current.round} (no agent changed its answer)")
        else:
            changed = tolerant if readings.reading == "tolerant" else paper
    marks = dict(changed)
    for turn in current.turns:
        turn.previous_answer = before[turn.agent].answer if turn.agent in before else None
        turn.changed = marks[turn.agent]
    current.n_changed = sum(bool(t.changed) for t in current.turns)
    current.converged = current.n_changed == 0
    return current.converged


def _support(answer: str, turns: list[MadamTurn], docs: dict[int, str]) -> MadamAnswerSupport:
    agents = sorted({t.agent for t in turns if t.answer and contains_match(t.answer, answer)})
    return MadamAnswerSupport(answer=answer, agents=agents, documents=[docs[a] for a in agents])


def _rejected(trace: MadamTrace, docs: dict[int, str]) -> list[MadamAnswerSupport]:
    """Answers some agent proposed in some round that match no final answer, grouped by ``cluster``."""
    proposed = [t for r in trace.rounds for t in r.turns if t.answer
                and not any(contains_match(t.answer, a) for a in trace.final_answers)]
    out = []
    for members in cluster([t.answer for t in proposed]):
        turns = [proposed[i] for i in members]
        agents = sorted({t.agent for t in turns})
        out.append(MadamAnswerSupport(answer=turns[0].answer, agents=agents, documents=[docs[a] for a in agents],
                                      rounds=sorted({t.round for t in turns})))
    return out


def finalize(trace: MadamTrace) -> None:
    """Pick the final aggregation (and say why), then attribute the answers (§3.2 step 5)."""
    if not trace.rounds:
        trace.final_note = "No documents: there is nothing to debate, so the answer is unknown (§8.12)."
        return
    last = trace.rounds[-1]
    t = last.round
    final = last.aggregation
    if trace.stop_reason == "converged" and final is None:
        final = trace.rounds[-2].aggregation
        last.no_aggregation_reason = (f"converged: no agent changed its answer, so round {t} was not "
                                      f"aggregated; round {t - 1}'s aggregation is final")
        trace.final_note = (f"Converged at round {t}: every agent kept its round-{t - 1} answer, so round "
                            f"{t - 1}'s aggregation (over the same answers) is final and round {t} was not "
                            "aggregated (released code's behaviour).")
    elif trace.stop_reason == "converged":
        trace.final_note = (f"Converged at round {t}: every agent kept its round-{t - 1} answer; round {t} "
                            "was aggregated too (aggregate_converged_round) and its aggregation is final.")
    else:
        trace.final_note = f"Ran all {trace.max_rounds} rounds; round {t}'s aggregation is final."
    trace.final_round = final.round if final else None
    trace.final_answers = list(final.answers) if final else []
    trace.final_explanation = final.explanation if final else ""
    attribute_answers(trace)


def attribute_answers(trace: MadamTrace) -> None:
    """The agents/documents behind each final answer, the rejected answers, and the parse notes."""
    docs = {a.number: a.document_id for a in trace.agents}
    trace.support = [_support(a, trace.rounds[-1].turns, docs) for a in trace.final_answers]
    trace.rejected = _rejected(trace, docs)
    trace.notes = [f"round {r.round}, agent {turn.agent}: {turn.parse_note}"
                   for r in trace.rounds for turn in r.turns if turn.parse_note]
    trace.notes += [f"round {r.round}, aggregator: {r.aggregation.parse_note}"
                    for r in trace.rounds if r.aggregation and r.aggregation.parse_note]


class MadamRAG(Method):
    """One agent per document (all the same model), up to ``max_rounds`` debate rounds, an aggregation
    per round with the same model, early stop when no agent changes its answer."""

    name = "madam"
    steps = ("debate_round_{round}", "aggregate_round_{round}")

    def __init__(self, max_rounds: int = 3, history_mode: str = "other_agents", shuffle: bool = True,
                 seed: int = 42, early_stop: bool = True, aggregate_converged_round: bool = False,
                 max_tokens: int = 128):
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        if history_mode not in HISTORY_MODES:
            raise ValueError(f"history_mode must be one of {HISTORY_MODES}, got {history_mode!r}")
        self.max_rounds, self.history_mode, self.shuffle, self.seed = max_rounds, history_mode, shuffle, seed
        self.early_stop, self.aggregate_converged_round, self.max_tokens = (early_stop, aggregate_converged_round,
                                                                            max_tokens)

    def _history(self, agent: int, previous: MadamRound) -> tuple[list[str], list[str]]:
        """What an agent reads from round t-1 (lines for the prompt and the task field) and the calls it
        comes from (the agent call's ``parents``)."""
        lines, parents = [], []
        if self.history_mode in ("other_agents", "both"):
            for turn in previous.turns:
                if turn.agent != agent:
                    lines.append(response_line(turn.agent, turn.raw))
                    parents.append(turn.call_id)
        if self.history_mode in ("aggregator", "both") and previous.aggregation is not None:
            lines.append(aggregator_line(previous.aggregation))
            parents.append(previous.aggregation.call_id)
        return lines, [p for p in parents if p]

    async def debate_round(self, ctx: RunContext, question: Question, docs: list[Document], t: int,
                           previous: MadamRound | None) -> MadamRound:
        """Every agent answers from its own document (and, after round 1, the history), concurrently."""

        async def turn(agent: int, doc: Document) -> MadamTurn:
            lines, parents = self._history(agent, previous) if previous else (None, [])
            history = "\n".join(lines) if lines is not None else None
            call = await ctx.client.acomplete(
                agent_prompt(question.question, doc.text, history), task="debate_turn", step=f"debate_round_{t}",
                question=question.question, parents=parents, max_tokens=self.max_tokens,
                fields={"passages": passages_field([doc]), "round": t, "history": lines or []})
            return parse_turn(agent, t, call.response or "", history, call.id, readings=ctx.readings,
                              structured=call.structured)

        turns = await gather_all(*(turn(i, d) for i, d in enumerate(docs, start=1)))
        return MadamRound(round=t, turns=list(turns))

    async def aggregate(self, ctx: RunContext, question: Question, rnd: MadamRound) -> MadamAggregation:
        """One call over the round's responses, in shuffled order; stored on the round."""
        order = shuffled_order(len(rnd.turns), question.question, rnd.round, self.seed, self.shuffle)
        by_agent = {t.agent: t for t in rnd.turns}
        call = await ctx.client.acomplete(
            aggregator_prompt(question.question, [response_line(a, by_agent[a].raw) for a in order]),
            task="aggregate", step=f"aggregate_round_{rnd.round}", question=question.question,
            parents=[by_agent[a].call_id for a in order if by_agent[a].call_id], max_tokens=self.max_tokens,
            fields={"responses": [response_line(a, by_agent[a].raw) for a in order]})
        rnd.aggregation = parse_aggregation(rnd.round, order, call.response or "", call.id, readings=ctx.readings,
                                            structured=call.structured)
        return rnd.aggregation

    async def _run(self, question: Question, ctx: RunContext) -> Outcome:
        docs = ctx.evidence(question)
        trace = MadamTrace(max_rounds=self.max_rounds, history_mode=self.history_mode, shuffle=self.shuffle,
                           seed=self.seed, early_stop=self.early_stop,
                           agents=[MadamAgent(number=i, document_id=d.id) for i, d in enumerate(docs, start=1)])
        if not docs:
            trace.stop_reason = "no_documents"
        else:
            await self._debate(ctx, question, docs, trace)
        finalize(trace)
        return Outcome(trace.final_answers, not trace.final_answers, trace,
                       support={s.answer: list(s.documents) for s in trace.support})

    async def _debate(self, ctx: RunContext, question: Question, docs: list[Document], trace: MadamTrace) -> None:
        pending: dict[int, asyncio.Task] = {}
        overlap = self.history_mode == "other_agents"  # later agents never read the aggregation
        try:
            previous = None
            for t in range(1, self.max_rounds + 1):
                if previous is not None and not overlap:
                    await pending[previous.round]
                rnd = await self.debate_round(ctx, question, docs, t, previous)
                trace.rounds.append(rnd)
                trace.stopped_at = t
                if previous is not None and check_convergence(rnd, previous, ctx.readings,
                                                              decide=self.early_stop) and self.early_stop:
                    trace.stop_reason = "converged"
                    if self.aggregate_converged_round:
                        pending[t] = asyncio.create_task(self.aggregate(ctx, question, rnd))
                    break
                pending[t] = asyncio.create_task(self.aggregate(ctx, question, rnd))
                previous = rnd
            await gather_all(*pending.values())
        finally:
            for task in pending.values():
                if not task.done():
                    task.cancel()
            # let the cancelled aggregations wind down (their calls get recorded) before the result is built;
            # their failures are retrieved here, so a failure is reported once (by the raise above)
            await asyncio.gather(*pending.values(), return_exceptions=True)


# -- what a run will send (MethodSpec.estimate) ----------------------------------------------------------------

#: What an agent's and the aggregator's replies are assumed to look like: the paper's own examples (App. E, quoted in
#: the aggregator prompt), so the assumed lengths come from the paper, not from a guess.
EXAMPLE_TURNS = tuple(re.findall(r"^Agent \d+: (Answer: .+)$", AGGREGATOR_PROMPT, re.M))
EXAMPLE_AGGREGATION = re.search(r"^All Correct Answers: \[.+$", AGGREGATOR_PROMPT, re.M).group(0)


def estimate(method: MadamRAG, question: Question, sizes: Sizes) -> CallEstimate:
    """Round 1: one call per document. Each later round: one call per document whose prompt carries the history —
    in "other_agents" mode the other n − 1 agents' replies, so a round costs n·(n − 1) history lines and the run grows
    with the square of the number of documents. One aggregation per round over the round's n replies. From round 2
    on the debate may stop early (§3.5), so the rounds after 2 and the aggregations from round 2 are conditional."""
    est = CallEstimate(method=method.name)
    docs = sizes.evidence(question)
    n, q = len(docs), question.question
    if not n:
        est.notes.append("no documents: nothing to debate, no calls (§8.12)")
        return est
    turn = sizes.reply(round(sum(sizes.tokens(t) for t in EXAMPLE_TURNS) / len(EXAMPLE_TURNS)), method.max_tokens)
    summary = sizes.reply(sizes.tokens(EXAMPLE_AGGREGATION), method.max_tokens)
    # every agent's reply as the history and the aggregator read it: "Agent k: <reply>"
    lines = sum(sizes.tokens(response_line(k, "")) for k in range(1, n + 1)) + n * turn
    aggregator_line_tokens = sizes.tokens("Aggregator: ") + summary
    history = {"other_agents": (n - 1) * lines, "aggregator": n * aggregator_line_tokens,
               "both": (n - 1) * lines + n * aggregator_line_tokens}[method.history_mode]
    first = n * sizes.messages(agent_prompt(q, "", None)) + sum(docs)
    later = n * sizes.tokens(AGENT_PROMPT_LATER.format(question=q, document="", history="")) + sum(docs) + history
    aggregation = sizes.messages(aggregator_prompt(q, [])) + lines
    for t in range(1, method.max_rounds + 1):
        may_stop = method.early_stop and t >= 3           # the debate can stop at round 2 at the earliest
        unaggregated = method.early_stop and t >= 2 and not method.aggregate_converged_round
        est.add(f"debate_round_{t}", n, first if t == 1 else later, n * turn, conditional=may_stop)
        est.add(f"aggregate_round_{t}", 1, aggregation, summary, conditional=may_stop or unaggregated)
    est.notes.append(f"agent replies ~{turn} tokens and aggregations ~{summary} (the paper's App. E examples); each "
                     f"round after the first carries {n} × {n - 1} history lines")
    if method.early_stop and method.max_rounds > 2:
        est.notes.append(f"an upper bound: the debate stops when no agent changes its answer, at round 2 at the "
                         f"earliest ({2 * n + 1:,} calls)")
    return est


class AgentReply(BaseModel):
    """An agent's turn as a JSON object (structured output, ``backend.llm.structured``)."""

    answer: str = Field(description="the answer in a few words, or \"I don't know\"")
    explanation: str


class AggregateReply(BaseModel):
    """The aggregator's reply as a JSON object (structured output)."""

    all_correct_answers: list[str]
    explanation: str


SPEC = register(MethodSpec(
    MadamRAG, MadamTrace, title="MADAM-RAG", color="#00838f", order=30, estimate=estimate, story=madam_story,
    paper_metric='ramdocs_em',  # its paper's own metric (backend.scoring.PAPER_METRICS)
    description="one agent per document debates over rounds; an aggregator keeps every answer that survives",
    tasks=(TaskSpec("debate_turn", ("passages", "round", "history"), parse_agent_response,
                    "'Answer: X. Explanation: Y' from one document, revised against others' answers",
                    schema=AgentReply, as_schema=lambda r, **_: AgentReply(answer=r[0] or IDK, explanation=r[1])),
           TaskSpec("aggregate", ("responses",), parse_all_correct_answers,
                    "'All Correct Answers: [...]. Explanation: ...' over agents' responses", schema=AggregateReply,
                    as_schema=lambda r, **_: AggregateReply(all_correct_answers=r[0], explanation=r[1]))),
    step_roles={"debate_round_{round}": "agent turn, round {round}",
                "aggregate_round_{round}": "aggregator, round {round}"}))
