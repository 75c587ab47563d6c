"""Token counts when a provider reports none (the offline model, the scripted model, ``serve-model``).

Its own module so that the providers and the server need nothing from the client: the client imports the
providers (to register them), never the other way round.
"""


def approx_tokens(text: str) -> int:
    """Whitespace token count."""
    return len(text.split())
