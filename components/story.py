"""The question's story (``backend.story``) on a page: a headline and one line per method, above Inspect's columns
and at the top of each method page. Every sentence carries answers and document ids (untrusted), so the whole
sentence goes through ``components.safe.md``; only the bold method name is our own formatting."""

from __future__ import annotations

from collections.abc import Mapping

from backend.methods import SPECS
from backend.schema import MethodResult, Question
from backend.story import Story, story
from components.safe import md


def story_markdown(s: Story, method: str | None = None) -> str:
    """The headline in bold, then one bullet per method (only ``method``'s when given)."""
    lines = [m for m in s.methods if method is None or m.method == method]
    bullets = [f"- **{md(m.title)}** {md(m.sentence[len(m.title):].strip())}" for m in lines]
    return "\n".join([f"**{md(s.headline)}**", "", *bullets])


def render_story(parent, question: Question, results: Mapping[str, MethodResult], show_truth: bool,
                 method: str | None = None) -> Story:
    """Inside ``parent`` (``st`` or a container): the story of ``results``; ``method``: that method's line only."""
    s = story(question, results, show_truth)
    parent.container(border=True, key=f"story-{method or 'all'}").markdown(story_markdown(s, method))
    return s


def render_method_story(parent, selection, name: str, result: MethodResult, show_truth: bool) -> Story:
    """A method page's opening: the headline over every result this session already has for the question (the
    other methods' from Inspect, say; none is run for it), and this method's own line."""
    from components.session.runs import cached_results  # the session's store: imported where a page draws

    results: dict[str, MethodResult] = {}
    for other in SPECS:
        found = result if other == name else (cached_results(selection, [other]) or {}).get(other)
        if found is not None:
            results[other] = found
    return render_story(parent, selection.question, results, show_truth, method=name)
