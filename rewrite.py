"""Follow-up rewriting and synonym expansion.

Pure functions over plain data; the only I/O is :func:`load_synonyms`.

Follow-up detection (:func:`is_followup`, deterministic)
---------------------------------------------------------
With no substantive history (only blank turns or acknowledgements) nothing
is a follow-up, and pure acknowledgements ("thanks", "ok got it") never are.
Otherwise a turn is a follow-up when:

1. it opens with a *follow-up opener*: "what about", "how about", "what if",
   "same for/with ...", or a weak opener ("and", "also", "but", "or", "so",
   "then", "plus") directly followed by a preposition, a determiner, "if" or
   a verbless fragment of up to three words ("and for size L?", "and the old
   one?", "and if it rains?", "and Seattle?");
2. it is *elliptical* (after any weak opener): it starts with a preposition
   and has no verb of its own ("for kids?", "in red?"), or it is at most four
   words with no auxiliary, wh-word or personal subject and is either a typed
   value (a size, colour, language, audience, country, year, duration or
   code: "size L?", "Canada?", "E4032?") or a short determiner phrase ("the
   stove?", "the old one");
3. it mentions "the old/previous/former/earlier/original/other/same/latter ...";
4. it holds a *reference* -- "it", "its", "they", "them", "their", a bare
   "that"/"this"/"these"/"those" (one with a noun of its own, "this error",
   is not a reference, nor a complementiser "that I ..."), "one" with no noun
   after it, or a non-existential "there" -- *before* any topic of its own.
   A topic is a determiner or possessive phrase ("my password", "a refund"),
   a capitalised name or code, a quoted term, two content words in a row, a
   noun after "about/of/any/some..." ("speaking about vaccines"), or the noun
   after "what is" ("what is mortadella and where is it from?").  An object
   "it"/"them" in the same clause as the turn's own topic still points back
   ("What is the first sign of it?", "Why do the Brits call it a loo?"); a
   clause boundary (a conjunction, wh-word or punctuation) in between makes
   the topic its antecedent.  "worth it" is idiomatic, and "there" is no
   reference when existential ("there certainly are ...") or idiomatic ("out
   there").
   A dummy "it" ("is it possible to change my address?", "how long does it
   take to get a refund?") is no reference when the infinitive clause after
   it has a topic.  So "How do I reset my password if I forgot it?" stands
   alone (its topic comes first), while "is it covered by warranty?" and
   "If I cancel it, do I get a refund?" are follow-ups.

A weak opener followed by a full question with its own topic ("And how do I
cancel my order?") is not a follow-up.

Rewriting (:func:`rewrite_rules`, deterministic)
------------------------------------------------
The antecedent is the most recent substantive history turn, itself first made
standalone against the turns before it (so chains of follow-ups resolve).
Alongside, the conversation's *salient entity* is tracked: the subject of
each standalone turn, except that a generic phrase ("the symptoms", "the main
themes", "the biggest ever", "other factors", "my levels") keeps the current
one, and a "what about X" noun phrase becomes it.  "it"/"its"/"they"/"their"
refer to the salient entity, else the antecedent's subject, with number
agreement ("it" never takes a plural, "they" only a plural); this/that/one/
there refer to the antecedent's subject.  No agreeing candidate, or one the
turn already names, leaves the turn unchanged.
Its *subject* is found with these rules, first match wins: a quoted term; the
first capitalised name or code with its determiner and trailing nouns ("the
Trailhead 2 tent", "error E4032"); the noun phrase after "what is/are"
("athlete's foot", "the return policy"); the first determiner/possessive
noun phrase ("my sleeping bag"); the last run of content words.  When the
phrase names an attribute ("the price of the tent", "the warranty on the
stove") its object is the subject, unless that object is a typed value.
An indefinite subject reads as definite ("a bike" -> "the bike").

* "what if X" / "and if X"  ->  "<antecedent> if X?" (left unchanged when X
  is a clause of more than six words: it stands on its own).
* "what about" + a full question ("what about why can't I apply a code?")
  -> the question, its references resolved; "what about its X?" keeps the
  opener and resolves the pronoun.
* A fragment X (after "what about", "how about", "and", "same", or bare):
  1. X holds a typed value (size, colour, language, audience, country, year,
     duration, code) and the antecedent holds one of the same type: swap the
     value ("What is the frame size for size M?" + "and for size L?" ->
     "What is the frame size for size L?"; "... in blue?" + "the red one?");
  2. X is a prepositional phrase whose preposition the antecedent also uses:
     swap that phrase's object ("... to the US?" + "and to Canada?");
  3. "the kids one": the subject keeps its noun and takes X's modifiers;
  4. a typed value with no counterpart is appended as a phrase ("for kids",
     "in red", "in size L");
  5. a noun phrase (or a "for/about/on/with" phrase, unless the antecedent
     asks how to do something) replaces the subject when that subject is
     clear -- a quoted term, a name, or a "what is"/determiner phrase that is
     neither generic nor coordinated; a bare noun phrase with no clear
     subject, or one with an "of" complement of its own ("the goal of Deep
     Impact mission"), leaves the turn unchanged ("What is the warranty
     on the Trailhead 2 tent?" + "what about the stove?" -> "What is the
     warranty on the stove?"); "the old one" / "the old policy" keep the
     subject's noun ("the old return policy");
  6. any other prepositional phrase is appended; as a last resort the result
     is "<antecedent without ?>, <opener> X?".
* A question with a reference: when the antecedent asks how to do something
  ("How do I reset my password?"), "how long does that take?" / "how much
  does it cost?" become "How long does it take to reset my password?",
  "is that possible/free/...?" becomes "Is it possible to <action>?" and "do
  that" becomes the action.  Otherwise the first reference is replaced by the
  subject ("its" by the possessive, "it's" by "<subject> is", "the old one"
  by "the old <subject noun>", "ones" by the plural subject noun, "there" by
  "to/at <subject>"); a bare this/that is left alone when the antecedent's
  subject is vague (it likely means the last answer).
* A question with "the old ..." and no reference takes the subject's noun
  when the heads match; otherwise the turn is left unchanged.

The result is tidied: single spaces, a capital first letter, and a question
mark when the turn reads as a question.

Synonym expansion (:func:`expand`)
----------------------------------
Each group is a set of equivalent terms.  For each group with a term present
in the query (case-insensitive, whole word or phrase, the longest match
wins), one extra query is produced per other term, the matched term replaced.
Groups and terms are visited in file order, so the output is deterministic.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, NamedTuple

import prompts

__all__ = ["Rewrite", "load_synonyms", "expand", "is_followup", "rewrite_rules",
           "condense_llm", "rewrite"]


@dataclass(frozen=True)
class Rewrite:
    original: str                 # what the user typed
    standalone: str               # the question actually searched
    rewritten: bool               # standalone != original
    expansions: tuple[str, ...]   # synonym expansions of `standalone`
    method: str                   # "none" | "rules" | "llm"

    def queries(self) -> list[str]:
        """Every query to search, deduplicated in order: standalone, the
        original turn if it differs, then the expansions."""
        out: list[str] = []
        seen: set[str] = set()
        for q in (self.standalone, self.original, *self.expansions):
            k = _key(q)
            if k and k not in seen:
                seen.add(k)
                out.append(q.strip())
        return out


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


# --------------------------------------------------------------------------
# Synonyms
# --------------------------------------------------------------------------

def load_synonyms(path) -> list[tuple[str, ...]]:
    """Read ``{"groups": [["2FA", "two-factor authentication"], ...]}``.

    A bare top-level list of groups is accepted too.  A missing or unreadable
    file, bad JSON or a bad shape is a ``ValueError`` naming the file.
    """
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"synonyms file {p} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read synonyms file {p}: {e}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"synonyms file {p} is not valid JSON: {e}") from None
    if isinstance(data, dict):
        if "groups" not in data:
            raise ValueError(f"synonyms file {p} must hold an object with a \"groups\" list")
        data = data["groups"]
    if not isinstance(data, list):
        raise ValueError(f"synonyms file {p}: \"groups\" must be a list of lists of terms")
    groups: list[tuple[str, ...]] = []
    for n, group in enumerate(data, 1):
        if not isinstance(group, list) or not all(isinstance(t, str) for t in group):
            raise ValueError(f"synonyms file {p}: group {n} must be a list of strings, got {group!r}")
        terms: list[str] = []
        for t in group:
            t = " ".join(t.split())
            if t and t.casefold() not in {x.casefold() for x in terms}:
                terms.append(t)
        if len(terms) < 2:
            raise ValueError(f"synonyms file {p}: group {n} needs at least two different terms, got {group!r}")
        groups.append(tuple(terms))
    return groups


_INFLECTION = r"(?:s|es|d|ed|ing)?"


def _term_re(term: str) -> re.Pattern:
    """Whole words, case-insensitive; a plain last word may carry a common
    inflection ("vouchers", "guaranteed", "refunded"), but never more letters
    ("card" does not match "cardigan")."""
    words = term.split()
    parts = [re.escape(w) for w in words]
    if words[-1].isalpha() and len(words[-1]) >= 3:
        parts[-1] += _INFLECTION
    return re.compile(r"(?<!\w)" + r"\s+".join(parts) + r"(?!\w)", re.IGNORECASE)


def expand(query: str, groups) -> tuple[str, ...]:
    """Extra queries from synonym groups (see the module docstring)."""
    out: list[str] = []
    seen = {_key(query)}
    for group in groups or ():
        terms = [" ".join(t.split()) for t in group if t and t.strip()]
        best: tuple[str, re.Pattern] | None = None
        for t in terms:
            pat = _term_re(t)
            if pat.search(query) and (best is None or len(t) > len(best[0])):
                best = (t, pat)
        if best is None:
            continue
        matched, pat = best
        for other in terms:
            if other.casefold() == matched.casefold():
                continue
            q = pat.sub(lambda _m, o=other: o, query)
            k = _key(q)
            if k not in seen:
                seen.add(k)
                out.append(q)
    return tuple(out)


# --------------------------------------------------------------------------
# Word lists
# --------------------------------------------------------------------------

def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


WH = _words("what how why when where which who whom whose what's how's where's who's when's")
AUX = _words("""is are was were be been being am do does did can could will would should shall
    may might must has have had isn't aren't wasn't weren't don't doesn't didn't can't cannot
    won't wouldn't shouldn't couldn't hasn't haven't""")
BE = _words("is are was were be been 's isn't aren't wasn't weren't will would should could might may must seem seems")
PREPS = _words("""for in on at to with without from by about of into onto under over after before
    during via through within between per near since until across against toward towards around
    upon regarding""")
DET_NP = _words("the a an my your our his her")
DEMONSTRATIVES = _words("this that these those")
PERSONAL = _words("i me you we us he him she i'm i've i'd i'll you're we're you've we've")
SUBJECTS = _words("i you we he she i'm i've i'd i'll you're we're")
REF_PRONOUNS = _words("it its it's itself they them their theirs they're themselves")
CONJ = _words("and or but if when because so while whether unless though although")
WEAK_OPENERS = _words("and also but or so then plus")
FUNCTION = (WH | AUX | PREPS | DET_NP | DEMONSTRATIVES | PERSONAL | REF_PRONOUNS | CONJ | _words("""
    one ones there here there's that's some any each every no not another please just too very
    really still only even as than more most less much many long often far soon else ever again
    yet all both either neither same other such own up down out off back away like vs versus etc
    ok okay thanks thank hi hello hey yes mine yours ours exactly usually normally typically
    generally roughly also then"""))
# Common verbs in support questions: they end a noun phrase and are no topic.
VERBS = _words("""get gets got getting take takes took taking cost costs work works worked working
    mean means meant happen happens happened need needs needed want wants make makes made use uses
    know find finds found change changes changed reset resets cancel cancels cancelled canceled
    fix fixes fixed buy buys bought pay pays paid apply applies applied include includes support
    supports cover covers last lasts fit fits run runs see tell help set turn open close delete
    deletes deleted remove add update install contact reach send sent receive received check track
    replace wash washed clean cleaned charge charged keep keeps stop stops start starts begin enable
    disable sign log upgrade downgrade cause causes caused treat treated spread spreads allow allows
    require requires come comes came go goes went ship ships shipped deliver delivers delivered
    arrive arrives say says look looks seem seems feel sell sells offer offers provide provides
    accept accepts restore recover transfer move crash crashes crashing fail fails failed break
    breaks broke show shows explain describe compare differ become leave leaves pair connect sync
    export import book booked drop collect register call email claim request""")
# Predicate adjectives: they end a noun phrase ("Is the Summit GPS waterproof?").
PRED_ADJ = _words("""waterproof available compatible free safe washable refundable returnable covered
    included required possible necessary open closed broken defective new used good better best
    worth ready late valid expired eligible cheaper lighter heavier bigger smaller durable
    adjustable treatable contagious serious dangerous normal common different suitable true
    correct wrong right early expensive cheap easy hard difficult recyclable faster slower
    quicker allowed mandatory optional refundable warm cold heavy light big small""")
ACK = _words("""thanks thank you thx ty ok okay great cool hi hello hey yes yeah yep no nope bye
    goodbye got it perfect nice awesome sure so much alright fine good lol that's all helpful very
    wonderful excellent cheers understood makes sense""")
DUMMY_BRIDGE = _words("""take takes took cost costs is was be 's possible impossible necessary required
    ok okay safe easy hard difficult free worth better best mandatory allowed usually normally
    typically generally long much still too really more less cheaper faster quicker enough time
    me us you legal permitted fine wise advisable smart quick expensive cheap a an good idea bad""")
MARKER_ADJ = _words("old older previous former earlier original latter other same prior")
MOTION_VERBS = _words("get go come ship send deliver travel drive fly mail return")
ACTION_ADJ = ("possible|impossible|free|allowed|safe|okay|ok|necessary|required|mandatory|easy|"
              "hard|difficult|quick|expensive|cheap|worth it")

_LANGS = ("english|chinese|mandarin|cantonese|spanish|french|german|italian|portuguese|japanese|"
          "korean|dutch|russian|arabic|hindi|bengali|bangla|polish|swedish|turkish|vietnamese|thai|"
          "greek|hebrew|danish|norwegian|finnish|czech|hungarian|indonesian|malay|ukrainian")
_COLOURS = ("red|blue|green|black|white|grey|gray|yellow|orange|purple|pink|brown|navy|beige|"
            "silver|gold|khaki|olive|tan|teal|maroon")
_AUDIENCE = ("kids|children|child|adults|adult|women|men|teens|teenagers|toddlers|babies|infants|"
             "seniors|students|beginners|juniors|youth|boys|girls|members|businesses|employees")
_COUNTRIES = ("canada|mexico|germany|france|spain|italy|japan|china|australia|india|brazil|ireland|"
              "netherlands|belgium|sweden|norway|denmark|finland|poland|austria|switzerland|"
              "portugal|alaska|hawaii|europe|asia|bangladesh|united states|united kingdom|"
              "european union|new zealand|singapore|korea")
_CODE = r"(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Z])[A-Z0-9][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"

TYPED: list[tuple[str, re.Pattern]] = [
    ("size", re.compile(r"(?<!\w)(?:(?i:size\s+(?:x{0,3}s|m|x{0,3}l|\d+(?:\.\d+)?|small|medium|"
                        r"large|extra[- ]large))|(?:XXXS|XXS|XS|XL|XXL|XXXL))(?!\w)")),
    ("language", re.compile(rf"(?<!\w)(?:{_LANGS})(?!\w)", re.I)),
    ("colour", re.compile(rf"(?<!\w)(?:{_COLOURS})(?!\w)", re.I)),
    ("audience", re.compile(rf"(?<!\w)(?:{_AUDIENCE})(?!\w)", re.I)),
    ("country", re.compile(rf"(?<!\w)(?:(?i:{_COUNTRIES})|US|USA|UK|EU)(?!\w)")),
    ("duration", re.compile(r"(?<!\w)\d+\s+(?:days?|weeks?|months?|years?|hours?|minutes?)(?!\w)", re.I)),
    ("year", re.compile(r"(?<!\w)(?:19|20)\d\d(?!\w)")),
    ("code", re.compile(rf"(?<![\w-]){_CODE}(?![\w-])")),
]
TYPED_PREP = {"size": "in", "language": "in", "colour": "in", "audience": "for",
              "country": "to", "year": "in", "duration": "after"}
CODE_RE = re.compile(_CODE)
QUOTE_RE = re.compile(r"\"([^\"]+)\"|“([^”]+)”|(?<!\w)'([^']+)'(?!\w)")


# --------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------

class _Tok(NamedTuple):
    text: str
    low: str
    start: int
    end: int


_TOKEN_RE = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)*(?:-[A-Za-z0-9]+)*")


def _tokens(text: str) -> list[_Tok]:
    return [_Tok(m.group(), m.group().lower().replace("’", "'"), m.start(), m.end())
            for m in _TOKEN_RE.finditer(text)]


def _gap(text: str, a: _Tok, b: _Tok) -> bool:
    """Punctuation between two neighbouring tokens."""
    return bool(text[a.end:b.start].strip())


def _content(t: _Tok) -> bool:
    return t.low not in FUNCTION


def _nounish(t: _Tok) -> bool:
    return (_content(t) and t.low not in VERBS and t.low not in PRED_ADJ
            and not t.low.endswith(("able", "ible")))


def _typed_word(t: _Tok) -> bool:
    return any(kind != "code" and pat.fullmatch(t.text) for kind, pat in TYPED)


def _is_entity(toks: list[_Tok], i: int) -> bool:
    t = toks[i]
    if CODE_RE.fullmatch(t.text):
        return True
    if i == 0 or len(t.text) < 2 or not t.text[0].isupper() or t.low in FUNCTION or _typed_word(t):
        return False
    return True


def _is_ack(toks: list[_Tok]) -> bool:
    return bool(toks) and all(t.low in ACK for t in toks)


# --------------------------------------------------------------------------
# Detection
# --------------------------------------------------------------------------

_STRONG = [(("what", "about", "if"), "if"), (("how", "about", "if"), "if"),
           (("what", "about"), "about"), (("how", "about"), "about"), (("what", "of"), "about"),
           (("what", "if"), "if"), (("same", "question"), "about"), (("same", "goes"), "about"),
           (("same", "thing"), "about"), (("same",), "about")]


def _openers(toks: list[_Tok]) -> tuple[str | None, int]:
    """(kind, index where the rest starts): kind is "if", "about", "weak" or None."""
    i = 0
    while i < len(toks) - 1 and toks[i].low in WEAK_OPENERS:
        i += 1
    lows = tuple(t.low for t in toks)
    for phrase, kind in _STRONG:
        if lows[i:i + len(phrase)] == phrase:
            if phrase == ("same",) and not (i + 1 < len(toks) and toks[i + 1].low in PREPS):
                continue
            return kind, i + len(phrase)
    if i > 0 and i < len(toks):
        w = toks[i].low
        if w == "if":
            return "if", i + 1
        if w in PREPS or w in DET_NP or w in DEMONSTRATIVES:
            return "about", i
        rest = lows[i:]
        if len(rest) <= 3 and not any(x in AUX or x in WH or x in SUBJECTS or x in REF_PRONOUNS
                                      for x in rest):
            return "about", i
        return "weak", i
    return None, 0


def _typed_spans(text: str) -> list[tuple[str, int, int]]:
    spans: list[tuple[str, int, int]] = []
    for kind, pat in TYPED:
        for m in pat.finditer(text):
            if not any(s < m.end() and m.start() < e for _, s, e in spans):
                spans.append((kind, m.start(), m.end()))
    return sorted(spans, key=lambda x: x[1])


def _elliptical(toks: list[_Tok], text: str) -> bool:
    lows = [t.low for t in toks]
    if any(w in AUX or w in WH for w in lows):
        return lows[0] in PREPS and len(lows) <= 4
    if any(w in SUBJECTS for w in lows):
        return False
    if lows[0] in PREPS:
        return True
    if len(toks) > 4:
        return False
    frag = text[toks[0].start:toks[-1].end]
    if _typed_spans(frag):
        return True
    if lows[0] in DET_NP or lows[0] in DEMONSTRATIVES:
        return len(toks) <= 3 or text.rstrip().endswith("?")
    return False


def _has_marker(toks: list[_Tok]) -> bool:
    return any(a.low == "the" and b.low in MARKER_ADJ for a, b in zip(toks, toks[1:]))


_TOPIC_LEADS = _words("about regarding of any some no every each all")
_IDIOM_NOUNS = _words("""general particular example instance course fact addition total short brief
    detail advance case order time turn words other sure""")


def _topic_starts(toks: list[_Tok], text: str) -> list[int]:
    """Token indices where a topic of the turn's own starts."""
    starts: set[int] = set()
    n = len(toks)
    for m in QUOTE_RE.finditer(text):
        starts.update(i for i, t in enumerate(toks) if m.start() <= t.start < m.end())
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < n and not _gap(text, t, toks[i + 1]) else None
        if (t.low in ("what", "who") and nxt is not None and nxt.low in ("is", "are", "was", "were")
                and i + 2 < n and _nounish(toks[i + 2]) and not _gap(text, nxt, toks[i + 2])):
            starts.add(i + 2)  # "what is mortadella and where is it from?"
        if t.low in DET_NP and nxt is not None and _content(nxt):
            starts.add(i)
        elif t.low in DEMONSTRATIVES and nxt is not None and _nounish(nxt):
            starts.add(i)
        elif _is_entity(toks, i):
            starts.add(i)
        elif nxt is not None and _nounish(t) and _nounish(nxt) and not t.low.isdigit():
            starts.add(i)
        elif (nxt is not None and t.low in _TOPIC_LEADS and _nounish(nxt)
              and nxt.low not in _IDIOM_NOUNS and not nxt.low.endswith("ing")):
            starts.add(i + 1)  # "speaking about vaccines", "any meat"
    return sorted(starts)


def _dummy_it(toks: list[_Tok], i: int, text: str) -> bool:
    """'it' in 'is it possible to change my address' / 'does it take to get a refund'."""
    j, n = i + 1, len(toks)
    while j < n and j - i <= 3 and toks[j].low in DUMMY_BRIDGE:
        j += 1
    if j + 1 >= n or toks[j].low != "to":
        return False
    after = toks[j + 1]
    if after.low in DET_NP or after.text[0].isupper() or after.low.isdigit():
        return False  # "to Canada", "to the US": a preposition, not an infinitive
    rest = toks[j + 1:]
    return bool(_topic_starts(rest, text) or _typed_spans(text[after.start:]))


_ADVERBS = _words("""certainly really still also always usually actually probably now definitely
    surely just even never often sometimes already clearly obviously""")
_THERE_IDIOM = _words("out over here up down around in that so from back")


def _ref_indices(toks: list[_Tok], text: str) -> list[int]:
    out: list[int] = []
    n = len(toks)
    for i, t in enumerate(toks):
        w = t.low
        nxt = toks[i + 1] if i + 1 < n and not _gap(text, t, toks[i + 1]) else None
        prv = toks[i - 1] if i > 0 and not _gap(text, toks[i - 1], t) else None
        if w in REF_PRONOUNS:
            if w in ("it", "it's") and _dummy_it(toks, i, text):
                continue
            out.append(i)
        elif w == "that's":
            out.append(i)
        elif w in DEMONSTRATIVES:
            if nxt is not None and (nxt.low in ("one", "ones") or _nounish(nxt)
                                    or nxt.low in PERSONAL or nxt.low in DET_NP):
                continue
            if prv is not None and _content(prv) and prv.low not in VERBS:
                continue
            out.append(i)
        elif w in ("one", "ones"):
            if nxt is not None and (_content(nxt) or nxt.low in ("of", "more")):
                continue
            if prv is not None and prv.low in ("no", "any", "every", "some", "each"):
                continue
            out.append(i)
        elif w == "there":
            if (nxt is not None and nxt.low in BE) or (prv is not None and prv.low in BE):
                continue
            j = i + 1  # "there certainly are ...": existential after an adverb
            while j < n and (toks[j].low in _ADVERBS or toks[j].low.endswith("ly")):
                j += 1
            if j < n and (toks[j].low in BE or toks[j].low in AUX or toks[j].low in ("exist", "exists")):
                continue
            if prv is not None and prv.low in _THERE_IDIOM:
                continue  # "out there", "over there", "that there are"
            out.append(i)
    return out


def _followup_turn(turn: str) -> bool:
    """is_followup, given that there is history."""
    toks = _tokens(turn)
    if not toks or _is_ack(toks):
        return False
    kind, i = _openers(toks)
    if kind in ("if", "about"):
        return True
    rest = toks[i:]
    if not rest:
        return False
    if _elliptical(rest, turn) or _has_marker(rest):
        return True
    refs = _ref_indices(rest, turn)
    if not refs:
        return False
    topics = _topic_starts(rest, turn)
    before = [s for s in topics if s < refs[0]]
    if not before:
        return True
    # "What is the first sign of it?", "Why do the Brits call it a loo?": an
    # object pronoun in the same clause as the turn's own topic points back
    # (a same-clause coreference would read "itself")
    r, k = refs[0], before[-1]
    if rest[r].low in ("it", "them") and rest[r - 1].low not in ("worth", "make", "made", "makes"):
        between = rest[k + 1:r]
        boundary = any(_gap(turn, x, y) for x, y in zip(rest[k:r], rest[k + 1:r + 1])) or any(
            t.low in CONJ or t.low in WH or t.low in ("that", "which", "who") for t in between)
        return not boundary
    return False


def is_followup(turn: str, history: list[str]) -> bool:
    """Whether ``turn`` needs the earlier user turns to be understood."""
    if not any(h and h.strip() and not _is_ack(_tokens(h)) for h in history or ()):
        return False
    return _followup_turn(turn)


# --------------------------------------------------------------------------
# The antecedent's subject and action
# --------------------------------------------------------------------------

def _np_end(toks: list[_Tok], j: int, text: str, limit: int = 4) -> int:
    """Index one past the noun phrase whose first word is toks[j]."""
    k = j + 1
    while (k < len(toks) and k - j < limit and not _gap(text, toks[k - 1], toks[k])
           and _nounish(toks[k])):
        k += 1
    return k


# Nouns that name an attribute of a thing: "the warranty on the stove" is
# about the stove, so its object is the subject ("does it come in green?").
ATTRIBUTES = _words("""warranty guarantee price cost costs weight size dimensions capacity battery
    lifespan range speed rating fee fees manual specs specifications availability stock window
    period time times deadline limit height length width colour colors color colours material
    materials parts return returns shipping delivery""")


def _phrase_span(toks: list[_Tok], j: int, a: str) -> tuple[int, int]:
    """Span of the noun phrase starting at toks[j] (a determiner or a noun).

    "the price of the tent" -> "the tent" (an attribute's object, unless that
    object is a typed value such as "size M"); "the history of the company"
    stays whole.
    """
    n = len(toks)
    first = j + 1 if toks[j].low in DET_NP | DEMONSTRATIVES and j + 1 < n else j
    k = _np_end(toks, first, a)
    if (k + 1 < n and toks[k - 1].low in ATTRIBUTES and toks[k].low in ("of", "on", "for")
            and not _gap(a, toks[k - 1], toks[k])):
        m = k + 1
        body = m + 1 if toks[m].low in DET_NP and m + 1 < n else m
        if _content(toks[body]) and toks[body].low not in VERBS:
            e = _np_end(toks, body, a)
            if not _typed_spans(a[toks[m].start:toks[e - 1].end]):
                return toks[m].start, toks[e - 1].end
    while k + 1 < n and toks[k].low == "of" and not _gap(a, toks[k - 1], toks[k]):
        body = k + 2 if toks[k + 1].low in DET_NP and k + 2 < n else k + 1
        k = _np_end(toks, body, a)
    return toks[j].start, toks[k - 1].end


_COPULA_RE = re.compile(r"^\s*(?:what|who|which)(?:'s|’s|\s+is|\s+are|\s+was|\s+were)\s+(?P<np>.+)$", re.I)
_ABOUT_RE = re.compile(r"^\s*(?:tell me about|explain|describe)\s+(?P<np>.+)$", re.I)


_WEAK_MODS = _words("""first last main most least other different various key important popular
    common best worst same similar particular general specific possible major minor overall""")
_NOT_SUPERLATIVE = _words("""interest forest test request rest guest contest harvest west chest protest
    nest quest pest vest best""")


def _np_weak(np: str, bridging: bool = True) -> bool:
    """A generic phrase that names no topic of its own: 'the symptoms', 'the
    main themes', 'the biggest ever', 'other factors', 'these languages'."""
    toks = _tokens(np)
    if not toks:
        return True
    if any(_is_entity(toks, i) for i in range(1, len(toks))) or (toks[0].text[:1].isupper()
                                                                   and toks[0].low not in FUNCTION):
        return False
    first = toks[0].low
    if first in DEMONSTRATIVES or first in ("some", "any", "other", "ways", "types", "kinds"):
        return True
    body = toks[1:] if first in DET_NP else toks
    if any(t.low in _WEAK_MODS or (t.low.endswith("est") and len(t.low) > 4
                                   and t.low not in _NOT_SUPERLATIVE) for t in body):
        return True
    if any(t.low in ("and", "or") for t in toks):
        return True
    # a short bare definite in a question of its own is a bridging reference
    return bridging and first == "the" and len(toks) <= 3 and not any(t.low == "of" for t in toks)


_DO_MODALS = _words("do does did can could will would should may might must don't doesn't didn't")


def _subject_info(a: str) -> tuple[tuple[int, int] | None, str]:
    """(character span, rule) of the antecedent's subject noun phrase (module
    docstring); rule is "quote", "entity", "copula", "det", "run" or ""."""
    toks = _tokens(a)
    n = len(toks)
    m = QUOTE_RE.search(a)
    if m:
        g = next(k for k in (1, 2, 3) if m.group(k) is not None)
        return (m.start(g), m.end(g)), "quote"
    typed = _typed_spans(a)
    for i in range(n):
        if not _is_entity(toks, i) or any(s <= toks[i].start < e for _, s, e in typed):
            continue
        j = i
        while (j > 0 and i - j < 2 and not _gap(a, toks[j - 1], toks[j])
               and (_is_entity(toks, j - 1) or (_nounish(toks[j - 1]) and j - 1 > 0))):
            j -= 1
        if j > 0 and not _gap(a, toks[j - 1], toks[j]) and (
                toks[j - 1].low in DET_NP or toks[j - 1].low in DEMONSTRATIVES):
            j -= 1
        k = i + 1
        while k < n and not _gap(a, toks[k - 1], toks[k]) and (
                _is_entity(toks, k) or toks[k].low.isdigit()):
            k += 1
        extra = 0
        # "When did Netflix shift ...": a bare name right after do/can is the clause
        # subject and the next word its verb
        bare_subject = j > 0 and toks[j - 1].low in _DO_MODALS
        while (k < n and extra < 2 and not bare_subject and not _gap(a, toks[k - 1], toks[k])
               and _nounish(toks[k]) and toks[k].text[0].islower() and not _typed_word(toks[k])
               and not toks[k].low.endswith("ed")):
            k += 1
            extra += 1
        return (toks[j].start, toks[k - 1].end), "entity"
    for rx in (_COPULA_RE, _ABOUT_RE):
        m = rx.match(a)
        if m:
            sub = [i for i, t in enumerate(toks) if t.start >= m.start("np")]
            if sub and (toks[sub[0]].low in DET_NP or _nounish(toks[sub[0]])):
                return _phrase_span(toks, sub[0], a), "copula"
    for i, t in enumerate(toks):
        if i + 1 < n and not _gap(a, t, toks[i + 1]) and (
                (t.low in DET_NP and _content(toks[i + 1]))
                or (t.low in DEMONSTRATIVES and _nounish(toks[i + 1]))):
            return _phrase_span(toks, i, a), "det"
    runs: list[tuple[int, int]] = []
    i = 0
    while i < n:
        if _nounish(toks[i]):
            j = i + 1
            while j < n and _nounish(toks[j]) and not _gap(a, toks[j - 1], toks[j]):
                j += 1
            runs.append((toks[i].start, toks[j - 1].end))
            i = j
        else:
            i += 1
    return (runs[-1], "run") if runs else (None, "")


def _subject_span(a: str) -> tuple[int, int] | None:
    return _subject_info(a)[0]


_ACTION_RES = [
    re.compile(r"^\s*(?:(?:how|where|when)\s+)?(?:do|can|could|should|would|will|may|must)\s+"
               r"(?:i|we|you)\s+(?P<vp>.+?)\s*[?.!]*\s*$", re.I),
    re.compile(r"^\s*(?:how\s+to|i\s+want\s+to|i\s+need\s+to|i'd\s+like\s+to|is\s+it\s+possible\s+to)"
               r"\s+(?P<vp>.+?)\s*[?.!]*\s*$", re.I),
    re.compile(r"\b(?:does|will|would|is|did)\s+it\s+(?:\w+\s+){0,2}?(?:take|cost|" + ACTION_ADJ +
               r")\s+to\s+(?P<vp>.+?)\s*[?.!]*\s*$", re.I),
]
_NOT_ACTIONS = _words("tell explain show describe give let help find")


def _action_vp(a: str) -> str | None:
    """'reset my password' for 'How do I reset my password?'."""
    for rx in _ACTION_RES:
        m = rx.search(a)
        if m:
            vp = m.group("vp").strip()
            first = vp.split()[0].lower() if vp else ""
            if first and first not in _NOT_ACTIONS and first not in FUNCTION:
                return vp
    return None


# --------------------------------------------------------------------------
# Resolution
# --------------------------------------------------------------------------

def _base(a: str) -> str:
    return a.strip().rstrip("?.!").rstrip()


def _lower_det(np: str) -> str:
    """The subject as it reads mid-sentence: 'The tent' -> 'the tent', 'a bike' -> 'the bike'."""
    toks = _tokens(np)
    if len(toks) > 1 and toks[0].low in ("a", "an") and toks[0].start == 0:
        return "the" + np[toks[0].end:]
    if toks and toks[0].low in DET_NP | DEMONSTRATIVES and toks[0].start == 0 and np[:1].isupper():
        return np[:1].lower() + np[1:]
    return np


def _without_det(np: str) -> str:
    toks = _tokens(np)
    if len(toks) > 1 and toks[0].low in DET_NP | DEMONSTRATIVES:
        return np[toks[1].start:]
    return np


def _tidy(s: str, question: bool = True) -> str:
    s = " ".join(s.split())
    s = re.sub(r"\s+([?.!,;:])", r"\1", s)
    s = re.sub(r"\?+", "?", s)
    if not s:
        return s
    s = s[0].upper() + s[1:]
    if question and s[-1] not in "?.!":
        s += "?"
    return s


def _is_question(text: str) -> bool:
    toks = _tokens(text)
    return text.rstrip().endswith("?") or bool(toks and (toks[0].low in WH or toks[0].low in AUX))


def _merge_head(x: str, np: str) -> str:
    """'the old policy' + 'the return policy' -> 'the old return policy'."""
    xt, nt = _tokens(x), _tokens(np)
    if len(xt) < 2 or xt[0].low not in DET_NP | DEMONSTRATIVES or not nt:
        return x
    if len(xt) > 4 or any(t.low == "of" or (k and t.text[:1].isupper()) for k, t in enumerate(xt)):
        return x  # "the goal of Deep Impact mission" names its own subject
    head, np_head = xt[-1].low, nt[-1].low
    if head not in ("one", "ones") and head.rstrip("s") != np_head.rstrip("s"):
        return x
    body = _without_det(np)
    mods = x[:xt[-1].start]
    if head not in ("one", "ones"):
        body_words = {t.low for t in _tokens(body)[:-1]}
        if body_words <= {t.low for t in xt}:
            return x
    return mods + body


def _pp_object_span(a: str, prep: str) -> tuple[int, int] | None:
    toks = _tokens(a)
    n = len(toks)
    for i in range(n - 2, -1, -1):
        if toks[i].low != prep or _gap(a, toks[i], toks[i + 1]):
            continue
        nxt = toks[i + 1]
        if prep == "to" and nxt.low in VERBS:
            continue  # an infinitive
        if nxt.low in AUX or nxt.low in WH or nxt.low in CONJ:
            continue
        k = i + 2
        while k < n and not _gap(a, toks[k - 1], toks[k]):
            w = toks[k].low
            if (w in PREPS and w != "of") or w in CONJ or w in AUX or w in WH or w in VERBS:
                break
            k += 1
        return nxt.start, toks[k - 1].end
    return None


def _resolve_fragment(x: str, a: str, opener: str) -> str | None:
    x = x.strip().rstrip("?.!").strip()
    xt = _tokens(x)
    if not xt or all(t.low in REF_PRONOUNS | DEMONSTRATIVES for t in xt):
        return a
    prep = xt[0].low if xt[0].low in PREPS and len(xt) > 1 else None
    obj = x[xt[1].start:] if prep else x
    typed = _typed_spans(obj)
    base = _base(a)
    # 1. typed value swap
    if typed:
        kind, s, e = typed[0]
        same = [sp for sp in _typed_spans(a) if sp[0] == kind]
        if same:
            _, as_, ae = same[-1]
            if re.search(r"\bthe\s+$", a[:as_], re.I) and not re.search(r"\bthe\s+$", obj[:s], re.I):
                as_ = re.search(r"\bthe\s+$", a[:as_], re.I).start()
            return _tidy(a[:as_] + obj[s:e] + a[ae:])
    # 2. same preposition: swap its object
    if prep:
        span = _pp_object_span(a, prep)
        if span:
            return _tidy(a[:span[0]] + obj + a[span[1]:])
    # 3. "the kids one": the subject, with the fragment's modifiers
    if prep is None and xt[-1].low in ("one", "ones"):
        span = _subject_span(a)
        if span:
            new = _merge_head(obj, a[span[0]:span[1]])
            return _tidy(a[:span[0]] + new + a[span[1]:])
    # 4. a typed value with no counterpart (a code is a name: step 5): append as a phrase
    if typed and typed[0][0] != "code":
        phrase = x if prep else f"{TYPED_PREP[typed[0][0]]} {x}"
        return _tidy(f"{base} {phrase}?")
    # 5. a noun phrase replaces the subject
    if prep is None or (prep in ("for", "about", "on", "with", "regarding", "of") and not _action_vp(a)):
        obj_toks = _tokens(obj)
        if prep is None and any(t.low == "of" and k + 1 < len(obj_toks) and _content(obj_toks[k + 1])
                                for k, t in enumerate(obj_toks)):
            return None  # "the goal of Deep Impact mission" names a subject of its own
        gerund = obj_toks[0].low.endswith("ing") and obj_toks[0].low not in DET_NP
        span, rule = (None, "") if gerund else _subject_info(a)
        if span:
            np = a[span[0]:span[1]]
            new = _merge_head(obj, np)
            coordinated = re.match(r"\s*(?:and|or)\b", a[span[1]:], re.I) is not None
            trusted = rule in ("quote", "entity") or (rule in ("copula", "det") and not coordinated
                                                      and not _np_weak(np, bridging=False))
            if new != obj or trusted:
                return _tidy(a[:span[0]] + new + a[span[1]:])
            if prep is None:
                return None  # no clear subject to swap: leave the turn alone
    # 6. append a prepositional phrase, else the plain fallback
    if prep:
        return _tidy(f"{base} {x}?")
    lead = f"{opener} " if opener else ""
    return _tidy(f"{base}, {lead}{x}?")


def _resolve_action(text: str, vp: str) -> str | None:
    m = re.match(r"^(?P<pre>.*?\b(?:does|do|will|would|did|should|can|could)\s+)(?:it|that|this)\s+"
                 r"(?P<adv>(?:usually|normally|typically|generally|roughly|still)\s+)?"
                 r"(?P<verb>take|cost|require|involve)\b(?P<rest>[^?.!]*)(?P<end>[?.!]*)\s*$", text, re.I)
    if m and not re.search(r"\bto\b", m.group("rest"), re.I):
        return _tidy(f"{m['pre']}it {m['adv'] or ''}{m['verb']} to {vp}{m['rest']}{m['end'] or '?'}")
    m = re.match(r"^(?P<aux>is|was|will|would|isn't)\s+(?:it|that|this)\s+(?:be\s+)?(?P<adj>" + ACTION_ADJ +
                 r")\b(?P<rest>[^?.!]*)(?P<end>[?.!]*)\s*$", text, re.I)
    if m and not re.search(r"\bto\b", m.group("rest"), re.I):
        return _tidy(f"{m['aux']} it {m['adj']} to {vp}{m['rest']}{m['end'] or '?'}")
    m = re.search(r"\bdo\s+(?:it|that|this)\b", text, re.I)
    if m:
        return _tidy(text[:m.start()] + vp + text[m.end():], _is_question(text))
    return None


_IT_REFS = _words("it its it's itself")
_THEY_REFS = _words("they them their theirs they're themselves")
_PLURAL_S = _words("news series species means aids diabetes physics mathematics economics politics")


def _plural(np: str) -> bool:
    """Whether a noun phrase reads as plural ('makos', 'the Brits', 'cats and dogs')."""
    toks = _tokens(np)
    if not toks:
        return False
    if any(t.low in ("and", "or") for t in toks):
        return True
    h = toks[-1].low
    return (len(h) > 3 and h.endswith("s") and not h.endswith(("ss", "us", "is", "'s"))
            and h not in _PLURAL_S)


def _pick_np(w: str, cands: list[str]) -> str | None:
    """The candidate a pronoun refers to: number must agree for it/they."""
    if w in _IT_REFS:
        return next((c for c in cands if not _plural(c)), None)
    if w in _THEY_REFS:
        return next((c for c in cands if _plural(c)), None)
    return cands[0] if cands else None


def _resolve_refs(text: str, a: str, center: str | None = None) -> str | None:
    toks = _tokens(text)
    refs = _ref_indices(toks, text)
    if not refs:
        return None
    vp = _action_vp(a)
    if vp:
        out = _resolve_action(text, vp)
        if out:
            return out
    span = _subject_span(a)
    last = _lower_det(a[span[0]:span[1]]) if span else None
    w0 = toks[refs[0]].low
    # it/they follow the conversation's salient entity; this/that/one/there the last turn
    if w0 in _IT_REFS | _THEY_REFS:
        cands = [c for c in (center, last) if c]
    else:
        cands = [c for c in (last,) if c]
        if w0 in DEMONSTRATIVES | {"that's"} and (_subject_info(a)[1] == "run" or _np_weak(a[span[0]:span[1]])):
            return None  # "That seems extreme.": more likely the last answer than a vague phrase
    np = _pick_np(w0, list(dict.fromkeys(cands)))
    if not np:
        return None
    own = {t.low for t in toks}
    np_content = [t.low for t in _tokens(np) if _content(t)]
    if np_content and all(c in own for c in np_content):
        return None  # the turn already names it: the pronoun is the turn's own
    i = refs[0]
    t = toks[i]
    w = t.low
    start, end = t.start, t.end
    if w in ("its", "their"):
        repl = np + ("'" if np.endswith("s") else "'s")
    elif w in ("it's", "that's", "they're"):
        repl = np + (" are" if w == "they're" else " is")
    elif w in ("one", "ones"):
        j = i
        while j > 0 and i - j < 3 and toks[j - 1].low not in DET_NP | DEMONSTRATIVES | {"which"} \
                and _content(toks[j - 1]) and not _gap(text, toks[j - 1], toks[j]):
            j -= 1
        if w == "ones":
            body = _without_det(np)
            repl = body if _plural(body) else body + ("es" if body.endswith(("s", "x", "ch", "sh")) else "s")
        elif j > 0 and toks[j - 1].low in DET_NP | DEMONSTRATIVES | {"which"}:
            repl = _without_det(np)
        else:
            body = _without_det(np)
            repl = ("an " if body[:1].lower() in "aeiou" else "a ") + body
    elif w == "there":
        prv = toks[i - 1].low if i > 0 else ""
        repl = ("to " if prv in MOTION_VERBS else "at ") + np
    else:
        repl = np
    return _tidy(text[:start] + repl + text[end:], _is_question(text))


def _resolve_marker(text: str, a: str) -> str | None:
    toks = _tokens(text)
    span = _subject_span(a)
    if not span:
        return None
    np = _lower_det(a[span[0]:span[1]])
    for i in range(len(toks) - 1):
        if toks[i].low == "the" and toks[i + 1].low in MARKER_ADJ:
            k = _np_end(toks, i + 1, text)
            phrase = text[toks[i].start:toks[k - 1].end]
            merged = _merge_head(phrase, np)
            if merged != phrase:
                return _tidy(text[:toks[i].start] + merged + text[toks[k - 1].end:], _is_question(text))
            return None
    return None


def _split(turn: str) -> tuple[str | None, str, str]:
    toks = _tokens(turn)
    kind, i = _openers(toks)
    rest_start = toks[i].start if i < len(toks) else len(turn)
    rest = turn[rest_start:].strip()
    opener = turn[toks[0].start:rest_start].strip() if i > 0 else ""
    return kind, rest, opener.rstrip(",;:- ").strip()


def _clause_question(rest: str) -> bool:
    """'why can't I apply a code?', 'is it free?': a full question after 'what about'."""
    rt = _tokens(rest)
    if not rt:
        return False
    if rt[0].low in WH and rt[0].low not in ("which", "whose"):
        return len(rt) > 1 and (rt[1].low in AUX or rt[1].low in SUBJECTS or rt[1].low in REF_PRONOUNS
                                or rt[1].low in VERBS or rt[1].low in ("happened", "happens"))
    return rt[0].low in AUX and len(rt) > 1 and (rt[1].low in SUBJECTS or rt[1].low in REF_PRONOUNS)


def _resolve(turn: str, a: str, center: str | None = None) -> str:
    """Make ``turn`` (a follow-up) standalone against antecedent ``a``."""
    toks = _tokens(turn)
    if not toks:
        return turn
    kind, rest, opener = _split(turn)
    if kind == "if":
        x = rest.rstrip("?.!").strip()
        if len(_tokens(x)) > 6:
            return turn  # "what if the electors don't vote for the pledged candidate?"
        return _tidy(f"{_base(a)} if {x}?") if x else a
    if kind == "about":
        if _clause_question(rest):
            # "what about why can't I apply a feature code?": the question itself
            return _resolve_refs(rest, a, center) or _tidy(rest, True)
        if _ref_indices(_tokens(rest), rest) and any(
                t.low in ("its", "their", "his", "her") for t in _tokens(rest)):
            # "what about its health effects?": resolve the pronoun, keep the opener
            out = _resolve_refs(rest, a, center)
            return _tidy(f"{opener} {out[0].lower()}{out[1:]}") if out else turn
        return _resolve_fragment(rest, a, opener) or turn
    if not rest:
        return turn
    if _elliptical(_tokens(rest), rest):
        return _resolve_fragment(rest, a, "") or turn
    out = _resolve_refs(rest, a, center) or _resolve_marker(rest, a)
    return out or turn


def _center_np(h: str, center: str | None) -> str | None:
    """The conversation's salient entity after standalone turn ``h``."""
    span, rule = _subject_info(h)
    if not span:
        return center
    raw = h[span[0]:span[1]]
    np = _lower_det(raw)
    if center is None or rule in ("quote", "entity"):
        return np
    if _np_weak(raw) or _tokens(np)[0].low in ("my", "your", "our", "his", "her"):
        return center  # "the symptoms", "the main themes": about the current topic
    return np


def _context(history: list[str]) -> tuple[list[str], str | None]:
    """The standalone form of every substantive history turn, in order, and
    the salient entity (the subject it/they refer to) after the last one."""
    chain: list[str] = []
    center: str | None = None
    for h in history or ():
        if not h or not h.strip() or _is_ack(_tokens(h)):
            continue
        if chain and _followup_turn(h):
            chain.append(_resolve(h, chain[-1], center))
            kind, rest, _ = _split(h)
            if kind == "about" and not _clause_question(rest):
                rt = _tokens(rest)
                if rt and rt[0].low not in PREPS and not _typed_spans(rest) and not _ref_indices(rt, rest):
                    np = _lower_det(rest.rstrip("?.! "))
                    if not _np_weak(np, bridging=False):
                        center = np
        else:
            chain.append(h.strip())
            center = _center_np(h.strip(), center)
    return chain, center


def _standalone_chain(history: list[str]) -> list[str]:
    """The standalone form of every substantive history turn, in order."""
    return _context(history)[0]


def rewrite_rules(turn: str, history: list[str]) -> str:
    """A deterministic standalone question (the turn itself when it stands alone)."""
    if not is_followup(turn, history):
        return turn
    chain, center = _context(history)
    if not chain:
        return turn
    out = _resolve(turn, chain[-1], center)
    return out if out.strip() else turn


# --------------------------------------------------------------------------
# LLM condensing and the entry point
# --------------------------------------------------------------------------

def _clean_llm(text) -> str:
    if not isinstance(text, str):
        return ""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    s = re.sub(r"^(?:standalone question|question)\s*:\s*", "", lines[0], flags=re.I).strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'`":
        s = s[1:-1].strip()
    return s


def _condense(turn: str, history: list[str], complete: Callable[[str, str], str]) -> tuple[str, bool]:
    convo = "\n".join(f"User: {h.strip()}" for h in history or () if h and h.strip())
    user = prompts.CONDENSE_USER.format(history=convo or "(none)", question=turn.strip())
    try:
        out = _clean_llm(complete(prompts.CONDENSE_SYSTEM, user))
    except Exception:  # noqa: BLE001 - any model failure falls back to the rules
        out = ""
    if out:
        return out, True
    return rewrite_rules(turn, history), False


def condense_llm(turn: str, history: list[str], complete: Callable[[str, str], str]) -> str:
    """Ask a model (``complete(system, user) -> text``) for the standalone
    question; fall back to :func:`rewrite_rules` when it raises or returns
    nothing.  The answer's first line is used, stripped of whitespace, a
    "Standalone question:" label and enclosing quotes."""
    return _condense(turn, history, complete)[0]


def rewrite(turn: str, history: list[str], groups: Iterable = (), *, use_rewrite: bool = True,
            use_expansion: bool = True, complete: Callable[[str, str], str] | None = None) -> Rewrite:
    """Rewrite a follow-up (only follow-ups are ever rewritten) and expand it.

    ``method`` is "none" when no rewrite was attempted (not a follow-up, no
    history, or ``use_rewrite`` off), "llm" when the model's answer was used
    and "rules" otherwise (including the model's fallback).
    """
    standalone, method = turn, "none"
    if use_rewrite and is_followup(turn, history):
        if complete is not None:
            standalone, used = _condense(turn, history, complete)
            method = "llm" if used else "rules"
        else:
            standalone, method = rewrite_rules(turn, history), "rules"
    expansions = expand(standalone, groups) if use_expansion else ()
    return Rewrite(original=turn, standalone=standalone, rewritten=standalone != turn,
                   expansions=expansions, method=method)
