#!/usr/bin/env bash
# Boot an already built kernel N times in a row and tally the results and
# the kselftests' measured figures (flake rate, spreads). See --help.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [-n NAME | -k OBJDIR] [-b BUSY] [N]

Boot \$BUILD/obj/NAME (default: patched, as built by 'make run'), or the
kernel built in OBJDIR (e.g. \$BUILD/variant/obj after 'make mutate'), N times
(default 10) with the same initramfs, parse each run, and print per run the
pass/fail counts and the newly-idle attempts per idle entry that
sched_fastpath_newidle measured, then the failures per test case.
Logs: \$BUILD/logs/NAME-repeat/RUN. Environment as for scripts/boot.sh.

  -b BUSY  run BUSY busy loops ('yes >/dev/null') on the host while the
           guests run: a host whose cores are shared, like a busy CI machine
           (QEMU's vCPU threads then get a fraction of a core each)
EOF
}

NAME=patched
OBJ=
BUSY=0
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	-n) NAME=${2:?}; shift 2 ;;
	-k) OBJ=$(realpath "${2:?}"); NAME=$(basename "$(dirname "$OBJ")"); shift 2 ;;
	-b) BUSY=${2:?}; shift 2 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
N=${1:-10}
case $N in '' | *[!0-9]*) die "N must be a number, not '$N'" ;; esac
case $BUSY in '' | *[!0-9]*) die "-b wants a number of busy loops, not '$BUSY'" ;; esac
OBJ=${OBJ:-$BUILD/obj/$NAME}
[ -f "$OBJ/initramfs.cpio.gz" ] || die "no built kernel and initramfs in $OBJ: run 'make run' first"
# kunit.py parse from any prepared tree will do.
TREE=$BUILD/tree
OUT=$BUILD/logs/$NAME-repeat
rm -rf "$OUT"
mkdir -p "$OUT"

busy_pids=
stop_busy() {
	# shellcheck disable=SC2086 # a list of pids
	[ -z "$busy_pids" ] || kill $busy_pids 2>/dev/null || true
}
trap stop_busy EXIT
for _ in $(seq 1 "$BUSY"); do
	yes >/dev/null &
	busy_pids="$busy_pids $!"
done
[ "$BUSY" = 0 ] || say "$BUSY busy loops on the host while the guests run"

printf '%-4s %-7s %-7s %-18s %-18s %s\n' run passed failed "light load" "overload control" "root tg_load_avg (max over CPUs)"
for i in $(seq 1 "$N"); do
	log=$OUT/$i
	"$ROOT/scripts/boot.sh" -k "$OBJ/arch/x86/boot/bzImage" -i "$OBJ/initramfs.cpio.gz" -l "$log" >"$log.boot" 2>&1 || true
	"$ROOT/scripts/report.sh" -l "$log" -t "$TREE" -k "$OBJ" >"$log.report" 2>&1 || true
	pass=$(awk -F'\t' '$4 == "PASS"' "$log/results.tsv" 2>/dev/null | wc -l)
	fail=$(awk -F'\t' '$4 != "PASS" && $4 != "SKIP"' "$log/results.tsv" 2>/dev/null | wc -l)
	[ -s "$log/results.tsv" ] || fail="no result"
	light=$(sed -n 's/.*light load: \([0-9]*\) newly-idle balance attempts \/ \([0-9]*\) idle entries = \([0-9.]*\).*/\3 (\1\/\2)/p' "$log/guest.log" | head -n 1)
	ctrl=$(sed -n 's/.*overload control: \([0-9]*\) newly-idle balance attempts \/ \([0-9]*\) idle entries = \([0-9.]*\).*/\3 (\1\/\2)/p' "$log/guest.log" | head -n 1)
	roottg=$(sed -n 's/.*cfs_rq\[[0-9]*\]:\/ load_avg=[0-9-]* tg_load_avg_contrib=\([0-9-]*\) tg_load_avg=\([0-9-]*\).*/\2/p' "$log/guest.log" | sort -n | tail -n 1)
	printf '%-4s %-7s %-7s %-18s %-18s %s\n' "$i" "$pass" "$fail" "${light:--}" "${ctrl:--}" "${roottg:--}"
done
echo
echo "failures per test case over $N runs:"
cat "$OUT"/*/results.tsv 2>/dev/null | awk -F'\t' '$4 != "PASS" && $4 != "SKIP" { n[$2 "." $3]++ } END { for (k in n) printf "  %s: %d\n", k, n[k]; if (!length(n)) print "  none" }'
