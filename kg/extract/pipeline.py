"""The extractor: document -> chunks -> candidates (LLM-free + LLM) -> verified triples.

``Extractor.extract(doc, mode)`` is the one entry point the CLI, the evaluation and
the stream processor share. LLM-free extractors always run (patterns, tables, spaCy
for English, jieba cues for Chinese); the LLM modes add proposals on top, and
everything passes ``Verifier`` before it becomes a ``Triple``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from pydantic import BaseModel, Field, model_validator

from core.records import CleanDocument, Triple, stable_id
from kg.extract.calls import Turn, answer_spans, asked_spans, call_company, transcript_turns
from kg.extract.calls_figures import call_figures
from kg.extract.chunking import DEFAULT_MAX_TOKENS, Chunk, chunk_key, chunk_text, detect_lang
from kg.extract.fastpath import extract_patterns
from kg.extract.html_tables import is_flattened, read_html_table, read_text_table
from kg.extract.llm_modes import PROMPT_VERSION, LLMExtractor, LLMRun
from kg.extract.nlp_en import (
    WIRE_LEAD,
    extract_en,
    guess_main_entity,
    is_surname,
    lead_company,
    parse_many,
    related_short,
    short_forms,
    short_names,
    tagged_companies,
)
from kg.extract.relclf import RELCLF_RULE, suppress_known
from kg.extract.table_text import scan as scan_flat_tables
from kg.extract.table_text import scan_aligned as scan_aligned_tables
from kg.extract.tables import (
    caption_before,
    display_name,
    fiscal_note,
    registrant,
    render_table,
    report_end,
    table_context,
)
from kg.extract.types import Candidate, DocContext, Mode
from kg.extract.verify import Verified, Verifier, VerifyStats, nested_employers
from kg.extract.watch import TABLE_DROP_PREFIX, observe
from kg.extract.zh import extract_zh
from kg.graph.canonical import AliasIndex, add_sec_companies, bundled_sec_tickers
from kg.graph.ontology import Ontology, default_ontology
from kg.graph.static import bundled_universe_path, read_file

FAST_VERSION = "fast.v1"
# relations an analyst's question states no fact of: his figures are his reading
SPOKEN = frozenset({"DISCLOSES", "HAS_VALUE"})


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= at < b for a, b in spans)


MAX_DOC_CHARS = 5_000_000
_ID_LIKE = re.compile(r"^(?:[A-Z0-9_.]{1,12}|new:.*|\d{6}(?:\.[A-Z]{2})?)$")
# letters only, five or more ("IQVIA"): a name; a ticker the dictionary does not know is
# shorter or carries digits and dots
_NAME_LIKE = re.compile(r"^[A-Z]{5,12}$")
_INSTITUTION = re.compile(
    r"Federal Open Market Committee|Federal Reserve|Committee|Central Bank|Bank of England|"
    r"European Central Bank|People's Bank of China|Treasury|Ministry|央行|人民银行|财政部",
    re.I,
)


class ExtractDoc(BaseModel):
    """A document to extract from (a ``CleanDocument``, a raw record or a plain dict)."""

    id: str = ""
    company: str = ""  # the filer, when known
    form_type: str | None = None
    kind: str = "news"
    text: str = ""
    title: str = ""
    lang: str | None = None
    entities: list[str] = Field(default_factory=list)
    event_time: datetime | None = None
    tables: list[list[list[str]]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            if not data.get("text") and data.get("body"):
                data["text"] = data["body"]
            if not data.get("id"):
                data["id"] = stable_id(
                    "doc", data.get("title", ""), str(data.get("text", ""))[:2000]
                )
            if data.get("kind") not in ("news", "social", "filing", "commentary"):
                data["kind"] = "filing" if data.get("form_type") or data.get("company") else "news"
        return data

    @classmethod
    def from_clean(cls, doc: CleanDocument) -> ExtractDoc:
        return cls(
            id=doc.id, text=doc.text, title=doc.title, kind=doc.kind.value, lang=doc.lang,
            entities=list(doc.entities), form_type=doc.form_type, event_time=doc.event_time,
            tables=doc.tables,
            company=doc.entities[0] if doc.kind.value == "filing" and doc.entities else "",
        )  # fmt: skip


@dataclass
class ChunkResult:
    chunk: Chunk
    verified: list[Verified]
    llm: LLMRun
    skipped: bool = False
    flags: Counter[str] = field(default_factory=Counter)  # fast candidates dropped, by reason


@dataclass
class DocResult:
    doc: ExtractDoc
    ctx: DocContext
    triples: list[Triple] = field(default_factory=list)
    chunks: list[ChunkResult] = field(default_factory=list)
    stats: VerifyStats = field(default_factory=VerifyStats)
    fast_s: float = 0.0
    turns: list[Turn] = field(default_factory=list)  # a call's turns, read once (the tier's)

    @property
    def llm_calls(self) -> int:
        return sum(c.llm.calls for c in self.chunks)


def bundled_index(ontology: Ontology | None = None) -> AliasIndex:
    """The alias dictionary of the bundled static universe (kg/data/universe.json) and
    the bundled SEC ticker list, for runs without a graph; the stream uses the graph's
    (``load_alias_index``)."""
    index = universe_index(ontology)
    add_sec_companies(index, bundled_sec_tickers())  # filers outside the universe: by ticker
    return index


def universe_index(ontology: Ontology | None = None) -> AliasIndex:
    """The alias dictionary of the bundled static universe alone."""
    index = AliasIndex(ontology)
    for e in read_file(bundled_universe_path()).entities:
        concept = index.ontology.concept(e.type)
        aliases = [*e.aliases, e.name_zh or "", e.short_name or "", *short_names(e.name)]
        index.add(
            e.id,
            concept.label if concept else e.type,
            e.name,
            aliases,
            [e.ticker or "", e.code or ""],
        )
    return index


ORG_TYPES = frozenset({"Company", "Institution", "Organization"})
ZH_TICKER = re.compile(r"\(\s*([0-9A-Z]{1,6}\.[A-Z]{1,2})\s*\)")


def main_form(name: str, main: str) -> str:
    """``main`` when ``name`` is its opening cut short ("Citi" of "Citigroup Inc", "Bed
    Bath" of "Bed Bath & Beyond Inc"), else ""."""
    if not main or name == main or len(name) < 4 or not main.startswith(name):
        return ""
    rest = main[len(name) :]
    return main if rest[:1].isalpha() or rest.startswith(" & ") else ""


def news_names(
    triples: list[Triple], text: str, ctx: DocContext, dropped: Counter[str]
) -> list[Triple]:
    """A wire story's facts under one name per company (the ticker-tagged name: "GM" ->
    "General Motors Co"); a person's surname taken for an organisation ("Lewis bought
    Merrill Lynch") is dropped, and so are a wire story's products (0 of 4 right in real
    news: "Diversified", "a real estate deal valued") and the filing risk rule's risks
    (a story's worries: 0 of 2)."""
    names = tagged_companies(text)
    wire = WIRE_LEAD.search(text[:2000]) is not None  # a wire story, not a company's page
    lead = ctx.main_entity if ctx.main_entity == lead_company(text) else ""
    if lead:
        names.update({a: ctx.main_entity for a in ctx.aliases if a != ctx.main_entity})
    out: list[Triple] = []
    seen: set[tuple[str, str, str, str]] = set()
    for t in triples:
        if wire and (t.relation == "PRODUCES" or t.extractor in ("nlp:risk", "nlp:region")):
            # no rule read a product right in news ("Diversified", "a real estate deal
            # valued"); the filings' risk and region rules read a story's worries and the
            # places it names as risk factors and operations (0 of 2, 1 of 3 right)
            dropped["news_" + (t.relation if t.relation == "PRODUCES" else t.extractor)] += 1
            continue
        update = {
            side: names.get(name) or main_form(name, lead)
            for side, name, kind in (("head", t.head, t.head_type), ("tail", t.tail, t.tail_type))
            if kind in ORG_TYPES and (name in names or main_form(name, lead))
        }
        t = t.model_copy(update=update) if update else t
        orgs = [n for n, k in ((t.head, t.head_type), (t.tail, t.tail_type)) if k in ORG_TYPES]
        if any(is_surname(n, text) for n in orgs):
            dropped["surname_as_org"] += 1
            continue
        key = (t.head, t.relation, t.tail, str(t.attributes.get("period", "")))
        if key in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(key)
        out.append(t)
    return out


# Below this length a text is a sentence or two: its parties are named in it, and guessing
# a document subject from it only attaches facts to the wrong party.
MIN_GUESS_CHARS = 600


def doc_lang(doc: ExtractDoc, text: str) -> str:
    """The document's language: its own field, else read from the text."""
    return doc.lang if doc.lang in ("en", "zh") else detect_lang(text)


class Extractor:
    """Chunk, propose, verify; LLM optional (``client=None``: LLM-free only)."""

    def __init__(
        self,
        *,
        client: Any | None = None,
        index: AliasIndex | None = None,
        ontology: Ontology | None = None,
        max_chunk_tokens: int = DEFAULT_MAX_TOKENS,
        n_max: int = 3,
        llm_max_chars: int = 800,
        use_nlp: bool = True,
        seen_limit: int = 100_000,
        llm_max_chunks: int = 8,
    ) -> None:
        self.ontology = ontology or default_ontology()
        self.index = index or AliasIndex(self.ontology)
        self.verifier = Verifier(self.ontology, self.index)
        self.max_chunk_tokens = max_chunk_tokens
        self.use_nlp = use_nlp
        self.llm = (
            LLMExtractor(client, self.verifier, n_max=n_max, max_chars=llm_max_chars)
            if client
            else None
        )
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._seen_limit = seen_limit
        self._parsed: dict[str, Any] = {}  # chunk text -> spaCy Doc, filled by extract_many
        self._chunked: dict[int, tuple[str, list[Chunk]]] = {}  # id(doc) -> chunks_of(doc)
        self.llm_max_chunks = llm_max_chunks
        self.tier: Any = None  # kg.extract.model_tier.ModelTier, run by Mode.AUTO

    def forget_seen(self) -> None:
        """Forget which documents were read, so a retried batch reads them again."""
        self._seen.clear()

    # -- context ---------------------------------------------------------------------
    def _listed_name(self, ticker: str) -> str:
        entry = self.index.get(ticker)
        return entry.name if entry is not None and entry.label == "Company" else ""

    def context(self, doc: ExtractDoc, text: str, turns: list[Turn] | None = None) -> DocContext:
        """``turns``: the text's transcript turns when ``extract`` read them already."""
        lang = doc_lang(doc, text)
        hint = doc.company or (doc.entities[0] if doc.entities else "")
        main, main_label, aliases = "", "", [hint] if hint else []
        if hint:
            entry = self.index.get(hint)
            res = self.index.resolve(hint, "Organization")
            if entry is not None and entry.label in ("Company", "Institution"):
                main, main_label = entry.name, entry.label
            elif entry is None and res.canonical:
                main, main_label = res.name, res.label
            if main:
                aliases.append(entry.id if entry else res.id)
            elif entry is None and (not _ID_LIKE.match(hint) or _NAME_LIKE.match(hint)):
                main = hint  # a name the dictionary does not know yet ("IQVIA" too)
        if not main and doc.kind == "filing" and (filer := registrant(text)):
            # a 10-K's cover page names its registrant: the filer, whatever the hint was
            res = self.index.resolve(filer, "Organization")
            main = res.name if res.canonical else display_name(filer)
            main_label = res.label if res.canonical else "Company"
            aliases += [filer] if filer != main else []
        if not main and (call := call_company(hint, doc.title, text, self._listed_name, turns)):
            main, aliases = call.name, [*aliases, call.ticker]  # a call's company (calls.py)
        aliases += short_names(main) if main else []
        if not main and (
            "Federal Open Market Committee" in text
            or ("federal funds rate" in text and "Committee" in text)
        ):
            main, aliases = "Federal Open Market Committee", ["FOMC", "Committee"]
        if (
            not main
            and lang == "en"
            and self.use_nlp
            and doc.kind in ("filing", "news")
            and (len(text) >= MIN_GUESS_CHARS or doc.title)
        ):
            main = guess_main_entity(f"{doc.title}\n{text}")
            if (
                main
                and (len(text) < MIN_GUESS_CHARS or text.count(main) < 2)
                and (main not in doc.title)
            ) or is_surname(main, text):
                main = ""  # a name said once, in a snippet, or a person's surname
        lead = lead_company(text) if doc.kind == "news" and lang == "en" and not hint else ""
        if lead:  # the wire lead's ticker-tagged company, under the lead's name
            aliases += [main] if main and main != lead and related_short(main, lead) else []
            main = lead
            aliases += sorted(short_forms(lead))
        main_type = main_label or (
            "Institution" if main and _INSTITUTION.search(main) else "Company"
        )
        return DocContext(
            doc_id=doc.id, kind=doc.kind, title=doc.title, main_entity=main, main_type=main_type,
            aliases=tuple(a for a in aliases if a and a != main), event_time=doc.event_time,
            lang=lang,
        )  # fmt: skip

    # -- the LLM-free part -----------------------------------------------------------
    def fast_candidates(
        self,
        chunk: Chunk,
        ctx: DocContext,
        drops: Counter[str] | None = None,
        before: str = "",
        until: date | None = None,
        turns: list[Turn] | None = None,
    ) -> list[Candidate]:
        """The LLM-free candidates of a chunk. ``turns``: the document's call-transcript
        turns (``kg.extract.calls``): figures read in management turns name their speaker,
        and figures an analyst states in his question are no fact of the company."""
        text = chunk.text
        if chunk.kind == "table" and "<table" in text[:200].lower():
            # HTML: read by its grid (column spans), kg/extract/html_tables.py
            read = read_html_table(text, ctx, context=f"{chunk.section} {before}", until=until)
            if drops is not None:
                drops.update({TABLE_DROP_PREFIX + k: n for k, n in read.dropped.items() if n})
            return read.candidates
        answers = answer_spans(turns, chunk.start, chunk.end) if turns else None
        out = extract_patterns(text, ctx, "en", answers) + extract_patterns(text, ctx, "zh")
        if chunk.kind == "table":
            read = read_text_table(text, ctx, context=f"{chunk.section} {before}", until=until)
            out += read.candidates
            if drops is not None:
                drops.update({TABLE_DROP_PREFIX + k: n for k, n in read.dropped.items() if n})
            return out
        if chunk.lang == "zh" or re.search(r"[\u4e00-\u9fff]{4}", text):
            out += extract_zh(text, ctx)
        if chunk.lang == "en" and self.use_nlp:
            found = extract_en(text, ctx, doc=self._parsed.get(text))
            general = [c for c in found if c.rule == RELCLF_RULE or c.rule.startswith("dep:")]
            out += [c for c in found if c not in general]
            for c in general:  # the narrow rules' reading wins where both speak
                out += suppress_known([c], out)
        if turns:  # management's figures, each with the metric it is about
            out += call_figures(text, ctx, turns, chunk.start, chunk.end, known=out)
            asked = asked_spans(turns, chunk.start, chunk.end)
            kept = [c for c in out if not (c.relation in SPOKEN and _inside(c.end - 1, asked))]
            if drops is not None and len(kept) < len(out):
                drops["analyst_turn"] += len(out) - len(kept)
            # speech is loose: "plants sitting idle in the Middle East", "like in Japan",
            # "Mettler continuously made a shift" tie no place or product to a company; the
            # spoken patterns read a call (the parser's people - "X, CEO of Y" - stay)
            said = [c for c in kept if c.component.value != "nlp" or c.head_type == "Person"]
            if drops is not None and len(said) < len(kept):
                drops["spoken_nlp"] += len(kept) - len(said)
            out = said
        return out

    def chunks_of(self, doc: ExtractDoc) -> tuple[str, list[Chunk]]:
        text = doc.text[:MAX_DOC_CHARS]
        if doc.lang == "zh":  # "中国工商银行(\n 601398.SS\n)董事长": the tag in one line
            text = ZH_TICKER.sub(r"(\1)", text)
        if doc.title and not text.startswith(doc.title):
            text = f"{doc.title}\n\n{text}" if text else doc.title
        # "\f" ends the context of a table appended here: its caption travels in its first
        # row, and the document's last lines (maybe the table itself, as text) are not it
        for rows in doc.tables:
            if len(rows) == 1 and len(rows[0]) == 1 and rows[0][0].startswith("<table"):
                text += "\n\n\f\n" + " ".join(rows[0][0].split("\n")) + "\n"  # a grid
                continue
            text += "\n\n\f\n" + render_table(rows, caption_before(doc.text, rows)) + "\n"
        if not doc.tables and "|" not in text:  # any kind: the text decides what is a table
            flats = scan_flat_tables(text).tables  # PDF text: tables as column dumps
            flats += [
                t
                for t in scan_aligned_tables(text).tables  # space-aligned columns
                if not any(t.start < f.end and f.start < t.end for f in flats)
            ]
            for flat in flats:
                text += "\n\n\f\n" + render_table(flat.rows, flat.caption) + "\n"
        return text, chunk_text(text, doc.id, max_tokens=self.max_chunk_tokens, lang=doc.lang)

    # -- whole documents -------------------------------------------------------------
    async def extract_many(self, docs: list[ExtractDoc], mode: Mode = Mode.FAST) -> list[DocResult]:
        """``extract`` for a batch: the English text chunks of all documents are parsed by
        spaCy in one ``nlp.pipe`` call first (batching is most of spaCy's speed)."""
        if self.use_nlp:
            self._chunked = {id(d): self.chunks_of(d) for d in docs}  # chunked once
            texts = [
                c.text
                for _, chunks in self._chunked.values()
                for c in chunks
                if c.kind == "text" and c.lang == "en" and c.text.strip()
            ]
            self._parsed = dict(zip(texts, await asyncio.to_thread(parse_many, texts), strict=True))
        try:
            return [await self.extract(d, mode) for d in docs]
        finally:
            self._parsed, self._chunked = {}, {}

    async def extract(
        self, doc: ExtractDoc, mode: Mode = Mode.FAST, *, skip_seen: bool = False
    ) -> DocResult:
        started = time.perf_counter()
        done = self._chunked.pop(id(doc), None)
        text, chunks = done or await asyncio.to_thread(self.chunks_of, doc)
        # the transcript's turns, read once: the call's company (context) and its figures
        read = doc_lang(doc, text) == "en" and doc.kind != "social"
        read = read and not (doc.kind == "filing" and registrant(text))  # a 10-K: no speakers
        turns = await asyncio.to_thread(transcript_turns, text) if read else []
        ctx = await asyncio.to_thread(self.context, doc, text, turns if read else None)
        result = DocResult(doc, ctx)
        version = self.prompt_version(mode)
        llm_chunks = 0
        fye_note = fiscal_note(doc.title, doc.text)
        until = report_end(doc.text) if doc.kind == "filing" else None
        result.turns = turns
        for chunk in chunks:
            key = chunk_key(chunk, version)
            if skip_seen and key in self._seen:
                result.chunks.append(ChunkResult(chunk, [], LLMRun(), skipped=True))
                continue
            drops: Counter[str] = Counter()
            is_table = chunk.kind == "table"
            before = f"{table_context(text, chunk.start)} {fye_note}" if is_table else ""
            cands = await asyncio.to_thread(
                self.fast_candidates, chunk, ctx, drops, before, until, turns
            )
            result.stats.dropped.update(drops)
            run = LLMRun()
            use_llm = self.llm is not None and mode not in (Mode.FAST, Mode.AUTO)
            use_llm = use_llm and chunk.kind == "text"
            if use_llm and llm_chunks < self.llm_max_chunks and self.llm is not None:
                llm_chunks += 1
                run = await self.llm.run(chunk.text, ctx, mode)
                repair = mode != Mode.SINGLE
                llm_ok, llm_stats = self.verifier.verify(
                    run.candidates, chunk.text, ctx, repair=repair
                )
                result.stats.merge(llm_stats)
            else:
                llm_ok = []
            vtext = chunk.text
            if is_table and ("<table" in vtext[:200].lower() or is_flattened(vtext)):
                # a grid's metric joins its title (the caption) and its row label, both in
                # the chunk but not side by side in the markup
                vtext += "\n" + "\n".join(sorted({c.tail for c in cands}))
            fast_ok, fast_stats = self.verifier.verify(cands, vtext, ctx)
            result.stats.merge(fast_stats)
            seen = {v.cand.key() for v in fast_ok}
            merged = fast_ok + [v for v in llm_ok if v.cand.key() not in seen]
            flags = Counter({k: n for k, n in fast_stats.dropped.items() if k != "duplicate"})
            result.chunks.append(ChunkResult(chunk, merged, run, flags=flags))
            result.triples += [self.to_triple(v, chunk, doc, ctx, mode, run) for v in merged]
            self._remember(key)
        kept = nested_employers(result.triples)
        result.stats.dropped["duplicate"] += len(result.triples) - len(kept)
        if doc.kind == "news" and ctx.lang == "en":
            kept = news_names(kept, text, ctx, result.stats.dropped)
        result.triples = kept
        result.fast_s = time.perf_counter() - started
        if mode == Mode.AUTO and self.tier is not None:  # the model where the rules are silent
            await self.tier.run(result)
        observe(doc.kind, len(result.triples), result.stats.dropped)
        return result

    def _remember(self, key: str) -> None:
        self._seen[key] = None
        while len(self._seen) > self._seen_limit:
            self._seen.popitem(last=False)

    def prompt_version(self, mode: Mode) -> str:
        return (
            FAST_VERSION
            if mode in (Mode.FAST, Mode.AUTO) or self.llm is None
            else f"{FAST_VERSION}+{PROMPT_VERSION}"
        )

    def to_triple(
        self, v: Verified, chunk: Chunk, doc: ExtractDoc, ctx: DocContext, mode: Mode, run: LLMRun
    ) -> Triple:
        c = v.cand
        start = chunk.start + max(c.start, 0)
        end = chunk.start + max(c.end, 0)
        evidence = chunk.text[max(c.start, 0) : max(c.end, 0)].strip()[:500]
        llm = c.component.value == "llm"
        period = str(c.props.get("period", ""))
        event_time = doc.event_time or datetime.now(UTC)
        return Triple(
            id=stable_id("triple", c.head, c.relation, c.tail, doc.id, chunk.index, period),
            source=f"extract:{c.component.value}",
            event_time=event_time,
            head=c.head, head_type=c.head_type, relation=c.relation,
            tail=c.tail, tail_type=c.tail_type,
            doc_id=doc.id, chunk_id=chunk.id,
            valid_from=c.valid_from,
            confidence=c.confidence, evidence=evidence,
            span_start=start, span_end=end,
            mode=(mode.value if llm else "fast"),
            extractor=f"{c.component.value}:{c.rule}",
            model_id=(self.llm.model_id if llm and self.llm else ""),
            prompt_version=(self.prompt_version(mode) if llm else FAST_VERSION),
            section=chunk.section,
            head_id=v.head_id, tail_id=v.tail_id,
            attributes={k: v2 for k, v2 in c.props.items()},
        )  # fmt: skip
