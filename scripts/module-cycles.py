#!/usr/bin/env python3
"""Lists the import cycles between the modules of each crate: the library
(src/), the command-line tool (cli/src/) and the reference implementation
(reference/src/), one module per file. Each
`crate::a::b` or `super::c` path in a file is an edge to the module it
names (a module naming one of its ancestors is not counted). Exit code 1
if there is a cycle. Test modules (`#[cfg(test)] mod tests` and
**/tests.rs) are not counted: a module's tests may use anything."""
import os, re, sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# (crate, its source folder): each crate's modules are a graph of their own.
CRATES = [
    ("treehash", os.path.join(HERE, "src")),
    ("treehash-cli", os.path.join(HERE, "cli", "src")),
    ("treehash-reference", os.path.join(HERE, "reference", "src")),
]

def module_of(root, path):
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)

def crate_edges(root):
    """The crate's modules, each with the modules it names."""
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith(".rs") and n != "tests.rs":
                p = os.path.join(d, n)
                files[module_of(root, p)] = p
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
            if target is not None and target != m and not (m[: len(target)] == target):
                edges[m].add(target)
        # `use self::x` / `mod x` children are below; a parent naming a child is fine.
    return edges

# Strongly connected components (Tarjan).
sys.setrecursionlimit(10000)

def cycles(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

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

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out

found = 0
for crate, root in CRATES:
    edges = crate_edges(root)
    name = lambda m: "::".join((crate,) + m)
    out = cycles(edges)
    for comp in out:
        print("cycle: " + ", ".join(name(m) for m in comp))
        for a in comp:
            for b in sorted(edges[a]):
                if b in comp:
                    print(f"  {name(a)} -> {name(b)}")
    print(f"{crate}: {len(out)} cycle(s) among {len(edges)} modules")
    found += len(out)
sys.exit(1 if found else 0)
