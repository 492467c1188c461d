"""The plain data types every stage shares: chunks, scopes, hits and evidence."""
from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Chunk:
    id: str
    source: str  # document path relative to the ingested folder
    title: str
    headings: tuple[str, ...]  # heading path, outermost first
    text: str  # the chunk's own text, as shown to the reader
    start: int  # first source line (1-based)
    end: int  # last source line
    status: str = "current"
    audience: str = "public"
    lang: str = "en"
    tenant: str | None = None
    page: int | None = None
    end_page: int | None = None  # the page of ``end`` when the chunk runs on past ``page`` (a PDF paragraph)

    @property
    def location(self) -> str:
        return f"{self.source}, {place(self.page, self.start, self.end, self.end_page)}"

    @property
    def search_text(self) -> str:
        """What the retrievers index: the title and heading path give a chunk
        the context its own words often leave out ("Size L" under "Frame sizes")."""
        path = " > ".join(h for h in (self.title, *self.headings) if h)
        return f"{path}\n{self.text}" if path else self.text

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["headings"] = list(self.headings)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Chunk:
        d = dict(d)
        d["headings"] = tuple(d.get("headings", ()))
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def place(page: int | None, start: int, end: int, end_page: int | None = None) -> str:
    """Where cited text is: "lines 3-7"; in a PDF, whose lines count from 1
    on each page, "p. 2, lines 3-7", or "p. 2, line 40 to p. 3, line 4" for a
    paragraph a page break cut."""
    if page and end_page and end_page != page:
        return f"p. {page}, line {start} to p. {end_page}, line {end}"
    where = f"lines {start}-{end}" if end != start else f"line {start}"
    return f"p. {page}, {where}" if page else where


def lang_tag(tag: str) -> str:
    """A language as a chunk's ``lang`` holds it: the tag's language, with its
    script when one is named (``zh-Hant`` -> ``zh-hant``, as a ``zh-hant/``
    folder) and without a region (``en-US``, ``en_GB`` -> ``en``); Chinese
    by its script, named or implied (``zh-TW`` -> ``zh-hant``, ``zh-Hans``,
    ``zh-CN`` -> ``zh``).  Every
    reader (front matter, ``<html lang>``, a PDF's /Lang, a language folder)
    and ``--lang`` go through it, so ``lang: en-US`` is in ``--lang en``."""
    parts = tag.strip().lower().replace("_", "-").split("-")
    if parts[0] == "zh" and len(parts) > 1:  # Chinese names its script by region too: zh-TW is Traditional
        return "zh-hant" if parts[1] in _HANT_TAGS else "zh"
    return parts[0] + (f"-{parts[1]}" if len(parts) > 1 and len(parts[1]) == 4 else "")


# Tags after "zh-" that mean Traditional characters (a script, or a region
# that writes them); any other (hans, cn, sg, my) is Simplified, ``zh``.
_HANT_TAGS = frozenset({"hant", "tw", "hk", "mo"})


STATUSES = ("current", "superseded", "draft")  # the statuses a document can have


@dataclass(frozen=True)
class Scope:
    """What the asker may see.  Default: current documents, public audience,
    any language, no tenant (documents without a tenant are visible to all)."""

    statuses: frozenset = frozenset({"current"})
    audiences: frozenset = frozenset({"public"})
    langs: frozenset | None = None  # None = any language
    tenant: str | None = None
    # Evaluation only ("no filters" ablation); never set from the command line.
    all_tenants: bool = False

    @classmethod
    def build(cls, audience: str | None = None, tenant: str | None = None, lang: str | None = None,
              include_superseded: bool = False) -> Scope:
        # Staff see what the public sees plus staff documents.  Front matter's
        # values are read lower-cased, so "--audience Staff" means staff.
        audiences = {"public"} | ({audience.strip().lower()} if audience and audience.strip() else set())
        statuses = {"current"} | ({"superseded"} if include_superseded else set())
        langs = frozenset(lang_tag(x) for x in lang.split(",")) if lang else None
        return cls(frozenset(statuses), frozenset(audiences), langs, tenant or None)

    def allows(self, c: Chunk) -> bool:
        return self.admits(c.status, c.audience, c.lang, c.tenant)

    def admits(self, status: str, audience: str, lang: str, tenant: str | None) -> bool:
        """``allows`` over the fields alone (an index's row columns, no Chunk made)."""
        return (status in self.statuses and audience in self.audiences
                and (self.langs is None or lang in self.langs)
                and (tenant is None or self.all_tenants or tenant == self.tenant))

    @classmethod
    def everything(cls) -> Scope:
        return cls(frozenset(STATUSES), frozenset({"public", "staff"}), None, None, True)

    def describe(self) -> str:
        langs = ",".join(sorted(self.langs)) if self.langs else "any"
        return (f"status={','.join(sorted(self.statuses))} audience={','.join(sorted(self.audiences))} "
                f"lang={langs} tenant={self.tenant or '-'}")


FUSED = ("rrf", "pages", "rerank")  # lists made from other lists; every other list is a first-stage one


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk in one ranked list, carrying every list's rank and
    raw score it has been through: "bm25", "dense", per-query variants like
    "bm25@2", then "rrf" and "rerank".  Each stage makes new hits
    (:meth:`placed`), so a list never changes behind another list's back."""

    chunk: Chunk
    rank: int = 0  # position in the list this hit is in (1-based)
    score: float = 0.0  # the score that list is ordered by
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.chunk.id

    def placed(self, name: str, rank: int, score: float) -> Hit:
        """This hit as ranked ``rank`` with ``score`` in the list ``name``."""
        return replace(self, rank=rank, score=score, ranks={**self.ranks, name: rank},
                       scores={**self.scores, name: score})

    def channel_rank(self, channel: str) -> int | None:
        """Best rank in any list of a channel ("bm25" covers "bm25@2" ...)."""
        found = [r for k, r in self.ranks.items() if k.split("@")[0] == channel]
        return min(found) if found else None

    def best_rank(self) -> int:
        """Best rank in any first-stage list (the RRF tie-break)."""
        found = [r for k, r in self.ranks.items() if k not in FUSED]
        return min(found) if found else 10**9


@dataclass(frozen=True)
class Evidence:
    """Absolute evidence that a chunk bears on the question (unlike ranks):
    ``coverage`` share of the question's idf mass the chunk holds, whether it
    holds an ``identifier`` the question names (E4032, RD2-24), and the dense
    ``cosine`` (None when the dense channel did not run)."""

    coverage: float = 0.0
    identifier: bool = False
    cosine: float | None = None

    def best(self, other: Evidence) -> Evidence:
        """Component-wise best of two queries' evidence for one chunk."""
        cos = [c for c in (self.cosine, other.cosine) if c is not None]
        return Evidence(max(self.coverage, other.coverage), self.identifier or other.identifier,
                        max(cos) if cos else None)
