"""The local model's pure parts, without a server: runaway replies, the context rule, weights names and files, the
cache identity, the time-scaled timeout (the real server is tests/real_model)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from backend.llm.local.context import MARK, MIN_CHARS, PromptTooLong, fit
from backend.llm.local.runaway import repetition


def test_a_reply_that_loops_is_found_and_a_long_one_that_does_not_is_not():
    assert repetition("Answer: Paris. The city is big. The city is big. The city is big. The city is b") == \
        "The city is big."
    assert repetition("a " * 30) == "a"
    assert repetition("The answer is Paris because the documents say so and the other documents disagree on "
                      "several points, namely the date and the") is None
    assert repetition("yes yes") is None  # too short to call a loop


def _words(messages):
    return sum(len(m["content"].split()) for m in messages)


def test_a_prompt_that_fits_is_sent_as_it_is():
    messages = [{"role": "user", "content": "Passage: short.\nQuestion: q?"}]
    assert fit(messages, {"passages": [{"text": "short."}]}, context_tokens=512, reply_tokens=16,
               count=lambda m: pytest.fail("a short prompt is never counted")) == (messages, None)


def test_passages_are_cut_to_one_common_length_and_the_question_kept():
    long_a, long_b, short = "alpha " * 300, "beta " * 200, "gamma delta"
    content = f"Passage-0: {long_a}\nPassage-1: {long_b}\nPassage-2: {short}\nQuestion: which one?"
    messages = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": content}]
    fields = {"passages": [{"text": t} for t in (long_a, long_b, short)]}
    cut_messages, cut = fit(messages, fields, context_tokens=300, reply_tokens=50, count=_words)
    sent = cut_messages[1]["content"]
    assert sent.endswith("Question: which one?") and "gamma delta" in sent and cut_messages[0] == messages[0]
    assert sent.count(MARK) == 2 and cut.passages_cut == 2 and _words(cut_messages) <= 300 - 50 - 8
    assert cut.tokens_before == _words(messages) and cut.tokens_after == _words(cut_messages)
    parts = [p.split(": ", 1)[1].split("\n")[0] for p in sent.split("Passage-")[1:3]]
    assert abs(len(parts[0]) - len(parts[1])) <= 12  # water-filling: both cut to (about) the same length
    assert "cut to fit" in cut.note()


def test_a_prompt_that_cannot_fit_is_refused_in_one_line():
    messages = [{"role": "user", "content": "Question: " + "why " * 500}]
    with pytest.raises(PromptTooLong, match="context holds 100"):
        fit(messages, {}, context_tokens=100, reply_tokens=10, count=_words)
    with pytest.raises(PromptTooLong, match="leaves no room"):
        fit(messages, {}, context_tokens=100, reply_tokens=100, count=_words)
    assert MIN_CHARS > 0


def test_weights_names_files_and_identity(tmp_path, monkeypatch):
    from backend.llm.client import LLMConfig
    from backend.llm.local import weights

    with pytest.raises(weights.WeightsError, match="not a local model name"):
        weights.local_name("local/../etc")
    assert weights.name_for(tmp_path / "My Model Q4.gguf") == "my-model-q4"
    (tmp_path / "bad.gguf").write_bytes(b"not a model")
    with pytest.raises(weights.WeightsError, match="not a GGUF"):
        weights.check(tmp_path / "bad.gguf")
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF" + b"\0" * 100)
    monkeypatch.setenv("CONFLICTLENS_MODELS_DIR", str(tmp_path))
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    identity = LLMConfig(model="local/tiny").identity
    assert identity == f"local/tiny#{weights.digest(tmp_path / 'tiny.gguf')}"  # the weights name it, not a port
    assert LLMConfig(model="local/tiny", api_base=None).identity == identity


def test_a_runaway_reply_reaches_the_method_as_no_reply_and_is_flagged():
    from backend.llm.client import LLMClient, LLMConfig

    client = LLMClient(LLMConfig(model="scripted/x", cache_mode="off"))
    looping = "Answer: Sydney. " + "Sydney is big. " * 20
    resp = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=looping), finish_reason="length")],
                           usage=SimpleNamespace(prompt_tokens=10, completion_tokens=64),
                           timings={"prompt_ms": 100.0, "predicted_ms": 900.0, "cache_n": 4})
    reply = client._reply(resp)
    assert reply.response == "" and reply.extra["cut_off"] == looping and reply.extra["server_s"] == 1.0
    call = client._make_call(key="k" * 64, step="answer", task="keyword_answer", messages=[], parents=[],
                             fields={"task": "keyword_answer", "question": "q"}, structured=False, reply=reply,
                             start=0.0, started_at=0.0, hit=False, attempts=1)
    assert call.read_status == "unreadable" and call.read_note.startswith("cut off at max_tokens while repeating")
    assert call.cut_off == looping and call.finish_reason == "length" and call.cached_tokens == 4
    stopped = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=looping), finish_reason="stop")],
                              usage=None)
    assert client._reply(stopped).response == looping  # only a reply cut off by max_tokens is a runaway


def test_a_local_model_caps_each_tasks_reply_and_is_free():
    from backend.llm.pricing import is_free
    from backend.llm.structured import supports_json_schema
    from backend.llm.tasks import TASKS

    assert is_free("local/smollm2") and supports_json_schema("local/smollm2")
    assert TASKS["entailment"].reply_tokens == 16 and TASKS["keyword_answer"].reply_tokens == 64


def test_a_loop_without_spaces_and_a_json_object_cut_off_are_no_answers():
    from backend.llm.client import LLMClient, LLMConfig

    assert repetition('{"passages": ["… approximately 1,' + "000," * 95 + "0") in (",000", "000,")
    assert repetition("1234567890" * 3) is None  # too short to call a loop
    client = LLMClient(LLMConfig(model="scripted/x", cache_mode="off", structured_output=True))
    fragment = '{\n  "answer": "Ahmed Hussen, the minister of immigra'
    resp = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=fragment), finish_reason="length")],
                           usage=None)
    reply = client._reply(resp)
    assert reply.response == "" and reply.extra["cut_off"] == fragment
    assert reply.extra["cut_why"] == "inside the JSON object it was asked for"
    whole = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content='{"answer": "Ahmed Hussen"}'),
                                                     finish_reason="length")], usage=None)
    assert client._reply(whole).response == '{"answer": "Ahmed Hussen"}'  # a whole object is read as it is
