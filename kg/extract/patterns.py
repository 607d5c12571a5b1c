"""The fast-path patterns, as data: one ``Pattern`` per statement shape.

Each pattern is a regular expression with named groups and the triples it yields,
written as templates over those groups. ``@main`` in a head or tail is the document's
main entity (the filer, the central bank of a statement). ``each`` applies a second
expression to one group (a list of voters, of products) and yields the templates once
per match. Adding a statement shape is adding a row here; no code changes.

Names in templates are always spans of the text (a group), so every triple a pattern
yields is supported by its chunk by construction; ``props`` carry the numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

ROLE_MAP = {
    "ceo": "HAS_CEO",
    "chief executive officer": "HAS_CEO",
    "chief executive": "HAS_CEO",
    "chairman": "HAS_CHAIRMAN",
    "chair": "HAS_CHAIRMAN",
    "chairwoman": "HAS_CHAIRMAN",
    "董事长": "HAS_CHAIRMAN",
    "总经理": "HAS_CEO",
    "首席执行官": "HAS_CEO",
    "行长": "HAS_CHAIRMAN",
}


@dataclass(frozen=True)
class Out:
    """One triple template: ``{group}`` placeholders, ``@main`` for the main entity."""

    head: str
    head_type: str
    relation: str
    tail: str
    tail_type: str
    props: tuple[str, ...] = ()  # groups copied into the triple's properties
    when: str = ""  # only if this group matched (non-empty)


@dataclass(frozen=True)
class Pattern:
    name: str
    lang: str  # en | zh
    regex: str
    outs: tuple[Out, ...]
    each: str = ""  # group to split with ``item``
    item: str = ""  # regex applied (finditer) inside ``each``; its groups join the match's
    item_outs: tuple[Out, ...] = ()
    flags: int = re.I
    date_group: str = ""  # group holding the date the fact takes effect
    # cheap pre-filter: the pattern runs only if one of these (lower-case) occurs
    triggers: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)  # constant props

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.regex, self.flags)

    @cached_property
    def compiled_item(self) -> re.Pattern[str] | None:
        return re.compile(self.item, self.flags) if self.item else None


# -- building blocks -------------------------------------------------------------------
_NUM = r"\d+(?:[.,]\d+)*"
_FRAC = r"\d+(?:[‑\-–]\d/\d|/\d)?|\d/\d"
_NAME = r"[A-Z][a-z]+(?:\s+[A-Z]\.)?(?:\s+[A-Z][a-z'’-]+){1,2}"  # Jerome H. Powell
_ORG = r"[A-Z][\w&.-]*(?:\s+(?:[A-Z][\w&.-]*|of|and|&)){0,4}"
_ROLE = (
    r"chief executive officer|chief financial officer|chief operating officer|"
    r"chief executive|CEO|CFO|COO|chairman|chairwoman|chair|president|"
    r"executive vice president|general counsel"
)
_DIR_EN = (
    r"rose|fell|climbed|dropped|declined|increased|decreased|edged up|edged down|jumped|"
    r"slipped|gained|added|lost|eased|rallied|surged|plunged|widened|narrowed"
)
_INDICATOR_EN = (
    r"(?:the\s+)?(?:(?:\d{1,2}|two|five|ten|thirty)[- ](?:year|month|week)\s+)?"
    r"(?:U\.S\.\s+|US\s+|German\s+|Japanese\s+|Chinese\s+|China's\s+)?"
    r"(?:Treasury|government bond|Bund|JGB|bond|note|bill|mortgage|swap)?\s*"
    r"(?:yield|rate|spread)"
    r"|(?:the\s+)?(?:S&P 500|Nasdaq(?: Composite)?|Dow Jones Industrial Average|Dow|"
    r"CSI 300|Shanghai Composite|Hang Seng|dollar index|VIX|SOFR|Brent crude|WTI crude|"
    r"consumer price index|CPI|core PCE|PMI|unemployment rate|inflation rate)"
)

PATTERNS: tuple[Pattern, ...] = (
    # "the 10-year Treasury yield rose 7 bp to 4.25%"
    Pattern(
        name="indicator_move_en",
        triggers=(
            "rose",
            "fell",
            "climb",
            "drop",
            "declin",
            "increas",
            "decreas",
            "edged",
            "jump",
            "slipp",
            "gain",
            "added",
            "lost",
            "eased",
            "rall",
            "surg",
            "plung",
            "widen",
            "narrow",
        ),
        lang="en",
        regex=rf"(?P<ind>{_INDICATOR_EN})\s+(?P<dir>{_DIR_EN})\s+(?:by\s+)?"
        rf"(?P<chg>{_NUM})\s*(?P<chg_unit>bps?|basis points?|percentage points?|%|percent|points?)"
        rf"\s+to\s+(?:a\s+(?:record|\d+-\w+)\s+(?:high|low)\s+of\s+)?"
        rf"(?P<val>\$?{_NUM}\s*(?:%|percent)?)",
        outs=(
            Out(
                "{ind}",
                "Indicator",
                "HAS_VALUE",
                "{val}",
                "FinMetric",
                props=("dir", "chg", "chg_unit", "val"),
            ),
        ),
    ),
    # "the Committee decided to lower the target range for the federal funds rate by
    # 1/4 percentage point to 4-1/4 to 4-1/2 percent"
    Pattern(
        name="policy_rate_decision_en",
        triggers=("rate",),
        lang="en",
        regex=r"(?P<inst>Federal Open Market Committee|Committee|FOMC|Federal Reserve|"
        r"Bank of England|European Central Bank|ECB|Bank of Japan|Monetary Policy Committee)"
        r"\s+(?:decided\s+(?:today\s+)?to\s+|voted\s+to\s+|will\s+)?"
        r"(?P<act>lower|raise|maintain|cut|reduce|hike|increase|keep|leave)\s+"
        r"(?:the\s+)?(?:target\s+range\s+for\s+the\s+)?"
        r"(?P<ind>federal funds rate|bank rate|deposit facility rate|policy rate|"
        r"main refinancing rate)"
        rf"(?:\s+(?:unchanged\s+)?by\s+(?P<chg>{_FRAC})\s+(?:percentage\s+points?|basis\s+points?))?"
        rf",?\s+(?:unchanged\s+)?(?:at|to)\s+(?P<val>(?:{_FRAC})(?:\s+to\s+(?:{_FRAC}))?\s+percent)",
        outs=(
            Out(
                "{inst}",
                "Institution",
                "SETS_POLICY",
                "{ind}",
                "Indicator",
                props=("act", "chg", "val"),
            ),
            Out("{ind}", "Indicator", "HAS_VALUE", "{val}", "FinMetric", props=("act", "chg")),
        ),
    ),
    # "The Committee will continue reducing its holdings of Treasury securities"
    Pattern(
        name="balance_sheet_policy_en",
        triggers=("holdings of", "purchases of"),
        lang="en",
        regex=r"(?P<inst>Committee|Federal Reserve|FOMC)\s+(?:will|decided to)\s+"
        r"(?:continue\s+(?:to\s+)?)?(?P<act>reduc\w*|increas\w*|slow\w*|conclud\w*|purchas\w*)\s+"
        r"(?:the\s+pace\s+of\s+)?(?:its\s+)?(?P<pol>(?:holdings|purchases)\s+of\s+"
        r"(?:Treasury securities|agency (?:debt and agency )?mortgage-backed securities))",
        outs=(Out("{inst}", "Institution", "SETS_POLICY", "{pol}", "Policy", props=("act",)),),
    ),
    # "Voting for the monetary policy action were Jerome H. Powell, Chair; John C. Williams, ..."
    Pattern(
        name="fomc_voters_en",
        triggers=("voting",),
        lang="en",
        regex=r"Voting\s+(?:for|against)\s+(?:the|this)\s+(?:monetary\s+policy\s+)?action\s+"
        r"(?:were|was)\s*:?\s*(?P<list>[^\n]+?)\.?[ \t]*(?:\n|$)",
        outs=(),
        each="list",
        item=rf"(?P<person>{_NAME})(?:,\s+(?P<role>Vice Chair|Chair|Chairman)\b)?",
        item_outs=(
            Out("{person}", "Person", "EXECUTIVE_OF", "@main", "Institution", props=("role",)),
            Out("@main", "Institution", "HAS_CHAIRMAN", "{person}", "Person", when="role=Chair"),
        ),
        flags=0,
    ),
    # "said Pat Gelsinger, Intel CEO" / "Amy Hood, chief financial officer of Microsoft"
    Pattern(
        name="exec_title_en",
        triggers=("chief", "ceo", "cfo", "coo", "chair", "president", "counsel"),
        lang="en",
        regex=rf"(?P<person>{_NAME}),\s+(?:the\s+|our\s+)?(?:(?P<org>{_ORG})(?:'s|’s)?\s+)?"
        rf"(?P<role>{_ROLE})\b(?:\s+(?:of|at)\s+(?P<org2>{_ORG}))?",
        outs=(
            Out(
                "{person}", "Person", "EXECUTIVE_OF", "{org2|org|@main}", "Company", props=("role",)
            ),
            Out("{org2|org|@main}", "Company", "ROLE:{role}", "{person}", "Person"),
        ),
        flags=0,
    ),
    # "Acme named Jane Doe as chief executive officer, effective March 1, 2024"
    Pattern(
        name="appointment_en",
        triggers=("named", "appoint", "elected", "promoted"),
        lang="en",
        regex=rf"(?P<org>{_ORG})\s+(?:has\s+)?(?:named|appointed|announced\s+the\s+appointment\s+of|"
        rf"elected|promoted)\s+(?P<person>{_NAME})\s+(?:as\s+|to\s+be\s+|to\s+)?(?:its\s+|the\s+)?"
        rf"(?:new\s+)?(?P<role>{_ROLE})(?:,?\s+effective\s+(?P<date>[A-Z][a-z]+\.?\s+\d{{1,2}},\s+\d{{4}}))?",
        outs=(
            Out("{person}", "Person", "EXECUTIVE_OF", "{org}", "Company", props=("role",)),
            Out("{org}", "Company", "ROLE:{role}", "{person}", "Person"),
        ),
        date_group="date",
        flags=0,
    ),
    # "Moody's downgraded Acme's credit rating to Baa2"
    Pattern(
        name="rating_change_en",
        triggers=("moody", "s&p", "standard & poor", "fitch"),
        lang="en",
        regex=r"(?P<agency>Moody's|Moody’s|S&P Global Ratings|S&P|Standard & Poor's|Fitch Ratings|"
        rf"Fitch)\s+(?P<act>downgraded|upgraded|affirmed|cut|raised|lowered)\s+(?P<org>{_ORG})(?:'s|’s)?"
        r"\s+(?:(?:long-term|credit|issuer|sovereign|debt|senior unsecured)\s+)*ratings?\s+"
        r"(?:to|at)\s+(?P<grade>[A-D][a-z]{0,2}[1-3+-]?)",
        outs=(
            Out("{agency}", "Institution", "AFFECTS", "{org}", "Company", props=("act", "grade")),
        ),
        flags=0,
    ),
    # 10年期国债收益率下行3bp至1.85%
    Pattern(
        name="indicator_move_zh",
        triggers=("至", "到"),
        lang="zh",
        regex=r"(?P<ind>\d{1,2}年期(?:国债|国开债|政金债|地方债|美债)?(?:到期)?收益率|"
        r"DR00[17]|R00[17]|SHIBOR|Shibor|隔夜(?:SHIBOR|Shibor|利率)|1年期LPR|5年期以上LPR|"
        r"美元指数|人民币汇率|CPI|PPI|PMI|M2增速|社融增速)"
        r"[^，。；\d]{0,6}?(?P<dir>上行|下行|上涨|下跌|下降|上升|回落|走高|走低|上调|下调)"
        r"(?P<chg>\d+(?:\.\d+)?)\s*(?P<chg_unit>bp|BP|bps|个基点|个百分点)?[^，。；\d]{0,3}?"
        r"(?:至|到)(?P<val>\d+(?:\.\d+)?%)",
        outs=(
            Out(
                "{ind}",
                "Indicator",
                "HAS_VALUE",
                "{val}",
                "FinMetric",
                props=("dir", "chg", "chg_unit", "val"),
            ),
        ),
        flags=0,
    ),
    # 央行开展2000亿元7天期逆回购操作，中标利率持平于1.50%
    Pattern(
        name="pboc_operation_zh",
        triggers=("开展",),
        lang="zh",
        regex=r"(?P<inst>中国人民银行|人民银行|央行)[^，。；]{0,10}?开展(?P<amt>\d+(?:\.\d+)?亿元)"
        r"(?P<tool>(?:\d+天期|\d+个月期|\d+年期)?(?:逆回购|MLF|中期借贷便利|国库现金定存|买断式逆回购))"
        r"(?:操作)?(?:[，,]\s*(?:中标|操作)利率(?P<rate>持平|下降\d+(?:\.\d+)?(?:bp|个基点)|"
        r"上升\d+(?:\.\d+)?(?:bp|个基点))?(?:于|至)?(?P<val>\d+(?:\.\d+)?%)?)?",
        outs=(
            Out(
                "{inst}",
                "Institution",
                "SETS_POLICY",
                "{tool}",
                "Policy",
                props=("amt", "rate", "val"),
            ),
        ),
        flags=0,
    ),
    # 央行下调存款准备金率0.5个百分点 / 1年期LPR下调10个基点
    Pattern(
        name="pboc_rate_decision_zh",
        triggers=("下调", "上调", "降低", "维持"),
        lang="zh",
        regex=r"(?P<inst>中国人民银行|人民银行|央行)[^，。；]{0,8}?(?P<act>下调|上调|降低|维持)"
        r"(?P<pol>存款准备金率|准备金率|政策利率|再贷款利率|LPR|公开市场操作利率)"
        r"(?P<chg>\d+(?:\.\d+)?(?:个百分点|个基点|bp))?",
        outs=(
            Out("{inst}", "Institution", "SETS_POLICY", "{pol}", "Policy", props=("act", "chg")),
        ),
        flags=0,
    ),
    # 某某公司董事会聘任张三为总经理
    Pattern(
        name="appointment_zh",
        triggers=("聘任", "任命", "选举"),
        lang="zh",
        regex=r"(?P<org>[\u4e00-\u9fff]{2,16}?(?:公司|银行|集团|证券))(?:董事会)?(?:聘任|任命|选举)"
        r"(?P<person>[\u4e00-\u9fff]{2,4}?)(?:先生|女士)?(?:为|担任)(?:公司)?"
        r"(?P<role>董事长|总经理|首席执行官|行长|财务总监|副总经理)",
        outs=(
            Out("{person}", "Person", "EXECUTIVE_OF", "{org}", "Company", props=("role",)),
            Out("{org}", "Company", "ROLE:{role}", "{person}", "Person"),
        ),
        flags=0,
    ),
    # 中诚信国际将某某公司主体信用等级下调至AA
    Pattern(
        name="rating_change_zh",
        triggers=("等级", "评级"),
        lang="zh",
        regex=r"(?P<agency>中诚信国际|联合资信|大公国际|东方金诚|上海新世纪|惠誉|穆迪|标普)"
        r"(?:将|把)?(?P<org>[\u4e00-\u9fff]{2,16}?(?:公司|银行|集团))[^，。；]{0,8}?"
        r"(?:信用等级|评级)(?P<act>下调|上调|维持)(?:至|为|在)?(?P<grade>[A-C]{1,3}[+-]?)",
        outs=(
            Out("{agency}", "Institution", "AFFECTS", "{org}", "Company", props=("act", "grade")),
        ),
        flags=0,
    ),
)


def patterns_for(lang: str) -> tuple[Pattern, ...]:
    return tuple(p for p in PATTERNS if p.lang == lang)
