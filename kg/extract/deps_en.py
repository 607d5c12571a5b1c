"""English relations read off spaCy's dependency parse between two parties of one sentence.

The regex pair rules (``pairs`` in extract_patterns_en.json) need the exact words between
two entities; these rules ask the parse instead, with word lists kept as data
(``kg/data/extract_lexicon_en.json``), so they carry over to sentences worded otherwise:

* kind of organisation: an ORG with an organisation noun in apposition, before it in its
  own noun phrase or as its predicate ("oilfield pump maker Lufkin Industries", "Ernst &
  Young LLP, a registered public accounting firm", "X is a biotechnology company")
  -> ORG BELONGS_TO the noun phrase (an industry);
* products: an ORG (or a proper-noun subject the NER left untagged) subject of a
  make/sell/launch verb -> ORG PRODUCES each object noun phrase (not negated, not under a
  modal or a condition, not a generic word such as "services", no corporate act such as
  "equity offering");
* employment: a PERSON and an ORG joined by a short dependency path through job titles
  and employment verbs only ("Mrs. Whitley served as the Finance Director of Global
  Energy Development PLC") -> PERSON EXECUTIVE_OF ORG;
* sites, subsidiaries, sellers ("the acquisition of X from Y" -> Y INVOLVED_IN X).

The lexicon also holds the words the critic (``verify.py``) checks English sentence
triples with: ``metric_kinds``, ``demonyms``, ``headline_words``, ``generic_rule_words``.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from kg.extract.relclf import span_name
from kg.extract.types import Candidate, Component

LEXICON_FILE = "extract_lexicon_en.json"
MAX_WORDS = 5
MAX_PATH = 5
EMPLOY_VERBS = frozenset(
    {"worked", "works", "work", "working", "served", "serves", "serve", "employed"}
)
NEAR = 8  # an organisation noun this many tokens from the name at most
NOT_EMPLOYERS = re.compile(r"^(?:the\s+)?(?:board|committee|council|audit|compensation)\b", re.I)
MODALS = {"may", "might", "could", "would", "should", "can"}
NEG = {"not", "never", "no", "n't"}
CONDITIONS = {"if", "unless", "whether"}
CONDITION_OPENER = re.compile(
    r"\W*(?:to the extent|in the event|if|unless|assuming|should)\b", re.I
)


# lists of regex alternatives (compiled at load) and lists kept as written (not lower case)
REGEX_LISTS = (
    "negation_cues", "hedge_cues", "forward_cues", "own_verbs", "hurt_verbs", "change_verbs",
    "change_nouns", "auxiliaries", "cross_reference_cues",
)  # fmt: skip
CASED_LISTS = frozenset({"corporate_suffixes"})


class DepLexicon(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: str
    description: str = ""
    org_nouns: frozenset[str]
    drop_modifiers: frozenset[str]
    produce_verbs: frozenset[str]
    role_nouns: frozenset[str]
    path_words: frozenset[str]
    generic_objects: frozenset[str]
    abstract_objects: frozenset[str]
    facility_nouns: frozenset[str]
    not_parties: frozenset[str]
    stop_verbs: frozenset[str]
    subsidiary_nouns: frozenset[str]
    metric_kinds: frozenset[str]
    demonyms: frozenset[str]
    headline_words: frozenset[str]
    generic_rule_words: frozenset[str]
    # the critic's lists (kg/extract/verify.py)
    product_head_words: frozenset[str]
    function_words: frozenset[str]
    street_words: frozenset[str]
    place_kinds: frozenset[str]
    not_buyers: frozenset[str]
    day_words: frozenset[str]
    pronouns: frozenset[str]
    own_words: frozenset[str]
    common_noun_endings: frozenset[str]
    asset_nouns: frozenset[str]
    negation_cues: frozenset[str]  # regex alternatives, as the three below
    hedge_cues: frozenset[str]
    forward_cues: frozenset[str]
    # the gate's lists (kg/extract/verify.py)
    abstract_references: frozenset[str]
    self_references: frozenset[str]
    placeholder_names: frozenset[str]
    law_ends: frozenset[str]
    determiners: frozenset[str]
    metric_openers: frozenset[str]
    metric_links: frozenset[str]
    sentence_openers: frozenset[str]
    corporate_suffixes: frozenset[str]  # kept as written: matched case-sensitively
    own_verbs: frozenset[str]  # regex alternatives, as the four below
    hurt_verbs: frozenset[str]
    change_verbs: frozenset[str]
    change_nouns: frozenset[str]
    auxiliaries: frozenset[str]
    cross_reference_cues: frozenset[str]  # regex alternatives
    honorifics: frozenset[str]
    name_noise_words: frozenset[str]

    @field_validator("*", mode="before")
    @classmethod
    def _lower(cls, v: Any, info: ValidationInfo) -> Any:
        if isinstance(v, list):
            cased = info.field_name in CASED_LISTS
            if not v or any(
                not isinstance(w, str) or w != (w.strip() if cased else w.strip().lower())
                for w in v
            ):
                raise ValueError("a non-empty list of lower-case words")
            return frozenset(v)
        return v

    @field_validator(*REGEX_LISTS)
    @classmethod
    def _compiles(cls, v: frozenset[str]) -> frozenset[str]:
        for cue in v:
            try:
                re.compile(cue)
            except re.error as e:
                raise ValueError(f"cue {cue!r} is no regex: {e}") from e
        return v

    def cues(self, name: str) -> re.Pattern[str]:
        """One of the cue lists as a whole-word, case-insensitive regex."""
        return _cue_regex(getattr(self, name))

    def alternation(self, name: str) -> str:
        """One of the regex lists (or a word list) as a group of alternatives, "(?:a|b)",
        for a larger regex; sorted, so the same list always gives the same regex."""
        return "(?:" + "|".join(sorted(getattr(self, name))) + ")"


@lru_cache(maxsize=8)
def _cue_regex(cues: frozenset[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(sorted(cues)) + r")\b", re.I)


@lru_cache(maxsize=1)
def lexicon() -> DepLexicon:
    text = resources.files("kg.data").joinpath(LEXICON_FILE).read_text(encoding="utf-8")
    return DepLexicon.model_validate(json.loads(text))


def _negated_or_hedged(tok: Any) -> bool:
    """The clause of ``tok`` is negated, under a modal ("may acquire", "did not make") or a
    condition ("if X launches ...", "to the extent X introduces ...")."""
    for t in (tok, tok.head):
        if any(
            c.dep_ == "neg"
            or (c.dep_ == "aux" and c.lower_ in MODALS)
            or (c.dep_ == "mark" and c.lower_ in CONDITIONS)
            for c in t.children
        ):
            return True
    # a clause opening with a condition, before the main verb ("To the extent X launches
    # ..., we may ...", "If X introduces ..., our ...")
    return tok.i < tok.sent.root.i and bool(CONDITION_OPENER.match(tok.sent.text))


def noun_phrase(tok: Any, lex: DepLexicon) -> str:
    """``tok`` with the compounds/adjectives directly before it, less rank and size words,
    nationalities and "X-based"; plus "of <noun phrase>" after a provider/maker noun."""
    left = [t for t in tok.doc[tok.left_edge.i : tok.i] if t.i >= tok.sent.start]
    cut = max((n + 1 for n, t in enumerate(left) if t.is_punct and t.text != "-"), default=0)
    left = left[cut:]
    while left and (
        left[0].lower_ in lex.drop_modifiers
        or left[0].pos_ in ("DET", "PRON", "ADP", "CCONJ", "NUM", "ADV", "PART")
        or left[0].ent_type_ in ("NORP", "GPE", "ORG", "PERSON", "CARDINAL", "ORDINAL", "DATE")
        or left[0].is_punct
        or len(left[0].text) == 1
        or left[0].lower_ in ("'s", "’s")
        or left[0].lower_.endswith("-based")
    ):
        left.pop(0)
    words = [t.text for t in left] + [tok.text]
    of = next((c for c in tok.rights if c.dep_ == "prep" and c.lower_ == "of"), None)
    pobj = next((c for c in of.children if c.dep_ == "pobj"), None) if of is not None else None
    if pobj is not None and pobj.pos_ in ("NOUN", "PROPN") and pobj.ent_type_ not in ("ORG",):
        more = noun_phrase(pobj, lex).split()
        if len(words) + 1 + len(more) <= MAX_WORDS:
            words += ["of", *more]
    while len(words) > MAX_WORDS:
        words.pop(0)
    return span_name(" ".join(words).replace(" - ", "-"))


def _org_ents(sent: Any) -> list[Any]:
    """ORG entities that can be a company: not a heading word, a legislature or a law
    ("Business", "Congress", "Federal Acquisition Regulation")."""
    lex = lexicon()
    out = []
    for e in sent.ents:
        if e.label_ != "ORG":
            continue
        words = span_name(e.text).lower().split()
        if not words or " ".join(words) in lex.not_parties or words[-1] in lex.not_parties:
            continue
        out.append(e)
    return out


def _kind_nouns(ent: Any, lex: DepLexicon, nouns: frozenset[str] | None = None) -> list[Any]:
    """Organisation nouns said of ``ent``: its appositions, its predicate, or the noun right
    before it inside its own noun phrase."""
    root, out = ent.root, []
    out += [c for c in root.children if c.dep_ == "appos" and c.i >= ent.end]
    if root.dep_ == "appos" and root.head.i < ent.start:
        out.append(root.head)
    if root.dep_ in ("nsubj", "nsubjpass") and root.head.lower_ in ("is", "was", "be", "became"):
        out += [c for c in root.head.children if c.dep_ == "attr"]
    for prep in [c for c in root.children if c.dep_ == "prep" and c.lower_ == "as"] + [
        c for c in root.head.children if c.dep_ == "prep" and c.lower_ == "as"
    ] * (root.dep_ in ("dobj", "nsubj", "nsubjpass")):
        # "dismissed X as our public accounting firm", "X is registered as a bank holding
        # company", "X operates as a regional bank"
        out += [c for c in prep.children if c.dep_ == "pobj"]
    for one in [c for c in root.children if c.dep_ == "appos" and c.lower_ == "one"]:
        out += [  # "X, one of the largest manufacturing companies"
            c
            for p in one.children
            if p.dep_ == "prep" and p.lower_ == "of"
            for c in p.children
            if c.dep_ == "pobj"
        ]
    if ent.start > 0:
        prev = ent.doc[ent.start - 1]
        if prev.dep_ in ("compound", "amod", "appos") and ent.start <= prev.head.i < ent.end:
            out.append(prev)
    return [
        n
        for n in out
        if n.lower_ in (lex.org_nouns if nouns is None else nouns)
        and n.pos_ in ("NOUN", "PROPN")
        and (n.text.islower() or n.i == n.sent.start)  # "Oracle Corporation": part of a name
        and min(abs(n.i - ent.start), abs(n.i - ent.end + 1)) <= NEAR
    ]


def org_kinds(sent: Any, lex: DepLexicon) -> list[Candidate]:
    out = []
    for ent in _org_ents(sent):
        name = span_name(ent.text)
        for noun in _kind_nouns(ent, lex):
            phrase = noun_phrase(noun, lex)
            words = phrase.lower().split()
            if len(words) < 2 or not phrase or phrase.lower() in name.lower():
                continue  # "a company" says nothing of the industry
            out.append(_cand(name, "Company", "BELONGS_TO", phrase, "Industry", sent, "org_kind"))
    return out


def _conjuncts(tok: Any) -> list[Any]:
    """``tok`` and everything coordinated with it ("A, B and C")."""
    out, todo = [], [tok]
    while todo and len(out) < 12:
        t = todo.pop(0)
        out.append(t)
        todo += [c for c in t.children if c.dep_ == "conj"]
    return out


def _produce_verbs(subj: Any, lex: DepLexicon) -> list[Any]:
    """The make/sell verbs ``subj`` is the subject of: its own verb, verbs coordinated with
    it ("manufactures ... and provides ..."), infinitives it governs ("agreed to
    manufacture", "able to produce", "responsibility to manufacture") and its relative
    clause ("X, which makes ...")."""
    verbs = [c for c in subj.children if c.dep_ == "relcl"]  # "X, which makes ..."
    if subj.dep_ == "nsubj":
        verbs += _conjuncts(subj.head)
    for _ in range(2):  # "will be able to produce", "assumed responsibility to manufacture"
        verbs += [
            y
            for v in verbs
            for x in v.children
            if x.dep_ in ("xcomp", "acomp", "dobj")
            for y in [x, *x.children]
            if y.dep_ in ("xcomp", "acl") and y not in verbs
        ]
    return [
        v
        for v in verbs
        if v.lower_ in lex.produce_verbs
        and not _negated_or_hedged(v)
        and not any(c.dep_ in ("nsubj", "nsubjpass") and c.i != subj.i for c in v.children)
    ]


def _product_phrase(o: Any, lex: DepLexicon) -> str:
    if o.pos_ not in ("NOUN", "PROPN") or o.ent_type_ in ("ORG", "PERSON"):
        return ""
    if o.i > 0 and o.doc[o.i - 1].text == "#":
        return ""  # a hashtag ("#economy")
    if o.lower_ in lex.facility_nouns:
        return ""  # "develop seven hotels": a site, not a product
    if o.lower_ in lex.abstract_objects or o.doc[o.left_edge.i].lower_ in ("to", "for", "from"):
        return ""  # "important information", "sells ... to authorized bottlers"
    if any(c.dep_ in ("oprd", "acomp", "ccomp") for c in o.head.children):
        return ""  # "makes information available"
    phrase = noun_phrase(o, lex)
    if not phrase or phrase.lower() in lex.generic_objects:
        return ""
    if o.lower_ in lex.generic_objects and len(phrase.split()) < 2:
        return ""
    return phrase


PRODUCER_NOUNS = frozenset({"maker", "manufacturer", "producer", "developer", "provider",
                            "supplier", "designer", "builder", "distributor"})  # fmt: skip


def _untagged_names(sent: Any, lex: DepLexicon) -> list[Any]:
    """Subjects written as proper nouns that the NER left untagged ("... TWC offers data
    and video services"): the PROPN and the untagged PROPN compounds right before it."""
    out = []
    for tok in sent:
        if tok.dep_ != "nsubj" or tok.pos_ != "PROPN" or tok.ent_type_ or tok.i == sent.start:
            continue
        start = tok.i
        while (
            start > sent.start
            and tok.doc[start - 1].dep_ == "compound"
            and (tok.doc[start - 1].pos_ == "PROPN" and not tok.doc[start - 1].ent_type_)
        ):
            start -= 1
        span = tok.doc[start : tok.i + 1]
        if span.text.lower() not in lex.not_parties:
            out.append(span)
    return out


def products(sent: Any, lex: DepLexicon) -> list[Candidate]:
    out = []
    for ent in [*_org_ents(sent), *_untagged_names(sent, lex)]:
        name = span_name(ent.text)
        objs = [c for v in _produce_verbs(ent.root, lex) for c in v.children if c.dep_ == "dobj"]
        for noun in _kind_nouns(ent, lex):  # "a manufacturer of engineered magnets"
            if noun.lower_ in PRODUCER_NOUNS:
                of = [c for c in noun.children if c.dep_ == "prep" and c.lower_ == "of"]
                objs += [c for p in of for c in p.children if c.dep_ == "pobj"]
        for o in [x for obj in objs for x in _conjuncts(obj)]:
            phrase = _product_phrase(o, lex)
            if phrase:
                out.append(_cand(name, "Company", "PRODUCES", phrase, "Product", sent, "makes"))
    return out


def facilities(sent: Any, lex: DepLexicon, main: str = "") -> list[Candidate]:
    """ "our hotels in California, New York and Illinois" -> hotels OPERATES_IN each place;
    with a known document subject, "our/its hotels" are the subject's: subject OPERATES_IN."""
    out = []
    for tok in sent:
        if tok.lower_ not in lex.facility_nouns or tok.pos_ != "NOUN":
            continue
        preps = [c for c in tok.children if c.dep_ == "prep" and c.lower_ in ("in", "across")]
        places = [
            x
            for p in preps
            for c in p.children
            if c.dep_ == "pobj"
            for x in _conjuncts(c)
            if x.ent_type_ in ("GPE", "LOC")
        ]
        if not places or _negated_or_hedged(tok.head):
            continue
        verbs = [tok.head, tok.head.head]
        verbs += [c for v in verbs[:1] for c in v.children if c.dep_ in ("acomp", "xcomp", "oprd")]
        near = tok.doc[tok.i : min(max(x.i for x in places) + 4, tok.sent.end)]
        if any(v.lower_ in lex.stop_verbs for v in [*verbs, *near]):
            continue  # "we suspended all operations in Russia", "operations ... remain suspended"
        mods = tok.doc[tok.left_edge.i : tok.i]
        if any(t.lower_ in lex.stop_verbs or t.tag_ in ("JJS", "RBS") for t in mods):
            continue  # "Automakers close factories in China", "the best restaurants in X"
        head, htype = noun_phrase(tok, lex), "Segment"
        if main:  # a document with a subject: only "our/its sites" are the subject's
            if not any(c.dep_ == "poss" and c.lower_ in ("our", "its") for c in tok.children):
                continue
            head, htype = main, "Company"
        for x in places:
            ent = next((e for e in sent.ents if e.start <= x.i < e.end), None)
            if ent is not None and head:
                place = span_name(ent.text)
                out.append(_cand(head, htype, "OPERATES_IN", place, "Region", sent, "site_in"))
    return out


def _subject_org(sent: Any) -> Any | None:
    """The ORG that is the subject of the sentence's main verb (what "its" refers to)."""
    root = sent.root
    subj = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subj is None:
        return None
    return next((e for e in sent.ents if e.label_ == "ORG" and e.start <= subj.i < e.end), None)


def subsidiaries(sent: Any, lex: DepLexicon) -> list[Candidate]:
    """ "X, a wholly owned subsidiary of Y" / "Y's unit X" / "its subsidiary X" (its = the
    subject company) -> Y HAS_STAKE_IN X."""
    out = []
    orgs = _org_ents(sent)
    for ent in orgs:
        for noun in _kind_nouns(ent, lex, lex.subsidiary_nouns):
            owner = None
            of = [c for c in noun.children if c.dep_ == "prep" and c.lower_ == "of"]
            pobj = [c for p in of for c in p.children if c.dep_ == "pobj"]
            owner = next((e for e in orgs for o in pobj if e.start <= o.i < e.end), None)
            if owner is None:
                poss = next((c for c in noun.children if c.dep_ == "poss"), None)
                if poss is not None and poss.lower_ == "its":
                    owner = _subject_org(sent)
                elif poss is not None:
                    owner = next((e for e in orgs if e.start <= poss.i < e.end), None)
            if owner is None or owner == ent or _negated_or_hedged(noun.head):
                continue
            out.append(_cand(span_name(owner.text), "Company", "HAS_STAKE_IN",
                             span_name(ent.text), "Company", sent, "subsidiary"))  # fmt: skip
    return out


DEAL_NOUNS = frozenset({"acquisition", "acquisitions", "purchase", "purchases"})


def sellers(sent: Any, lex: DepLexicon) -> list[Candidate]:
    """ "the acquisition of X from Y" -> Y INVOLVED_IN X as the seller (the buyer is the
    deal patterns' business)."""
    out = []
    orgs = [  # "The Manitowoc Company" is a party here; "the Company" is not
        e for e in sent.ents
        if e.label_ == "ORG"
        and span_name(e.text).lower().removeprefix("the ") not in lex.not_parties
    ]  # fmt: skip
    for tok in sent:
        if tok.lower_ not in DEAL_NOUNS or tok.pos_ != "NOUN" or _negated_or_hedged(tok.head):
            continue
        preps = {c.lower_: c for c in tok.children if c.dep_ == "prep"}
        if "of" not in preps or "from" not in preps:
            continue
        seller = next(
            (e for c in preps["from"].children if c.dep_ == "pobj" for e in orgs
             if e.start <= c.i < e.end),
            None,
        )  # fmt: skip
        for t in [c for c in preps["of"].children if c.dep_ == "pobj"]:
            inside = [e for e in orgs if t.left_edge.i <= e.start and e.end <= t.i + 1]
            if not inside and tok.lower_.startswith("purchase"):
                continue  # "purchases of steel from X" is supply, not a sale of a business
            target = span_name(inside[-1].text) if inside else noun_phrase(t, lex)
            if seller is None or not target or target.lower() in lex.generic_objects:
                continue
            c = _cand(span_name(seller.text), "Company", "INVOLVED_IN", target, "Event", sent,
                      "sold")  # fmt: skip
            c.props["role"] = "seller"
            out.append(c)
    return out


def _path(a: Any, b: Any) -> list[Any] | None:
    """Tokens strictly between ``a`` and ``b`` on the dependency tree, or None."""
    up_a, up_b = [a], [b]
    while up_a[-1].head.i != up_a[-1].i and len(up_a) < 30:
        up_a.append(up_a[-1].head)
    while up_b[-1].head.i != up_b[-1].i and len(up_b) < 30:
        up_b.append(up_b[-1].head)
    ids_b = [t.i for t in up_b]
    for n, t in enumerate(up_a):
        if t.i in ids_b:
            return up_a[1 : n + 1] + list(reversed(up_b[1 : ids_b.index(t.i)]))
    return None


def _titled_employer(org: Any, lex: DepLexicon) -> bool:
    """The ORG hangs off a job title: "Director of X", "CEO at X", "X's CEO", "X CEO"."""
    root = org.root
    while root.dep_ == "conj" and root.head.i != root.i:  # "CFO for A, B and C"
        root = root.head
    if root.dep_ == "pobj" and root.head.lower_ in ("of", "at", "for", "with"):
        word = root.head.head.lower_
        return word in lex.role_nouns or word in EMPLOY_VERBS
    return root.dep_ in ("poss", "compound") and root.head.lower_ in lex.role_nouns


# between a person and an organisation, a coordination that starts another holder's
# title: "Timothy Geithner and the chief executives of Bear Stearns", "GE's Jeff Immelt
# and Caterpillar's new head"
OTHER_TITLE_BETWEEN = re.compile(
    r"^\W*and\W*$|\band\s+(?:the\s+)?(?:[\w-]+\s+){0,2}(?:executives|heads|chiefs|officials)\b"
)


def executives(sent: Any, lex: DepLexicon) -> list[Candidate]:
    out = []
    people = [e for e in sent.ents if e.label_ == "PERSON"]
    for p in people:
        for o in _org_ents(sent):
            if NOT_EMPLOYERS.match(o.text) or (
                o.root.dep_ == "compound" and o.root.head.lower_ in lex.role_nouns
            ):
                continue  # "Chairman of the Board", "the Finance Director"
            if not _titled_employer(o, lex):
                continue
            path = _path(p.root, o.root)
            if path is None or not path or len(path) > MAX_PATH:
                continue
            words = [t.lower_ for t in path if t.i < o.start or t.i >= o.end]
            if any(t.i >= p.start and t.i < p.end for t in path):
                continue
            if not any(w in lex.role_nouns or w in EMPLOY_VERBS for w in words):
                continue
            inner = [t for t in path if not (o.start <= t.i < o.end)]
            if any(
                t.lower_ not in lex.role_nouns and t.lower_ not in lex.path_words
                and t.dep_ not in ("compound", "amod")
                and not (t.ent_type_ == "ORG" and o.root.dep_ == "conj")  # "for A and B"
                for t in inner
            ):  # fmt: skip
                continue
            if any(_negated_or_hedged(t) for t in inner if t.pos_ in ("VERB", "AUX")):
                continue
            if p.end_char <= o.start_char and OTHER_TITLE_BETWEEN.search(
                sent.doc.text[p.end_char : o.start_char]
            ):
                continue  # "X and the chief executives of Y", "GE's X and Y's new head Z"
            out.append(
                _cand(span_name(p.text), "Person", "EXECUTIVE_OF", span_name(o.text), "Company",
                      sent, "works_at")
            )  # fmt: skip
    return out


LEGAL_FORM_ONLY = re.compile(
    r"^(?:inc|incorporated|corp|corporation|co|company|ltd|limited|llc|l\.?l\.?c|lp|l\.?p|plc|"
    r"holdings?|group|sa|ag|nv)\.?$",
    re.I,
)


def _cand(head: str, ht: str, rel: str, tail: str, tt: str, sent: Any, rule: str) -> Candidate:
    if LEGAL_FORM_ONLY.match(head) or LEGAL_FORM_ONLY.match(tail):
        tail = ""  # a legal form alone names no party; the empty tail is dropped
    return Candidate(head, ht, rel, tail, tt, sent.start_char, sent.end_char, Component.NLP,
                     f"dep:{rule}", None, {}, 0.7)  # fmt: skip


def dependency_candidates(sent: Any, main: str = "") -> list[Candidate]:
    """All the dependency rules on one parsed sentence (``main``: the document's subject,
    when known)."""
    lex = lexicon()
    out = facilities(sent, lex, main)
    if any(e.label_ == "ORG" for e in sent.ents):
        out += org_kinds(sent, lex) + products(sent, lex) + executives(sent, lex)
        out += subsidiaries(sent, lex) + sellers(sent, lex)
    return [c for c in out if c.head and c.tail]
