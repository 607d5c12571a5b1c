"""Who can be a party to a fact: the critic's checks on the names a candidate links
(a product that is a deal term, an owner that is a place's adjective, a weekday or a
surname taken for an organisation, a chief who is leaving, the headline's parties).
Each returns the critic's ``Issue`` list (or a drop reason) and reads only the
candidates and their chunk."""

from __future__ import annotations

import re

from kg.extract.deps_en import lexicon
from kg.extract.evidence import Issue, norm, sentence_of
from kg.extract.regions import is_region
from kg.extract.types import Candidate, DocContext
from kg.graph.canonical import AliasIndex, MatchMethod

_LEX = lexicon()
# Relations between two parties that a negation or a hedge between them undoes: "X did
# not acquire Y", "X is in talks to buy Y", "X may launch Y".
PARTY_RELATIONS = frozenset(
    {"INVOLVED_IN", "EXECUTIVE_OF", "HAS_STAKE_IN", "PRODUCES", "PARTNERS_WITH", "OPERATES_IN",
     "HAS_CEO", "HAS_CHAIRMAN"}
)  # fmt: skip

# the first word of a sentence, after list marks and footnote numbers ("(1) United ...")
FIRST_WORD = re.compile(r"[\s\W\d_]*([A-Za-z][\w'-]*)")

OWN_VERB = _LEX.alternation("own_verbs")

PARTY_TYPES = frozenset({"Company", "Person", "Institution"})

# a day, a month or a time word is no party: "Wednesday Chief Executive Ken Lewis",
# "路透调查的经济学家此前..."
_TIME_WORDS = (
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May "
    "June July August September October November December Today Yesterday Tomorrow "
    "此前 之前 此后 之后 目前 当前 今年 去年 明年 今日 昨日 当天 当日 "
    "近期 日前 早前 稍早 随后 同时 其中"
)

TIME_NAME = re.compile("|".join(_TIME_WORDS.split()) + "|周[一二三四五六日]")

# a chief who leaves is no longer the company's chief: "Chief Executive John Browne will
# step down", "former CEO X"
LEAVING_AFTER = re.compile(
    r"^[^.;]{0,40}?\b(?:(?:will|would|is\s+to|to|plans\s+to|is\s+set\s+to)\s+"
    r"(?:step\s+down|retire|resign|leave|quit|depart)|stepp(?:ed|ing)\s+down|retir(?:ed|ing)|"
    r"resign(?:ed|ing)|ousted|departed|was\s+replaced|(?:replaced|succeeded)\s+by)\b"
)

LEAVING_BEFORE = re.compile(
    r"\b(?:former|ex-|outgoing|departing|retiring|late)\s+(?:\S+\s+){0,3}$", re.I
)

FORMER_POST = re.compile(r"(?:Former|Then|Ex|Outgoing|Late)\b[ -]?")

# "North American profit margin": a place's adjective before a metric is no owner
DEMONYM = re.compile(
    r"(?:(?:North|South|Latin|Central|East|West|Southeast)\s+)?[A-Z][a-z]+(?:an|ean|ian|ese|ish)"
)


def no_product(cands: list[Candidate]) -> list[Issue]:
    """PRODUCES whose tail is an abstract noun ("insights into agent performance") or
    whose head is itself a product ("Quality Management Software provides ...")."""
    lex, out = lexicon(), []
    for i, c in enumerate(cands):
        if c.relation != "PRODUCES":
            continue
        # "wafers of acceptable quality", "appropriations over time"
        tail = re.split(r" (?:of|over|in|for|to|from|with|at|on) ", c.tail.lower())[0].split()
        head = c.head.lower().split()
        if (
            (tail and tail[-1] in lex.abstract_objects)
            or (head and head[-1] in lex.product_head_words)
            or c.head.lower() in lex.not_parties  # "Congress makes appropriations"
        ):
            out.append(Issue(i, "not_a_product", c.tail))
    return out


def not_an_owner(cands: list[Candidate], text: str, index: AliasIndex) -> list[Issue]:
    """A DISCLOSES "owner" that is only the sentence's capitalised first word and names
    a kind of the metric ("Advertising costs were ...", "Subscription revenue grew
    ...", "Rental income was ..."): capitalisation there says nothing, so an ordinary
    word (the lexicon's ``metric_kinds`` or a common-noun ending) is no owner; a known
    entity ("Apple revenue was ...") is."""
    lex, out = lexicon(), []
    for i, c in enumerate(cands):
        head = c.head.strip()
        if c.relation not in ("DISCLOSES", "PRODUCES") or " " in head or not head[:1].isupper():
            continue
        if not head[1:].islower() or c.end <= c.start:
            continue
        first = FIRST_WORD.match(sentence_of(text, c.start, c.end))
        word = head.lower()
        if first is None or first.group(1) != head:
            continue
        if word not in lex.metric_kinds and not word.endswith(tuple(lex.common_noun_endings)):
            continue
        if index.resolve(head, c.head_type).method != MatchMethod.NEW:
            continue
        out.append(Issue(i, "not_an_owner", head))
    return out


def not_a_party(cands: list[Candidate]) -> list[Issue]:
    """A company or person side of a relation that is no party. A region or nationality
    where a company is meant ("Chinese President X" -> X EXECUTIVE_OF Chinese, "Asian
    markets inch up" -> Asian PRODUCES ...; a region's own figure stays a segment's) is
    dropped (``not_a_party``). A "name" holding a verb, auxiliary or question word,
    which a Title Case headline capitalises like a name ("Susan Story Announces",
    "Says Cipla", "Tidjane Thiam's Resignation"), is trimmed (``headline_name``)."""
    lex, out = lexicon(), []
    for i, c in enumerate(cands):
        if c.relation not in PARTY_RELATIONS and c.relation not in ("BELONGS_TO", "DISCLOSES"):
            continue
        for side in ("head", "tail"):
            name, kind = getattr(c, side), getattr(c, f"{side}_type")
            if c.relation == "INVOLVED_IN" and side == "tail":
                kind = "Company"  # a deal's tail names its target
            if kind not in PARTY_TYPES:
                continue
            low = name.strip().replace("’", "'").casefold()
            if kind == "Person" and (is_region(low) or low in lex.day_words):
                out.append(Issue(i, "not_a_party", name))  # "Wednesday", "Brazil"
                break
            if (
                c.relation != "DISCLOSES"
                and kind != "Person"
                and (
                    is_region(low.removeprefix("the "))
                    or low.removeprefix("former ") in lex.demonyms
                    or low.endswith("-based")  # "buys its first Asia-based brand"
                )
            ):
                out.append(Issue(i, "not_a_party", name))
                break
            words = re.findall(r"[\w'.&-]+", low)
            if kind != "Person" and words and words[-1] in lex.street_words:
                out.append(Issue(i, "not_a_party", name))  # "2485 Augustine Drive"
                break
            if (
                any(w in lex.headline_words for w in words)
                or (kind == "Person" and "'s" in low)
                or (words and words[-1] in lex.function_words)  # "Deal With"
                or (words and words[0] in lex.function_words - {"the", "a"})
                or low.endswith(("-owned", "-based"))  # "Converse-owned"
            ):
                out.append(Issue(i, "headline_name", side))
        if (
            c.relation == "BELONGS_TO"
            and c.tail.lower().split()
            and all(w in lex.drop_modifiers for w in c.tail.lower().split())
        ):
            out.append(Issue(i, "not_a_party", c.tail))  # "larger firms such as X"
    return out


def other_owner(cands: list[Candidate], text: str, ctx: DocContext) -> list[Issue]:
    """A figure given to the document's subject that the sentence gives to another
    party: "the Consumer segment's revenues were $103.5 billion", "AWE only generated
    sales of $885 million" (a joint venture's) -> not the filer's figure."""
    lex, out = lexicon(), []
    if not ctx.main_entity:
        return out
    for i, c in enumerate(cands):
        if c.relation != "DISCLOSES" or c.head != ctx.main_entity or c.end <= c.start:
            continue
        sent, tail = sentence_of(text, c.start, c.end), re.escape(c.tail)
        said = [
            *re.finditer(
                rf"\b([A-Z][\w&.-]*)(?:['’]s|\s+(?:\w+ly\s+)?{OWN_VERB})\s+"
                rf"(?:[^;]{{0,60}}?\s(?:and|as[ ]well[ ]as)\s+)?(?:[\w-]+\s+){{0,2}}?{tail}\b",
                sent,
            ),
            *re.finditer(rf"\b(segment|unit|division|subsidiary)['’]s\s+{tail}\b", sent),
        ]
        others = [
            m.group(1)
            for m in said
            if m.group(1).lower() not in lex.own_words
            and m.group(1).lower() not in lex.day_words  # "X on Wednesday reported ..."
            and norm(m.group(1)) not in norm(ctx.main_entity)
            and not any(norm(m.group(1)) in norm(a) for a in ctx.aliases)
        ]
        if not others:
            continue
        owner = others[0]
        out.append(Issue(i, "other_owner", owner))
    return out


def initials_of(short: str, long: str) -> bool:
    """``short`` is the acronym of ``long`` ("MVNOs", "mobile virtual network
    operators"): a definition, not a kind."""
    letters = re.sub(r"s$", "", short.strip())
    words = re.findall(r"[A-Za-z]+", long)
    return (
        len(letters) >= 2
        and letters.isupper()
        and len(words) == len(letters)
        and all(w[0].lower() == ch.lower() for w, ch in zip(words, letters, strict=True))
    )


def headline_parties(cands: list[Candidate], text: str) -> list[Issue]:
    """Parties of news headlines read against their sentence (FiQA/Twitter kind):
    a newswire tag or an organisation noun before the name ("UPDATE 1-Engineering
    firm", "Drugmaker Shire" -> "Shire") is trimmed (``org_noun_prefix``), an
    organisation noun alone ("Insurer buys ...") or an asset word alone ("sells unit to
    ...") is no party (``not_a_party``); a deal "target" followed by what is bought
    from it ("Glencore nickel property", "GSK treatment", "Barclay's Wealth Management
    Unit") is the seller of an asset, not the target (``not_a_deal``); selling a
    business to a buyer ("Tesco sells Blinkbox ... to TalkTalk") or a person's share
    sale ("MPWR CEO sells 450k") is no product (``not_a_product``); an industry phrase
    with a verb, a title word or a run-together word ("buys advice", "Rival companies",
    "CompaniesCar insurer") is no industry (``not_a_party``)."""
    lex, out = lexicon(), []
    asset = "|".join(sorted(lex.asset_nouns))
    for i, c in enumerate(cands):
        if c.end <= c.start:
            continue
        sent = sentence_of(text, c.start, c.end)
        if c.relation == "BELONGS_TO" and initials_of(c.head, c.tail):
            out.append(Issue(i, "not_a_party", c.tail))  # "MVNOs": its own expansion
            continue
        if c.relation == "BELONGS_TO":
            words = c.tail.replace("-", " ").split()
            low = [w.lower() for w in words]
            rest = [w for w in low if w not in lex.org_nouns]
            if (
                (rest and all(w in lex.drop_modifiers for w in rest))
                or any(w in lex.headline_words or w == "update" for w in low)
                or any(re.search(r"[a-z][A-Z]", w) for w in words)
            ):
                out.append(Issue(i, "not_a_party", c.tail))
                continue
        if c.relation not in PARTY_RELATIONS:
            continue
        for side in ("head", "tail"):
            name = getattr(c, side)
            kind = "Company" if c.relation == "INVOLVED_IN" else getattr(c, f"{side}_type")
            if kind != "Company":
                continue
            words = name.split()
            low = [w.lower() for w in words]
            if len(words) == 1 and (low[0] in lex.org_nouns or low[0] in lex.asset_nouns):
                out.append(Issue(i, "not_a_party", name))
                break
            if re.match(r"UPDATE\s*\d*\s*-", name) or (
                len(words) > 1 and low[0] in lex.org_nouns and words[1][:1].isupper()
            ):
                out.append(Issue(i, "org_noun_prefix", side))
                break
        else:
            tail = re.escape(c.tail)
            if (
                c.relation == "INVOLVED_IN"
                and c.props.get("role") != "seller"  # a seller's tail is what it sold
                and c.tail.lower().split()[-1:] != []
                and c.tail.lower().split()[-1] not in lex.asset_nouns
                and re.search(
                    rf"\b{tail}(?:['’]s?)?(?:\s+(?!(?:to|for|from|in|of|with|by|and|at|on|as)\b)"
                    rf"[\w-]+){{0,3}}?\s+(?:{asset})\b",
                    sent,
                    re.I,
                )
            ):
                out.append(Issue(i, "not_a_deal", c.tail))
            elif c.relation == "INVOLVED_IN" and re.search(r"\s[Ff]rom\s", c.tail):
                out.append(Issue(i, "not_a_deal", c.tail))  # "... Business From Unilever"
            elif c.relation == "PRODUCES" and (
                re.search(rf"\bsells?\s+(?:\S+\s+){{0,3}}?{tail}\s+to\s+[A-Z]", sent)
                or (c.head.lower().split()[-1:] and c.head.lower().split()[-1] in lex.role_nouns)
            ):
                out.append(Issue(i, "not_a_product", c.tail))
    return out


# a ticker tag after a company's name: "AT&T Inc ( T.N ) CEO Randall Stephenson"
_TICKER_END = re.compile(r"\s*\(\s*[A-Z0-9][A-Za-z0-9]{0,7}(?:\.[A-Z]{1,2})?\s*\)\s*$")
# the name right before a title: capitalised words (a legal form may end with a dot),
# not a sentence's last word ("on Saturday.  CEO X")
_OWNER_END = re.compile(
    r"((?:[A-Z][\w&'’-]*\.?\s+(?:(?:of|de|&)\s+)?){0,4}"
    r"(?:[A-Z][\w&'’-]*|(?:Co|Inc|Corp|Cos|Ltd|Plc|Bros|N\.V|S\.A)\.))\s*$"
)
_LEGAL_END = re.compile(
    r"(?:[,\s]+(?:inc|incorporated|corporation|corp|company|co|cos|ltd|limited|plc|llc|"
    r"holdings|group|ag|sa|s\.a|nv|n\.v|se)\.?)+$"
)
# "Qatar Airways, whose Chief Executive X": the owner is named before "whose"
_WHOSE = re.compile(r"([A-Z][\w&'’.-]*(?:\s+[A-Z][\w&'’.-]*){0,4})\s*,\s+whose\s+$")
# a title that belongs to what is named after it ("CEO of network equipment maker Cisco",
# "president and certified financial planner at Glassman Wealth Services")
_TITLE_GOES_ON = re.compile(r"\s*(?:,\s*)?(?:of|at|for|with|and|in)\s")
# a unit's chief: "chief executive of Boeing's Defense, Space & Security division"
_UNIT_AFTER = re.compile(
    r"['’]s\s+(?:[\w&,-]+\s+){0,5}?(?:division|unit|arm|business|segment|subsidiary|operations?)\b",
    re.I,
)
# a past post: "former CEO Charles Prince", "Former Fed Chairman Alan Greenspan",
# "Russell Chew -- former chief operating officer at the Federal Aviation Administration"
_PRIOR = re.compile(r"\b(?:former|ex-|then-|onetime|one-time|erstwhile)\s*", re.I)


# sentence openers that are no title's owner: "But Chief Executive X", "Its CEO X"
_NO_OWNER = (
    frozenset(
        "but and yet so when while as meanwhile also the its his her their our new interim "
        "acting then after before since because although though however now still even "
        "former outgoing".split()
    )
    | _LEX.day_words
    | _LEX.determiners
    | _LEX.pronouns
)


def title_owner(before: str) -> str:
    """Who a bare title right after ``before`` belongs to: the capitalised name that ends
    ``before`` (past a ticker tag), or the name before ", whose"; "" when none."""
    whose = _WHOSE.search(before)
    if whose:
        return whose.group(1)
    m = _OWNER_END.search(_TICKER_END.sub(" ", before))
    words = strip_subhead(m.group(1)).split() if m and before[-1:].isspace() else []
    while words and words[0].casefold() in _NO_OWNER:  # "But Chief Executive X"
        words = words[1:]
    return " ".join(words)


def _core(name: str) -> str:
    """A name without its legal form and possessive ("Ford Motor Co." -> "ford motor")."""
    low = norm(name).removesuffix("'s").removesuffix("’s")
    return _LEGAL_END.sub("", low).strip(" ,.")


# "Last summer, hedge fund Pershing Square Capital Management said it had a stake in P&G.
# CEO William Ackman, who ...": a title opening a sentence after another company spoke
_SPOKE = re.compile(r"\b([A-Z][\w&.'-]*(?:\s+(?:of\s+|&\s+)?[A-Z][\w&.'-]*)+)\s+said\b")


_ORG_WORDS = {w.casefold() for w in _LEX.corporate_suffixes} | {
    "co",
    "management",
    "capital",
    "partners",
    "bank",
    "fund",
    "securities",
    "airways",
    "airlines",
    "motors",
}


def last_speaker(text: str, start: int) -> str:
    """The company that spoke in the sentence right before a bare title opening its own
    sentence ("" when the title does not open one, or the sentence names no speaker)."""
    head = text[max(0, start - 300) : start]
    if not re.search(r"[.!?][\"”]?\s+$", head):
        return ""
    prev = re.split(r"[.!?][\"”]?\s+(?=[A-Z\"“])", head.rstrip())[-1]
    m = _SPOKE.search(prev)
    if m is None:
        return ""
    words = {w.strip(".,").casefold() for w in m.group(1).split()}
    return m.group(1) if words & _ORG_WORDS else ""  # a company, not "Jane Doe said"


def names_main(owner: str, ctx: DocContext) -> bool:
    """``owner`` is (a shorter form of) the document's main entity: "Ford" or "Ford Motor
    Co." for Ford Motor Co., not "San Francisco Federal Reserve Bank" for the Fed nor
    "Boeing Commercial Airplanes" for Boeing Co."""
    if not ctx.main_entity:
        return False
    own = _core(owner)
    forms = [_core(f) for f in (ctx.main_entity, *ctx.aliases) if f]
    return any(own == f or (own and f.startswith(own + " ")) for f in forms)


def unbound_title(c: Candidate, text: str, ctx: DocContext) -> str:
    """A title given to the document's company although the sentence binds it to
    something else: "John Chambers, CEO of network equipment maker Cisco Systems Inc"
    (the title goes on past what the rule read), "president and certified financial
    planner at Glassman Wealth Services"; a unit's chief is no chief of its owner
    ("chief executive of Boeing's Defense, Space & Security division": HAS_CEO);
    "Fed Vice Chairman X" is no chairman."""
    if c.relation not in ("EXECUTIVE_OF", "HAS_CEO", "HAS_CHAIRMAN") or c.end <= c.start:
        return ""
    span, after = text[c.start : c.end], text[c.end : c.end + 80]
    org = c.tail if c.relation == "EXECUTIVE_OF" else c.head
    if (
        c.rule == "exec_title_en"
        and ctx.main_entity
        and org == ctx.main_entity
        and norm(org) not in norm(span)
        and _TITLE_GOES_ON.match(after)
    ):
        return "other_owner"
    if c.relation in ("HAS_CEO", "HAS_CHAIRMAN"):
        if _UNIT_AFTER.match(after):
            return "unit_chief"
        lead = text[max(0, c.start - 8) : c.start] + span
        if re.search(r"\b(?:Vice|Deputy)[ -](?:Chair|President)", lead, re.I):
            return "vice_chair"
    return ""


def strip_subhead(name: str) -> str:
    """A wire story's upper-case subhead run into the name after it ("DOOR OPEN Fed",
    "INVESTMENT BANKS Goldman Sachs"): two or more upper-case words before a name
    written in mixed case are no part of it."""
    words = name.split()
    n = 0
    while n < len(words) and len(words[n]) > 1 and words[n].isupper() and words[n].isalpha():
        n += 1
    if n >= 2 and n < len(words) and any(ch.islower() for ch in words[n]):
        return " ".join(words[n:])
    return name


def settle_party(c: Candidate, text: str) -> str:
    """Party names, kinds and posts as the sentence gives them, or why the candidate is
    none: an organisation's name loses a subhead run into it (``strip_subhead``) and a
    ticker left on it ("Charles Schwab Corp SCHW.O"); an industry loses the story's
    adjectives ("fellow", "embattled", "year-old") and is no industry when nothing but a
    kind word is left ("strong company") or when it names a person's job ("Brian
    Youngberg, an energy company analyst", "Dutch ECB policymaker Klaas Knot": dropped,
    ``not_an_industry``); a past post stays a fact with ``status: prior role`` (as the
    gold writes it): the word "former" (ex-, then-, onetime) right before the person's
    title, or between the person and his employer ("X -- former chief operating officer
    at Y")."""
    for side in ("head", "tail"):
        if getattr(c, f"{side}_type") in ("Company", "Institution", "Organization"):
            name = _TICKER_LEFT.sub("", strip_subhead(getattr(c, side)))
            setattr(c, side, name or getattr(c, side))
    if c.relation == "BELONGS_TO":
        return _industry(c, text)
    if c.relation == "DISCLOSES":
        # "the company said fourth-quarter net income": the metric starts after the verb
        c.tail = _SAID_LEAD.sub("", c.tail) or c.tail
        if consensus_figure(c, text):
            return "consensus"
    if c.relation != "EXECUTIVE_OF" or c.end <= c.start or "status" in c.props:
        return ""
    span = text[max(0, c.start - 12) : c.end + 40]
    role = re.escape(str(c.props.get("role", ""))) or r"[\w.-]+"
    head = re.escape(c.head)
    before = rf"{_PRIOR.pattern}(?:[\w.-]+\s+){{0,3}}?{role}\s+{head}\b"
    after = rf"\b{head}[\s,–—-]{{1,5}}(?:a\s+|the\s+|its\s+)?{_PRIOR.pattern}"
    if re.search(before, span, re.I) or re.search(after, span, re.I):
        c.props["status"] = "prior role"
    return ""


# what analysts expect is no figure of the company: "Analysts, on average, are expecting
# ... revenue of $751.3 million", "compared with analysts' forecasts of $9.1 billion",
# "the $3.38 per share forecast by Wall Street analysts"
_ANALYSTS_EXPECT = (
    r"\b(?:analysts?|Wall\s+Street|the\s+Street|consensus)['’]?[\s,][^.;]{0,100}?"
    r"\b(?:expect\w*|forecast\w*|estimat\w*|predict\w*|looking\s+for|project\w*)\b([^.;]{0,140}?)"
)
# the company's own figure after the analysts' ("analysts expected a loss, but it posted")
_OWN_AFTER = re.compile(r"\b(?:but|however|instead|reported|posted|earned|said\s+it)\b", re.I)
_EXPECTED_BY = (
    r"[^.;,]{0,30}?\b(?:forecast|expected|estimated|predicted)\s+by\s+(?:Wall\s+Street\s+)?analysts"
)


def consensus_figure(c: Candidate, text: str) -> bool:
    """A company figure whose number the sentence gives to analysts' expectations."""
    raw = str(c.props.get("raw") or c.props.get("low") or "")
    if not raw or c.end <= c.start:
        return False
    sent, num = sentence_of(text, c.start, c.end), re.escape(raw)
    expect = re.search(_ANALYSTS_EXPECT + num, sent, re.I)
    if expect and not _OWN_AFTER.search(expect.group(1)):
        return True
    return bool(re.search(num + _EXPECTED_BY, sent, re.I))


# a speaker and his verb read into a metric's name ("company said profit")
_SAID_LEAD = re.compile(
    r"^(?:(?:the|The)\s+)?(?:company|firm|bank|[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,3})\s+"
    r"(?:said|says|reported|reports|posted|posts)\s+(?=\S)"
)
# a ticker left at a name's end: "Charles Schwab Corp SCHW.O", "Fred's Inc ( FRED.O",
# "Jazz Air JAZ_u", "Kohlberg Kravis Roberts KKR.UL"
_TICKER_LEFT = re.compile(
    r"(?:\s+\(\s*[A-Z0-9]{2,8}(?:\.[A-Z]{1,2}|_[a-z]{1,2})\s*\)?"
    r"|\s+[A-Z0-9]{2,8}(?:\.[A-Z]{1,2}|_[a-z]{1,2}))$"
)
# a story's words before a kind of company that name no industry
_KIND_NOISE = (
    frozenset(
        "fellow only strong weak embattled troubled struggling ailing beleaguered year-old "
        "private public including u.s. us global national regional local japanese german "
        "french british chinese american european".split()
    )
    | _LEX.drop_modifiers
)
_KIND_ONLY = frozenset(
    "company companies firm firms group groups business businesses concern maker makers "
    "operator operators player players provider providers its their".split()
)
_JOB_WORDS = (frozenset(_LEX.role_nouns) - {"owner", "partner", "associate", "lead", "board"}) | {
    "policymaker",
    "policymakers",
    "rate-setter",
}


def _industry(c: Candidate, text: str) -> str:
    words = c.tail.split()
    while len(words) > 1 and words[0].casefold() in _KIND_NOISE:
        words = words[1:]
    low = [w.casefold() for w in words]
    if (
        not low
        or all(w in _KIND_ONLY or w in _KIND_NOISE for w in low)
        or (low[-1] in _JOB_WORDS and low[-1] not in ("manager", "managers"))  # asset manager
    ):
        return "not_an_industry"  # "strong company", "including its", "policymaker"
    tail = " ".join(words)
    near = text[max(0, c.start - 20) : c.end + 20] if c.end > c.start else ""
    if low == ["equity"] and re.search(r"\bprivate[ -]equity\b", near, re.I):
        tail = "private equity"  # the rule's word list keeps "private" out of a kind
    job = rf"\b{re.escape(tail)}\s+(?:(?:company|fund|industry|sector|equity)\s+)?(\w+)"
    if c.end > c.start:
        m = re.search(job, text[max(0, c.start - 40) : c.end + 60])
        if m and m.group(1).casefold().rstrip("s") in {w.rstrip("s") for w in _JOB_WORDS}:
            return "not_an_industry"  # "an energy company analyst", "portfolio manager"
    c.tail = tail
    return ""


def not_a_party_name(c: Candidate, text: str, ctx: DocContext) -> str:
    """Names that are no party, by their own shape or their sentence: a time word, a
    past post ("Former Treasury"), a surname alone ("Liddy"), a chief who is leaving
    (HAS_CEO), a bare title after another organisation's name ("ACE CEO Robert Milton"
    is no chief of the story's main company), a person's employer named after him ("GE
    analyst Nick Heymann of Sterne Agee"), a place's adjective or a common noun as a
    metric's owner ("North American profit margin", "the Internet now expects"), a kind
    of company for a metric ("a $40 billion bank")."""
    for name, kind in ((c.head, c.head_type), (c.tail, c.tail_type)):
        if kind in PARTY_TYPES | {"Organization"} and TIME_NAME.fullmatch(name):
            return "time_word"
        if kind != "Person" and FORMER_POST.match(name):
            return "not_a_name"  # "Former Treasury", "Then-Defense": a past post
        if (
            kind == "Person"
            and re.fullmatch(r"[A-Z][a-z'’-]+", name)
            and not re.search(rf"\b(?:Mr|Ms|Mrs|Dr)\.?\s+{name}\b", text)
        ):
            return "not_a_name"  # a surname alone ("Liddy"), not "Mr. Lathrop"
    if c.relation in ("HAS_CEO", "HAS_CHAIRMAN") and c.tail in text:
        for m in re.finditer(re.escape(c.tail), text):
            before = text[max(0, m.start() - 40) : m.start()]
            if LEAVING_AFTER.search(text[m.end() : m.end() + 80]) or LEAVING_BEFORE.search(before):
                return "leaving_chief"
    bare_title = c.rule in ("exec_title_person_en", "exec_said_title_person_en")
    if bare_title and 0 < c.start <= len(text):
        owner = title_owner(text[max(0, c.start - 80) : c.start]) or last_speaker(text, c.start)
        if owner and not names_main(owner, ctx):
            return "other_owner"
    reason = unbound_title(c, text, ctx)
    if reason:
        return reason
    if (
        c.relation == "DISCLOSES"
        and c.head_type == "Company"
        and " " not in c.head
        and c.head not in (ctx.main_entity, *ctx.aliases)
        and (
            text[max(0, c.start - 4) : max(c.start, 0)] == "the "
            or re.search(rf"\b{re.escape(c.head.lower())}\b", text)
        )
    ):  # "the Internet now expects", "Retail sales rose ... retail": a common noun
        return "not_an_owner"
    if c.relation == "EXECUTIVE_OF" and c.head_type == "Person":
        later = re.search(rf"{re.escape(c.head)},?\s+(?:of|at)\s+([A-Z][\w&.'-]+)", text)
        if later and later.group(1) not in c.tail:  # "GE analyst Nick Heymann of Sterne Agee"
            return "other_owner"
    if c.relation == "DISCLOSES" and c.tail.casefold() in _LEX.org_nouns:
        return "not_a_metric"  # "a $40 billion bank": the company's kind, no metric
    if (
        c.relation == "DISCLOSES"
        and c.head_type in PARTY_TYPES
        and DEMONYM.fullmatch(c.head)
        and f"{c.head} {c.tail}" in text
    ):
        return "not_an_owner"
    return ""
