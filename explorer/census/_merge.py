"""Joining census shards into one census: the rows of each, their models named apart where two
sources hold one name (``qualified``), their settings checked to agree (``merge``)."""

from __future__ import annotations

import dataclasses

from ._cases import LIMITS, loosest
from ._table import Census, CensusRow


def qualified(censuses: list[Census]) -> list[Census]:
    """The censuses with each row whose model another census's row of another source also
    names (timm's ``resnet18`` and torchvision's, in any mode) named with its source,
    ``resnet18 (torchvision)``: two models, two rows. A name that carries its source already
    (a merged census merged again) counts as the name without it. The same source's model twice
    is still the same row (``merge`` refuses it)."""

    def bare(r: CensusRow) -> str:
        return r.model.removesuffix(f" ({r.source})") if r.source else r.model

    sources: dict[str, set] = {}
    for c in censuses:
        for r in c.rows:
            sources.setdefault(bare(r), set()).add(r.source)
    return [
        dataclasses.replace(
            c,
            rows=tuple(
                dataclasses.replace(
                    r, model=f"{bare(r)} ({r.source})" if len(sources[bare(r)]) > 1 else bare(r)
                )
                for r in c.rows
            ),
        )
        for c in censuses
    ]


# the settings that only choose which cases run (each row names its mode and precision): shards
# that differ in them join (an eval census beside a training one), their lists united in order
CASE_CHOICE = ("modes", "precisions")


def merge(censuses: list[Census], title: str | None = None) -> Census:
    """One census of the shards' rows (in their order); ValueError where the shards were run
    with different settings (but ``CASE_CHOICE``: united, and ``LIMITS``: the loosest) or torch versions, or two hold the
    same row (``qualified`` names the models of different sources apart first)."""
    first = censuses[0]
    rows: dict[str, CensusRow] = {}
    chosen: dict[str, list] = {k: [] for k in CASE_CHOICE}
    for c in censuses:
        if c.torch_version != first.torch_version:
            raise ValueError(
                f"{c.path} was run with other torch_version than {first.path}: cannot merge them"
            )
        rest, first_rest = (
            {k: v for k, v in s.items() if k not in CASE_CHOICE + LIMITS}
            for s in (c.settings, first.settings)
        )
        if rest != first_rest:
            said = sorted(k for k in rest.keys() | first_rest.keys() if rest.get(k) != first_rest.get(k))
            raise ValueError(
                f"{c.path} was run with other settings ({', '.join(said)}) than {first.path}: cannot merge them"
            )
        for k in CASE_CHOICE:
            chosen[k] += [x for x in c.settings.get(k) or () if x not in chosen[k]]
        for r in c.rows:
            if r.key in rows:
                raise ValueError(f"{r.key} is in more than one of the censuses ({c.path}): cannot merge them")
            rows[r.key] = r
    settings = {**first.settings, **{k: v for k, v in chosen.items() if k in first.settings or v}}
    for k in LIMITS:  # the loosest (None: no limit): every row finished within it
        limits = [c.settings[k] for c in censuses if k in c.settings]
        if limits:
            settings[k] = loosest(limits)
    return dataclasses.replace(
        first, rows=tuple(rows.values()), settings=settings, title=title or first.title, path=None
    )
