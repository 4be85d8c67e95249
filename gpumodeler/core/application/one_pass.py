"""The in-order timeline in one pass when every duration is known before the simulation (no
link can be shared): each start is the longest path to it through dependencies and engine
order (docs/timeline.md, "Engines" and "Cost"); the event loop of
:mod:`gpumodeler.core.application.timeline` gives the same timeline (tested), in general."""
from __future__ import annotations

import itertools
import math


def links_never_shared(pairs) -> bool:
    """Whether no two data phases can ever cross one link at once: every link is crossed
    only by activities that all hold one same engine (engines are exclusive, so those run one
    at a time). Then every copy runs at its rate alone and each duration is known before the
    simulation. ``pairs``: the distinct (engines, links) of the activities."""
    common: dict = {}  # link -> the engines every activity crossing it holds
    for es, ls in pairs:
        if len(set(es)) != len(es):  # (an engine named twice by one step: the event loop)
            return False
        for link in ls:
            held = common.get(link)
            common[link] = set(es) if held is None else held.intersection(es)
    return all(common.values())


def longest_paths(n, dep_count, dep_flat, engine_names, numbered, number, fixed, links, used_links, nbytes, copies,
                  cap_in, in_quanta, caps, work_per_byte) -> tuple | None:
    """The in-order simulation when every duration is known before it (no link is ever
    shared: :func:`links_never_shared`) and every dependency is on an earlier activity: each
    start is then the longest path to it through dependencies and engine order (the timeline
    module's docstring), found in one pass in program order — the latest of the dependencies' ends
    and of the ends of the activities before it on its engines — with the causes the event
    loop gives (the dependency that ended last, the latest in program order on a tie, when
    it ended at the start; else the engine's last holder that ended then, the latest in
    program order). None when an activity depends on a later one (the event loop then). A
    copy's data phase takes ⌈work / rate alone⌉ ps, the rate alone being
    min(rate cap, capacities) (Gajger 2017 eq. 5.5 on the grid). Returns start, end, ready,
    cause (indices, ``n``: none), the busy time per engine and link (none for a zero makespan)
    and the makespan, in whole ps (``numbered``: a step's engines -> their numbers; ``number``:
    engine id -> its number)."""
    n_engines = len(number)
    duration = list(fixed)
    busy_l: dict = dict.fromkeys(used_links, 0)
    if copies:  # (grouped by rate cap and path: one rate alone per group)
        groups: dict = {}
        for i in copies:
            key = (cap_in[i], links[i])
            g = groups.get(key)
            if g is None:
                groups[key] = [i]
            else:
                g.append(i)
        ceil = math.ceil
        for (c, ls), members in groups.items():
            a = in_quanta[c]
            for link in ls:
                x = caps[link]
                if a is None or x < a:
                    a = x
            total = 0
            for i in members:
                d = -(-(ceil(nbytes[i]) * work_per_byte) // a)
                duration[i] += d
                total += d
            for link in ls:
                busy_l[link] += total
    start = [0] * n
    end = [0] * n
    end.append(-1)  # (end[n]: before any time, the end of "no activity")
    ready = [0] * n
    cause = [n] * n
    last_on = [n] * n_engines  # engine -> the last activity on it so far (program order; n: none)
    busy_e = [0] * n_engines
    # one engine: its number; none: -1; several: -2
    kind = {es: (num[0] if len(num) == 1 else -2 if num else -1) for es, num in numbered.items()}
    single = list(map(kind.__getitem__, engine_names))
    it = iter(dep_flat)  # each activity's dependencies, in turn
    for i, m, e, du in zip(range(n), dep_count, single, duration):
        if m == 1:
            d = next(it)
            if d >= i:
                return None
            r = end[d]
        elif m == 2:  # (a stream's last step and one other: no loop)
            d = next(it)
            x = next(it)
            if d >= i or x >= i:
                return None
            r = end[d]
            y = end[x]
            if y > r or (y == r and x > d):
                r = y
                d = x
        elif m:
            d = next(it)
            if d >= i:
                return None
            r = end[d]
            for x in itertools.islice(it, m - 1):
                if x >= i:
                    return None
                y = end[x]
                if y > r or (y == r and x > d):
                    r = y
                    d = x
        else:
            d = n
            r = 0
        if e >= 0:
            p = last_on[e]
            last_on[e] = i
            busy_e[e] += du
            t = end[p]
            if t > r:
                cause[i] = p
            else:
                t = r
                cause[i] = d
        elif e == -1:
            t = r
            cause[i] = d
        else:
            t = r
            c = -1
            for e in numbered[engine_names[i]]:
                p = last_on[e]
                last_on[e] = i
                busy_e[e] += du
                y = end[p]
                if y > t:
                    t = y
                    c = p
                elif y == t and p > c:
                    c = p
            cause[i] = c if t > r else d
        ready[i] = r
        start[i] = t
        end[i] = t + du
    end.pop()
    makespan = max(end, default=0)
    if not makespan:
        return start, end, ready, cause, {}, makespan
    busy = dict(zip(number, busy_e))
    for link, x in busy_l.items():  # (a link named like an engine: one resource)
        busy[link] = busy.get(link, 0) + x
    return start, end, ready, cause, busy, makespan
