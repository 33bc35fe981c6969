# SPDX-License-Identifier: GPL-2.0
"""A boot as a LAVA job: its definition, its device, and its records.

`sfp boot` boots through LAVA when BOOT_BACKEND=lava: the same
kernel, initramfs, command line and QEMU options as a direct boot go into
a job definition (deploy to tmpfs, boot qemu, test monitors) and the
rendered device configuration a dispatcher without a server needs, and
`lava-run` runs it. LAVA labs (KernelCI's among them) accept the same
job definition; a server takes it with `lavacli jobs submit`.

The job has two namespaces. 'vm' boots QEMU and watches the console;
'guest' opens the guest's own port (QEMU writes it to a file, read with
tail -F) and watches that. Their monitors match the 'sfp-case: RESULT
SUITE.CASE' lines the guest prints for each case of KUnit's KTAP and of
its own TAP (scripts/guest/cases.awk, the Result's skip rule applied).
QEMU also logs the whole console to a file, so the harness parses the
same console.log and guest.log as after a direct boot, and its Result is
made the same way; LAVA's own records are a second reading of the same
cases, compared case by case with the Result's (disagreements, from
sfp_report). LAVA's 'pass' for the job means only that the job
completed.

A lab elsewhere (a portable job, portable_job): its workers cannot read
this machine's files, and its devices are of LAVA's stock 'qemu' device
type, with one serial port. The kernel and initramfs are fetched by
http(s) URL, the guest finds no second port and writes its TAP to the
console (scripts/guest/init), both monitors watch the console, and the
console.log and guest.log the harness parses are made from the job's
log (logs_from_job): the console is every line the target printed, the
guest's log the part from its first 'sfp-begin:' line to 'sfp-done'.

Traps met here: the console reaches LAVA with '\\r\\r\\n' line ends, and a
pattern is tried as text arrives, so it must end at the line's end; a
monitor reads the connection of its own namespace; a monitor waits for
its start and for each next line no longer than the connection timeout
(from 2023.02; before, the boot action's), so every one of these is the
boot's timeout, since a guest program's cases come when it ends; LAVA
keeps a case only under its sanitized name (case_name) from 2023.02.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import mmap
import pathlib
import re
import secrets
import struct

import yaml

from harness import sfp_results

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# The job's skeleton, a file a person can read and edit; the guest
# monitor's markers are read from it.
TEMPLATE = pathlib.Path(__file__).resolve().parent / "lava" / "job.yaml"
_TEMPLATE: dict = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))
_GUEST = next(m for a in _TEMPLATE["actions"] if "test" in a for m in a["test"]["monitors"]
              if m["name"] == "guest")
GUEST_START, GUEST_END = _GUEST["start"], _GUEST["end"]
# The device type of the local lab's devices (sfp_lab, harness/lava/).
LAB_DEVICE_TYPE = "sfp-qemu"

# The QEMU options a job for the lab's device type may carry in its
# context (extra_options), as harness/lava/sfp-qemu.jinja2 checks them:
# flags, options with a value, and the characters a value may have (no
# path, no space, no quote). -object only makes RAM (-numa's memdev), and
# -display is only 'none' (no VNC or other server on the worker).
LAB_QEMU_FLAGS = ("-nodefaults", "-no-reboot")
LAB_QEMU_VALUED = ("-accel", "-cpu", "-smp", "-m", "-numa", "-object", "-icount", "-rtc",
                   "-seed", "-display")
LAB_QEMU_VALUE = re.compile(r"[A-Za-z0-9=,._:-]+")


def lab_options_refused(options: list[str]) -> str:
    """What of OPTIONS the lab's device type would refuse ('' if nothing)."""
    valued = ""
    for o in options:
        if valued:
            if not LAB_QEMU_VALUE.fullmatch(o) or (valued == "-object" and not o.startswith(
                    "memory-backend-ram,")) or (valued == "-display" and o != "none"):
                return f"{valued} {o}"
            valued = ""
        elif o in LAB_QEMU_VALUED:
            valued = o
        elif o not in LAB_QEMU_FLAGS:
            return o
    return f"{valued} without a value" if valued else ""


# LAVA's own QEMU device type (lava-server's qemu.jinja2), which labs have.
STOCK_DEVICE_TYPE = "qemu"
# What the stock device type sets itself (memory from the job's context;
# -nographic puts the one serial port on the console) or what would take
# that port away: left out of a portable job's extra options.
_STOCK_DROPS = {"-m": 2, "-nodefaults": 1, "-display": 2}


def device(qemu: str, options: list[str], guest_log: str) -> dict:
    """The rendered device configuration of one local QEMU device."""
    return {
        "device_type": "qemu",
        "available_architectures": ["x86_64"],
        "constants": {"failure_retry": 1, "boot_retry": 0,
                      "kernel-start-message": "Linux version [0-9]",
                      "shutdown-message": "reboot: Restarting system",
                      "default-shell-prompt": "sfp-no-shell # ", "spawn_maxread": 4092},
        "commands": {"connections": {"guest": {"connect": f"tail -n +1 -F {guest_log}"}}},
        "actions": {
            "deploy": {"connections": {"serial": None}, "methods": {"image": None}},
            "boot": {"connections": {"serial": None},
                     "methods": {"qemu": {"parameters": {"command": qemu, "options": options}},
                                 "new_connection": None}},
        },
        "timeouts": {"actions": {}, "connections": {}},
    }


def qemu_options(base: list[str], console_log: str, guest_log: str) -> list[str]:
    """QEMU's options for the device: the console on stdio for LAVA and
    logged whole to CONSOLE_LOG by QEMU, the guest's port to GUEST_LOG."""
    return base + ["-monitor", "none", "-chardev", f"stdio,id=con,signal=off,logfile={console_log}",
                   "-serial", "chardev:con", "-serial", f"file:{guest_log}"]


def kunit_monitors(suites: list[str] | tuple[str, ...]) -> list[dict]:
    """The console's monitors: the template's for each of SUITES and for
    'kunit' (the guest's group of a result with no suite), in the order
    of their names; with no SUITES, one for every KUnit case, 'kunit'."""
    tmpl = next(m for a in _TEMPLATE["actions"] if "test" in a for m in a["test"]["monitors"]
                if m["name"] == "SUITE")
    if not suites:
        return [{"name": "kunit", "start": "sfp-cases: kunit", "end": "sfp-cases-end: kunit",
                 "pattern": tmpl["pattern"].replace("SUITE\\.", "")}]
    return [{key: value.replace("SUITE", suite if key == "name" else re.escape(suite))
             for key, value in tmpl.items()} for suite in sorted({*suites, "kunit"})]


def job(name: str, kernel: str, initrd: str, append: str, timeout_s: int,
        metadata: dict[str, str] | None = None, portable: bool = False,
        suites: list[str] | tuple[str, ...] = ()) -> dict:
    """A boot's job from the template: a monitor per KUnit suite of SUITES
    (kunit_monitors) on the console, the guest's on its own port; KERNEL
    and INITRD are files here, or (PORTABLE) URLs, with the guest's
    monitor on the console. METADATA: what was booted."""
    if '"' in append:
        raise ValueError("the kernel command line may not contain '\"'")
    t = copy.deepcopy(_TEMPLATE)
    t["job_name"] = name
    t["timeouts"]["job"]["seconds"] = timeout_s + 120
    for key in ("action", "connection"):
        t["timeouts"][key]["seconds"] = timeout_s
    t["timeouts"]["connections"]["lava-test-monitor"]["seconds"] = timeout_s
    scheme = "" if portable else "file://"
    actions = []
    for a in t["actions"]:
        kind, body = next(iter(a.items()))
        if kind == "deploy":
            body["images"]["kernel"].update(image_arg=f'-kernel {{kernel}} -append "{append}"',
                                            url=scheme + kernel)
            body["images"]["initrd"]["url"] = scheme + initrd
        elif kind in ("boot", "test"):
            if kind == "test" and body["namespace"] == "vm":
                body["monitors"] = kunit_monitors(suites)
            if body["namespace"] == "guest" and portable:
                if kind == "boot":
                    continue
                body["namespace"] = "vm"
            body["timeout"]["seconds"] = timeout_s
        actions.append(a)
    t["actions"] = actions
    out = {}
    for key, value in t.items():
        out[key] = value
        if key == "priority" and metadata:
            out["metadata"] = dict(metadata)
    if "FILLED" in json.dumps(out):
        raise ValueError(f"{TEMPLATE}: a FILLED field the harness does not fill")
    return out


def portable_job(name: str, kernel_url: str, initrd_url: str, append: str, timeout_s: int,
                 machine: list[str], mem: int, device_type: str = STOCK_DEVICE_TYPE,
                 metadata: dict[str, str] | None = None,
                 suites: list[str] | tuple[str, ...] = ()) -> dict:
    """A job any lab with LAVA's stock QEMU device type runs: the images by
    URL, MACHINE's options in the context (less what that type sets itself)."""
    for url in (kernel_url, initrd_url):
        if not re.match(r"https?://", url):
            raise ValueError(f"a portable job fetches its images by http(s) URL, not '{url}'")
    definition = job(name, kernel_url, initrd_url, append, timeout_s, metadata, portable=True,
                     suites=suites)
    definition["device_type"] = device_type
    options, i = [], 0
    while i < len(machine):
        skip = _STOCK_DROPS.get(machine[i], 0)
        if not skip:
            options.append(machine[i])
        i += skip or 1
    definition["context"].update({"no_kvm": True, "memory": mem, "extra_options": options})
    return definition


def write_job(out: pathlib.Path, name: str, kernel: pathlib.Path, initrd: pathlib.Path,
              append: str, timeout_s: int, console: pathlib.Path, guest: pathlib.Path,
              machine: list[str], server: bool = False, qemu: str = "qemu-system-x86_64",
              metadata: dict[str, str] | None = None,
              suites: list[str] | tuple[str, ...] = ()) -> None:
    """OUT/job.yaml and OUT/device.yaml for lava-run to boot MACHINE, the
    console logged to CONSOLE and the guest's port to GUEST; or (SERVER) a
    job for the lab's device type, with no device file: the options and a
    run name (sfp_run) in its context, under which the worker's QEMU writes
    the logs sfp_lab.run_job moves to CONSOLE and GUEST. ValueError for what
    cannot be a job."""
    if timeout_s < 1:
        raise ValueError("the timeout wants seconds, 1 or more")
    out.mkdir(parents=True, exist_ok=True)
    console, guest = console.resolve(), guest.resolve()
    definition = job(name, str(kernel.resolve()), str(initrd.resolve()), append, timeout_s,
                     metadata, suites=suites)
    if server:
        if console.parent != guest.parent or (console.name, guest.name) != ("console.log",
                                                                            "guest.log"):
            raise ValueError("a lab job wants DIR/console.log and DIR/guest.log")
        refused = lab_options_refused(machine)
        if refused:
            raise ValueError(f"the lab's device type takes no QEMU option '{refused}' "
                             "(it takes no path and no option outside "
                             "sfp_lava.LAB_QEMU_VALUED/LAB_QEMU_FLAGS)")
        definition["device_type"] = LAB_DEVICE_TYPE
        definition["context"].update({"extra_options": machine,
                                      "sfp_run": secrets.token_hex(16)})
    write_yaml(out / "job.yaml", definition)
    if not server:
        write_yaml(out / "device.yaml",
                   device(qemu, qemu_options(machine, str(console), str(guest)), str(guest)))


def write_yaml(path: pathlib.Path, obj: dict) -> None:
    """OBJ as block YAML, in the order the harness built it."""
    path.write_text(yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, width=100),
                    encoding="utf-8")


@dataclasses.dataclass
class LavaRecord:
    """What lava-run logged: the job's result, its cases, its errors."""
    job_result: str = "incomplete"
    job_error: str = ""
    error_type: str = ""
    cases: dict[str, list[tuple[str, str]]] = dataclasses.field(default_factory=dict)
    errors: list[str] = dataclasses.field(default_factory=list)
    # The boots LAVA made again (failure_retry), as the errors that made
    # them: only those LAVA followed with 'Retrying: ... boot-image-retry'
    # (an error with no time left for another boot reads the same).
    boot_retries: list[str] = dataclasses.field(default_factory=list)

    def count(self, definition: str) -> int:
        return len(self.cases.get(definition, []))

    def add(self, definition: str, case: str, result: str, meta: dict) -> None:
        """One of LAVA's results: the job's, an action's (not kept) or a case's."""
        if definition == "lava":
            if case == "job":
                self.job_result = result
                self.job_error = str(meta.get("error_msg", "")).strip()
                self.error_type = str(meta.get("error_type", ""))
            return
        extra = meta.get("extra") or {}
        if isinstance(extra, list):  # a server's results list it
            extra = extra[0] if extra else {}
        self.cases.setdefault(definition, []).append((extra.get("test_case_id", case), result))

    @property
    def timed_out(self) -> bool:
        return "timed out" in self.job_error.lower() or self.error_type == "LAVATimeout" or any(
            "timed out" in e.lower() for e in self.errors)


def log_entry(line: str) -> dict | None:
    """One line of a LAVA job log ('- {"dt": .., "lvl": .., "msg": ..}' as
    LAVA and lavacli --raw write it, or the same mapping alone, as lava-run
    logs it), or None. The mapping is YAML in JSON's flow style (with
    YAML's escapes, and a tag where a string looks like a number)."""
    line = line.strip().removeprefix("- ")
    if not line.startswith("{"):
        return None
    # LAVA tags a string that looks like a number ('! "3485944"'), which
    # PyYAML would read as the number: the tag goes.
    line = re.sub(r'(?<=[:,\[] )! "', '"', line)
    try:
        entry = yaml.load(line, Loader=_LOADER)
    except yaml.YAMLError:
        return None
    return entry if isinstance(entry, dict) else None


def parse_log(path: pathlib.Path) -> LavaRecord:
    """A LAVA job's log (lava-run's, or a server's)."""
    rec = LavaRecord()
    if not path.exists():
        rec.errors.append(f"no LAVA log {path}")
        return rec
    for line in sfp_results.text(path).splitlines():
        entry = log_entry(line)
        if entry is None:
            continue
        lvl, msg = entry.get("lvl"), entry.get("msg")
        if lvl == "error":
            rec.errors.append(str(msg))
        if lvl == "warning" and re.match(r"Retrying: [0-9.]+ boot-image-retry ", str(msg)):
            rec.boot_retries.append(next((e for e in reversed(rec.errors)
                                          if e.startswith("boot-image-retry failed: ")), str(msg)))
        if lvl == "results" and isinstance(msg, dict):
            rec.add(msg.get("definition", ""), msg.get("case", ""), msg.get("result", ""), msg)
    return rec


def logs_from_job(log: pathlib.Path, console: pathlib.Path, guest: pathlib.Path) -> int:
    """CONSOLE (what the target printed) and GUEST (from its first
    'sfp-begin:' to 'sfp-done') from a portable job's LOG; CONSOLE's lines."""
    lines = []
    for line in sfp_results.text(log).splitlines():
        entry = log_entry(line)
        if entry and entry.get("lvl") in ("target", "feedback") and isinstance(entry.get("msg"),
                                                                                 str):
            lines.append(entry["msg"].rstrip("\r\n"))
    console.write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
    begin = next((i for i, ln in enumerate(lines) if ln.startswith(GUEST_START)), None)
    part = []
    if begin is not None:
        end = next((i for i in range(begin, len(lines)) if lines[i] == GUEST_END), len(lines) - 1)
        part = lines[begin:end + 1]
    guest.write_text("".join(ln + "\n" for ln in part), encoding="utf-8")
    return len(lines)


def kunit_suites(vmlinux: pathlib.Path) -> list[str]:
    """The names of the KUnit suites built into VMLINUX (an x86-64 ELF),
    in byte order, as the guest lists them (suites.awk): the suite
    pointers between __kunit_suites_start and __kunit_suites_end (and
    the init suites', where the kernel has them), each suite's name the
    char[256] that starts struct kunit_suite. [] when VMLINUX is missing,
    not such a file, or its table cannot be read (then a job has one
    monitor for every KUnit case)."""
    try:
        with open(vmlinux, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as elf:
            if elf[:6] != b"\x7fELF\x02\x01" or struct.unpack_from("<H", elf, 0x12)[0] != 62:
                return []
            return sorted(set(_suites_in(elf)))
    except (OSError, ValueError, IndexError, struct.error):
        return []


def _suites_in(elf: mmap.mmap) -> list[str]:
    """kunit_suites' reading of ELF, an x86-64 ELF; ValueError where it
    does not hold what that reading needs."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    # sh_type, sh_addr, sh_offset, sh_size, sh_link of each section
    sections = [struct.unpack_from("<4xI8xQQQI", elf, shoff + i * shentsize) for i in range(shnum)]

    def at(addr: int, size: int) -> bytes:
        """The SIZE bytes at ADDR, from a section that holds them (not NOBITS)."""
        for kind, base, off, length, _ in sections:
            if kind != 8 and base and base <= addr and addr + size <= base + length:
                return elf[off + addr - base:off + addr - base + size]
        raise ValueError(f"no section holds address {addr:#x}")
    symbols: dict[str, int] = {}
    for kind, _, off, length, link in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link][2]
        for name_at, value in struct.iter_unpack("<I4xQ8x", elf[off:off + length]):
            if elf[strtab + name_at:strtab + name_at + 8] == b"__kunit_":
                stop = elf.find(b"\0", strtab + name_at)
                symbols[elf[strtab + name_at:stop].decode("ascii", "replace")] = value
    names = []
    for table in ("__kunit_suites", "__kunit_init_suites"):
        if f"{table}_start" not in symbols or f"{table}_end" not in symbols:
            continue
        start, end = symbols[f"{table}_start"], symbols[f"{table}_end"]
        for pointer, in struct.iter_unpack("<Q", at(start, end - start)):
            names.append(at(pointer, 256).split(b"\0")[0].decode("utf-8", "replace"))
    return names


def case_name(name: str) -> str:
    """A test case's name as LAVA records it: lower case, each run of
    other characters than letters, digits and '_' made one '_' (its
    monitors do this; from 2023.02 the name as printed is not kept)."""
    return re.sub(r"\W+", "_", name.strip().lower())


def disagreements(lava: list[tuple[str, str, str]],
                  logs: list[tuple[str, str, str]]) -> list[str]:
    """Where LAVA's records (definition, case, result) and the cases the
    host's parser read from the logs (source, SUITE.CASE, result) disagree,
    by LAVA's name of a case; a case the parser found crashed is a fail.
    A KUnit case SUITE.CASE is LAVA's CASE of the definition SUITE when the
    job had a monitor per suite (any definition other than 'kunit' and
    'guest'), and LAVA's SUITE.CASE of 'kunit' when it had one for all."""
    def verdict(result: str) -> str:
        return {"pass": "pass", "skip": "skip"}.get(result.lower(), "fail")

    per_suite = any(d not in ("kunit", "guest") for d, _, _ in lava)

    def as_lava(source: str, name: str) -> tuple[str, str]:
        if source == "kunit" and per_suite and "." in name:
            suite, case = name.split(".", 1)
            return suite.replace(" ", "-").lower(), case
        return source, name

    want: dict[tuple[str, str], str] = {}
    shown: dict[tuple[str, str], str] = {}
    named: dict[tuple[str, str], str] = {}
    out = []
    for source, name, result in logs:
        definition, case = as_lava(source, name)
        key = (definition, case_name(case))
        if key in want:
            out.append(f"{source} {name} and {named[key]} are one case to LAVA ({key[1]})")
        want[key], shown[key], named[key] = verdict(result), f"{definition} {case}", name
    got: dict[tuple[str, str], str] = {}
    for definition, name, result in lava:
        key = (definition, case_name(name))
        if key in got:
            out.append(f"LAVA recorded {definition} {name} twice")
        got[key] = verdict(result)
        shown.setdefault(key, f"{definition} {name}")
    for key, result in want.items():
        if key not in got:
            out.append(f"LAVA has no record of {shown[key]} (the logs: {result})")
        elif got[key] != result:
            out.append(f"LAVA recorded {shown[key]} as {got[key]}, the logs have {result}")
    out += [f"LAVA recorded {shown[k]}, which the logs do not hold" for k in got if k not in want]
    return out


def boot_command(log: pathlib.Path) -> str:
    """The QEMU command line LAVA logged ('' when none), to boot it by hand."""
    for line in sfp_results.text(log).splitlines():
        if '"Boot command: ' in line:
            msg = (log_entry(line) or {}).get("msg")
            if isinstance(msg, str) and msg.startswith("Boot command: "):
                return msg.removeprefix("Boot command: ")
    return ""


def report(rec: LavaRecord, out: pathlib.Path) -> tuple[int, list[str]]:
    """LAVA's records into OUT/lava-results.tsv (rows of a results TSV, for
    sfp_report); the status (0; 2: timed out; 1: the cause in OUT/problem)
    and the summary's lines."""
    status = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}
    with open(out / "lava-results.tsv", "w", encoding="utf-8") as f:
        for definition, cases in rec.cases.items():
            for case, result in cases:
                f.write(f"lava\t{definition}\t{case}\t{status.get(result, 'ERROR')}\t\n")
    kunit = sum(len(cases) for d, cases in rec.cases.items() if d != "guest")
    counts = f"kunit {kunit}, guest {rec.count('guest')}"
    lines = [f"LAVA job: {rec.job_result}; cases recorded: {counts}"]
    lines += [f"LAVA booted again: {e}" for e in rec.boot_retries]
    if rec.job_result != "pass":
        why = rec.job_error or (rec.errors[-1] if rec.errors else "no job result in the log")
        (out / "problem").write_text(why + "\n", encoding="utf-8")
        return (2 if rec.timed_out else 1), lines + [f"LAVA job failed: {why}"]
    return 0, lines
