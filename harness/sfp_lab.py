# SPDX-License-Identifier: GPL-2.0
"""A LAVA lab on this machine: lava-server, its scheduler and W workers
sharing N QEMU devices, and jobs submitted to it with lavacli.

`sfp lab up --devices N -w W` starts what Debian 12's lava-server and
lava-dispatcher packages install (there is no systemd here to start
them): PostgreSQL, the server under gunicorn on 127.0.0.1:8000, the
scheduler and W lava-workers (sfp-worker-1..W, each its own process,
name and directory), and registers a user, the workers, the device type
sfp-qemu (harness/lava/sfp-qemu.jinja2) and devices sfp-qemu-01..N,
dealt to the workers in turn. With --health DIR (a built kernel's
images: bzImage, initramfs.cpio.gz) the device type gets a health check
that boots them: LAVA runs it on a device before its first job and after
an infrastructure error, and a device that fails it gets no job. Its state is
in LAB (default $BUILD/lab): pid files, logs, the lavacli identity's
token. `sfp lab down` stops the processes it started; `down --purge`
also puts back what the first `up` on this machine found, as it
recorded it in /var/lib/sfp-lab.found: the lab's files under
/etc/lava-server removed and the owners there as they were, its lavacli
identity deleted, /var/lib/sfp-lab removed, and lava-server's database
and role dropped if that up made them. A job is the same
definition `lava-run` takes, with device_type sfp-qemu and the QEMU
options in its context. A job chooses no path on the worker: QEMU writes
the console and the guest's port into its device's own directory, under
the run name in the job's context (sfp_run, 32 hex digits; the template
ignores any other value), and the client moves the two files to the
boot's log directory once the job has ended.

A lab elsewhere shares no files with this machine, and its QEMU devices
are of LAVA's stock device type 'qemu'. A boot goes there as a portable
job (Target.portable: LAVA_DEVICE_TYPE names a type other than sfp-qemu):
the kernel and initramfs are copied into LAVA_IMAGE_DIR, which a web
server publishes at LAVA_IMAGE_URL, the job fetches them from there, and
the console and the guest's TAP are read back from the job's log. The
server is the one of the lavacli identity LAVA_IDENTITY (lavacli
identities add NAME --uri URL/RPC2 --username USER --token TOKEN). The
local lab has devices of both types, qemu-01..N beside sfp-qemu-01..N,
and serves LAB/images at IMAGE_URL, so the portable path runs here too.
"""
from __future__ import annotations

import calendar
import contextlib
import dataclasses
import json
import os
import pathlib
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time

import yaml

from harness import sfp_data
from harness import sfp_lava
from harness import sfp_results
from harness.sfp_lava import LavaRecord
from harness import sfp_errors

URL = "http://127.0.0.1:8000"
IDENTITY = "sfp-lab"
USER = "sfp-lab"
WORKER = "sfp-worker"
DEVICE_TYPE = sfp_lava.LAB_DEVICE_TYPE
STOCK_TYPE = sfp_lava.STOCK_DEVICE_TYPE
IMAGE_PORT = 8001
IMAGE_URL = f"http://127.0.0.1:{IMAGE_PORT}"
ETC = pathlib.Path("/etc/lava-server")
DEVICE_ROOT = pathlib.Path("/var/lib/sfp-lab")
# A job that ends Incomplete on an infrastructure error, with no sign of
# the kernel's own failure on its console, is resubmitted this many times.
RESUBMITS = 1
TEMPLATE = pathlib.Path(__file__).resolve().parent / "lava" / "sfp-qemu.jinja2"
TOOLS = {"lava-server": "lava-server", "gunicorn3": "gunicorn", "lava-worker": "lava-dispatcher",
         "lavacli": "lavacli", "pg_ctlcluster": "postgresql"}
MARK = "sched-fastpath lab"
# Job states of a LAVA server in which the job waits for a device.
QUEUED = ("Submitted", "Scheduling", "Scheduled")
# Consecutive failed lavacli calls (the server restarting, a lost
# connection) a wait rides out before it gives up.
LAVACLI_TRIES = 5
# A job's run name (its context's sfp_run, as the device type takes it)
# and the logs a job of that name leaves in its device's directory.
RUN_NAME = r"[0-9a-f]{32}"
RUN_LOG = re.compile(RUN_NAME + r"\.(console|guest)\.log")


class LabError(sfp_errors.Failed):
    """The lab cannot do what was asked; the message says why."""


class LabRefused(sfp_errors.Refused):
    """sfp lab up will not start: found before it changed anything."""


class InfrastructureFault(LabError):
    """A boot's jobs all ended on an infrastructure error the kernel did
    not cause: the boot has no result (not a failure of the kernel)."""


@dataclasses.dataclass(frozen=True)
class Target:
    """Where BOOT_BACKEND=lava-server sends a boot: the lavacli identity
    (LAVA_IDENTITY), the device type (LAVA_DEVICE_TYPE) and, for a
    portable job, the directory a web server publishes (LAVA_IMAGE_DIR)
    and its URL (LAVA_IMAGE_URL)."""
    identity: str = IDENTITY
    device_type: str = DEVICE_TYPE
    image_dir: str = ""
    image_url: str = ""

    @property
    def portable(self) -> bool:
        return self.device_type != DEVICE_TYPE

    @classmethod
    def from_env(cls, env: dict[str, str]) -> "Target":
        return cls(env.get("LAVA_IDENTITY") or IDENTITY, env.get("LAVA_DEVICE_TYPE") or DEVICE_TYPE,
                   env.get("LAVA_IMAGE_DIR", ""), env.get("LAVA_IMAGE_URL", ""))

    def check(self) -> None:
        """LabError, in one line, for a target that cannot work."""
        for var, val in (("LAVA_IDENTITY", self.identity), ("LAVA_DEVICE_TYPE", self.device_type)):
            if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", val):
                raise LabError(f"{var}={val}: a name of letters, digits, '_', '.' and '-' "
                               "is wanted")
        if not self.portable:
            if self.image_dir or self.image_url:
                raise LabError(f"LAVA_IMAGE_DIR and LAVA_IMAGE_URL are for a portable job: "
                               f"set LAVA_DEVICE_TYPE to the lab's QEMU type ({STOCK_TYPE}); "
                               f"{DEVICE_TYPE} reads this machine's files")
            return
        if not self.image_dir or not self.image_url:
            raise LabError(f"LAVA_DEVICE_TYPE={self.device_type} is a lab elsewhere: it "
                           "fetches the images from LAVA_IMAGE_URL, which publishes "
                           "LAVA_IMAGE_DIR; set both")
        if not re.match(r"^https?://[^\s/]+(/\S*)?$", self.image_url):
            raise LabError(f"LAVA_IMAGE_URL={self.image_url}: an http:// or https:// URL is wanted")
        d = pathlib.Path(self.image_dir)
        if not d.is_dir() or not os.access(d, os.W_OK):
            raise LabError(f"LAVA_IMAGE_DIR={self.image_dir}: not a directory this user can write")

    def publish(self, path: pathlib.Path) -> str:
        """PATH copied into the image directory under its content's hash
        (a boot of the same image finds it there), and its URL."""
        rel = f"{sfp_data.file_sha256(path)[:16]}/{path.name}"
        dest = pathlib.Path(self.image_dir) / rel
        if not dest.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{path.name}.{os.getpid()}")
            shutil.copyfile(path, tmp)
            tmp.chmod(0o644)
            tmp.replace(dest)
        return f"{self.image_url.rstrip('/')}/{rel}"


def _run(*cmd: str, check: bool = True) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if check and p.returncode:
        raise LabError(f"{' '.join(cmd[:4])}: {(p.stderr or p.stdout).strip()[-300:]}")
    return p.stdout


def _manage(*args: str, check: bool = True) -> str:
    return _run("lava-server", "manage", *args, check=check)


def _lavacli(identity: str, *args: str, check: bool = True) -> str:
    return _run("lavacli", "-i", identity, *args, check=check)


def _alive(pidfile: pathlib.Path) -> bool:
    try:
        os.kill(int(pidfile.read_text()), 0)
        return True
    except (FileNotFoundError, ValueError, ProcessLookupError):
        return False


def _start(lab: pathlib.Path, name: str, cmd: list[str]) -> None:
    pidfile = lab / f"{name}.pid"
    if _alive(pidfile):
        return
    with open(lab / f"{name}.log", "ab") as log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
    pidfile.write_text(str(p.pid))


def _stop(pidfile: pathlib.Path) -> None:
    os.killpg(int(pidfile.read_text()), signal.SIGTERM)


def _server_up(timeout: float = 0.0) -> bool:
    import urllib.request  # only sfp lab and its tests need it
    end = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(URL + "/api/v0.2/", timeout=5) as r:
                return r.status == 200
        except OSError:  # urllib's URLError among them
            if time.monotonic() >= end:
                return False
            time.sleep(1)


def devices(n: int, device_type: str = DEVICE_TYPE) -> list[str]:
    return [f"{device_type}-{i:02d}" for i in range(1, n + 1)]


def _device_file(dtype: str, dev: str) -> str:
    """The device dictionary sfp lab writes for DEV of type DTYPE."""
    return (f"{{# {MARK} #}}\n{{% extends '{dtype}.jinja2' %}}\n"
            f"{{% set device_dir = '{DEVICE_ROOT / dev}' %}}\n")


def _ours(path: pathlib.Path, *ok: str) -> bool:
    """PATH is absent, carries the lab's mark, or is one of OK."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return True
    # The device type's template said only this before it carried MARK.
    return MARK in text or "sched-fastpath's LAVA device type" in text or text in ok


def _cmdlines() -> dict[int, str]:
    out = {}
    for d in pathlib.Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError):  # a process gone meanwhile
            out[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
    return out


def _session(pid: int) -> int:
    """PID's session: a service the lab started leads its own, with its
    children (gunicorn's workers) in it."""
    try:
        return os.getsid(pid)
    except OSError:
        return -1


def _server_devices() -> list[str] | None:
    """The devices lava-server's database holds, or None when it cannot say."""
    p = subprocess.run(["lava-server", "manage", "devices", "list", "--all"],
                       capture_output=True, text=True, check=False)
    if p.returncode:
        return None
    return [ln.split()[1] for ln in p.stdout.splitlines() if ln.startswith("* ")]


def foreign(lab: pathlib.Path, n: int, etc: pathlib.Path = ETC) -> list[str]:
    """What of a LAVA instance this lab did not make `sfp lab up` would
    touch: its services running, its devices, or a file of ETC not the lab's."""
    mine = set()
    for pidfile in _pidfiles(lab):
        with contextlib.suppress(FileNotFoundError, ValueError):
            mine.add(int(pidfile.read_text()))
    service = re.compile(r"lava_server\.wsgi|lava-scheduler|lava-worker |lava-server-gunicorn")
    out = [f"a LAVA service this lab did not start runs (pid {pid}: {cmd.strip()[:60]})"
           for pid, cmd in sorted(_cmdlines().items())
           if pid not in mine and _session(pid) not in mine and service.search(cmd + " ")]
    if not out and _server_up() and not _alive(lab / "gunicorn.pid"):
        out.append(f"a LAVA server this lab did not start answers on {URL}")
    settings = etc / "settings.d" / "50-sfp.yaml"
    if (etc / "settings.d" / "00-database.yaml").exists() and not settings.exists():
        # A lava-server this lab never set up: fine while it is as
        # installed (no device), not once somebody has devices on it.
        theirs = _server_devices()
        if theirs is None:
            out.append("a configured lava-server this lab never set up, whose devices "
                       "cannot be listed (is its PostgreSQL down?)")
        elif theirs:
            out.append(f"a lava-server this lab never set up has devices ({', '.join(theirs[:3])})")
    template = TEMPLATE.read_text() if TEMPLATE.is_file() else ""
    for mine_file in (settings, etc / "dispatcher-config" / "health-checks" / f"{DEVICE_TYPE}.yaml",
                      etc / "dispatcher-config" / "device-types" / f"{DEVICE_TYPE}.jinja2"):
        if not _ours(mine_file, template):
            out.append(f"{mine_file} is not the lab's")
    for dtype in (DEVICE_TYPE, STOCK_TYPE):
        for dev in devices(n, dtype):
            f = etc / "dispatcher-config" / "devices" / f"{dev}.jinja2"
            # what the lab wrote before its files carried MARK
            if not _ours(f, _device_file(dtype, dev).split("\n", 1)[1]):
                out.append(f"the device {dev} ({f}) is not the lab's")
    return out


@dataclasses.dataclass(frozen=True)
class HealthCheck:
    """The device type's health check: a boot of KERNEL and INITRD with the
    command line APPEND (LAVA judges it as any job: fails, the device is Bad)."""
    kernel: pathlib.Path
    initrd: pathlib.Path
    append: str
    timeout_s: int = 600  # a boot's default timeout: a loaded host must not fail it
    machine: tuple[str, ...] = ("-accel", "tcg", "-cpu", "max", "-smp", "2", "-m", "512")
    suites: tuple[str, ...] = ()  # its KUnit suites (sfp_lava.kunit_suites)


def _health_job(lab: pathlib.Path, hc: HealthCheck) -> dict:
    """The health check's definition, its images copied into LAB/health."""
    d = lab / "health"
    d.mkdir(parents=True, exist_ok=True)
    for src, name in ((hc.kernel, "bzImage"), (hc.initrd, "initramfs.cpio.gz")):
        if not src.is_file():
            raise LabError(f"--health: no {src}")
        shutil.copyfile(src, d / name)
        (d / name).chmod(0o644)
    job = sfp_lava.job("sched-fastpath health check", str(d / "bzImage"),
                       str(d / "initramfs.cpio.gz"), hc.append, hc.timeout_s,
                       {"sfp.health-check": "boot of the lab's health images"}, suites=hc.suites)
    job["device_type"] = DEVICE_TYPE
    job["context"]["extra_options"] = list(hc.machine)
    return job


def up(lab: pathlib.Path, n: int, workers: int = 2, health: HealthCheck | None = None,
       say=print) -> None:
    """Start the lab of N devices and WORKERS workers (the module's doc)."""
    if os.geteuid() != 0:
        raise LabRefused("the lab runs LAVA's services, which needs root")
    missing = sorted({pkg for tool, pkg in TOOLS.items() if not shutil.which(tool)})
    if shutil.which("pg_lsclusters") and not _run("pg_lsclusters", "--no-header",
                                                  check=False).strip():
        missing.append("postgresql")  # the client's tools without a server
    if missing:
        raise LabRefused(f"not installed: {' '.join(missing)} (as root: scripts/setup.sh --lab, "
                         "or make lab, installs them)")
    if not 1 <= n <= 16:
        raise LabRefused("--devices wants 1 to 16 devices")
    if not 1 <= workers <= n:
        raise LabRefused(f"-w wants 1 to {n} workers (one device each at least)")
    if theirs := foreign(lab, n):
        raise LabRefused(f"{theirs[0]}; sfp lab up runs only a lab of its own and changed "
                         f"nothing ({len(theirs)} such thing(s) found)")
    lab.mkdir(parents=True, exist_ok=True)
    keep_found(say=say)
    for ver, cluster in _start_clusters():
        say(f"started PostgreSQL {ver}/{cluster} (sfp lab down stops it again)")
        with open(lab / "postgresql-started", "a", encoding="utf-8") as f:
            f.write(f"{ver} {cluster}\n")
    # Installed while PostgreSQL was down (no systemd here), lava-server
    # skipped its database; its own postinst makes it now. Debian's
    # python3 runs it (a python3 earlier in PATH lacks Django).
    if not (ETC / "settings.d" / "00-database.yaml").exists():
        say("creating lava-server's database (dpkg-reconfigure lava-server)")
        new_database = database_new()
        p = subprocess.run(["dpkg-reconfigure", "-f", "noninteractive", "lava-server"],
                           capture_output=True, text=True, check=False,
                           env=dict(os.environ, PATH="/usr/sbin:/usr/bin:/sbin:/bin"))
        if p.returncode or not (ETC / "settings.d" / "00-database.yaml").exists():
            raise LabError("dpkg-reconfigure lava-server did not create its database: "
                           f"{(p.stderr or p.stdout).strip()[-300:]}")
        if new_database and (FOUND / "state").is_file():
            (FOUND / "database-made").write_text(" ".join(DATABASE) + "\n")
        # A server an earlier attempt started runs without it: restart
        # it (the database stays up: the server needs it next).
        down(lab, say, keep_database=True)
    # The job context variable of the device type, then the server.
    (ETC / "settings.d" / "50-sfp.yaml").write_text(
        "# sched-fastpath lab: the job context variable of its device type\n"
        "EXTRA_CONTEXT_VARIABLES: [sfp_run]\n")
    if not _server_up():
        say(f"starting lava-server (gunicorn) on {URL}")
        _start(lab, "gunicorn", ["gunicorn3", "lava_server.wsgi", "--log-level", "info",
                                 "-u", "lavaserver", "-g", "lavaserver", "--worker-class",
                                 "eventlet", "--workers", "2", "--bind", "127.0.0.1:8000"])
        if not _server_up(60):
            raise LabError(f"lava-server did not answer on {URL} within 60 s "
                           f"(see {lab}/gunicorn.log)")
    _start(lab, "scheduler", ["lava-server", "manage", "lava-scheduler", "--level", "INFO"])
    # The user and its lavacli identity.
    tokfile = lab / "token"
    if USER not in _manage("users", "list").split():
        _manage("users", "add", "--superuser", "--staff", "--passwd", secrets.token_hex(16), USER)
        tokfile.unlink(missing_ok=True)  # an earlier database's user's
    if not tokfile.exists():
        tokfile.write_text(_manage("tokens", "add", "--user", USER).strip().split()[-1] + "\n")
        tokfile.chmod(0o600)
    _run("lavacli", "identities", "add", "--uri", URL + "/RPC2", "--username", USER,
         "--token", tokfile.read_text().strip(), IDENTITY)
    # The device type, the worker, the devices.
    shutil.copy(TEMPLATE, ETC / "dispatcher-config" / "device-types" / f"{DEVICE_TYPE}.jinja2")
    if DEVICE_TYPE not in _manage("device-types", "list"):
        _manage("device-types", "add", DEVICE_TYPE)
    names = [f"{WORKER}-{k}" for k in range(1, workers + 1)]
    tokens = {}
    for w in names:
        details = _manage("workers", "details", w, check=False)
        if "token" not in details:
            _manage("workers", "add", w)
            details = _manage("workers", "details", w)
        tokens[w] = [ln.split(":", 1)[1].strip() for ln in details.splitlines()
                     if ln.startswith("token")][0]
    # The health check, or none (a device type without one is never checked).
    hcfile = ETC / "dispatcher-config" / "health-checks" / f"{DEVICE_TYPE}.yaml"
    if health:
        hcfile.parent.mkdir(parents=True, exist_ok=True)
        sfp_lava.write_yaml(hcfile, _health_job(lab, health))
        hcfile.write_text(f"# {MARK}: the health check of {DEVICE_TYPE}\n" + hcfile.read_text())
    elif hcfile.exists() and _ours(hcfile):
        hcfile.unlink()
    # LAVA's own QEMU type (lava-server's qemu.jinja2), as labs have it.
    if STOCK_TYPE not in _manage("device-types", "list").split():
        _manage("device-types", "add", STOCK_TYPE)
    have = _manage("devices", "list", "--all", check=False).split()
    for dtype in (DEVICE_TYPE, STOCK_TYPE):
        for i, dev in enumerate(devices(n, dtype)):
            (DEVICE_ROOT / dev).mkdir(parents=True, exist_ok=True)
            (ETC / "dispatcher-config" / "devices" / f"{dev}.jinja2").write_text(
                _device_file(dtype, dev))
            w = names[i % workers]
            if dev not in have:
                _manage("devices", "add", "--device-type", dtype, "--worker", w, dev)
            else:
                # Unknown: LAVA runs the health check (if any) before a job.
                _manage("devices", "update", "--worker", w, "--health", "UNKNOWN", dev)
    _run("chown", "-R", "lavaserver:", str(ETC / "dispatcher-config"))
    for pidfile in [*lab.glob(f"{WORKER}-*.pid"), lab / "worker.pid"]:
        if pidfile.stem not in names and _alive(pidfile):
            _stop(pidfile)
            pidfile.unlink()
            say(f"stopped {pidfile.stem}: not one of the {workers} workers asked for")
    since = time.time()
    for w in names:
        # lava-dispatcher 2023.01 makes a job's directory without its
        # parents: a worker told at its start to cancel a job it never ran
        # (one an earlier lab left Canceling) dies unless WORKER_DIR/tmp exists.
        (lab / w / "tmp").mkdir(parents=True, exist_ok=True)
        _start(lab, w, ["lava-worker", "--name", w, "--url", URL, "--token", tokens[w],
                        "--worker-dir", str(lab / w), "--level", "INFO",
                        "--log-file", str(lab / f"{w}.log")])
    _online(lab, names, since)
    # The images of portable jobs, published as a lab elsewhere needs them.
    (lab / "images").mkdir(exist_ok=True)
    _start(lab, "images", [sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
                           "--directory", str(lab / "images"), str(IMAGE_PORT)])
    say(f"lab up: {URL}, workers {', '.join(names)}, devices {', '.join(devices(n))} and "
        f"{', '.join(devices(n, STOCK_TYPE))}; lavacli -i {IDENTITY} (logs in {lab})")
    say(f"health check of {DEVICE_TYPE}: " + (f"a boot of {lab / 'health'} ({hcfile})"
                                               if health else "none (see --health)"))
    say(f"portable jobs: LAVA_DEVICE_TYPE={STOCK_TYPE} LAVA_IMAGE_DIR={lab / 'images'} "
        f"LAVA_IMAGE_URL={IMAGE_URL}")


def _online(lab: pathlib.Path, names: list[str], since: float, timeout: float = 60.0,
            sleep=time.sleep, clock=time.monotonic) -> None:
    """Wait until the server has each worker of NAMES Online with a ping
    at or after SINCE (epoch seconds: their start; a worker of an earlier
    lab stays Online at the server for a minute after it stopped), and
    each is still running a few seconds later (the ping that makes it
    Online also hands it its first work); LabError naming its log if one
    exits or is not so within TIMEOUT seconds."""
    end = clock() + timeout
    for w in names:
        while True:
            if not _alive(lab / f"{w}.pid"):
                raise LabError(f"{w} exited as it started (see {lab / w}.log)")
            show = _lavacli(IDENTITY, "workers", "show", w, check=False)
            ping = re.search(r"^last ping\s*:\s*(\S+)", show, re.M)
            pinged = _stamp(ping.group(1)) if ping else None
            if re.search(r"^state\s*:\s*Online\s*$", show, re.M) and pinged is not None \
                    and pinged >= int(since):
                break
            if clock() >= end:
                raise LabError(f"{w} is not Online at the server {int(timeout)} s after its "
                               f"start (see {lab / w}.log)")
            sleep(1)
    sleep(5)
    for w in names:
        if not _alive(lab / f"{w}.pid"):
            raise LabError(f"{w} exited once the server had it Online (see {lab / w}.log)")


def _start_clusters() -> list[tuple[str, str]]:
    """Start every PostgreSQL cluster that is down; (version, name) of each."""
    started = []
    for line in _run("pg_lsclusters", "--no-header").splitlines():
        ver, cluster, _, status = line.split()[:4]
        if status == "down":
            _run("pg_ctlcluster", ver, cluster, "start")
            started.append((ver, cluster))
    return started


def _pidfiles(lab: pathlib.Path) -> list[pathlib.Path]:
    """The lab's processes' pid files, in the order they are stopped."""
    workers = sorted(lab.glob(f"{WORKER}-*.pid")) + [lab / "worker.pid"]
    return [lab / "images.pid", *workers, lab / "scheduler.pid", lab / "gunicorn.pid"]


def clear_run_logs(root: pathlib.Path | None = None, say=print) -> None:
    """Remove the logs of jobs whose client was lost before it took them
    (only while no worker runs: sfp lab down)."""
    root = root or DEVICE_ROOT
    left = [f for f in root.glob("*/*.log") if RUN_LOG.fullmatch(f.name)]
    for f in left:
        f.unlink(missing_ok=True)
    if left:
        say(f"removed {len(left)} job logs no client took from {root}")


def descendants(pid: int, proc: pathlib.Path = pathlib.Path("/proc")) -> list[int]:
    """Every live process below PID, in its own process group or not."""
    children: dict[int, list[int]] = {}
    for stat in proc.glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # pid (comm) state ppid ...: comm may hold spaces and parentheses
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _gone(pids: list[int], timeout: float) -> bool:
    """Whether every one of PIDS has exited, waiting up to TIMEOUT seconds."""
    end = time.monotonic() + timeout
    while True:
        left = [p for p in pids if pathlib.Path(f"/proc/{p}").exists()]
        if not left or time.monotonic() >= end:
            return not left
        time.sleep(0.2)


# What the lab's first `up` on this machine found, for `down --purge`
# (machine-wide, like what it records: one record whatever LAB is).
FOUND = pathlib.Path("/var/lib/sfp-lab.found")
DATABASE = ("lavaserver", "lavaserver")  # what lava-server's postinst makes


def lavacli_config() -> pathlib.Path:
    """The file lavacli reads and `lavacli identities add` writes."""
    home = os.environ.get("XDG_CONFIG_HOME") or str(pathlib.Path.home() / ".config")
    return pathlib.Path(home) / "lavacli.yaml"


def _identity(config: pathlib.Path) -> bool:
    try:
        return IDENTITY in (yaml.safe_load(config.read_text()) or {})
    except (OSError, yaml.YAMLError, TypeError):
        return False


def _marked(etc: pathlib.Path) -> list[pathlib.Path]:
    """The files of ETC the lab wrote (they carry its mark)."""
    d = etc / "dispatcher-config"
    files = [etc / "settings.d" / "50-sfp.yaml", d / "device-types" / f"{DEVICE_TYPE}.jinja2",
             d / "health-checks" / f"{DEVICE_TYPE}.yaml", *sorted(d.glob("devices/*.jinja2"))]
    template = TEMPLATE.read_text() if TEMPLATE.is_file() else ""
    return [f for f in files if f.is_file() and _ours(f, template)
            and (f.parent.name != "devices" or MARK in f.read_text(errors="replace"))]


def keep_found(found: pathlib.Path = FOUND, say=print, etc: pathlib.Path = ETC,
               root: pathlib.Path | None = None, config: pathlib.Path | None = None) -> None:
    """Before the first change of the first `up` on this machine: record in
    FOUND (mode 0700) what `down --purge` needs to put it back: where
    lavacli's configuration is, whether the devices' directory ROOT and
    lava-server's database settings existed, the owners and modes under
    ETC/dispatcher-config (up changes them), and whether the lab had been
    set up here already (by a version that kept no record: then there is
    nothing of before to put back but its own files). A later `up`
    keeps nothing new."""
    if (found / "state").is_file():
        return
    root, config = root or DEVICE_ROOT, config or lavacli_config()
    before = bool(_marked(etc)) or _identity(config) or root.is_dir()
    found.mkdir(mode=0o700, parents=True, exist_ok=True)
    d = etc / "dispatcher-config"
    rows = [f"{x.stat().st_uid}\t{x.stat().st_gid}\t{x.stat().st_mode & 0o7777:o}\t{x}\n"
            for x in [d, *sorted(d.rglob("*"))] if d.is_dir() and not x.is_symlink()]
    (found / "owners.tsv").write_text("".join(rows))
    db = (etc / "settings.d" / "00-database.yaml").is_file()
    (found / "state").write_text(f"config {config}\nconfig-file {int(config.is_file())}\n"
                                 f"root {int(root.is_dir())}\ndatabase-settings {int(db)}\n"
                                 f"set-up-before {int(before)}\n")
    say(f"recorded what sfp lab up changes in {found} (sfp lab down --purge puts it back)"
        + ("; the lab was set up here before: a purge can only remove its files" if before else ""))


def _state(found: pathlib.Path) -> dict[str, str]:
    return dict(ln.split(" ", 1) for ln in (found / "state").read_text().splitlines() if ln)


def _psql(sql: str) -> str:
    return _run("runuser", "-u", "postgres", "--", "psql", "-tAc", sql).strip()


def database_new() -> bool:
    """Neither lava-server's database nor its role exists (PostgreSQL up)."""
    name, role = DATABASE
    return not _psql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'") and \
        not _psql(f"SELECT 1 FROM pg_roles WHERE rolname = '{role}'")


def restore_found(found: pathlib.Path = FOUND, say=print, etc: pathlib.Path = ETC,
                  root: pathlib.Path | None = None, lavacli: str = "lavacli") -> list[str]:
    """Put back what the lab changed, by FOUND's record: remove the files
    it wrote under ETC (and lava-server's database settings, if they were
    not there and the database is gone), the owners and modes under
    ETC/dispatcher-config as they were, its lavacli identity, ROOT if it
    was not there; then drop the record. What it could not put back."""
    root = root or DEVICE_ROOT
    state, left = _state(found), []
    for f in _marked(etc):
        f.unlink()
    if state["database-settings"] == "0" and (found / "database-made").is_file():
        (etc / "settings.d" / "00-database.yaml").unlink(missing_ok=True)
    if state["set-up-before"] == "0":
        for ln in (found / "owners.tsv").read_text().splitlines():
            uid, gid, mode, path = ln.split("\t", 3)
            x = pathlib.Path(path)
            if x.exists() and not x.is_symlink():
                os.chown(x, int(uid), int(gid))
                x.chmod(int(mode, 8))
    else:
        left.append("the owners under dispatcher-config (changed before the record)")
    config = pathlib.Path(state["config"])
    if _identity(config):
        subprocess.run([lavacli, "identities", "delete", IDENTITY], capture_output=True,
                       check=False, env=dict(os.environ, XDG_CONFIG_HOME=str(config.parent)))
        if _identity(config):
            left.append(f"the lavacli identity {IDENTITY} in {config}")
        elif state.get("config-file") == "0" and not yaml.safe_load(config.read_text()):
            config.unlink()  # lavacli wrote it for the lab's identity alone
    if state["root"] == "0" or state["set-up-before"] == "1":
        shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(found)
    return left


def purge(lab: pathlib.Path, say=print, found: pathlib.Path = FOUND) -> None:
    """down, then put the machine back as the first `up` found it (the
    module's doc): the database dropped if that up made it, the rest by
    restore_found."""
    if not (found / "state").is_file():
        raise LabRefused(f"no record in {found} of what sfp lab up found: nothing to put "
                         "back (sfp lab down stops the lab)")
    down(lab, say, keep_database=True)
    running = [f"pid {pid}" for pid, cmd in sorted(_cmdlines().items())
               if re.search(r"lava_server\.wsgi|lava-scheduler|lava-worker ", cmd + " ")]
    if running:
        raise LabRefused(f"a LAVA service still runs ({', '.join(running[:3])}): the purge "
                         "changed nothing")
    left = []
    if (found / "database-made").is_file():
        started = _start_clusters()
        name, role = DATABASE
        _run("runuser", "-u", "postgres", "--", "dropdb", "--if-exists", name)
        _run("runuser", "-u", "postgres", "--", "dropuser", "--if-exists", role)
        say(f"dropped the database {name} and its role {role}, which sfp lab up made")
        for ver, cluster in started:
            _run("pg_ctlcluster", ver, cluster, "stop", check=False)
    else:
        left.append(f"lava-server's database, there before the lab, with the lab's user "
                    f"{USER}, workers, devices and their jobs in it")
    left += restore_found(found, say)
    down(lab, say)
    say(f"put back what sfp lab up changed in {ETC}, lavacli's configuration and "
        f"{DEVICE_ROOT}" + (f"; left: {'; '.join(left)}" if left else ""))


def down(lab: pathlib.Path, say=print, keep_database: bool = False) -> None:
    """Stop what sfp lab up started: its processes and theirs (a worker's
    lava-run and QEMU run in process groups of their own and would
    outlive it), then (unless KEEP_DATABASE) the PostgreSQL clusters it
    started."""
    for pidfile in _pidfiles(lab):
        if _alive(pidfile):
            below = descendants(int(pidfile.read_text()))
            _stop(pidfile)
            for p in below:
                with contextlib.suppress(OSError):
                    os.kill(p, signal.SIGTERM)
            # Gone before this returns: a lab brought up next must not
            # find the old server still answering, nor a job's QEMU running.
            end = time.monotonic() + 20
            while _alive(pidfile) and time.monotonic() < end:
                time.sleep(0.2)
            if not _gone(below, 20):
                for p in below:
                    with contextlib.suppress(OSError):
                        os.kill(p, signal.SIGKILL)
            say(f"stopped {pidfile.stem}" + (f" and {len(below)} processes it started"
                                            if below else ""))
        pidfile.unlink(missing_ok=True)
    started = lab / "postgresql-started"
    if started.is_file() and not keep_database:
        for line in started.read_text().splitlines():
            ver, cluster = line.split()
            _run("pg_ctlcluster", ver, cluster, "stop", check=False)
            say(f"stopped PostgreSQL {ver}/{cluster}, which sfp lab up had started")
        started.unlink()
    clear_run_logs(say=say)


@dataclasses.dataclass
class Submitted:
    """A job as the client saw it end (jobs.json has one per attempt)."""
    job_id: str
    state: str
    health: str
    device: str
    failure: str
    seconds: float       # from submission to the end, as the client saw it
    queued: float = 0.0  # from submission to the start
    error_type: str = ""  # LAVA's, from the job's results (lava.job)
    ran: float = 0.0     # from the start to the end (the server's stamps)


def _show(job_id: str, identity: str, sleep=time.sleep) -> dict:
    """lavacli jobs show, tried again on a failed call."""
    for _ in range(LAVACLI_TRIES - 1):
        try:
            return json.loads(_lavacli(identity, "jobs", "show", job_id, "--json"))
        except (LabError, ValueError):
            sleep(10)
    return json.loads(_lavacli(identity, "jobs", "show", job_id, "--json"))


def _wait(job_id: str, identity: str, timeout_s: int) -> str:
    """lavacli's wait for JOB_ID, TIMEOUT_S at most: 'finished', 'timeout'
    or 'error' (lavacli failed: the caller decides)."""
    p = subprocess.run(["lavacli", "-i", identity, "jobs", "wait", job_id, "--polling", "5",
                        "--timeout", str(timeout_s)], capture_output=True, text=True, check=False)
    if p.returncode == 0:
        return "finished"
    return "timeout" if "timeout!" in p.stdout else "error"


def _usable(device_type: str, identity: str) -> bool:
    """A device of DEVICE_TYPE is neither Bad nor Retired (Maintenance is
    an operator's pause: worth waiting for); True when lavacli cannot say."""
    try:
        devs = json.loads(_lavacli(identity, "devices", "list", "--all", "--json"))
    except (LabError, ValueError):
        return True
    return any(d.get("type") == device_type and d.get("health") not in ("Bad", "Retired")
               for d in devs)


def _stamp(value) -> float | None:
    """A LAVA server's time stamp (UTC, '20261206T16:11:23') as epoch seconds, else None."""
    try:
        return float(calendar.timegm(time.strptime(str(value), "%Y%m%dT%H:%M:%S")))
    except ValueError:
        return None


def submit(job: pathlib.Path, timeout_s: int, identity: str = IDENTITY, poll: float = 30.0,
           say=print, clock=time.monotonic, sleep=time.sleep, resubmit: str = "",
           device_type: str = DEVICE_TYPE) -> Submitted:
    """Submit JOB (or have LAVA resubmit job RESUBMIT) and wait until it
    finishes, as docs/harness.md ("Waiting") says: a queued job is never
    cancelled while a device of DEVICE_TYPE may run it; one still running
    TIMEOUT_S after its start is, and so is the job of a stopped client."""
    t0 = clock()
    cmd = ("jobs", "resubmit", resubmit) if resubmit else ("jobs", "submit", str(job))
    job_id = _lavacli(identity, *cmd).strip()
    if not job_id.isdigit():
        raise LabError(f"lavacli {' '.join(cmd[:2])}: {job_id}")
    try:
        said = 0
        info = _show(job_id, identity, sleep)
        while info.get("state", "") in QUEUED:
            now = clock()
            if now - t0 >= 60 * (said + 1):
                said = int((now - t0) // 60)
                say(f"LAVA job {job_id}: {info['state'].lower()} for {int(now - t0)} s")
                if not _usable(device_type, identity):
                    raise LabError(f"LAVA job {job_id}: no {device_type} device left that may "
                                   "run it (every one Bad or Retired: see lavacli devices list)")
            sleep(poll)
            info = _show(job_id, identity, sleep)
        started, errors = clock(), 0
        while info.get("state") != "Finished":
            left = int(timeout_s - (clock() - started))
            how = _wait(job_id, identity, max(left, 1)) if left > 0 else "timeout"
            if how == "timeout":
                say(f"LAVA job {job_id}: still running {timeout_s} s after its start: cancelled")
                _lavacli(identity, "jobs", "cancel", job_id, check=False)
                if _wait(job_id, identity, 300) != "finished":
                    raise LabError(f"LAVA job {job_id}: cancelled, and not finished 300 s later "
                                   "(its worker may be gone)")
            elif how == "error":
                errors += 1
                if errors == LAVACLI_TRIES:
                    raise LabError(f"lavacli jobs wait {job_id} failed {errors} times in a row")
                sleep(10)
            info = _show(job_id, identity, sleep)
    except BaseException:
        _lavacli(identity, "jobs", "cancel", job_id, check=False)
        raise
    seconds = clock() - t0
    begun, submitted, ended = (_stamp(info.get(k)) for k in ("start_time", "submit_time",
                                                              "end_time"))
    # queued and ran by the server's own stamps where it has them
    queued = seconds if begun is None or submitted is None else begun - submitted
    ran = 0.0 if begun is None or ended is None else ended - begun
    return Submitted(job_id, info.get("state", ""), info.get("health", ""),
                     info.get("device") or "", info.get("failure_comment") or "", seconds,
                     queued, ran=ran)


def infrastructure_fault(sub: Submitted, console: pathlib.Path, guest: pathlib.Path) -> bool:
    """SUB ended on an infrastructure error that the kernel under test did
    not cause: Incomplete with LAVA's error type Infrastructure, no kernel
    report on the console and a guest that did not finish. A kernel that
    panics ends its job the same way in LAVA (the console closes), so the
    console is what tells them apart."""
    if sub.health != "Incomplete" or sub.error_type != "Infrastructure":
        return False
    return not sfp_results.first_splats(console, limit=1) and "sfp-done" not in (
        guest.read_text(errors="replace") if guest.is_file() else "")


def run_name(job: pathlib.Path) -> str:
    """JOB's run name (context sfp_run, as sfp-qemu.jinja2 takes it) or ''."""
    try:
        definition = yaml.safe_load(job.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise LabError(f"{job}: not a job definition ({e})") from e
    name = str((definition.get("context") or {}).get("sfp_run") or "")
    return name if re.fullmatch(RUN_NAME, name) else ""


def take_logs(device: str, name: str, dest: pathlib.Path, root: pathlib.Path | None = None) -> None:
    """Move the logs run NAME left in DEVICE's directory to DEST/console.log
    and DEST/guest.log; a file the job did not write is removed from DEST,
    lest an earlier attempt's be read as this one's."""
    root = root or DEVICE_ROOT
    known = bool(name) and bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*", device or ""))
    for kind in ("console", "guest"):
        src = root / device / f"{name}.{kind}.log" if known else None
        if src is not None and src.is_file():
            shutil.move(src, dest / f"{kind}.log")
        else:
            (dest / f"{kind}.log").unlink(missing_ok=True)


def run_job(job: pathlib.Path, timeout_s: int, out: pathlib.Path,
            target: Target = Target(), say=print) -> tuple[int, list[str]]:
    """Submit JOB (a boot of TIMEOUT_S seconds) to TARGET's server and wait:
    its log to OUT/lava.log, its records to OUT/lava-results.tsv, its jobs
    to OUT/jobs.json, its console and guest logs to OUT/.. (taken from the
    device's directory, or made from a portable job's log); the status and
    summary of sfp_lava.report after a line naming the job. A job ended by
    an infrastructure_fault is resubmitted, RESUBMITS times at most."""
    attempts: list[Submitted] = []
    run = "" if target.portable else run_name(job)
    if not target.portable and not run:
        raise LabError(f"{job}: a job for the lab's device type wants a run name "
                       "(context sfp_run, 32 hex digits: sfp lava-job --server writes one)")
    console, guest = out.parent / "console.log", out.parent / "guest.log"
    while True:
        sub = submit(job, timeout_s + 300, target.identity, say=say, device_type=target.device_type,
                     resubmit=attempts[-1].job_id if attempts else "")
        rec = record(sub.job_id, target.identity)
        sub.error_type = rec.error_type
        attempts.append(sub)
        if not target.portable:
            take_logs(sub.device, run, out.parent)
        if target.portable or len(attempts) > RESUBMITS or not infrastructure_fault(
                sub, console, guest):
            break
        for f in (console, guest):
            if f.is_file():
                shutil.copyfile(f, f.with_name(f"{f.stem}.job-{sub.job_id}.log"))
        say(f"LAVA job {sub.job_id} on {sub.device}: {sub.failure or 'infrastructure error'}; "
            f"the kernel reported nothing: resubmitted (its logs: console.job-{sub.job_id}.log)")
    (out / "job-id").write_text(sub.job_id + "\n", encoding="utf-8")
    (out / "jobs.json").write_text(json.dumps([dataclasses.asdict(a) for a in attempts],
                                              indent=1) + "\n", encoding="utf-8")
    if not target.portable and infrastructure_fault(sub, console, guest):
        raise InfrastructureFault(
            f"LAVA job{'s' * (len(attempts) > 1)} "
            f"{', '.join(a.job_id + ' on ' + (a.device or '-') for a in attempts)} ended on an "
            f"infrastructure error ({sub.failure or 'Incomplete'}) and the kernel reported "
            "nothing: no result")
    head = (f"LAVA server job {sub.job_id} on {sub.device or '-'}: {sub.state}, "
            f"{sub.health}{', ' + sub.failure if sub.failure else ''} "
            f"({sub.queued:.0f} s queued, {sub.ran:.0f} s running)")
    if len(attempts) > 1:
        head += "; after " + ", ".join(f"job {a.job_id} on {a.device or '-'} ({a.failure})"
                                       for a in attempts[:-1])
    log = out / "lava.log"
    p = subprocess.run(["lavacli", "-i", target.identity, "jobs", "logs", "--raw", "--no-follow",
                        sub.job_id], capture_output=True, text=True, check=False)
    log.write_text(p.stdout, encoding="utf-8")
    if target.portable:
        if p.returncode or not p.stdout:
            raise LabError(f"lavacli jobs logs {sub.job_id}: "
                           f"{(p.stderr or 'no log').strip()[-300:]}")
        sfp_lava.logs_from_job(log, console, guest)
    if cmd := sfp_lava.boot_command(log):
        (out.parent / "qemu.cmd").write_text(cmd + "\n", encoding="utf-8")
    rec.boot_retries = sfp_lava.parse_log(log).boot_retries  # from the job's log only
    if sub.health != "Complete" and rec.job_result == "pass":
        rec.job_result = "fail"
        rec.job_error = sub.failure or f"job {sub.health.lower()}"
    rc, lines = sfp_lava.report(rec, out)
    return rc, [head] + lines


def record(job_id: str, identity: str = IDENTITY) -> LavaRecord:
    """The server's results of a job, as the LavaRecord lava-run's log gives."""
    rec = LavaRecord()
    for r in json.loads(_lavacli(identity, "results", job_id, "--json")):
        rec.add(r.get("suite", ""), r.get("name", ""), r.get("result", ""), r.get("metadata") or {})
    return rec
