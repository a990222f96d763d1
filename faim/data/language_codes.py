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


def read_table(table: str) -> tuple[dict[str, str], dict[str, str]]:
    """The codes and names of ``table``, written as ``TABLE`` is: each three-letter code → its two-letter code, and
    each name, case-folded → its two-letter code."""
    codes: dict[str, str] = {}
    named: dict[str, str] = {}
    for line in table.strip().splitlines():
        letters, *names = line.split(" | ")
        two, *threes = letters.split()
        codes |= dict.fromkeys(threes, two)
        named |= {name.casefold(): two for name in names}
    return codes, named


WITHDRAWN = {"in": "id", "iw": "he", "ji": "yi", "jw": "jv", "mo": "ro"}
"""The two-letter codes ISO 639-1 withdrew → the ones that replaced them, as the IANA Language Subtag Registry (BCP
47) gives each its Preferred-Value: Indonesian, Hebrew, Yiddish, Javanese, and Moldavian, now Romanian. Java's
``Locale`` wrote ``in``, ``iw`` and ``ji`` up to Java 17, and Twitter's API gives a tweet's ``lang`` as ``in`` and
``iw``."""

ENCOMPASSED = {
    "arb": "ar",
    "azj": "az",
    "cmn": "zh",
    "ekk": "et",
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
(``arb_Arab``, ``pes_Arab``, ``swh_Latn``, and ``als_Latn``, Tosk Albanian, the ``sq`` told: ``SCRIPTED``). So
are the members whose text ``identify`` tells as the macrolanguage, which FLORES-200 writes where CLDR's aliases
give another: Northern Kurdish (Kurmanji, ``kmr_Latn``) is the ``ku`` its model labels the Kurmanji of Wikipedia,
Southern Pashto (``pbt_Arab``; ``pbu`` is Northern Pashto) ``ps``, Komi-Zyrian (``kpv``) ``kv``, and Dari (``prs``),
which the model cannot tell apart from Iranian Persian and tells as ``fa``, ``fa``: a FLORES-200 dump's Dari posts
are a language of their own only where a meta field other than ``lang`` says so. Other members stay as written:
``yue`` (Cantonese), and ``arz`` (Egyptian Arabic), ``azb`` (South Azerbaijani) and ``ckb`` (Central Kurdish,
Sorani), which ``identify`` tells apart from ``ar``, ``az`` and ``ku`` too."""

TOLD_AS = {"nb": "no"}
"""A two-letter code → the one ``faim.data.language.identify`` tells its language's text as: Norwegian Bokmål,
``nb`` (``nob``, ``nb_NO``, ``no-bok``), is the ``no`` its model labels Bokmål text with, as Twitter's API and most
data write Norwegian too; Nynorsk, which it tells apart, stays ``nn``."""

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
            "hps hsh hsl icl iks inl ins ise isg isr jcs jhs jks jls jos jsl jus kgi kvk lbs lls lsb lsc lsl lsn lso "
            "lsp lst lsv lsw lsy lws mdl mfs mre msd msr mzc mzg mzy nbs ncs nsi nsl nsp nsr nzs okl pgz pks prl prz "
            "psc psd psg psl pso psp psr pys rib rms rnb rsl rsm rsn sdl sfs sgg sgx slf sls sqk sqs sqx ssp ssr svk "
            "swl syy szs tse tsm tsq tss tsy tza ugn ugy ukl uks vsi vsl vsv wbs xki xml xms ygs yhs ysl ysm zib zsl"
        ),
        "sw": "swc swh",
        "uz": "uzn uzs",
        "zh": "cdo cjy cmn cnp cpx csp czh czo gan hak hsn lzh mnp nan wuu yue",
    }.items()
}
"""Each macrolanguage (and ``sgn``, sign languages) BCP 47 writes an extended language subtag after → those subtags,
the languages it encompasses, as the IANA Language Subtag Registry (RFC 5646) lists its ``Type: extlang`` records
with that ``Prefix``, less those whose ISO 639-3 code was retired (``bbz``); those of ``sgn`` are the sign languages
of ISO 639-3 (Debian's ``iso-codes``), as the registry's are. ``zh-yue`` is Cantonese, ``ar-arz`` Egyptian Arabic;
a second subtag of three letters that is none of these is a region, as .NET's ``zh-CHS`` and ``zh-CHT`` (Simplified
and Traditional Chinese) and ``en-USA`` write it."""

TWO_LETTER, NAMED = read_table(TABLE)
"""Each three-letter code of ``TABLE`` → its two-letter code (``eng`` → ``en``, ``ger`` and ``deu`` → ``de``), and
each English name of it, case-folded → its two-letter code (``english`` → ``en``)."""
