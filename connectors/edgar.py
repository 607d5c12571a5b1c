"""SEC EDGAR over httpx: new 10-K/10-Q/8-K filings of a watch list -> ``raw.filings``.

Live it needs internet and a declared User-Agent (``connectors.user_agent``: who you
are and a contact address, as SEC's fair-access policy asks); requests are capped at
``rate_limits.edgar`` (10/s, SEC's published limit) by one limiter per connector.

One stream per watch-list entry (ticker or CIK). Cursor: the filing's
``acceptanceDateTime|accessionNumber``. A first poll takes only the latest few filings;
later polls take every filing accepted after the cursor, oldest first. The primary
document's full text and its tables are kept (each table also as its grid in plain HTML,
``connectors/edgar_html.py``, for the extractor to read by its column spans);
text longer than one record allows is split into numbered parts.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from connectors.base import Batch, SchemaDriftError, SourceError, require_columns
from connectors.edgar_html import MAX_TABLE_HTML, filing_document, is_table_html
from connectors.http import HttpSource
from connectors.text import parse_time
from core.records import RawFiling
from core.settings import ConnectorSettings

TICKERS_URL = "https://www.sec.gov/files/company_tickers.json"
SUBMISSIONS_URL = "https://data.sec.gov/submissions/CIK{cik:010d}.json"
ARCHIVE_URL = "https://www.sec.gov/Archives/edgar/data/{cik}/{acc}/{doc}"
RECENT_FIELDS = (
    "accessionNumber",
    "filingDate",
    "reportDate",
    "acceptanceDateTime",
    "form",
    "primaryDocument",
)

PART_CHARS = 150_000  # below RawFiling's 200k cap, leaves room for tables in 1 MB
MAX_TABLE_ROWS = 300
MAX_CELL_CHARS = 300
MAX_TABLE_CHARS_PER_PART = 400_000
INITIAL_FILINGS = 3  # first poll of a new stream: only the latest few
MAX_FILINGS_PER_POLL = 10


def _json(resp: httpx.Response) -> Any:
    return orjson.loads(resp.content)


def parse_tickers(data: Any) -> dict[str, tuple[int, str]]:
    """SEC's company_tickers.json ({"0": {cik_str, ticker, title}, ...}) -> ticker -> (CIK,
    title); the canonical ticker/CIK list for entity resolution too."""
    try:
        return {
            str(v["ticker"]).upper(): (int(v["cik_str"]), str(v.get("title") or ""))
            for v in data.values()
        }
    except (KeyError, AttributeError, TypeError, ValueError) as exc:
        raise SchemaDriftError(f"company_tickers.json changed shape: {exc!r}") from exc


def split_parts(text: str, limit: int = PART_CHARS) -> list[tuple[int, str]]:
    """(start offset, chunk) pieces of at most ``limit`` chars, cut at paragraph breaks."""
    out: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + limit)
        if end < len(text):
            cut = text.rfind("\n\n", start + limit // 2, end)
            end = cut if cut > start else end
        out.append((start, text[start:end]))
        start = end
    return out or [(0, text)]


def _trim_table(rows: list[list[str]]) -> list[list[str]]:
    if is_table_html(rows):  # the table's grid as plain HTML (connectors/edgar_html.py)
        return [[rows[0][0][:MAX_TABLE_HTML]]]
    return [[c[:MAX_CELL_CHARS] for c in r] for r in rows[:MAX_TABLE_ROWS]]


class SecWatchlistSource:
    """A source polling SEC endpoints for the EDGAR watch list (tickers or ``CIK...``),
    at SEC's fair-access rate (at most 10 requests/s), tickers resolved to CIKs through
    SEC's company_tickers.json (fetched once)."""

    name = "sec"

    def __init__(
        self,
        cfg: ConnectorSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        min_interval_s: float = 0.0,
    ) -> None:
        self.watchlist = [w.strip().upper() for w in cfg.edgar_watchlist if w.strip()]
        self.rate_per_s = min(cfg.rate_limits.get("edgar", 10.0), 10.0)
        self.interval_s = max(cfg.intervals.get("edgar", 300.0), min_interval_s)
        self.http = HttpSource(
            self.name,
            cfg,
            rate_per_s=self.rate_per_s,
            transport=transport,
            headers={"Accept-Encoding": "gzip, deflate"},
        )
        self._tickers: dict[str, int] | None = None

    def streams(self) -> list[str]:
        return self.watchlist

    async def cik(self, entry: str) -> int:
        if entry.removeprefix("CIK").isdigit():
            return int(entry.removeprefix("CIK"))
        if self._tickers is None:
            _, data = await self.http.get(TICKERS_URL, _json)
            self._tickers = {t: cik for t, (cik, _title) in parse_tickers(data).items()}
        try:
            return self._tickers[entry]
        except KeyError:
            raise SourceError(f"ticker {entry} is not in SEC's company_tickers.json") from None


class EdgarConnector(SecWatchlistSource):
    name = "edgar"
    topics = ("raw.filings",)

    def __init__(
        self, cfg: ConnectorSettings, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        super().__init__(cfg, transport=transport)
        self.forms = set(cfg.edgar_forms)

    async def fetch(self, stream: str, cursor: str | None, state: dict[str, Any]) -> Batch:
        cik = await self.cik(stream)

        def parse_subs(resp: httpx.Response) -> tuple[str, list[dict[str, str]]]:
            doc = _json(resp)
            filings = doc.get("filings") if isinstance(doc, dict) else None
            recent = filings.get("recent") if isinstance(filings, dict) else None
            if not isinstance(recent, dict):
                raise SchemaDriftError("submissions JSON has no filings.recent")
            require_columns(recent, RECENT_FIELDS, f"EDGAR submissions CIK{cik:010d}")
            n = len(recent["accessionNumber"])
            rows = [{f: str(recent[f][i] or "") for f in RECENT_FIELDS} for i in range(n)]
            return str(doc.get("name") or stream), rows

        _, parsed = await self.http.get(SUBMISSIONS_URL.format(cik=cik), parse_subs)
        assert parsed is not None
        company_name, rows = parsed
        wanted = []
        for r in rows:
            if r["form"] not in self.forms:
                continue
            cur = f"{r['acceptanceDateTime']}|{r['accessionNumber']}"
            if cursor is None or f"{cur}|9999" > cursor:  # parts after a mid-filing checkpoint
                wanted.append((cur, r))
        wanted.sort(key=lambda x: x[0])
        wanted = wanted[-INITIAL_FILINGS:] if cursor is None else wanted[:MAX_FILINGS_PER_POLL]
        batch = Batch()
        company = f"CIK{cik:010d}" if stream.removeprefix("CIK").isdigit() else stream
        for cur, r in wanted:
            url = ARCHIVE_URL.format(
                cik=cik, acc=r["accessionNumber"].replace("-", ""), doc=r["primaryDocument"]
            )
            try:
                httpx.URL(url)
            except httpx.InvalidURL as exc:  # one bad row must not stall the stream
                batch.rows += 1
                batch.rejected += 1
                batch.errors.append(f"filing {cur}: no valid document URL ({exc})")
                continue
            _, doc = await self.http.get(url, lambda resp: filing_document(resp.content))
            assert doc is not None
            self._add_filing(batch, cur, r, doc, company, company_name, url)
        return batch

    def _add_filing(
        self, batch: Batch, cur: str, r: dict[str, str], doc: Any, company: str, name: str, url: str
    ) -> None:
        parts = split_parts(doc.text)
        when = parse_time(r["acceptanceDateTime"]) or parse_time(r["filingDate"])
        for i, (start, chunk) in enumerate(parts, 1):
            end = start + len(chunk)
            tables, size, omitted = [], 0, 0
            for pos, rows in zip(doc.table_pos, doc.tables, strict=True):
                if not (start <= pos < end or (i == len(parts) and pos >= end)):
                    continue
                t = _trim_table(rows)
                cost = sum(len(c) + 4 for row in t for c in row)
                if len(tables) >= 500 or size + cost > MAX_TABLE_CHARS_PER_PART:
                    omitted += 1
                    continue
                tables.append(t)
                size += cost
            text = chunk + (
                f"\n[{omitted} tables omitted from the tables field]" if omitted else ""
            )
            suffix = f" (part {i}/{len(parts)})" if len(parts) > 1 else ""
            batch.add(
                "raw.filings",
                f"{cur}|{9999 if i == len(parts) else i:04d}",  # 9999: filing complete
                RawFiling,
                {
                    "id": r["accessionNumber"] + (f"#p{i}" if len(parts) > 1 else ""),
                    "source": "sec-edgar",
                    "company": company,
                    "form_type": r["form"],
                    "title": f"{name} {r['form']} for {r['reportDate'] or r['filingDate']}{suffix}",
                    "text": text or f"{name} {r['form']} (no text in the primary document)",
                    "url": url,
                    "lang": "en",
                    "event_time": when,
                    "tables": tables,
                },
            )
