#!/usr/bin/env python3
"""A straightforward Python implementation of docs/SPEC.md sections 1-3.

Written from the SPEC alone (not from the Rust code), as the speed baseline
for `cargo bench -p oracle` and as a third, independent check of the
oracle's verdicts (oracle/tests/python_reference.rs runs it on a sample).

For each test and each of the six base models it builds the product state
space (memory, pcs, terminated threads, F) breadth first, then decides:

- unfair: the test passes iff the space has no cycle;
- weak fairness: the test fails iff some strongly connected component has
  an internal transition, a non-empty F and an internal Step of every
  thread of F;
- strong fairness: the test passes iff every state reaches, by Steps of
  threads in F and Terminates, the final "all done" transition or a Step
  taken while F is empty (a backward fixpoint).

Input: RON suites or tests as the tools write them, artifact `.txt` tests,
or directories of them. Output: the CSV of `oracle classify --format csv`
(header, then one row per test sorted by name) on stdout.

    python3 oracle/benches/reference_oracle.py suites/2t2i/2t2i.ron ... > ref.csv
    python3 oracle/benches/reference_oracle.py --every 20 suites/2t4i/2t4i.ron

`--every K` keeps every K-th test (in name order), for quick samples.
"""

import os
import re
import sys
from collections import deque

MODELS = ["HSA", "OBE", "LOBE", "WEAK_FAIR", "HSA_STRONG", "OBE_STRONG",
          "LOBE_STRONG", "STRONG_FAIR", "HSA_OBE", "HSA_OBE_STRONG", "UNFAIR"]
# Column -> (base, fairness).
COLUMN = {
    "HSA": ("hsa", "weak"), "OBE": ("obe", "weak"), "LOBE": ("lobe", "weak"),
    "WEAK_FAIR": ("fair", "weak"), "HSA_STRONG": ("hsa", "strong"),
    "OBE_STRONG": ("obe", "strong"), "LOBE_STRONG": ("lobe", "strong"),
    "STRONG_FAIR": ("fair", "strong"), "HSA_OBE": ("hsaobe", "weak"),
    "HSA_OBE_STRONG": ("hsaobe", "strong"), "UNFAIR": ("unfair", "weak"),
}
BASES = ["unfair", "hsa", "obe", "hsaobe", "lobe", "fair"]

# An instruction is (loc, check, jump, exch): jump a pc (len = END), exch a
# value or None.


# --- Reading tests ----------------------------------------------------------

def parse_text(src):
    """The artifact's text format (SPEC section 1)."""
    threads = []
    for line in src.splitlines():
        line = line.strip()
        if not line or line.startswith("//") or line.startswith("#"):
            continue
        if line.startswith("THREAD"):
            threads.append([])
            continue
        m = re.fullmatch(r"(\w+)\(([^)]*)\)", line)
        if not m or not threads:
            raise ValueError("bad line: " + line)
        op, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
        threads[-1].append((op, args))
    out = []
    for th in threads:
        n = len(th)

        def target(a):
            return n if a == "END" else int(a)

        instrs = []
        for pc, (op, a) in enumerate(th):
            if op == "atomic_store":
                instrs.append((int(a[0]), 0, pc + 1, int(a[1])))
            elif op == "atomic_chk_branch":
                instrs.append((int(a[0]), int(a[1]), target(a[2]), None))
            elif op == "atomic_exch_branch":
                instrs.append((int(a[0]), int(a[1]), target(a[3]), int(a[2])))
            else:
                raise ValueError("unknown instruction " + op)
        out.append(instrs)
    return out


TOKEN = re.compile(r'\s*(?:(//[^\n]*)|("(?:[^"\\]|\\.)*")|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(.))', re.S)


def tokens(src):
    for m in TOKEN.finditer(src):
        comment, string, ident, number, punct = m.groups()
        if comment is not None:
            continue
        if string is not None:
            yield ("str", bytes(string[1:-1], "utf-8").decode("unicode_escape"))
        elif ident is not None:
            yield ("id", ident)
        elif number is not None:
            yield ("int", int(number))
        elif punct is not None and not punct.isspace():
            yield ("p", punct)


class Ron:
    """Just enough RON: structs, lists, maps, Some/None, enums, numbers."""

    def __init__(self, src):
        self.toks = list(tokens(src))
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", None)

    def take(self, kind=None, value=None):
        t = self.peek()
        if (kind and t[0] != kind) or (value is not None and t[1] != value):
            raise ValueError("RON: expected %s %s, found %s" % (kind, value, t))
        self.i += 1
        return t

    def value(self):
        kind, v = self.peek()
        if kind == "str" or kind == "int":
            self.i += 1
            return v
        if kind == "p" and v == "[":
            return self.items("]", self.value)
        if kind == "p" and v == "{":
            self.i += 1
            out = {}
            while self.peek() != ("p", "}"):
                k = self.value()
                self.take("p", ":")
                out[k] = self.value()
                if self.peek() == ("p", ","):
                    self.i += 1
            self.i += 1
            return out
        if kind == "p" and v == "(":
            return self.fields()
        if kind == "id":
            self.i += 1
            if v == "None":
                return None
            if self.peek() == ("p", "("):
                if v == "Some":
                    self.i += 1
                    inner = self.value()
                    self.take("p", ")")
                    return inner
                # A named struct, or an enum variant with one value.
                save = self.i
                self.i += 1
                if self.peek()[0] == "id" and self.toks[self.i + 1] == ("p", ":"):
                    self.i = save
                    return self.fields()
                inner = self.value()
                self.take("p", ")")
                return (v, inner)
            return v  # a unit variant
        raise ValueError("RON: unexpected %s" % (self.peek(),))

    def items(self, close, item):
        self.i += 1
        out = []
        while self.peek() != ("p", close):
            out.append(item())
            if self.peek() == ("p", ","):
                self.i += 1
        self.i += 1
        return out

    def fields(self):
        self.take("p", "(")
        out = {}
        while self.peek() != ("p", ")"):
            k = self.take("id")[1]
            self.take("p", ":")
            out[k] = self.value()
            if self.peek() == ("p", ","):
                self.i += 1
        self.i += 1
        return out


def ron_threads(threads):
    out = []
    for th in threads:
        n = len(th)
        instrs = []
        for i in th:
            jump = i["jump"]
            pc = n if jump == "End" else jump[1]
            instrs.append((i["loc"], i["check"], pc, i.get("exch")))
        out.append(instrs)
    return out


def load(path):
    """[(name, threads)] from one file."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    stem = os.path.splitext(os.path.basename(path))[0]
    if path.endswith(".txt"):
        return [(stem, parse_text(src))]
    doc = Ron(src).value()
    if "tests" in doc:
        return [(t["name"], ron_threads(t["threads"])) for t in doc["tests"]]
    return [(stem, ron_threads(doc["threads"]))]


def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                for n in sorted(names):
                    if n.endswith(".ron") or n.endswith(".txt"):
                        yield os.path.join(root, n)
        else:
            yield p


# --- SPEC section 2: the fair set F of each model --------------------------

def smallest_live(n, term):
    for t in range(n):
        if t not in term:
            return frozenset([t])
    return frozenset()


def f_initial(base, n):
    if base in ("unfair", "obe", "lobe"):
        return frozenset()
    if base == "fair":
        return frozenset(range(n))
    return frozenset([0])  # hsa, hsaobe


def f_after_step(base, f, t, term):
    if base in ("obe", "hsaobe"):
        return f | {t}
    if base == "lobe":
        return f | {u for u in range(t + 1) if u not in term}
    return f


def f_after_terminate(base, f, t, n, term):
    if base == "unfair":
        return f
    if base in ("fair", "obe", "lobe"):
        return f - {t}
    if base == "hsa":
        return smallest_live(n, term)
    return (f - {t}) | smallest_live(n, term)  # hsaobe


# --- SPEC section 3: the product space and the verdicts --------------------

def product(threads, base):
    """States: (mem, pcs, term, F). Edges: (target, thread, is_step, F before)."""
    n = len(threads)
    locs = 1 + max(i[0] for th in threads for i in th)
    init = ((0,) * locs, (0,) * n, frozenset(), f_initial(base, n))
    index = {init: 0}
    states = [init]
    edges = [[]]
    queue = deque([0])
    while queue:
        s = queue.popleft()
        mem, pcs, term, f = states[s]
        for t in range(n):
            if t in term:
                continue
            th = threads[t]
            if pcs[t] < len(th):
                loc, check, jump, exch = th[pcs[t]]
                old = mem[loc]
                new_mem = mem if exch is None else mem[:loc] + (exch,) + mem[loc + 1:]
                pc = jump if old == check else pcs[t] + 1
                nxt = (new_mem, pcs[:t] + (pc,) + pcs[t + 1:], term,
                       f_after_step(base, f, t, term))
                step = True
            else:
                new_term = term | {t}
                nxt = (mem, pcs, new_term, f_after_terminate(base, f, t, n, new_term))
                step = False
            k = index.get(nxt)
            if k is None:
                k = index[nxt] = len(states)
                states.append(nxt)
                edges.append([])
                queue.append(k)
            edges[s].append((k, t, step, f))
    return states, edges


def sccs(edges):
    """Tarjan's algorithm, iterative. Returns the component of each state."""
    n = len(edges)
    index = [None] * n
    low = [0] * n
    on_stack = [False] * n
    comp = [None] * n
    stack = []
    counter = 0
    ncomp = 0
    for root in range(n):
        if index[root] is not None:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, i = work[-1]
            if i < len(edges[v]):
                work[-1] = (v, i + 1)
                w = edges[v][i][0]
                if index[w] is None:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = ncomp
                    if w == v:
                        break
                ncomp += 1
    return comp, ncomp


def unfair_passes(states, edges):
    comp, _ = sccs(edges)
    return not any(comp[s] == comp[e[0]] for s in range(len(edges)) for e in edges[s])


def weak_passes(states, edges):
    comp, ncomp = sccs(edges)
    internal = [False] * ncomp
    steppers = [set() for _ in range(ncomp)]
    for s in range(len(edges)):
        for (t, thread, step, _f) in edges[s]:
            if comp[s] == comp[t]:
                internal[comp[s]] = True
                if step:
                    steppers[comp[s]].add(thread)
    for s, st in enumerate(states):
        c = comp[s]
        f = st[3]
        if internal[c] and f and f <= steppers[c]:
            return False
    return True


def strong_passes(states, edges):
    n = len(states)
    nthreads = len(states[0][1])
    preds = [[] for _ in range(n)]
    for s in range(n):
        for (t, thread, step, f) in edges[s]:
            preds[t].append((s, thread, step, f))
    good = [False] * n
    work = []
    for s in range(n):
        all_done = len(states[s][2]) == nthreads
        if all_done or any(step and not f for (_t, _th, step, f) in edges[s]):
            good[s] = True
            work.append(s)
    while work:
        x = work.pop()
        for (s, thread, step, f) in preds[x]:
            fair_move = (not step) or thread in f
            if fair_move and not good[s]:
                good[s] = True
                work.append(s)
    return all(good)


def verdicts(threads):
    out = {}
    for base in BASES:
        states, edges = product(threads, base)
        if base == "unfair":
            out[("unfair", "weak")] = unfair_passes(states, edges)
            continue
        out[(base, "weak")] = weak_passes(states, edges)
        out[(base, "strong")] = strong_passes(states, edges)
    return ["P" if out[COLUMN[m]] else "F" for m in MODELS]


def main(argv):
    every = 1
    paths = []
    args = iter(argv)
    for a in args:
        if a == "--every":
            every = int(next(args))
        else:
            paths.append(a)
    if not paths:
        sys.exit(__doc__)
    tests = []
    for p in files(paths):
        tests.extend(load(p))
    tests.sort(key=lambda t: t[0])
    tests = tests[::every]
    out = ["test," + ",".join(MODELS)]
    for name, threads in tests:
        out.append(name + "," + ",".join(verdicts(threads)))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
