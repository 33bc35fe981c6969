#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot one kernel N times in a row and tally the results and the
# kselftests' measured figures (flake rate, spreads). See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [-b BUSY] [-o DIR] [N] [-- RUN-OPTIONS...]

Build the kernel that ./sfp run RUN-OPTIONS names (default: the main
job's 'patched'; e.g. '-- -r baseline -n baseline' or
'-- -r patched -p tests/mutants/6.12/no-newidle-gate.patch -n mutant') with
sfp run --build-only, then boot it N times (default 10) with sfp run
--boot-only, and print per boot
the pass/fail counts and the newly-idle attempts per idle entry that
sched_fastpath_newidle measured (and how many of its control's partner
wakeups were missed), then the failures per test case.
Logs: DIR/BOOT (default DIR \$BUILD/logs/NAME-repeat; emptied first).
Environment as for ./sfp boot. scripts/mutate.sh boots each variant
through this script.

  -b BUSY  run BUSY busy loops ('yes >/dev/null') on the host while the
           guests run: a host whose cores are shared, like a busy CI machine
           (QEMU's vCPU threads then get a fraction of a core each)
EOF
}

BUSY=0
N=10
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	-b) BUSY=${2:?}; shift 2 ;;
	-o) OUT=${2:?}; shift 2 ;;
	--) shift; break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) N=$1; shift ;;
	esac
done
RUN_ARGS=("$@")
case $N in '' | *[!0-9]* | 0) die "N must be a number > 0, not '$N'" ;; esac
case $BUSY in '' | *[!0-9]*) die "-b wants a number of busy loops, not '$BUSY'" ;; esac
NAME=patched
for ((i = 0; i < ${#RUN_ARGS[@]}; i++)); do
	case ${RUN_ARGS[i]} in -n | --name) NAME=${RUN_ARGS[i + 1]:-} ;; esac
done
OUT=${OUT:-$(kernel_logs "$BUILD" "$NAME-repeat")}
rm -rf "$OUT"
mkdir -p "$OUT"

say "building (./sfp run ${RUN_ARGS[*]})"
"$SFP" run "${RUN_ARGS[@]}" --build-only >"$OUT/build.out" 2>&1 ||
	die "./sfp run ${RUN_ARGS[*]} --build-only failed (see $OUT/build.out)"

busy_start "$BUSY"

printf '%-4s %-7s %-7s %-18s %-18s %-7s %s\n' boot passed failed "light load" "overload control" missed "root tg_load_avg (max over CPUs)"
for i in $(seq 1 "$N"); do
	log=$OUT/$i
	"$SFP" run "${RUN_ARGS[@]}" --boot-only -l "$log" >"$log.out" 2>&1 || true
	pass=$(awk -F'\t' '$4 == "PASS"' "$log/results.tsv" 2>/dev/null | wc -l || true)
	fail=$(failed_cases "$log/results.tsv" | wc -l)
	[ -s "$log/results.tsv" ] || fail="no result"
	IFS=$'\t' read -r light ctrl missed < <(newidle_figures "$log/guest.log" | head -n 1) || true
	roottg=$(sed -n 's/.*cfs_rq\[[0-9]*\]:\/ load_avg=[0-9-]* tg_load_avg_contrib=\([0-9-]*\) tg_load_avg=\([0-9-]*\).*/\2/p' "$log/guest.log" | sort -n | tail -n 1)
	printf '%-4s %-7s %-7s %-18s %-18s %-7s %s\n' "$i" "$pass" "$fail" "${light:--}" "${ctrl:--}" "${missed:--}" "${roottg:--}"
done
echo
echo "failures per test case over $N boots:"
for f in "$OUT"/*/results.tsv; do failed_cases "$f"; done | sort | uniq -c |
	awk '{ n = $1; $1 = ""; printf "  %s: %d\n", substr($0, 2), n; k++ } END { if (!k) print "  none" }'
