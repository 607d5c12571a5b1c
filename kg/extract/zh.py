"""Chinese bond-market commentary: jieba word segmentation plus cue patterns, LLM-free.

The fast patterns (``kg.extract.patterns``, lang ``zh``) read indicator moves and
central-bank operations; this module adds what links them within a sentence:
market-status phrases (资金面宽松, 债市走强), causes (受...影响), bond issues
(...发行...中期票据), and institutions named by jieba (part of speech ``nt``).
"""

from __future__ import annotations

import json
import re
import threading
from datetime import date, timedelta
from functools import lru_cache
from importlib import resources
from typing import Any

from kg.extract.figures import complete_zh, header_date
from kg.extract.types import Candidate, Component, DocContext

_lock = threading.Lock()
SENTENCE = re.compile(r"[^。！？；\n]+[。！？；]?")
STATUS = re.compile(
    r"(?P<status>资金面(?:整体)?(?:宽松|均衡|偏紧|收敛|平稳|偏松|转松|趋紧)|"
    r"债市(?:走强|走弱|震荡|回暖|承压|调整)|流动性(?:合理充裕|宽松|偏紧|充裕|收紧)|"
    r"市场情绪(?:回暖|谨慎|偏弱|修复)|股市(?:上涨|下跌|震荡))"
)
CAUSE = re.compile(r"受(?P<cause>[\u4e00-\u9fffA-Za-z0-9]{2,12}?)(?:等因素)?(?:的)?影响")
ISSUE = re.compile(
    r"(?P<org>(?:中国|美国|日本)?财政部|[\u4e00-\u9fff]{2,16}?(?:公司|银行|集团|政府))"
    r"[^，。；]{0,20}?发行"
    r"(?:总额|规模为?|金额)?(?P<amt>\d+(?:\.\d+)?亿元)?(?P<bond>[\u4e00-\u9fff0-9A-Za-z]{0,16}?"
    r"(?:中期票据|短期融资券|公司债|企业债|专项债|特别国债|国债|金融债|二级资本债|永续债|绿色债券))"
    r"(?:[，,]\s*发行规模为?(?P<amt2>\d+(?:\.\d+)?亿元))?"
)
# a wrap's numbered list ("①...②...") or clauses cut by "；": each item is a statement of
# its own, and a date written in item ④ ("“20旭辉02”8月27日复牌") is not item ③'s
ITEM_MARK = re.compile(r"[①-⑳；;]")
# a Chinese wire story's dateline ("路透北京8月31日 -") or a brief's title ("《路透早报》--9月1日"),
# and a full date in its text (a photo's caption "2018年8月30日，北京，...")
DATELINE = re.compile(
    r"路透[\u4e00-\u9fff/／]{0,16}?(?P<m>\d{1,2})月(?P<d>\d{1,2})日|"
    r"--\s*(?P<m2>\d{1,2})月(?P<d2>\d{1,2})日"
)
FULL_DATE = re.compile(r"(?P<y>(?:19|20)\d{2})年(?P<m>\d{1,2})月(?P<d>\d{1,2})日")
# "周五" / "星期五": a day of the story's week (not "上周五", "下周三", "本周")
WEEKDAY = re.compile(r"(?<![上下本])(?:周|星期)(?P<w>[一二三四五六日天])")
# the month or quarter a figure is of ("8月非农就业岗位", "截至7月末", "第二季", "本月"); not a
# day ("8月27日"), a count of months ("3个月") or a tenor
MONTH = re.compile(
    r"(?:(?P<y>(?:19|20)\d{2})年)?(?<![\d个])(?P<m>1[0-2]|[1-9])月(?!\d{1,2}[日号]|[底末初]?以来)"
)
QUARTER = re.compile(r"(?:(?P<y>(?:19|20)\d{2})年)?第(?P<q>[一二三四1-4])季")
INDICATOR = re.compile(
    r"\d{1,2}年期(?:国债|国开债|政金债|地方债|美债)?(?:到期)?收益率|DR00[17]|R00[17]|"
    r"1年期LPR|5年期以上LPR|美元指数|人民币汇率"
)


@lru_cache(maxsize=1)
def _jieba() -> Any:
    import jieba
    import jieba.posseg

    with _lock:
        jieba.setLogLevel(60)
        jieba.initialize()
        for w in market_words():
            jieba.add_word(w["word"], tag=w["pos"])
    return jieba.posseg


@lru_cache(maxsize=1)
def market_words() -> tuple[dict[str, str], ...]:
    """The wraps' words jieba's dictionary lacks (``kg/data/zh_market_words.json``)."""
    raw = resources.files("kg.data").joinpath("zh_market_words.json").read_text("utf-8")
    return tuple(json.loads(raw)["words"])


def institutions(text: str) -> list[str]:
    """Organisation names jieba tags ``nt`` (央行, 财政部, 国家统计局 ...)."""
    return [w.word for w in _jieba().cut(text) if w.flag == "nt" and len(w.word) >= 2]


def item_of(sent: str, start: int, end: int) -> str:
    """The list item of ``sent`` that holds ``sent[start:end]`` (the whole sentence when it
    is no list): what a commentary fact's date and figures are read from."""
    cuts = [m.start() for m in ITEM_MARK.finditer(sent)]
    lo = max((c for c in cuts if c <= start), default=0)
    hi = min((c for c in cuts if c >= end), default=len(sent))
    return sent[lo:hi]


def dateline_day(text: str) -> str:
    """The day of a Chinese wire story's dateline, whose year the story does not write: the
    year of a full date of the text in the week up to it (a photo caption "2018年8月30日" of
    a "路透北京8月31日" story) -> "2018-08-31"; else "--08-31" (ISO 8601's day without its
    year, as stated); "" without a dateline in the opening. A morning brief ("《路透早报》--9月8日")
    tells the business day before (2018-09-07), unknown without the year ("")."""
    m = DATELINE.search(text[:600])
    if m is None:
        return ""
    mon, day = int(m.group("m") or m.group("m2")), int(m.group("d") or m.group("d2"))
    brief = "早报" in text[: m.start()]  # a morning brief tells the last session's news
    for f in FULL_DATE.finditer(text):
        y = int(f.group("y"))
        try:
            gap = (date(y, mon, day) - date(y, int(f.group("m")), int(f.group("d")))).days
        except ValueError:
            continue
        if 0 <= gap <= 7:
            d = date(y, mon, day)
            if brief:  # the business day before the brief's (Friday for a Saturday's)
                d -= timedelta(days=1)
                while d.weekday() >= 5:
                    d -= timedelta(days=1)
            return d.isoformat()
    if brief:
        return ""  # which day came before it is not known without the year
    return f"--{mon:02d}-{day:02d}" if 1 <= mon <= 12 and 1 <= day <= 31 else ""


def item_day(item: str, day: str) -> str:
    """The day an item speaks of: the document's, or, when it names a weekday ("美国股市周五
    收低" in a Saturday morning brief), the latest such weekday not after the document's day
    (a day without its year cannot be counted back: no day)."""
    w = WEEKDAY.search(item)
    if w is None:
        return day
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        return ""  # "周五" in a brief of "--09-01": which day is not known, none is said
    want = min("一二三四五六日天".index(w.group("w")), 6)
    d = date.fromisoformat(day)
    return (d - timedelta(days=(d.weekday() - want) % 7)).isoformat()


def settle_period(props: dict[str, Any], item: str, day: str) -> None:
    """A figure of a month or quarter (an economic release, a month's holdings, "本月"'s
    gain) takes that period instead of the document's day: "8月平均时薪" in a story of
    2018-09-08 -> 2018-08 (a later month than the story's is last year's), "第二季" ->
    2018-Q2; a story whose year is unknown ("--09-06") keeps a month as "--08" and no
    quarter. ``item`` ends with the figure's statement: a month after it ("创2005年2月底以来新低")
    is none of its."""
    if not isinstance(props.get("value"), float) or props.get("period"):
        return
    dy, dm = (int(day[:4]), int(day[5:7])) if re.match(r"\d{4}-\d{2}", day) else (0, 0)
    if not dm and day.startswith("--"):
        dm = int(day[2:4])
    period = ""
    if (m := MONTH.search(item)) is not None:
        mon = int(m.group("m"))
        year = int(m.group("y")) if m.group("y") else (dy - (mon > dm) if dy else 0)
        period = f"{year:04d}-{mon:02d}" if year else (f"--{mon:02d}" if dm else "")
    elif (q := QUARTER.search(item)) is not None and (q.group("y") or dy):
        n = "一二三四".find(q.group("q")) + 1 or int(q.group("q"))
        year = int(q.group("y")) if q.group("y") else dy - (3 * n > dm + 2)
        period = f"{year:04d}-Q{n}"
    elif "本月" in item and dm:
        period = f"{dy:04d}-{dm:02d}" if dy else f"--{dm:02d}"
    if period:
        props["period"] = period
        props.pop("date", None)


def _c(
    head: str, ht: str, rel: str, tail: str, tt: str, s: int, e: int, rule: str, **props: Any
) -> Candidate:
    return Candidate(head, ht, rel, tail, tt, s, e, Component.ZH, rule, None,
                     {k: v for k, v in props.items() if v}, 0.75)  # fmt: skip


def _issue_props(amount: str, item: str, day: str) -> dict[str, Any]:
    """An issue's date (the item's "8月23日" in the document's year, else the document's
    day) and its amount in CNY (``figures.complete_zh``), as the patterns' facts carry."""
    props: dict[str, Any] = {"amt": amount}
    complete_zh(props, item, day)
    props.pop("amt", None)
    return {"amount": amount, **props}


def extract_zh(text: str, ctx: DocContext) -> list[Candidate]:
    out: list[Candidate] = []
    day = ctx.event_time.date().isoformat() if ctx.event_time else header_date(
        f"{ctx.title}\n{text[:400]}"
    )
    for sm in SENTENCE.finditer(text):
        sent, base = sm.group(0), sm.start()
        end = base + len(sent)
        statuses = [m.group("status") for m in STATUS.finditer(sent)]
        indicators = list(dict.fromkeys(m.group(0) for m in INDICATOR.finditer(sent)))
        # A status and an indicator or policy merely sharing a sentence ("资金面宽松，DR007
        # 下行") is no relation: only a stated cause (受...影响) links them.
        for m in CAUSE.finditer(sent):
            cause = m.group("cause")
            if cause in ("此", "这", "其") or len(cause) < 2:
                continue
            for ind in indicators:
                out.append(_c(ind, "Indicator", "IMPACTED_BY", cause, "Event", base, end, "cause"))
            for status in statuses:
                out.append(
                    _c(status, "MarketStatus", "IMPACTED_BY", cause, "Event", base, end, "cause")
                )
        for m in ISSUE.finditer(sent):
            org, bond = m.group("org"), m.group("bond")
            amount = m.group("amt") or m.group("amt2") or ""
            facts = _issue_props(amount, item_of(sent, m.start(), m.end()), day)
            state = org.endswith(("财政部", "政府"))
            issuer_type = "Institution" if state else "Company"
            out.append(_c(bond, "Bond", "ISSUED_BY", org, issuer_type, base, end,
                          "bond_issue", **facts))  # fmt: skip
            # the issue as the issuer's act, as readers of the wraps write it: the
            # treasury's sale is its policy, a company's its deal (role issuer)
            out.append(
                _c(org, issuer_type, "SETS_POLICY" if state else "INVOLVED_IN", bond,
                   "Policy" if state else "Event", base, end, "bond_issue_act", **facts,
                   action="发行", role="" if state else "issuer")
            )  # fmt: skip
    return out
