#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Print the offsets of the scheduler fields that the benchmark's write
# counter watches, as the built kernel lays them out. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG OBJ

OBJ is a kernel build directory (O=) whose kernel/sched/fair.o is built.
Compiles fair.c with a few offsetof() expressions appended, with exactly
the command that built fair.o (its .fair.o.cmd), to assembly only, the
way the kernel's asm-offsets are made (a few seconds per field), and
prints one 'NAME OFFSET' line per field that this kernel has:
  tg_load_avg    struct task_group, load_avg
  rq_rd          struct rq, rd
  rd_overloaded  struct root_domain, overloaded, or overload before v6.10
                 (absent without the series)
  rq_sd          struct rq, sd (a CPU's lowest scheduling domain)
  sd_lb_count    struct sched_domain, lb_count[CPU_NEWLY_IDLE]
  sd_lb_gained   struct sched_domain, lb_gained[CPU_NEWLY_IDLE]
                 (the last two are schedstat fields: CONFIG_SCHEDSTATS)
  nohz_next_blocked
                 fair.c's static nohz, next_blocked: when the idle CPUs'
                 blocked load is next refreshed (CONFIG_NO_HZ_COMMON)
The guest program bench/sfp_writes.c turns them into addresses.
EOF
}

case ${1:-} in -h | --help) usage; exit 0 ;; '') usage >&2; exit 2 ;; esac
OBJ=$1
CMD=$OBJ/kernel/sched/.fair.o.cmd
[ -f "$CMD" ] || die "no $CMD: build the kernel in $OBJ first"
# kbuild saves the command as savedcmd_..., before v6.2 as cmd_...
cmd=$(sed -n 's/^\(saved\)\{0,1\}cmd_kernel\/sched\/fair\.o := //p' "$CMD" | sed 's/ ; .*//')
case $cmd in *" -c -o kernel/sched/fair.o "*) ;; *) die "unexpected compile command in $CMD" ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# offset NAME STRUCT FIELD; offset_of NAME TYPE FIELD (any type, e.g.
# typeof() of fair.c's anonymous nohz struct)
offset() { offset_of "$1" "struct $2" "$3"; }
offset_of() {
	cat >"$tmp/$1.c" <<EOF
#include "fair.c"
#include <linux/kbuild.h>
void sfp_offsets(void);
void sfp_offsets(void)
{
	DEFINE(SFP_OFF, offsetof($2, $3));
}
EOF
	local c=${cmd%% -c -o kernel/sched/fair.o *}
	c=$(printf '%s' "$c" | sed 's/-Wp,-MMD,[^ ]*//')
	if (cd "$OBJ" && eval "$c -S -o '$tmp/$1.s' '$tmp/$1.c'") 2>"$tmp/$1.err"; then
		sed -n "s/.*->SFP_OFF [\$#]*\\([0-9]*\\) .*/$1 \\1/p" "$tmp/$1.s"
	fi
}
out=$(offset tg_load_avg task_group load_avg
	offset rq_rd rq rd
	offset rd_overloaded root_domain overloaded
	offset rq_sd rq sd
	offset sd_lb_count sched_domain 'lb_count[CPU_NEWLY_IDLE]'
	offset sd_lb_gained sched_domain 'lb_gained[CPU_NEWLY_IDLE]'
	offset_of nohz_next_blocked 'typeof(nohz)' next_blocked)
# Before v6.10 (the 6.1 line) the indicator is int root_domain::overload.
# (Here-strings, not pipes: under pipefail, grep -q exiting at its first
# match can fail the writer with SIGPIPE.)
grep -q '^rd_overloaded ' <<<"$out" ||
	out=$(printf '%s\n' "$out"; offset rd_overloaded root_domain overload)
for f in tg_load_avg rq_rd; do
	grep -q "^$f " <<<"$out" && continue
	err=$(head -n 3 "$tmp/$f.err")
	die "could not compute the offset of $f with the command of $CMD: $err"
done
printf '%s\n' "$out"
