"""Max-min fair sharing of link bandwidth among the copies in their data phase (progressive
filling), exact or on the simulation's integer rate quanta (docs/timeline.md, "Routes and
bandwidth sharing" and "The picosecond grid")."""
from __future__ import annotations

import operator

from gpumodeler.core.errors import InvalidParameter

RATE_BITS = 50  # the smallest capacity or rate cap holds at least 2**RATE_BITS rate quanta


def rate_quantum_bits(rates) -> int:
    """k such that every rate (bytes/s) is a whole number of quanta of 2^-k B/s when its
    denominator is a power of two (every float), and the smallest rate holds at least
    2**RATE_BITS quanta, so rounding a fair share down to a quantum changes it by less than
    2^-50 of itself."""
    k = 0
    for r in rates:
        p, q = r.as_integer_ratio()
        k = max(k, q.bit_length() - 1, RATE_BITS + 1 - (p.bit_length() - q.bit_length()))
    return k


def fair_rates(flows: dict, capacities: dict, divide=operator.truediv) -> dict:
    """Max-min fair rates by progressive filling. ``flows``: id -> (links, cap or None);
    ``capacities``: link -> capacity. Exact when given Fractions; with integers and
    ``divide=operator.floordiv`` every share is rounded down to a whole unit (so no link is
    ever over its capacity), as the simulation's integer rates are."""
    users: dict = {}  # link -> flows not yet frozen that cross it
    for links, _cap in flows.values():
        for link in links:
            users[link] = users.get(link, 0) + 1
    remaining = {link: capacities[link] for link in users}
    rates = {}
    unfrozen = list(flows.items())
    while unfrozen:
        # the level of this round: the smallest equal share of a link, or a smaller cap
        share = {link: divide(remaining[link], n) for link, n in users.items() if n}
        level = min(share.values(), default=None)
        for _f, (_links, cap) in unfrozen:
            if cap is not None and (level is None or cap < level):
                level = cap
        if level is None:
            raise InvalidParameter("a copy has neither a link nor a rate cap")
        # flows limited at the level (by their cap or one of their links) are frozen there
        keep = []
        for item in unfrozen:
            f, (links, cap) = item
            if cap == level or any(share[link] == level for link in links):
                rates[f] = level
                for link in links:
                    remaining[link] -= level
                    users[link] -= 1
            else:
                keep.append(item)
        unfrozen = keep
    return rates


def integer_fair_rates(active, links, caps, capacities, users, load) -> dict:
    """:func:`fair_rates` with ``divide=operator.floordiv``, for the simulation's integer
    rates: the same allocation (a test compares them), in fewer steps, since it runs at every
    start and end of a data phase. ``active``: flow indices; ``links``/``caps``: per index;
    ``capacities``: link -> integer capacity; ``users``/``load``: link -> the active flows
    crossing it / the sum of their caps (an uncapped flow counts more than the capacity),
    kept up to date by the caller. When the caps fit on every link, every flow runs at its
    cap (the max-min fair allocation); otherwise progressive filling, one level per round."""
    # the caps-fit test and the first round in one pass over the links in use
    fits = True
    level = None
    tight = []  # the links whose equal share is the level
    for link, n in users.items():
        capacity = capacities[link]
        if fits and load[link] > capacity:
            fits = False
        share = capacity // n
        if level is None or share < level:
            level = share
            tight = [link]
        elif share == level:
            tight.append(link)
    if fits:
        return {i: caps[i] for i in active}
    for i in active:
        c = caps[i]
        if c is not None and (level is None or c < level):
            level = c
            tight = []
    # often every flow is frozen in the first round: all cross one tight link, or each is
    # at its cap or crosses one
    everyone = len(active)
    for link in tight:
        if users[link] == everyone:
            return dict.fromkeys(active, level)
    tight_set = set(tight)
    for i in active:
        if caps[i] != level and tight_set.isdisjoint(links[i]):
            break
    else:
        return dict.fromkeys(active, level)
    users = dict(users)
    remaining = {link: capacities[link] for link in users}
    rates = {}
    unfrozen = list(active)
    while unfrozen:
        level = None
        for link, n in users.items():
            if n:
                share = remaining[link] // n
                if level is None or share < level:
                    level = share
        for i in unfrozen:
            c = caps[i]
            if c is not None and (level is None or c < level):
                level = c
        if level is None:
            raise InvalidParameter("a copy has neither a link nor a rate cap")
        tight_now = {link for link, n in users.items() if n and remaining[link] // n == level}
        frozen = [i for i in unfrozen if caps[i] == level or not tight_now.isdisjoint(links[i])]
        for i in frozen:
            rates[i] = level
        if len(frozen) == len(unfrozen):
            break
        for i in frozen:
            for link in links[i]:
                remaining[link] -= level
                users[link] -= 1
        frozen_set = set(frozen)
        unfrozen = [i for i in unfrozen if i not in frozen_set]
    return rates
