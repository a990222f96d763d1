"""The two-letter (ISO 639-1) code of each language that has one, with its three-letter codes (ISO 639-2/T, 639-2/B
and 639-3) and English names, so that a post's ``meta.lang`` given as ``eng``, ``ger`` or ``English`` is the ``en`` or
``de`` that ``faim.data.language.identify`` gives (``faim.data.language.given_code``).

``TABLE`` is built from Debian's ``iso-codes`` 4.15.0 (``/usr/share/iso-codes/json/iso_639-2.json`` and
``iso_639-3.json``, which the pkg-isocodes project keeps from the tables of the ISO 639-2 registration authority,
the Library of Congress, and of the ISO 639-3 one, SIL International): one line for each of the 185 two-letter codes
either file gives (``bh``, Bihari, in ISO 639-2 alone; ``sh``, Serbo-Croatian, in ISO 639-3 alone), then the
three-letter codes of the entries holding it (``alpha_3`` and ``bibliographic``), then after ``|`` each of their
names (``name``, split at ``; ``, ``common_name`` and ``inverted_name``), and each such name without a closing
parenthesis (``Swahili`` of ``Swahili (macrolanguage)``) where it names no other language of either file (so
``Tonga`` is not read as ``to``, as Tonga (Nyasa) and Tonga (Zambia) bear it too). An individual language of a
macrolanguage has no two-letter code of its own there (``cmn``, Mandarin, ``arb``, Standard Arabic): those that the
macrolanguage's code is written for are read as it (``ENCOMPASSED``), and the others stay as they are written.
"""

from __future__ import annotations

import re

TABLE = """
aa aar | Afar
ab abk | Abkhazian
ae ave | Avestan
af afr | Afrikaans
ak aka | Akan
am amh | Amharic
an arg | Aragonese
ar ara | Arabic
as asm | Assamese
av ava | Avaric
ay aym | Aymara
az aze | Azerbaijani
ba bak | Bashkir
be bel | Belarusian
bg bul | Bulgarian
bh bih | Bihari languages
bi bis | Bislama
bm bam | Bambara
bn ben | Bengali | Bangla
bo bod tib | Tibetan
br bre | Breton
bs bos | Bosnian
ca cat | Catalan | Valencian
ce che | Chechen
ch cha | Chamorro
co cos | Corsican
cr cre | Cree
cs ces cze | Czech
cu chu | Church Slavic | Old Slavonic | Church Slavonic | Old Bulgarian | Old Church Slavonic | Slavic, Church
cv chv | Chuvash
cy cym wel | Welsh
da dan | Danish
de deu ger | German
dv div | Divehi | Dhivehi | Maldivian
dz dzo | Dzongkha
ee ewe | Ewe
el ell gre | Greek, Modern (1453-) | Greek, Modern | Modern Greek (1453-) | Modern Greek
en eng | English
eo epo | Esperanto
es spa | Spanish | Castilian
et est | Estonian
eu eus baq | Basque
fa fas per | Persian
ff ful | Fulah
fi fin | Finnish
fj fij | Fijian
fo fao | Faroese
fr fra fre | French
fy fry | Western Frisian | Frisian, Western
ga gle | Irish
gd gla | Gaelic | Scottish Gaelic | Gaelic, Scottish
gl glg | Galician
gn grn | Guarani
gu guj | Gujarati
gv glv | Manx
ha hau | Hausa
he heb | Hebrew
hi hin | Hindi
ho hmo | Hiri Motu
hr hrv | Croatian
ht hat | Haitian | Haitian Creole
hu hun | Hungarian
hy hye arm | Armenian
hz her | Herero
ia ina | Interlingua (International Auxiliary Language Association) | Interlingua
id ind | Indonesian
ie ile | Interlingue | Occidental
ig ibo | Igbo
ii iii | Sichuan Yi | Nuosu | Yi, Sichuan
ik ipk | Inupiaq
io ido | Ido
is isl ice | Icelandic
it ita | Italian
iu iku | Inuktitut
ja jpn | Japanese
jv jav | Javanese
ka kat geo | Georgian
kg kon | Kongo
ki kik | Kikuyu | Gikuyu
kj kua | Kuanyama | Kwanyama
kk kaz | Kazakh
kl kal | Kalaallisut | Greenlandic
km khm | Central Khmer | Khmer
kn kan | Kannada
ko kor | Korean
kr kau | Kanuri
ks kas | Kashmiri
ku kur | Kurdish
kv kom | Komi
kw cor | Cornish
ky kir | Kirghiz | Kyrgyz
la lat | Latin
lb ltz | Luxembourgish | Letzeburgesch
lg lug | Ganda
li lim | Limburgan | Limburger | Limburgish
ln lin | Lingala
lo lao | Lao
lt lit | Lithuanian
lu lub | Luba-Katanga
lv lav | Latvian
mg mlg | Malagasy
mh mah | Marshallese
mi mri mao | Maori
mk mkd mac | Macedonian
ml mal | Malayalam
mn mon | Mongolian
mr mar | Marathi
ms msa may | Malay | Malay (macrolanguage)
mt mlt | Maltese
my mya bur | Burmese
na nau | Nauru
nb nob | Bokmål, Norwegian | Norwegian Bokmål
nd nde | Ndebele, North | North Ndebele
ne nep | Nepali | Nepali (macrolanguage)
ng ndo | Ndonga
nl nld dut | Dutch | Flemish
nn nno | Norwegian Nynorsk | Nynorsk, Norwegian
no nor | Norwegian
nr nbl | Ndebele, South | South Ndebele
nv nav | Navajo | Navaho
ny nya | Chichewa | Chewa | Nyanja
oc oci | Occitan (post 1500) | Occitan | Provençal
oj oji | Ojibwa
om orm | Oromo
or ori | Oriya | Oriya (macrolanguage)
os oss | Ossetian | Ossetic
pa pan | Panjabi | Punjabi
pi pli | Pali
pl pol | Polish
ps pus | Pushto | Pashto
pt por | Portuguese
qu que | Quechua
rm roh | Romansh
rn run | Rundi
ro ron rum | Romanian | Moldavian | Moldovan
ru rus | Russian
rw kin | Kinyarwanda
sa san | Sanskrit
sc srd | Sardinian
sd snd | Sindhi
se sme | Northern Sami | Sami, Northern
sg sag | Sango
sh hbs | Serbo-Croatian
si sin | Sinhala | Sinhalese
sk slk slo | Slovak
sl slv | Slovenian
sm smo | Samoan
sn sna | Shona
so som | Somali
sq sqi alb | Albanian
sr srp | Serbian
ss ssw | Swati
st sot | Sotho, Southern | Southern Sotho
su sun | Sundanese
sv swe | Swedish
sw swa | Swahili | Swahili (macrolanguage)
ta tam | Tamil
te tel | Telugu
tg tgk | Tajik
th tha | Thai
ti tir | Tigrinya
tk tuk | Turkmen
tl tgl | Tagalog
tn tsn | Tswana
to ton | Tonga (Tonga Islands)
tr tur | Turkish
ts tso | Tsonga
tt tat | Tatar
tw twi | Twi
ty tah | Tahitian
ug uig | Uighur | Uyghur
uk ukr | Ukrainian
ur urd | Urdu
uz uzb | Uzbek
ve ven | Venda
vi vie | Vietnamese
vo vol | Volapük
wa wln | Walloon
wo wol | Wolof
xh xho | Xhosa
yi yid | Yiddish
yo yor | Yoruba
za zha | Zhuang | Chuang
zh zho chi | Chinese
zu zul | Zulu
"""


APOSTROPHES = str.maketrans(dict.fromkeys("\u2019\u2018\u02bc\u02bb`\u00b4\u2032", "'"))
"""The marks names are written with where another writes an apostrophe, ``'``: the typographic ones (``’``, ``‘``)
CLDR writes (``o‘zbek``, ``avañe’ẽ``, ``Côte d’Ivoire``, ``N’Ko``), the modifier letters (``ʼ``, and ``ʻ``, the
turned comma of Uzbek's ``oʻzbek`` and Hawaiian's ʻokina), and the grave and acute accents and the prime that
keyboards without them give for one."""


def name_key(name: str) -> str:
    """A name of a language, region or script as the tables are looked up by: case-folded, each of ``APOSTROPHES`` as
    ``'``, so that ``o'zbek``, ``oʻzbek`` and CLDR's ``o‘zbek`` are one name."""
    return name.casefold().translate(APOSTROPHES)


def read_table(table: str) -> tuple[dict[str, str], dict[str, str]]:
    """The codes and names of ``table``, written as ``TABLE`` is: each three-letter code → its two-letter code, and
    each name, as it is looked up (``name_key``) → its two-letter code."""
    codes: dict[str, str] = {}
    named: dict[str, str] = {}
    for line in table.strip().splitlines():
        letters, *names = line.split(" | ")
        two, *threes = letters.split()
        codes |= dict.fromkeys(threes, two)
        named |= {name_key(name): two for name in names}
    return codes, named


WITHDRAWN = {"in": "id", "iw": "he", "ji": "yi", "jw": "jv", "mo": "ro"}
"""The two-letter codes ISO 639-1 withdrew → the ones that replaced them, as the IANA Language Subtag Registry (BCP
47) gives each its Preferred-Value: Indonesian, Hebrew, Yiddish, Javanese, and Moldavian, now Romanian. Java's
``Locale`` wrote ``in``, ``iw`` and ``ji`` up to Java 17, and Twitter's API gives a tweet's ``lang`` as ``in`` and
``iw``."""

MERGED = {"ajp": "apc"}
"""The codes ISO 639-3 retired by merging their language into another's → that language's code, as the IANA Language
Subtag Registry (BCP 47) gives each its Preferred-Value: South Levantine Arabic, ``ajp``, merged into ``apc``,
Levantine Arabic, in 2023 (Debian's ``iso-codes`` 4.15.0 lists both still), so that data written before and after
the merger is one language."""

ENCOMPASSED = {
    "arb": "ar",
    "azj": "az",
    "cmn": "zh",
    "ekk": "et",
    "fuc": "ff",
    "gaz": "om",
    "khk": "mn",
    "kmr": "ku",
    "kpv": "kv",
    "lvs": "lv",
    "npi": "ne",
    "ory": "or",
    "pbt": "ps",
    "pbu": "ps",
    "pes": "fa",
    "plt": "mg",
    "prs": "fa",
    "swh": "sw",
    "uzn": "uz",
    "ydd": "yi",
    "zsm": "ms",
}
"""The individual language (ISO 639-3) each of these macrolanguages' two-letter codes is written for, as CLDR's
language aliases read it, → that code: Standard Arabic is the ``ar`` that ``faim.data.language.identify`` tells and
most data writes, Mandarin the ``zh``, Iranian Persian the ``fa``; FLORES-200 and NLLB name languages so
(``arb_Arab``, ``pes_Arab``, ``swh_Latn``, and ``als_Latn``, Tosk Albanian, the ``sq`` told: ``SCRIPTED``); so is
Pulaar, ``fuc``, Senegal's Fula, which CLDR writes ``ff`` (``ff_Latn_SN`` its likely locale) and names in itself
``Pulaar`` (``AUTONYMS``), which ISO 639-3 names ``fuc``. So
are the members whose text ``identify`` tells as the macrolanguage, which FLORES-200 writes where CLDR's aliases
give another: Northern Kurdish (Kurmanji, ``kmr_Latn``) is the ``ku`` its model labels the Kurmanji of Wikipedia,
Southern Pashto (``pbt_Arab``; ``pbu`` is Northern Pashto) ``ps``, Komi-Zyrian (``kpv``) ``kv``, and Dari (``prs``),
which the model cannot tell apart from Iranian Persian and tells as ``fa``, ``fa``: a FLORES-200 dump's Dari posts
are a language of their own only where a meta field other than ``lang`` says so. Other members stay as written:
``yue`` (Cantonese), and ``arz`` (Egyptian Arabic), ``azb`` (South Azerbaijani) and ``ckb`` (Central Kurdish,
Sorani), which ``identify`` tells apart from ``ar``, ``az`` and ``ku`` too."""

TOLD_AS = {"nb": "no", "fil": "tl"}
"""A code → the one ``faim.data.language.identify`` tells its language's text as: Norwegian Bokmål, ``nb`` (``nob``,
``nb_NO``, ``no-bok``), is the ``no`` its model labels Bokmål text with, as Twitter's API and most data write
Norwegian too; Nynorsk, which it tells apart, stays ``nn``. Filipino, ``fil`` (``fil-PH``, as Android, Java and CLDR
write the Philippines' locale), the standard of Tagalog, is the ``tl`` its model labels it, as Twitter's API and
Facebook's ``tl_PH`` write it."""

SCRIPTED = {("als", "latn"): "sq"}
"""A code that reads as one language written with a script and as another alone → the language it is with that
script: FLORES-200's and NLLB's ``als_Latn`` is Tosk Albanian, ISO 639-3's ``als``, read as its macrolanguage's
``sq``, while a bare ``als`` is Alemannic, as Wikipedia writes it and so do data built from it, the model
``faim.data.language.identify`` runs and faim's own output before it gave Alemannic its ISO 639 code, ``gsw``
(``faim.data.language.ISO_LABELS``)."""

EXTLANGS = {
    prefix: frozenset(subtags.split())
    for prefix, subtags in {
        "ar": "aao abh abv acm acq acw acx acy adf aeb aec afb ajp apc apd arb arq ars ary arz auz avl ayh ayl ayn ayp "
        "pga shu ssh",
        "kok": "gom knn",
        "lv": "ltg lvs",
        "ms": "bjn btj bve bvu coa dup hji jak jax kvb kvr kxd lce lcf liw max meo mfa mfb min mqg msi mui orn ors pel "
        "pse tmw urk vkk vkt xmm zlm zmi zsm",
        "sgn": (
            "ads aed aen afg ajs ase asp asq asw bfi bfk bog bqn bqy bvl bzs cds csc csd cse csf csg csl csn csq csr "
            "csx doq dse dsl dsz ecs ehs esl esn eso eth fcs fse fsl fss gds gse gsg gsm gss gus hab haf hds hks hos "
            "hps hsh hsl icl iks ils inl ins ise isg isr jcs jhs jks jls jos jsl jus kgi kvk lbs lls lsb lsc lsl lsn "
            "lso lsp lst lsv lsw lsy lws mdl mfs mre msd msr mzc mzg mzy nbs ncs nsi nsl nsp nsr nzs okl pgz pks prl "
            "prz psc psd psg psl pso psp psr pys rib rms rnb rsl rsm rsn sdl sfb sfs sgg sgx slf sls sqk sqs sqx ssp "
            "ssr svk swl syy szs tse tsm tsq tss tsy tza ugn ugy ukl uks vgt vsi vsl vsv wbs xki xml xms ygs yhs ysl "
            "ysm zib zsl"
        ),
        "sw": "swc swh",
        "uz": "uzn uzs",
        "zh": "cdo cjy cmn cnp cpx csp czh czo gan hak hsn lzh mnp nan wuu yue",
    }.items()
}
"""Each macrolanguage (and ``sgn``, sign languages) BCP 47 writes an extended language subtag after → those subtags,
the languages it encompasses, as the IANA Language Subtag Registry (RFC 5646) lists its ``Type: extlang`` records
with that ``Prefix``, less those ISO 639-3 as Debian's ``iso-codes`` 4.15.0 gives it no longer lists (``bbz``,
retired in 2020; ``ajp``, which ISO 639-3 merged into ``apc`` in 2023 and the registry keeps as deprecated, is listed
there, and kept, read as ``apc``: ``MERGED``); those of ``sgn`` are the sign languages of ISO 639-3, as the
registry's are, with International Sign (``ils``) and those of Belgium (``sfb``, ``vgt``) it names otherwise.
``zh-yue`` is Cantonese, ``ar-arz`` Egyptian Arabic; a second subtag of three letters that is none of these is a
region, as .NET's ``zh-CHS`` and ``zh-CHT`` (Simplified and Traditional Chinese) and ``en-USA`` write it."""

REGIONS = """
AW | ABW | Aruba | AF | AFG | Afghanistan | AO | AGO | Angola | AI | AIA | Anguilla | AX | ALA | Åland Islands | AL
ALB | Albania | AD | AND | Andorra | AE | ARE | United Arab Emirates | AR | ARG | Argentina | AM | ARM | Armenia
AS | ASM | American Samoa | AQ | ATA | Antarctica | TF | ATF | French Southern Territories | AG | ATG
Antigua and Barbuda | AU | AUS | Australia | AT | AUT | Austria | AZ | AZE | Azerbaijan | BI | BDI | Burundi | BE
BEL | Belgium | BJ | BEN | Benin | BQ | BES | Bonaire, Sint Eustatius and Saba | BF | BFA | Burkina Faso | BD | BGD
Bangladesh | BG | BGR | Bulgaria | BH | BHR | Bahrain | BS | BHS | Bahamas | BA | BIH | Bosnia and Herzegovina | BL
BLM | Saint Barthélemy | BY | BLR | Belarus | BZ | BLZ | Belize | BM | BMU | Bermuda | BO | BOL
Bolivia, Plurinational State of | Bolivia | BR | BRA | Brazil | BB | BRB | Barbados | BN | BRN | Brunei Darussalam
BT | BTN | Bhutan | BV | BVT | Bouvet Island | BW | BWA | Botswana | CF | CAF | Central African Republic | CA | CAN
Canada | CC | CCK | Cocos (Keeling) Islands | CH | CHE | Switzerland | CL | CHL | Chile | CN | CHN | China | CI
CIV | Côte d'Ivoire | CM | CMR | Cameroon | CD | COD | Congo, The Democratic Republic of the | CG | COG | Congo | CK
COK | Cook Islands | CO | COL | Colombia | KM | COM | Comoros | CV | CPV | Cabo Verde | CR | CRI | Costa Rica | CU
CUB | Cuba | CW | CUW | Curaçao | CX | CXR | Christmas Island | KY | CYM | Cayman Islands | CY | CYP | Cyprus | CZ
CZE | Czechia | DE | DEU | Germany | DJ | DJI | Djibouti | DM | DMA | Dominica | DK | DNK | Denmark | DO | DOM
Dominican Republic | DZ | DZA | Algeria | EC | ECU | Ecuador | EG | EGY | Egypt | ER | ERI | Eritrea | EH | ESH
Western Sahara | ES | ESP | Spain | EE | EST | Estonia | ET | ETH | Ethiopia | FI | FIN | Finland | FJ | FJI | Fiji
FK | FLK | Falkland Islands (Malvinas) | FR | FRA | France | FO | FRO | Faroe Islands | FM | FSM
Micronesia, Federated States of | GA | GAB | Gabon | GB | GBR | United Kingdom | GE | GEO | Georgia | GG | GGY
Guernsey | GH | GHA | Ghana | GI | GIB | Gibraltar | GN | GIN | Guinea | GP | GLP | Guadeloupe | GM | GMB | Gambia
GW | GNB | Guinea-Bissau | GQ | GNQ | Equatorial Guinea | GR | GRC | Greece | GD | GRD | Grenada | GL | GRL
Greenland | GT | GTM | Guatemala | GF | GUF | French Guiana | GU | GUM | Guam | GY | GUY | Guyana | HK | HKG
Hong Kong | HM | HMD | Heard Island and McDonald Islands | HN | HND | Honduras | HR | HRV | Croatia | HT | HTI
Haiti | HU | HUN | Hungary | ID | IDN | Indonesia | IM | IMN | Isle of Man | IN | IND | India | IO | IOT
British Indian Ocean Territory | IE | IRL | Ireland | IR | IRN | Iran, Islamic Republic of | Iran | IQ | IRQ | Iraq
IS | ISL | Iceland | IL | ISR | Israel | IT | ITA | Italy | JM | JAM | Jamaica | JE | JEY | Jersey | JO | JOR
Jordan | JP | JPN | Japan | KZ | KAZ | Kazakhstan | KE | KEN | Kenya | KG | KGZ | Kyrgyzstan | KH | KHM | Cambodia
KI | KIR | Kiribati | KN | KNA | Saint Kitts and Nevis | KR | KOR | Korea, Republic of | South Korea | KW | KWT
Kuwait | LA | LAO | Lao People's Democratic Republic | Laos | LB | LBN | Lebanon | LR | LBR | Liberia | LY | LBY
Libya | LC | LCA | Saint Lucia | LI | LIE | Liechtenstein | LK | LKA | Sri Lanka | LS | LSO | Lesotho | LT | LTU
Lithuania | LU | LUX | Luxembourg | LV | LVA | Latvia | MO | MAC | Macao | MF | MAF | Saint Martin (French part)
MA | MAR | Morocco | MC | MCO | Monaco | MD | MDA | Moldova, Republic of | Moldova | MG | MDG | Madagascar | MV
MDV | Maldives | MX | MEX | Mexico | MH | MHL | Marshall Islands | MK | MKD | North Macedonia | ML | MLI | Mali | MT
MLT | Malta | MM | MMR | Myanmar | ME | MNE | Montenegro | MN | MNG | Mongolia | MP | MNP | Northern Mariana Islands
MZ | MOZ | Mozambique | MR | MRT | Mauritania | MS | MSR | Montserrat | MQ | MTQ | Martinique | MU | MUS | Mauritius
MW | MWI | Malawi | MY | MYS | Malaysia | YT | MYT | Mayotte | NA | NAM | Namibia | NC | NCL | New Caledonia | NE
NER | Niger | NF | NFK | Norfolk Island | NG | NGA | Nigeria | NI | NIC | Nicaragua | NU | NIU | Niue | NL | NLD
Netherlands | NO | NOR | Norway | NP | NPL | Nepal | NR | NRU | Nauru | NZ | NZL | New Zealand | OM | OMN | Oman
PK | PAK | Pakistan | PA | PAN | Panama | PN | PCN | Pitcairn | PE | PER | Peru | PH | PHL | Philippines | PW | PLW
Palau | PG | PNG | Papua New Guinea | PL | POL | Poland | PR | PRI | Puerto Rico | KP | PRK
Korea, Democratic People's Republic of | North Korea | PT | PRT | Portugal | PY | PRY | Paraguay | PS | PSE
Palestine, State of | PF | PYF | French Polynesia | QA | QAT | Qatar | RE | REU | Réunion | RO | ROU | Romania | RU
RUS | Russian Federation | RW | RWA | Rwanda | SA | SAU | Saudi Arabia | SD | SDN | Sudan | SN | SEN | Senegal | SG
SGP | Singapore | GS | SGS | South Georgia and the South Sandwich Islands | SH | SHN
Saint Helena, Ascension and Tristan da Cunha | SJ | SJM | Svalbard and Jan Mayen | SB | SLB | Solomon Islands | SL
SLE | Sierra Leone | SV | SLV | El Salvador | SM | SMR | San Marino | SO | SOM | Somalia | PM | SPM
Saint Pierre and Miquelon | RS | SRB | Serbia | SS | SSD | South Sudan | ST | STP | Sao Tome and Principe | SR | SUR
Suriname | SK | SVK | Slovakia | SI | SVN | Slovenia | SE | SWE | Sweden | SZ | SWZ | Eswatini | SX | SXM
Sint Maarten (Dutch part) | SC | SYC | Seychelles | SY | SYR | Syrian Arab Republic | Syria | TC | TCA
Turks and Caicos Islands | TD | TCD | Chad | TG | TGO | Togo | TH | THA | Thailand | TJ | TJK | Tajikistan | TK
TKL | Tokelau | TM | TKM | Turkmenistan | TL | TLS | Timor-Leste | TO | TON | Tonga | TT | TTO | Trinidad and Tobago
TN | TUN | Tunisia | TR | TUR | Türkiye | TV | TUV | Tuvalu | TW | TWN | Taiwan, Province of China | Taiwan | TZ
TZA | Tanzania, United Republic of | Tanzania | UG | UGA | Uganda | UA | UKR | Ukraine | UM | UMI
United States Minor Outlying Islands | UY | URY | Uruguay | US | USA | United States | UZ | UZB | Uzbekistan | VA
VAT | Holy See (Vatican City State) | VC | VCT | Saint Vincent and the Grenadines | VE | VEN
Venezuela, Bolivarian Republic of | Venezuela | VG | VGB | Virgin Islands, British | VI | VIR | Virgin Islands, U.S.
VN | VNM | Viet Nam | Vietnam | VU | VUT | Vanuatu | WF | WLF | Wallis and Futuna | WS | WSM | Samoa | YE | YEM
Yemen | ZA | ZAF | South Africa | ZM | ZMB | Zambia | ZW | ZWE | Zimbabwe
"""
"""Each region of ISO 3166-1, as Debian's ``iso-codes`` 4.15.0 gives it (``iso_3166-1.json``): its two- and
three-letter codes, name and common name (``alpha_2``, ``alpha_3``, ``name`` and ``common_name``), split at `` | ``
and at line ends."""

SCRIPTS = """
Adlm | Adlam | Afak | Afaka | Aghb | Caucasian Albanian | Ahom | Ahom, Tai Ahom | Arab | Arabic | Aran
Arabic (Nastaliq variant) | Armi | Imperial Aramaic | Armn | Armenian | Avst | Avestan | Bali | Balinese | Bamu
Bamum | Bass | Bassa Vah | Batk | Batak | Beng | Bengali | Bhks | Bhaiksuki | Blis | Blissymbols | Bopo | Bopomofo
Brah | Brahmi | Brai | Braille | Bugi | Buginese | Buhd | Buhid | Cakm | Chakma | Cans
Unified Canadian Aboriginal Syllabics | Cari | Carian | Cham | Cham | Cher | Cherokee | Cirt | Cirth | Copt | Coptic
Cprt | Cypriot | Cyrl | Cyrillic | Cyrs | Cyrillic (Old Church Slavonic variant) | Deva | Devanagari (Nagari) | Dsrt
Deseret (Mormon) | Dupl | Duployan shorthand, Duployan stenography | Egyd | Egyptian demotic | Egyh
Egyptian hieratic | Egyp | Egyptian hieroglyphs | Elba | Elbasan | Ethi | Ethiopic (Geʻez) | Geok
Khutsuri (Asomtavruli and Nuskhuri) | Geor | Georgian (Mkhedruli) | Glag | Glagolitic | Goth | Gothic | Gran
Grantha | Grek | Greek | Gujr | Gujarati | Guru | Gurmukhi | Hanb | Han with Bopomofo (alias for Han + Bopomofo)
Hang | Hangul (Hangŭl, Hangeul) | Hani | Han (Hanzi, Kanji, Hanja) | Hano | Hanunoo (Hanunóo) | Hans
Han (Simplified variant) | Hant | Han (Traditional variant) | Hatr | Hatran | Hebr | Hebrew | Hira | Hiragana | Hluw
Anatolian Hieroglyphs (Luwian Hieroglyphs, Hittite Hieroglyphs) | Hmng | Pahawh Hmong | Hrkt
Japanese syllabaries (alias for Hiragana + Katakana) | Hung | Old Hungarian (Hungarian Runic) | Inds
Indus (Harappan) | Ital | Old Italic (Etruscan, Oscan, etc.) | Jamo | Jamo (alias for Jamo subset of Hangul) | Java
Javanese | Jpan | Japanese (alias for Han + Hiragana + Katakana) | Jurc | Jurchen | Kali | Kayah Li | Kana
Katakana | Khar | Kharoshthi | Khmr | Khmer | Khoj | Khojki | Kitl | Khitan large script | Kits
Khitan small script | Knda | Kannada | Kore | Korean (alias for Hangul + Han) | Kpel | Kpelle | Kthi | Kaithi | Lana
Tai Tham (Lanna) | Laoo | Lao | Latf | Latin (Fraktur variant) | Latg | Latin (Gaelic variant) | Latn | Latin | Leke
Leke | Lepc | Lepcha (Róng) | Limb | Limbu | Lina | Linear A | Linb | Linear B | Lisu | Lisu (Fraser) | Loma | Loma
Lyci | Lycian | Lydi | Lydian | Mahj | Mahajani | Mand | Mandaic, Mandaean | Mani | Manichaean | Marc | Marchen
Maya | Mayan hieroglyphs | Mend | Mende Kikakui | Merc | Meroitic Cursive | Mero | Meroitic Hieroglyphs | Mlym
Malayalam | Modi | Modi, Moḍī | Mong | Mongolian | Moon | Moon (Moon code, Moon script, Moon type) | Mroo | Mro, Mru
Mtei | Meitei Mayek (Meithei, Meetei) | Mult | Multani | Mymr | Myanmar (Burmese) | Narb
Old North Arabian (Ancient North Arabian) | Nbat | Nabataean | Newa | Newa, Newar, Newari, Nepāla lipi | Nkgb
Nakhi Geba ('Na-'Khi ²Ggŏ-¹baw, Naxi Geba) | Nkoo | N’Ko | Nshu | Nüshu | Ogam | Ogham | Olck
Ol Chiki (Ol Cemet’, Ol, Santali) | Orkh | Old Turkic, Orkhon Runic | Orya | Oriya | Osge | Osage | Osma | Osmanya
Palm | Palmyrene | Pauc | Pau Cin Hau | Perm | Old Permic | Phag | Phags-pa | Phli | Inscriptional Pahlavi | Phlp
Psalter Pahlavi | Phlv | Book Pahlavi | Phnx | Phoenician | Piqd | Klingon (KLI pIqaD) | Plrd | Miao (Pollard)
Prti | Inscriptional Parthian | Qaaa | Reserved for private use (start) | Qabx | Reserved for private use (end)
Rjng | Rejang (Redjang, Kaganga) | Roro | Rongorongo | Runr | Runic | Samr | Samaritan | Sara | Sarati | Sarb
Old South Arabian | Saur | Saurashtra | Sgnw | SignWriting | Shaw | Shavian (Shaw) | Shrd | Sharada, Śāradā | Sidd
Siddham, Siddhaṃ, Siddhamātṛkā | Sind | Khudawadi, Sindhi | Sinh | Sinhala | Sora | Sora Sompeng | Sund | Sundanese
Sylo | Syloti Nagri | Syrc | Syriac | Syre | Syriac (Estrangelo variant) | Syrj | Syriac (Western variant) | Syrn
Syriac (Eastern variant) | Tagb | Tagbanwa | Takr | Takri, Ṭākrī, Ṭāṅkrī | Tale | Tai Le | Talu | New Tai Lue | Taml
Tamil | Tang | Tangut | Tavt | Tai Viet | Telu | Telugu | Teng | Tengwar | Tfng | Tifinagh (Berber) | Tglg
Tagalog (Baybayin, Alibata) | Thaa | Thaana | Thai | Thai | Tibt | Tibetan | Tirh | Tirhuta | Ugar | Ugaritic | Vaii
Vai | Visp | Visible Speech | Wara | Warang Citi (Varang Kshiti) | Wole | Woleai | Xpeo | Old Persian | Xsux
Cuneiform, Sumero-Akkadian | Yiii | Yi | Zinh | Code for inherited script | Zmth | Mathematical notation | Zsye
Symbols (Emoji variant) | Zsym | Symbols | Zxxx | Code for unwritten documents | Zyyy | Code for undetermined script
Zzzz | Code for uncoded script
"""
"""Each script of ISO 15924, as ``iso-codes`` gives it (``iso_15924.json``): its four-letter code and name
(``alpha_4`` and ``name``), split as ``REGIONS`` is."""

REGION_CODES = frozenset(
    {part.lower() for part in re.split(r" \| |\n", REGIONS.strip()) if re.fullmatch("[A-Z]{2,3}", part)}
    | {"ac", "cp", "dg", "ea", "eu", "ez", "ic", "ta", "un"}
    | {"an", "bu", "cs", "dd", "fx", "nt", "su", "tp", "yd", "yu", "zr"}
    | {"aa", "zz", "uk"}
    | {
        f"{first}{second}"
        for first, seconds in (("q", "mnopqrstuvwxyz"), ("x", "abcdefghijklmnopqrstuvwxyz"))
        for second in seconds
    }
)
"""Each code a region subtag of BCP 47 is written with, in small letters: ISO 3166-1's two- and three-letter codes
(``REGIONS``), the others the IANA registry lists (Ascension, the European Union, the United Nations, Tristan da
Cunha ...; those of former countries, ``an`` of the Netherlands Antilles, ``cs`` of Serbia and Montenegro, ``su``,
``yu``), its private-use ones (``aa``, ``qm`` to ``qz``, ``xa`` to ``xz``, ``zz``) and the ``uk`` of ``en-UK``, as the
United Kingdom is often written. A two- or three-letter language code after a language where none of these is,
``hi-en`` or ``hin-eng``, is a second language: the pair, as code-mixed data (Hinglish) tags its posts
(``faim.data.language.given_code``)."""

LOCALE_WORDS = frozenset(
    {"american", "australian", "brazilian", "british", "canadian", "european", "hong kong sar", "international"}
    | {"korea", "latin america", "latin american", "macao sar", "macau", "mexican", "simplified", "traditional", "uk"}
    | {"hong kong sar china", "macao sar china", "simplified han", "traditional han", "swiss"}
)
"""Words that name a locale's region or script in menus where ISO 3166-1 and ISO 15924 give none: the ``UK`` of
``English (UK)``, the ``Simplified`` and ``Traditional`` of Chinese (Han), CLDR's ``Simplified Han`` and ``Hong Kong
SAR China``, ``Latin America`` of Spanish, and the adjectives ``Portuguese (Brazilian)``, ``English (American)`` and
``French (Swiss)`` and ``German (Swiss)`` name a region with (menus name the locales ``de-CH`` and ``fr-CH`` so: Swiss
German, ``gsw``, is not what ``German (Swiss)`` names there)."""

VARIETIES = {
    ("no", "bokmal"): "nb",
    ("no", "bokmål"): "nb",
    ("zh", "cantonese"): "yue",
    ("fa", "dari"): "prs",
    ("ar", "egyptian"): "arz",
    ("fa", "farsi"): "fa",
    ("zh", "hakka"): "hak",
    ("zh", "hokkien"): "nan",
    ("ku", "kurmanji"): "kmr",
    ("zh", "mandarin"): "cmn",
    ("ar", "moroccan"): "ary",
    ("no", "nynorsk"): "nn",
    ("zh", "shanghainese"): "wuu",
    ("ku", "sorani"): "ckb",
}
"""The variety of a language that menus name in brackets after it, ``Norwegian (Nynorsk)``, ``Kurdish (Sorani)``,
``Chinese (Cantonese)``: the language's code (as ``NAMED`` gives it) and the variety, case-folded → its code, read as
a code given is (``kmr``, Kurmanji, is ``ku``, ``cmn`` ``zh``: ``ENCOMPASSED``). Another language's variety is none of
its own (``French (Moroccan)``)."""


def locale_names(name: str) -> set[str]:
    """A name or code of ``REGIONS`` or ``SCRIPTS``, as it is looked up (``name_key``), as written, without its
    bracket, and each alias its bracket holds, split at commas (``Devanagari (Nagari)``: ``devanagari (nagari)``,
    ``devanagari``, ``nagari``)."""
    outside = re.sub(r" ?\([^)]*\)", "", name)
    inside = [alias.strip() for bracket in re.findall(r"\(([^)]*)\)", name) for alias in bracket.split(",")]
    return {name_key(part) for part in (name, outside, *inside) if part}


LOCALE_PARTS = (
    frozenset().union(
        *(locale_names(name) for table in (REGIONS, SCRIPTS) for name in re.split(r" \| |\n", table.strip()))
    )
    | LOCALE_WORDS
)
"""Each name and code of a region or script, as it is looked up (``locale_names``): what a bracket after a language's
name holds where it names the language's locale (``English (US)``, ``Serbian (Latin)``, ``Korean (Hangul)``,
``Chinese (Traditional, Hong Kong)``), read without it."""

TOLD_TABLE = """
arz | Egyptian Arabic | Arabic, Egyptian
ast | Asturian | Bable | Leonese | Asturleonese
azb | South Azerbaijani | Azerbaijani, South
bar | Bavarian
bcl | Central Bikol | Bikol, Central
bho | Bhojpuri
bpy | Bishnupriya
bxr | Russia Buriat | Buriat, Russia
cbk | Chavacano
ceb | Cebuano
fil | Filipino | Pilipino
chr | Cherokee
ckb | Central Kurdish | Kurdish, Central
diq | Dimli (individual language)
dsb | Lower Sorbian | Sorbian, Lower
dty | Dotyali
frr | Northern Frisian | Frisian, Northern
gom | Goan Konkani | Konkani, Goan
gsw | Swiss German | German, Swiss | Alemannic | Alsatian
hif | Fiji Hindi | Hindi, Fiji
hsb | Upper Sorbian | Sorbian, Upper
ilo | Iloko
jbo | Lojban
krc | Karachay-Balkar
lez | Lezghian
lmo | Lombard
lrc | Northern Luri | Luri, Northern
mai | Maithili
mhr | Eastern Mari | Mari, Eastern
min | Minangkabau
mrj | Western Mari | Mari, Western
mwl | Mirandese
myv | Erzya
mzn | Mazanderani
nah | Nahuatl languages
nap | Neapolitan
nds | Low German | German, Low | Low Saxon | Saxon, Low
new | Newari | Nepal Bhasa
pam | Pampanga | Kapampangan
pfl | Pfaelzisch
pms | Piemontese
pnb | Western Panjabi | Panjabi, Western
rue | Rusyn
sah | Yakut
sat | Santali
scn | Sicilian
sco | Scots
tyv | Tuvinian
vec | Venetian
vep | Veps
vls | Vlaams
war | Waray (Philippines) | Waray
wuu | Wu Chinese | Chinese, Wu
xal | Kalmyk | Oirat
xmf | Mingrelian
yue | Yue Chinese | Chinese, Yue
"""
"""Each language ``faim.data.language.identify`` tells by a three-letter code, having no two-letter one (its model's
labels of such languages, Alemannic's as ``gsw``, Bhojpuri's, which it labels ``bh`` as Wikipedia does, as ``bho``,
and those of ``ONE_LANGUAGE_SCRIPTS``), or tells as another's (Filipino, ``fil``, as ``tl``: ``TOLD_AS``), then after
``|`` its English names as ``iso-codes`` 4.15.0 gives them (``iso_639-3.json``'s ``name`` and ``inverted_name``, and
``iso_639-2.json``'s ``name`` split at ``; ``), none naming another language as written there, and each without its
closing parenthesis where that names no other (``Dimli`` names Zaza too); ``eml``, Emiliano-Romagnolo, which ISO
639-3 retired, has none."""

CLDR_NAMES = """
el | Greek
ff | Fula
mi | Māori
or | Odia
pfl | Palatine German
pms | Piedmontese
to | Tongan
vls | West Flemish
yue | Cantonese
"""
"""The English name CLDR gives each code of ``TABLE`` and ``TOLD_TABLE`` that ISO 639 names otherwise (Babel 2.18.0's
``Locale("en").languages``, CLDR 47), as ICU, Java's ``Locale.getDisplayLanguage`` and Babel name a language, so that
data naming languages so (``Greek``, where ISO 639 writes ``Modern Greek``; ``Odia`` for ``Oriya``) is read too;
``Cantonese`` is ``yue``, as ``Chinese (Cantonese)`` is (``VARIETIES``)."""

AUTONYMS = """
aa | Qafar
ab | Аԥсшәа
am | አማርኛ
an | aragonés
ar | العربية
as | অসমীয়া
ast | asturianu
az | azərbaycan
ba | башҡорт теле
be | беларуская
bg | български
bm | bamanakan
bn | বাংলা
bo | བོད་སྐད་
br | brezhoneg
bs | bosanski
ca | català
ce | нохчийн
chr | ᏣᎳᎩ
ckb | کوردیی ناوەندی
co | corsu
cs | čeština
cu | церковнослове́нскїй
cv | чӑваш
cy | Cymraeg
da | dansk
de | Deutsch
dsb | dolnoserbšćina
dv | ދިވެހިބަސް
dz | རྫོང་ཁ
ee | eʋegbe
el | Ελληνικά
es | español
et | eesti
eu | euskara
fa | فارسی
ff | Pulaar
fi | suomi
fo | føroyskt
fr | français
frr | Nordfriisk
fy | Frysk
ga | Gaeilge
gd | Gàidhlig
gl | galego
gn | avañe’ẽ
gsw | Schwiizertüütsch
gu | ગુજરાતી
gv | Gaelg
he | עברית
hi | हिन्दी
hr | hrvatski
hsb | hornjoserbšćina
ht | Kreyòl Ayisyen
hu | magyar
hy | հայերեն
id | Indonesia
ii | ꆈꌠꉙ
is | íslenska
it | italiano
iu | ᐃᓄᒃᑎᑐᑦ
ja | 日本語
jbo | la .lojban.
jv | Jawa
ka | ქართული
kk | қазақ тілі
km | ខ្មែរ
kn | ಕನ್ನಡ
ko | 한국어
ks | کٲشُر
ku | kurdî (kurmancî)
kw | kernewek
ky | кыргызча
la | Latina
lb | Lëtzebuergesch
lg | Luganda
ln | lingála
lo | ລາວ
lrc | لۊری شومالی
lt | lietuvių
lv | latviešu
mai | मैथिली
mk | македонски
ml | മലയാളം
mn | монгол
mr | मराठी
ms | Melayu
mt | Malti
my | မြန်မာ
myv | эрзянь кель
mzn | مازرونی
nb | norsk bokmål
nds | Neddersass’sch
ne | नेपाली
nl | Nederlands
nn | norsk nynorsk
no | norsk
nv | Diné Bizaad
om | Oromoo
or | ଓଡ଼ିଆ
os | ирон
pa | ਪੰਜਾਬੀ
pl | polski
ps | پښتو
pt | português
qu | Runasimi
rm | rumantsch
rn | Ikirundi
ro | română
ru | русский
rw | Ikinyarwanda
sa | संस्कृत भाषा
sah | саха тыла
sat | ᱥᱟᱱᱛᱟᱲᱤ
sc | sardu
scn | sicilianu
sd | سنڌي
se | davvisámegiella
sg | Sängö
si | සිංහල
sk | slovenčina
sl | slovenščina
sn | chiShona
so | Soomaali
sq | shqip
sr | српски
ss | siSwati
st | Sesotho
su | Basa Sunda
sv | svenska
sw | Kiswahili
ta | தமிழ்
te | తెలుగు
tg | тоҷикӣ
th | ไทย
ti | ትግርኛ
tk | türkmen dili
tn | Setswana
to | lea fakatonga
tr | Türkçe
ts | Xitsonga
tt | татар
ug | ئۇيغۇرچە
uk | українська
ur | اردو
uz | o‘zbek
ve | Tshivenḓa
vec | veneto
vi | Tiếng Việt
wa | walon
xh | IsiXhosa
yi | ייִדיש
yo | Èdè Yorùbá
yue | 粵語
za | Vahcuengh
zh | 中文
zu | isiZulu
"""
"""The name CLDR gives each code of ``TABLE`` and ``TOLD_TABLE`` in its own language (Babel 2.18.0's
``Locale(code).languages[code]``, CLDR 47: ``Deutsch``, ``español``, ``中文``), as data collected through menus in many
languages names them, where it is no English name of it and names no other code there (``isiNdebele`` names North and
South Ndebele both) nor another language (``Tshiluba``, which CLDR gives Luba-Katanga, ``lu``, is Luba-Lulua's:
``MENU_NAMES``)."""

MENU_NAMES = """
id | Bahasa Indonesia
ms | Bahasa Melayu | Bahasa Malaysia
lua | Tshiluba | Luba-Lulua
"""
"""The names language menus give a language where CLDR's name of it in itself (``AUTONYMS``) differs or is another
language's: MediaWiki's, which names each Wikipedia's language in its menu of languages, and most sites' switchers of
language write Indonesian ``Bahasa Indonesia`` and Malay ``Bahasa Melayu`` (``bahasa``, language), where CLDR writes
``Indonesia`` and ``Melayu``; and Malaysia names Malay ``Bahasa Malaysia``. Luba-Lulua (Luba-Kasai), ``lua``, as
ISO 639 and CLDR name it in English, is Tshiluba in itself and in Google Translate's menu, where CLDR names
Luba-Katanga (Kiluba), ``lu``, so in itself (``AUTONYMS`` leaves that out)."""

TWO_LETTER, TWO_LETTER_NAMED = read_table(TABLE)
"""Each three-letter code of ``TABLE`` → its two-letter code (``eng`` → ``en``, ``ger`` and ``deu`` → ``de``), and
each English name of it, as it is looked up (``name_key``) → its two-letter code (``english`` → ``en``)."""

NAMED = (
    TWO_LETTER_NAMED
    | read_table(TOLD_TABLE)[1]
    | read_table(CLDR_NAMES)[1]
    | read_table(AUTONYMS)[1]
    | read_table(MENU_NAMES)[1]
)
"""Each English name of ``TABLE``, ``TOLD_TABLE`` and ``CLDR_NAMES`` and each name of ``AUTONYMS`` and
``MENU_NAMES``, as it is looked up (``name_key``: ``o'zbek`` for CLDR's ``o‘zbek``) → its code, the two-letter one
where there is one (``english`` → ``en``, ``swiss german`` → ``gsw``, ``deutsch`` → ``de``, ``bahasa indonesia`` →
``id``), so that a post naming its language is one language with the posts whose text is told in it."""

GRANDFATHERED = {
    "art-lojban": "jbo",
    "cel-gaulish": "cel-gaulish",
    "i-ami": "ami",
    "i-bnn": "bnn",
    "i-hak": "hak",
    "i-klingon": "tlh",
    "i-lux": "lb",
    "i-navajo": "nv",
    "i-pwn": "pwn",
    "i-tao": "tao",
    "i-tay": "tay",
    "i-tsu": "tsu",
    "no-bok": "nb",
    "no-nyn": "nn",
    "sgn-be-fr": "sfb",
    "sgn-be-nl": "vgt",
    "sgn-ch-de": "sgg",
    "zh-guoyu": "cmn",
    "zh-hakka": "hak",
    "zh-min": "zh",
    "zh-min-nan": "nan",
    "zh-xiang": "hsn",
}
"""The tags BCP 47 keeps from RFC 3066 that name a language the subtags they are written with do not (``art`` is a
collection, ``i`` no language, ``min`` is Minangkabau's code, ``nyn`` Nyankole's) → the language each names, as the
IANA registry's Preferred-Value gives it (``zh-min``, Min Chinese, has none: ``zh``; ``i-default``, ``i-enochian``
and ``i-mingo`` have none and stay as written, as a private-use tag, ``x-…``, does, and so does ``cel-gaulish``,
Gaulish, which maps to itself: the registry points to three Gaulish languages, and ``cel`` is no language but the
collection of Celtic ones)."""
