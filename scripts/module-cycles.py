#!/usr/bin/env python3
"""Lists the import cycles between the library's modules (one module per
file under src/, the CLI's excepted): each `crate::a::b` or `super::c` path
in a file is an edge to the module it names. Exit code 1 if there is a
cycle. Test modules (`#[cfg(test)] mod tests` and src/**/tests.rs) are not
counted: a module's tests may use anything."""
import os, re, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

def module_of(path):
    rel = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)

files = {}
for d, _, names in os.walk(ROOT):
    for n in names:
        if n.endswith(".rs"):
            p = os.path.join(d, n)
            m = module_of(p)
            if m and m[0] == "cli" or n == "main.rs" or n == "tests.rs":
                continue
            files[m] = p
modules = set(files)

def resolve(path):
    """The longest known module that `path` (a tuple) starts with."""
    for k in range(len(path), 0, -1):
        if path[:k] in modules:
            return path[:k]
    return None

edges = {m: set() for m in modules}
for m, p in files.items():
    text = open(p).read()
    # Drop the test module at the end of a file.
    cut = re.search(r"#\[cfg\(test\)\]\s*mod tests\s*\{", text)
    if cut:
        text = text[: cut.start()]
    # Comments (and doc comments) name modules without using them.
    text = re.sub(r"//[^\n]*", "", text)
    # A mod.rs's `super` is its parent; a file's `self` is itself.
    for kind, rest in re.findall(r"\b(crate|super)((?:::\w+)+)", text):
        parts = tuple(rest.strip(":").split("::"))
        if kind == "crate":
            target = resolve(parts)
        else:
            base = m[:-1]
            target = resolve(base + parts) or (base if base in modules else None)
        if target and target != m and not (m[: len(target)] == target):
            edges[m].add(target)
    # `use self::x` / `mod x` children are below; a parent naming a child is fine.

# Strongly connected components (Tarjan).
index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def visit(v):
    index[v] = low[v] = counter[0]; counter[0] += 1
    stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            out.append(sorted(comp))
for v in sorted(modules):
    if v not in index:
        visit(v)
name = lambda m: "::".join(m)
for comp in out:
    print("cycle: " + ", ".join(name(m) for m in comp))
    for a in comp:
        for b in sorted(edges[a]):
            if b in comp:
                print(f"  {name(a)} -> {name(b)}")
print(f"{len(out)} cycle(s) among {len(modules)} modules")
sys.exit(1 if out else 0)
