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
             (a comparison with an address or NULL: '==' and '!=' only)
  lcr        '&&' and '||' swapped
  neg        a '!' dropped; an if's condition negated
  const      an integer constant plus one and minus one (an initial
             value too; not a case label)
  drop       a call statement or an early 'return' made an empty statement
  field      a struct member replaced by the member declared before or
             after it with the same type, in the same struct (of any
             file under kernel/sched/) and the same #if block
  rq         a 'struct rq *' variable of the function replaced by another
             (this_rq and busiest; env->dst_rq and env->src_rq where the
             function has a struct lb_env)

The lines are read from the tree's 'patched' commit, whatever is checked
out. Comments and preprocessor lines are left alone. Each
mutant is a patch on 'patched' with the header 'mutant: ...' and
'expect: any' (caught when some case fails), as sfp mutate reads them.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import pathlib
import re
import subprocess
import tempfile
import tomllib
from harness import sfp_errors

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
_RQ_DECL = re.compile(r"\bstruct rq\s*(\*.*)$")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class MutgenError(sfp_errors.Failed):
    """The tree cannot be read for mutants; one line."""


def changed_lines(tree: pathlib.Path) -> dict[str, set[int]]:
    """The lines under kernel/sched/ (tests left out) that 'patched' adds
    or changes against 'baseline', by file, in patched's numbering."""
    diff = subprocess.run(["git", "-C", str(tree), "diff", "-U0", "baseline", "patched", "--",
                           "kernel/sched", ":(exclude)kernel/sched/tests"],
                          capture_output=True, text=True, check=False)
    if diff.returncode:
        raise MutgenError(f"git diff baseline patched in {tree}: {diff.stderr.strip()}")
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
        """RULE-FUNCTION-LINE-HASH: the hash of the mutated line, so that a
        name means one mutant even when the rules change."""
        h = hashlib.sha1(f"{self.file}:{self.line}:{self.after}".encode()).hexdigest()[:6]
        return f"{self.rule}-{self.func}-{self.line}-{h}"


def functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each function definition: a line
    at column 0 with a '(' and no ';', whose body opens with a '{' at the
    end of a line before any ';' (within 12 lines) and ends at the next
    '}' at column 0. A definition on one line ('{ }') has no lines to
    mutate."""
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FUNC_START.match(lines[i])
        body = -1
        if m and not lines[i].startswith(("#", "typedef ")) and "=" not in lines[i].split("(")[0]:
            for j in range(i, min(len(lines), i + 12)):
                ln = _code(lines[j]).rstrip()
                if ";" in ln or (j > i and re.match(r"^\w", ln) and not ln.startswith("__")) or \
                        ("{" in ln and "}" in ln):
                    break
                if ln.endswith("{"):
                    body = j
                    break
        if m is None or body < 0:
            i += 1
            continue
        k = next((k for k in range(body + 1, len(lines)) if lines[k] == "}"), len(lines))
        out.append((m.group(1), i + 1, k + 1))
        i = k + 1
    return out


def struct_fields(*sources: str) -> dict[tuple[str, str], list[str]]:
    """(STRUCT, FIELD) -> the members of STRUCT declared just before and
    just after FIELD with the same type and under the same #if block, for
    every struct defined at column 0 in SOURCES (a member that exists only
    with some option is not paired with one that exists without it)."""
    out: dict[tuple[str, str], list[str]] = {}
    for text in sources:
        cur = ""
        members: list[tuple[str, str, tuple[int, ...]]] = []
        stack: list[int] = []
        nblock = 0
        for ln in text.splitlines():
            if m := _STRUCT.match(ln):
                cur, members, stack = m.group(1), [], []
            elif not cur:
                continue
            elif (pp := re.match(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b", ln)):
                nblock += 1
                if pp.group(1).startswith("if"):
                    stack.append(nblock)
                elif pp.group(1) == "endif" and stack:
                    stack.pop()
                elif pp.group(1) != "endif" and stack:
                    stack[-1] = nblock
            elif ln.startswith("};"):
                names = [n for _, n, _ in members]
                for idx, (typ, name, blk) in enumerate(members):
                    same = [i for i, (t, _, b) in enumerate(members) if t == typ and b == blk]
                    k = same.index(idx)
                    nb = [members[i][1] for i in same[max(0, k - 1):k] + same[k + 1:k + 2]]
                    if nb and names.count(name) == 1:
                        out[(cur, name)] = nb
                cur = ""
            elif (f := _FIELD_DECL.match(ln)) and "(" not in ln:
                members.append((re.sub(r"\s+", " ", f.group(1).strip()), f.group(2),
                                tuple(stack)))
    return out


def _code(line: str) -> str:
    """LINE without a trailing comment."""
    return re.sub(r"/\*.*?\*/|//.*$", "", line)


def mutate_line(line: str, rq_vars: list[str], fields: dict[tuple[str, str], list[str]],
                types: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """The mutations of one line: (rule, new line, what)."""
    if not line.strip() or line.strip().startswith(("#", "/*", "*", "//")):
        return []
    code = _code(line)
    out: list[tuple[str, str, str]] = []

    def at(m: re.Match[str], new: str, group: int = 0) -> str:
        return code[:m.start(group)] + new + code[m.end(group):]
    for m in _RELOP.finditer(code):
        if code[max(0, m.start() - 1)] == "-" or "#include" in code:
            continue
        ptr = re.match(r"\s*(&|NULL\b)", code[m.end():]) is not None
        out += [("ror", at(m, op), f"'{m.group(1)}' became '{op}'")
                for op in (("==", "!=") if ptr else RELOPS) if op != m.group(1)]
    for m in re.finditer(r"&&|\|\|", code):
        other = "||" if m.group() == "&&" else "&&"
        out.append(("lcr", at(m, other), f"'{m.group()}' became '{other}'"))
    out += [("neg", at(m, ""), "a '!' dropped") for m in re.finditer(r"!(?!=)", code)]
    if cond := _IF.match(code):
        out.append(("neg", f"{cond.group(1)}(!({cond.group(2)})){cond.group(3)}",
                    "the if negated"))
    for m in _INT.finditer(code if not re.match(r"^\s*case\b", code) else ""):
        n = int(m.group(1))
        out += [("const", at(m, str(n + d)), f"{n} became {n + d}")
                for d in ((1, -1) if n else (1,))]  # no negative constant
    if _CALL_STMT.match(code) and code.count("(") == code.count(")") and \
            not re.match(r"^\s*(if|while|for|switch|return)\b", code):
        out.append(("drop", re.sub(r"\S.*$", ";", code), "the call dropped"))
    if (r := _RETURN.match(code)) and len(r.group(1)) >= 2:  # indented twice+: an early return
        out.append(("drop", f"{r.group(1)};", "the early return dropped"))
    for m in _MEMBER.finditer(code):
        # VAR->FIELD with VAR declared 'struct S *VAR' in the function
        struct = (types or {}).get(m.group(1), "")
        out += [("field", at(m, nb, 3), f"{struct}.{m.group(3)} became {nb}")
                for nb in fields.get((struct, m.group(3)), [])]
    for v in rq_vars:
        for m in re.finditer(rf"\b{re.escape(v)}\b", code):
            if code[max(0, m.start() - 2):m.start()] in ("->", ".") or \
                    re.search(r"struct rq\s*\*\s*$", code[:m.start()]):
                continue
            out += [("rq", at(m, other), f"runqueue {v} became {other}")
                    for other in rq_vars if other != v]
    first: dict[str, tuple[str, str, str]] = {}
    for mut in out:
        first.setdefault(mut[1], mut)
    return [mut for new, mut in first.items() if new != code]


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
        if m := _RQ_DECL.search(_code(ln)):
            # struct rq *busiest = NULL, *rq;  or a parameter: struct rq *rq,
            decl = m.group(1) if ";" in m.group(1) else m.group(1).split(",")[0]
            names += [v for v in dict.fromkeys(re.findall(r"\*\s*(\w+)", decl)) if v not in names]
    if any(re.search(r"struct lb_env\s*\*\s*env\b", ln) for ln in body):
        names += [f"env->{f}" for f in ("dst_rq", "src_rq")]
    return names


def places(tree: pathlib.Path, changed: dict[str, set[int]]) -> \
        tuple[list[tuple[str, str, int, int]], list[tuple[str, int, str, str, str]]]:
    """The mechanisms' functions (file, name, first line, last line):
    those that hold a CHANGED line; and their call sites (file, line,
    callee, caller, text): every line under kernel/sched/ that calls one,
    outside comments and definitions."""
    texts = _texts(tree)
    funcs = {f: functions(t) for f, t in texts.items()}
    mech = [(f, name, s, e) for f, fs in funcs.items() for name, s, e in fs
            if any(s <= n <= e for n in changed.get(f, ()))]
    if not mech:
        raise MutgenError(f"no function under {tree / 'kernel' / 'sched'} holds a line the "
                          "series changes")
    names = sorted({name for _, name, _, _ in mech})
    call = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\s*\(")
    sites = []
    for f, text in texts.items():
        for i, ln in enumerate(text.splitlines(), 1):
            m = call.search(ln)
            if not m or re.match(r"^\w", ln) or ln.strip().startswith(("*", "/*", "//")) or \
                    "/*" in ln[:m.start()] or "//" in ln[:m.start()]:
                continue   # no call, a definition, or a comment
            caller = next((name for name, s, e in funcs[f] if s <= i <= e), "")
            if caller:   # not a macro or an initializer
                sites.append((f, i, m.group(1), caller, ln.strip()))
    return sorted(mech, key=lambda x: (x[0], x[2])), sites


@functools.lru_cache(maxsize=8)
def _texts(tree: pathlib.Path) -> dict[str, str]:
    """kernel/sched/*.[ch] as 'patched' has them, whatever is checked out
    (changed_lines() numbers patched's lines); read once per tree."""
    ls = subprocess.run(["git", "-C", str(tree), "ls-tree", "--name-only", "patched",
                         "kernel/sched/"], capture_output=True, text=True, check=False)
    if ls.returncode:
        raise MutgenError(f"{tree}: no commit 'patched' ({ls.stderr.strip()})")
    out = {path: subprocess.run(["git", "-C", str(tree), "show", f"patched:{path}"],
                                capture_output=True, check=False).stdout.decode(
                                    "utf-8", errors="replace")
           for path in ls.stdout.split() if re.search(r"\.[ch]$", path)}
    if "kernel/sched/sched.h" not in out:
        raise MutgenError(f"{tree}: 'patched' has no kernel/sched/sched.h")
    return out


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
        fn = next(((name, s, e) for name, s, e in funcs.get(f, []) if s <= n <= e), None)
        if fn is None:
            continue   # a declaration or a struct member: no code to mutate
        lines = texts[f].splitlines()
        body = lines[fn[1] - 1:fn[2]]
        for rule, new, what in mutate_line(lines[n - 1], _rq_vars(body), fields, _types(body)):
            out.append(Mutant(f, n, lines[n - 1], new, rule, fn[0], what))
    return out


def patch(m: Mutant, text: str) -> str:
    """M as a patch on TEXT, its file as 'patched' has it (the header
    first), 3 lines of context."""
    lines = text.splitlines()
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
    """Every mutant as OUT/NAME.patch (OUT's old set removed first) and
    OUT/index.tsv. A directory with patches but no index.tsv is not a
    generated set, and is refused."""
    if out.is_dir() and any(out.glob("*.patch")) and not (out / "index.tsv").is_file():
        raise MutgenError(f"{out} holds patches that are not a generated set (no index.tsv): "
                          "choose another directory")
    muts = generate(tree, changed)
    for p in out.glob("*.patch"):
        p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    rows = ["name\trule\tfunction\tfile:line\twhat\n"]
    for m in muts:
        (out / f"{m.name}.patch").write_text(patch(m, _texts(tree)[m.file]))
        rows.append(f"{m.name}\t{m.rule}\t{m.func}\t{m.file}:{m.line}\t{m.what}\n")
    (out / "index.tsv").write_text("".join(rows))
    return muts


def check_applies(tree: pathlib.Path, out: pathlib.Path) -> list[str]:
    """The patches of OUT that do not apply to TREE's 'patched' (git apply
    --check against an index of patched, not the checked-out files)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(pathlib.Path(tmp) / "index")}
        subprocess.run(["git", "-C", str(tree), "read-tree", "patched"], env=env, check=True,
                       capture_output=True)
        return [p.name for p in sorted(out.glob("*.patch")) if subprocess.run(
            ["git", "-C", str(tree), "apply", "--cached", "--check", str(p.resolve())],
            env=env, capture_output=True, check=False).returncode]


@dataclasses.dataclass(frozen=True)
class Triage:
    equivalent: dict[str, str]   # name -> why no test can tell it from patched
    open: dict[str, str]         # name -> the gap it shows, not yet closed


def load_triage(path: pathlib.Path) -> Triage:
    """tests/mutgen/LINE.toml: [equivalent] and [open], NAME = "why"; an
    absent file is no triage yet."""
    if not path.is_file():
        return Triage({}, {})
    with sfp_errors.raised_as(MutgenError, tomllib.TOMLDecodeError, prefix=f"{path}: "):
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    if bad := set(raw) - {"equivalent", "open"}:
        raise MutgenError(f"{path}: unknown table(s) {', '.join(sorted(bad))}: "
                          "[equivalent] and [open] only")
    out = []
    for t in ("equivalent", "open"):
        v = raw.get(t, {})
        if not all(isinstance(w, str) and w for w in v.values()):
            raise MutgenError(f"{path}: [{t}]: each entry is NAME = \"why\"")
        out.append(dict(v))
    if both := set(out[0]) & set(out[1]):
        raise MutgenError(f"{path}: both equivalent and open: {', '.join(sorted(both))}")
    return Triage(out[0], out[1])


def survivors(verdicts: list[tuple[str, str]], tri: Triage) -> tuple[str, int]:
    """The survivors' section of a generated run's table (markdown), and
    how many survivors have no triage. VERDICTS: (name, verdict); a
    survivor is one not caught in every boot that built and booted."""
    rows, untriaged, nobuild, argued_caught = [], 0, 0, 0
    for name, verdict in verdicts:
        if verdict.startswith("caught"):
            if name in tri.equivalent:
                # Its argument says no case can fail for it: a case that
                # failed did so for another reason, or the argument is wrong.
                argued_caught += 1
                rows.append(f"| {name} | {verdict} | argued equivalent, yet caught: look at "
                            f"the cases that failed (equivalent: {tri.equivalent[name]}) |")
            continue
        if verdict.startswith("NO RESULT"):
            # No case ran: the build failed (a guest that dies still
            # reports its boot as a failed case). Not a mutant of the
            # running kernel, so neither caught nor a survivor.
            nobuild += 1
            what = "does not build"
        elif name in tri.equivalent:
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
            f"open {sum(1 for n in alive if n in tri.open)}, not triaged {untriaged}"
            + (f"; caught though argued equivalent {argued_caught}" if argued_caught else "")
            + ".", ""]
    if rows:
        head += ["| survivor | verdict | triage |", "|---|---|---|"] + rows
    return "\n".join(head) + "\n", untriaged
