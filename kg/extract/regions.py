"""Names that are regions (countries, US states, continents, market regions), as data.

spaCy's small English model tags products and brands as GPE now and then ("Windows",
"AI"); a region triple is only proposed for a name on this list.
"""

from __future__ import annotations

COUNTRIES = """Afghanistan Albania Algeria Argentina Armenia Australia Austria Azerbaijan Bahrain
Bangladesh Belarus Belgium Bolivia Brazil Bulgaria Cambodia Cameroon Canada Chile China Colombia
Croatia Cuba Cyprus Czechia Denmark Ecuador Egypt Estonia Ethiopia Finland France Georgia Germany
Ghana Greece Guatemala Hungary Iceland India Indonesia Iran Iraq Ireland Israel Italy Jamaica Japan
Jordan Kazakhstan Kenya Kuwait Latvia Lebanon Lithuania Luxembourg Malaysia Malta Mexico Moldova
Mongolia Morocco Myanmar Nepal Netherlands Nigeria Norway Oman Pakistan Panama Paraguay Peru
Philippines Poland Portugal Qatar Romania Russia Rwanda Serbia Singapore Slovakia Slovenia Spain
Sweden Switzerland Taiwan Tanzania Thailand Tunisia Turkey Uganda Ukraine Uruguay Uzbekistan
Venezuela Vietnam Zambia Zimbabwe""".split()
MULTI = [
    "United States", "United States of America", "U.S.", "US", "USA", "United Kingdom", "U.K.",
    "UK", "Great Britain", "Britain", "South Korea", "Korea", "North Korea", "South Africa",
    "New Zealand", "Saudi Arabia", "United Arab Emirates", "UAE", "Hong Kong", "Macau",
    "Puerto Rico", "Czech Republic", "Costa Rica", "Dominican Republic", "Sri Lanka",
    "Mainland China", "Greater China", "Europe", "Asia", "Africa", "North America",
    "South America", "Latin America", "Central America", "Middle East", "Asia Pacific",
    "Asia-Pacific", "APAC", "EMEA", "the Americas", "Americas", "Eurozone", "European Union",
    "EU", "Western Europe", "Eastern Europe", "Southeast Asia", "Scandinavia", "Caribbean",
    "Oceania",
]  # fmt: skip
US_STATES = """Alabama Alaska Arizona Arkansas California Colorado Connecticut Delaware Florida
Hawaii Idaho Illinois Indiana Iowa Kansas Kentucky Louisiana Maine Maryland Massachusetts Michigan
Minnesota Mississippi Missouri Montana Nebraska Nevada Ohio Oklahoma Oregon Pennsylvania Tennessee
Texas Utah Vermont Virginia Washington Wisconsin Wyoming""".split()
US_STATES += [
    "New Hampshire", "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota",
    "Rhode Island", "South Carolina", "South Dakota", "West Virginia",
]  # fmt: skip

REGIONS = frozenset(n.casefold() for n in (*COUNTRIES, *MULTI, *US_STATES))


def is_region(name: str) -> bool:
    return name.strip().casefold() in REGIONS


# "Spanish lender Bankia": the place a nationality word names (a reader writes the country)
_DEMONYM_PAIRS = """American:United States; British:Britain; Canadian:Canada; Chinese:China;
French:France; German:Germany; Italian:Italy; Japanese:Japan; Spanish:Spain; Swiss:Switzerland;
Dutch:Netherlands; Swedish:Sweden; Norwegian:Norway; Danish:Denmark; Finnish:Finland;
Irish:Ireland; Belgian:Belgium; Austrian:Austria; Australian:Australia; Brazilian:Brazil;
Mexican:Mexico; Indian:India; Russian:Russia; South Korean:South Korea; Korean:South Korea;
Greek:Greece; Portuguese:Portugal; Polish:Poland; Turkish:Turkey; Israeli:Israel;
Taiwanese:Taiwan; Singaporean:Singapore; Argentine:Argentina; Chilean:Chile; European:Europe;
Asian:Asia; African:Africa; Emirati:United Arab Emirates; Saudi:Saudi Arabia;
Indonesian:Indonesia; Malaysian:Malaysia; Thai:Thailand; Egyptian:Egypt; Nigerian:Nigeria;
Hungarian:Hungary; Czech:Czech Republic"""
DEMONYM_PLACE = {
    a.strip().casefold(): b.strip()
    for a, b in (pair.split(":") for pair in _DEMONYM_PAIRS.split(";"))
}
