"""Realistic chat-model replies, one YAML file per reader, and the generic runner that reads them
(``tests/llm/test_reply_corpus.py``). See ``README.md`` here for the file format."""
