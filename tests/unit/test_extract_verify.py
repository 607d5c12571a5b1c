"""The critic's word lists are data (extract_lexicon_en.json, validated at load) and its
sentences are the pattern splitter's."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from pydantic import ValidationError

from kg.extract.deps_en import LEXICON_FILE, Lexicon, lexicon
from kg.extract.verify import sentence_of


def _raw() -> dict[str, object]:
    text = resources.files("kg.data").joinpath(LEXICON_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def test_critic_lists_load_from_the_lexicon() -> None:
    lex = lexicon()
    assert "drive" in lex.street_words and "state" in lex.place_kinds
    assert lex.cues("negation_cues").search("X did not acquire Y")
    assert lex.cues("hedge_cues").search("is in talks to buy")
    assert lex.cues("forward_cues").search("we expect revenue of $2 billion")
    assert not lex.cues("negation_cues").search("X acquired Y in knots")  # whole words


@pytest.mark.parametrize(
    ("key", "value"),
    [("negation_cues", ["not", "(unclosed"]), ("street_words", ["Drive"]), ("day_words", [])],
)
def test_lexicon_rejects_bad_lists(key: str, value: list[str]) -> None:
    raw = _raw()
    raw[key] = value
    with pytest.raises(ValidationError):
        Lexicon.model_validate(raw)


def test_sentence_of_uses_the_pattern_splitter() -> None:
    text = "Acme Holdings, Inc. makes pumps in Ohio. It sells valves.\nNext line here."
    start = text.index("pumps")
    assert sentence_of(text, start, start + 5).strip() == "Acme Holdings, Inc. makes pumps in Ohio."
    two = sentence_of(text, start, text.index("valves") + 6).strip()
    assert two.startswith("Acme") and two.endswith("sells valves.")
    assert sentence_of(text, text.index("Next"), len(text)).strip() == "Next line here."
