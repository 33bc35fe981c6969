# SPDX-License-Identifier: GPL-2.0
"""Mutants made by rule: every one-line mutation of the mechanisms' code
and their call sites, for a line's patched tree.

Where (found from the tree, not chosen):
  - the mechanisms' lines: every line under kernel/sched/ that the series
    adds or changes (git diff baseline patched, the tests left out);
  - the mechanisms' functions: those that hold such a line (kernel style:
    a definition starts at column 0 and ends at the next '}' there);
  - the call sites: every line under kernel/sched/ that calls one of them.

What (each rule applied at every place it fits on those lines):
  ror        a relational operator replaced by each of the other five
  lcr        '&&' and '||' swapped
  neg        a '!' dropped; an if's condition negated
  const      an integer constant plus one and minus one
  drop       a call statement or an early 'return' made an empty statement
  field      a struct member replaced by the member declared before or
             after it in kernel/sched/sched.h with the same type
  rq         a 'struct rq *' variable of the function replaced by another
             (this_rq and busiest, dst_rq and src_rq)

Comments, preprocessor lines and declarations are left alone. Each
mutant is a patch on 'patched' with the header 'mutant: ...' and
'expect: any' (caught when some case fails), as sfp mutate reads them.
"""
from __future__ import annotations

import dataclasses
import pathlib
import re
import subprocess
import tomllib

RELOPS = ("<", "<=", ">", ">=", "==", "!=")
_RELOP = re.compile(r"(?<![-<>=!&|+*/%^])(<=|>=|==|!=|<|>)(?![<>=])")
_INT = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
_CALL_STMT = re.compile(r"^(\s*)([A-Za-z_][\w>.-]*(?:->\w+)*\s*\(.*\)\s*);\s*$")
_RETURN = re.compile(r"^(\s*)return\b[^;]*;\s*$")
_IF = re.compile(r"^(\s*(?:\}\s*else\s+)?if\s*)\((.*)\)(\s*\{?\s*)$")
_FUNC_START = re.compile(r"^(?![\s#])(?:.*[\s*])?([A-Za-z_]\w*)\s*\([^;]*$")
_MEMBER = re.compile(r"(?<![\w>.])([a-z_]\w*)(->|\.)([a-z_]\w*)\b(?!\s*\()")
_VAR_DECL = re.compile(r"struct (\w+)\s*(\*?)\s*(\w+)\s*[,;)=]")
_STRUCT = re.compile(r"^struct (\w+) \{$")
_FIELD_DECL = re.compile(r"^\t([A-Za-z_][\w\s\*]*?)\s*\b(\w+)(?:\s*:\s*\d+)?;")
_RQ_DECL = re.compile(r"struct rq\s*\*\s*(\w+)")


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def changed_lines(tree: pathlib.Path, base: str = "baseline", head: str = "patched") -> \
        dict[str, set[int]]:
    """The lines under kernel/sched/ (tests left out) that HEAD adds or
    changes against BASE, by file, in HEAD's numbering."""
    diff = subprocess.run(["git", "-C", str(tree), "diff", "-U0", base, head, "--",
                           "kernel/sched", ":(exclude)kernel/sched/tests"],
                          capture_output=True, text=True, check=False)
    if diff.returncode:
        raise MutgenError(f"git diff {base} {head} in {tree}: {diff.stderr.strip()}")
    out: dict[str, set[int]] = {}
    cur, n = "", 0
    for ln in diff.stdout.splitlines():
        if ln.startswith("+++ "):
            cur = ln[6:] if ln.startswith("+++ b/") else ""
        elif (m := _HUNK.match(ln)):
            n = int(m.group(1))
        elif ln.startswith("+") and cur:
            out.setdefault(cur, set()).add(n)
            n += 1
    return out



class MutgenError(Exception):
    """The tree cannot be read for mutants; one line."""


@dataclasses.dataclass(frozen=True)
class Mutant:
    file: str      # kernel/sched/NAME
    line: int
    before: str
    after: str
    rule: str
    func: str
    what: str

    @property
    def name(self) -> str:
        return f"{self.rule}-{self.func}-{self.line}"


def functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each function definition: a line
    at column 0 with a '(' and no ';', whose body opens with a '{' at the
    end of a line before any ';' and ends at the next '}' at column 0. A
    definition on one line ('{ }') has no lines to mutate."""
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FUNC_START.match(lines[i])
        if not m or lines[i].startswith(("#", "typedef ")) or "=" in lines[i].split("(")[0]:
            i += 1
            continue
        j, body = i, -1
        while j < len(lines) and j < i + 12:
            ln = _code(lines[j]).rstrip()
            if ";" in ln or (j > i and re.match(r"^\w", ln) and not ln.startswith("__")):
                break
            if "{" in ln and "}" in ln:
                break
            if ln.endswith("{"):
                body = j
                break
            j += 1
        if body < 0:
            i += 1
            continue
        k = body + 1
        while k < len(lines) and lines[k] != "}":
            k += 1
        out.append((m.group(1), i + 1, k + 1))
        i = k + 1
    return out


def struct_fields(*sources: str) -> dict[tuple[str, str], list[str]]:
    """(STRUCT, FIELD) -> the members of STRUCT declared just before and
    just after FIELD with the same type, for every struct defined at
    column 0 in SOURCES."""
    out: dict[tuple[str, str], list[str]] = {}
    for text in sources:
        cur, members = "", []
        for ln in text.splitlines():
            m = _STRUCT.match(ln)
            if m:
                cur, members = m.group(1), []
                continue
            if cur and ln.startswith("};"):
                names = [n for _, n in members]
                for idx, (typ, name) in enumerate(members):
                    before = [n for t, n in members[:idx] if t == typ]
                    after = [n for t, n in members[idx + 1:] if t == typ]
                    nb = ([before[-1]] if before else []) + ([after[0]] if after else [])
                    if nb and names.count(name) == 1:
                        out[(cur, name)] = nb
                cur = ""
                continue
            if cur:
                f = _FIELD_DECL.match(ln)
                if f and "(" not in ln:
                    members.append((re.sub(r"\s+", " ", f.group(1).strip()), f.group(2)))
    return out


def _code(line: str) -> str:
    """LINE without a trailing comment."""
    return re.sub(r"/\*.*?\*/|//.*$", "", line)


def _skip(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith(("#", "/*", "*", "//")) or s.endswith("*/")


def mutate_line(line: str, rq_vars: list[str], fields: dict[tuple[str, str], list[str]],
                types: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """The mutations of one line: (rule, new line, what)."""
    if _skip(line):
        return []
    code = _code(line)
    out: list[tuple[str, str, str]] = []
    for m in _RELOP.finditer(code):
        if code[max(0, m.start() - 1)] == "-" or "#include" in code:
            continue
        for op in RELOPS:
            if op != m.group(1):
                out.append(("ror", code[:m.start()] + op + code[m.end():],
                            f"'{m.group(1)}' became '{op}'"))
    for m in re.finditer(r"&&|\|\|", code):
        other = "||" if m.group() == "&&" else "&&"
        out.append(("lcr", code[:m.start()] + other + code[m.end():],
                    f"'{m.group()}' became '{other}'"))
    for m in re.finditer(r"!(?!=)", code):
        out.append(("neg", code[:m.start()] + code[m.end():], "a '!' dropped"))
    m = _IF.match(code)
    if m:
        out.append(("neg", f"{m.group(1)}(!({m.group(2)})){m.group(3)}", "the if negated"))
    for m in _INT.finditer(code):
        n = int(m.group(1))
        for d in (1, -1):
            if n + d < 0:
                continue
            out.append(("const", code[:m.start()] + str(n + d) + code[m.end():],
                        f"{n} became {n + d}"))
    if _CALL_STMT.match(code) and not re.match(r"^\s*(if|while|for|switch|return)\b", code):
        out.append(("drop", re.sub(r"\S.*$", ";", code), "the call dropped"))
    r = _RETURN.match(code)
    if r and len(r.group(1)) >= 2:   # indented twice or more: an early return
        out.append(("drop", f"{r.group(1)};", "the early return dropped"))
    for m in _MEMBER.finditer(code):
        # VAR->FIELD with VAR declared 'struct S *VAR' in the function
        struct = (types or {}).get(m.group(1), "")
        for nb in fields.get((struct, m.group(3)), []):
            out.append(("field", code[:m.start(3)] + nb + code[m.end(3):],
                        f"{struct}.{m.group(3)} became {nb}"))
    for v in rq_vars:
        for m in re.finditer(rf"\b{re.escape(v)}\b", code):
            if code[max(0, m.start() - 2):m.start()] in ("->", ".") or \
                    re.search(r"struct rq\s*\*\s*$", code[:m.start()]):
                continue
            for other in rq_vars:
                if other != v:
                    out.append(("rq", code[:m.start()] + other + code[m.end():],
                                f"runqueue {v} became {other}"))
    seen, uniq = {code}, []
    for rule, new, what in out:
        if new not in seen:
            seen.add(new)
            uniq.append((rule, new, what))
    return uniq


def _types(body: list[str]) -> dict[str, str]:
    """VAR -> S for each 'struct S *VAR' (or 'struct S VAR') in BODY."""
    out: dict[str, str] = {}
    for ln in body:
        for struct, _star, var in _VAR_DECL.findall(ln):
            out.setdefault(var, struct)
    return out


def _rq_vars(body: list[str]) -> list[str]:
    names: list[str] = []
    for ln in body:
        for v in _RQ_DECL.findall(ln):
            if v not in names:
                names.append(v)
    if any("env->" in ln for ln in body):
        names += [f"env->{f}" for f in ("dst_rq", "src_rq")]
    return names


def _is_comment(line: str, pos: int) -> bool:
    s = line.strip()
    return s.startswith(("*", "/*", "//")) or "/*" in line[:pos] or "//" in line[:pos]


def places(tree: pathlib.Path, changed: dict[str, set[int]]) -> \
        tuple[list[tuple[str, str, int, int]], list[tuple[str, int, str, str, str]]]:
    """The mechanisms' functions (file, name, first line, last line):
    those that hold a CHANGED line; and their call sites (file, line,
    callee, caller, text): every line under kernel/sched/ that calls one,
    outside comments and definitions."""
    sched = tree / "kernel" / "sched"
    texts = _texts(tree)
    funcs = {f: functions(t) for f, t in texts.items()}
    mech = [(f, name, s, e) for f, fs in funcs.items() for name, s, e in fs
            if any(s <= n <= e for n in changed.get(f, ()))]
    if not mech:
        raise MutgenError(f"no function under {sched} holds a line the series changes")
    names = sorted({name for _, name, _, _ in mech})
    call = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\s*\(")
    sites = []
    for f, text in texts.items():
        for i, ln in enumerate(text.splitlines(), 1):
            m = call.search(ln)
            if not m or re.match(r"^\w", ln) or _is_comment(ln, m.start()):
                continue
            caller = next((name for name, s, e in funcs[f] if s <= i <= e), "")
            if not caller:
                continue   # a macro or an initializer, not code of a function
            sites.append((f, i, m.group(1), caller, ln.strip()))
    return sorted(mech, key=lambda x: (x[0], x[2])), sites


def _texts(tree: pathlib.Path) -> dict[str, str]:
    sched = tree / "kernel" / "sched"
    if not (sched / "sched.h").is_file():
        raise MutgenError(f"{sched}/sched.h not found")
    return {f"kernel/sched/{p.name}": p.read_text(errors="replace")
            for p in sorted(sched.glob("*.[ch]"))}


def generate(tree: pathlib.Path, changed: dict[str, set[int]]) -> list[Mutant]:
    """Every mutant of the changed lines and of the call sites of the
    functions that hold them."""
    texts = _texts(tree)
    fields = struct_fields(*texts.values())
    funcs = {f: functions(t) for f, t in texts.items()}
    _mech, sites = places(tree, changed)
    spots = {(f, n) for f, lines in changed.items() for n in lines} | \
        {(f, n) for f, n, _, _, _ in sites}
    out = []
    for f, n in sorted(spots):
        if f not in texts:
            continue
        lines = texts[f].splitlines()
        fn = next(((name, s, e) for name, s, e in funcs[f] if s <= n <= e), None)
        if fn is None:
            continue   # a declaration or a struct member: no code to mutate
        body = lines[fn[1] - 1:fn[2]]
        for rule, new, what in mutate_line(lines[n - 1], _rq_vars(body), fields, _types(body)):
            out.append(Mutant(f, n, lines[n - 1], new, rule, fn[0], what))
    return out


def patch(m: Mutant, tree: pathlib.Path) -> str:
    """M as a patch on TREE (its header first), 3 lines of context."""
    lines = (tree / m.file).read_text(errors="replace").splitlines()
    lo, hi = max(1, m.line - 3), min(len(lines), m.line + 3)
    body = [f" {ln}" for ln in lines[lo - 1:m.line - 1]] + [f"-{m.before}", f"+{m.after}"] + \
        [f" {ln}" for ln in lines[m.line:hi]]
    n = hi - lo + 1
    return (f"mutant: {m.func}(): {m.what} ({m.rule}, {m.file}:{m.line}; generated)\n"
            "expect: any\n\n"
            f"--- a/{m.file}\n+++ b/{m.file}\n@@ -{lo},{n} +{lo},{n} @@\n" +
            "\n".join(body) + "\n")


def write_set(tree: pathlib.Path, changed: dict[str, set[int]], out: pathlib.Path) -> \
        list[Mutant]:
    """Every mutant as OUT/NAME.patch (OUT emptied first) and OUT/index.tsv."""
    muts = generate(tree, changed)
    if out.is_dir():
        for p in out.glob("*.patch"):
            p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    names: dict[str, int] = {}
    rows = ["name\trule\tfunction\tfile:line\twhat\n"]
    for m in muts:
        base = m.name
        names[base] = names.get(base, 0) + 1
        name = f"{base}-{names[base]}"
        (out / f"{name}.patch").write_text(patch(m, tree))
        rows.append(f"{name}\t{m.rule}\t{m.func}\t{m.file}:{m.line}\t{m.what}\n")
    (out / "index.tsv").write_text("".join(rows))
    return muts


def check_applies(tree: pathlib.Path, out: pathlib.Path) -> list[str]:
    """The patches of OUT that do not apply to TREE (git apply --check)."""
    bad = []
    for p in sorted(out.glob("*.patch")):
        r = subprocess.run(["git", "-C", str(tree), "apply", "--check", str(p.resolve())],
                           capture_output=True, text=True, check=False)
        if r.returncode:
            bad.append(p.name)
    return bad


@dataclasses.dataclass(frozen=True)
class Triage:
    equivalent: dict[str, str]   # name -> why no test can tell it from patched
    open: dict[str, str]         # name -> the gap it shows, not yet closed


def load_triage(path: pathlib.Path) -> Triage:
    """tests/mutgen/LINE.toml: [equivalent] and [open], NAME = "why"; an
    absent file is no triage yet."""
    if not path.is_file():
        return Triage({}, {})
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise MutgenError(f"{path}: {e}") from e
    bad = set(raw) - {"equivalent", "open"}
    if bad:
        raise MutgenError(f"{path}: unknown table(s) {', '.join(sorted(bad))}: "
                          "[equivalent] and [open] only")
    out = []
    for t in ("equivalent", "open"):
        v = raw.get(t, {})
        if not all(isinstance(w, str) and w for w in v.values()):
            raise MutgenError(f"{path}: [{t}]: each entry is NAME = \"why\"")
        out.append(dict(v))
    both = set(out[0]) & set(out[1])
    if both:
        raise MutgenError(f"{path}: both equivalent and open: {', '.join(sorted(both))}")
    return Triage(out[0], out[1])


def survivors(verdicts: list[tuple[str, str]], tri: Triage) -> tuple[str, int]:
    """The survivors' section of a generated run's table (markdown), and
    how many survivors have no triage. VERDICTS: (name, verdict); a
    survivor is one not caught in every boot that built and booted."""
    rows, untriaged, nobuild = [], 0, 0
    for name, verdict in verdicts:
        if verdict.startswith("caught"):
            continue
        if verdict.startswith("NO RESULT"):
            # No case ran: the build failed (a guest that dies still
            # reports its boot as a failed case). Not a mutant of the
            # running kernel, so neither caught nor a survivor.
            nobuild += 1
            rows.append(f"| {name} | {verdict} | does not build |")
            continue
        if name in tri.equivalent:
            what = f"equivalent: {tri.equivalent[name]}"
        elif name in tri.open:
            what = f"open: {tri.open[name]}"
        else:
            what = "NOT TRIAGED (tests/mutgen/LINE.toml)"
            untriaged += 1
        rows.append(f"| {name} | {verdict} | {what} |")
    alive = [n for n, v in verdicts if not v.startswith(("caught", "NO RESULT"))]
    head = ["", f"Generated mutants: {len(verdicts)}, caught "
            f"{len(verdicts) - len(alive) - nobuild}, do not build {nobuild}, "
            f"equivalent {sum(1 for n in alive if n in tri.equivalent)}, "
            f"open {sum(1 for n in alive if n in tri.open)}, not triaged {untriaged}.", ""]
    if rows:
        head += ["| survivor | verdict | triage |", "|---|---|---|"] + rows
    return "\n".join(head) + "\n", untriaged
