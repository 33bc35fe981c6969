#!/usr/bin/env bash
# The series under a debug kernel with stress: KUnit, kselftests, then a
# stress phase, on patched (and baseline). See --help.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [-m MINUTES | -S SECONDS] [-s VCPUS] [KERNEL]...

Boot each KERNEL (default: patched; also baseline) built with
kernel-config/debug.config (lockdep, KASAN, UBSAN, DEBUG_LIST, atomic
sleep, hung task and soft lockup detection) and the debug hook
tests/debug/avg_vruntime-assert-rq-lock.patch, with panic_on_warn=1, and
run in the guest: the KUnit suites (patched), the kselftests (patched),
then scripts/guest/stress.sh for the given time: stress-ng CPU
offline/online, affinity churn and fork storms, hackbench, cgroup
create/destroy with a task moved in and out, sched/debug and
/proc/schedstat readers; then its invariants. Every kernel goes through
scripts/run.sh (-n debug: one worktree and build for both kernels).

The host fails the run on any splat on the console (lockdep, KASAN,
UBSAN, WARNING:, BUG:, RCU stall, hung task, oops) and prints it; the
logs stay in \$BUILD/stress/KERNEL/. Baseline gets the series' kselftests
(no KUnit), and exactly the cases that guard the two mechanisms must
fail there (root_tg_load_avg_zero, indicator_clear_after_stress and the
kselftests' light-load and root-group cases); any other failure is a
finding.

  -m MINUTES   stress time per kernel [default 10]
  -S SECONDS   stress time in seconds instead (make check: 20)
  -s VCPUS     guest vCPUs [default 4]
EOF
}

SECS=600
VCPUS=4
while [ $# -gt 0 ]; do
	case $1 in
	-m) SECS=$((${2:?} * 60)); shift 2 ;;
	-S) SECS=${2:?}; shift 2 ;;
	-s) VCPUS=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
case $SECS in '' | *[!0-9]* | 0) die "the stress time must be a whole number > 0, not '$SECS'" ;; esac
case $VCPUS in '' | *[!0-9]* | 0 | 1) die "-s wants 2 to 8 vCPUs, not '$VCPUS'" ;; esac
[ "$VCPUS" -le 8 ] || die "-s $VCPUS: the config has NR_CPUS=8"
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(patched)
for k in "${kernels[@]}"; do
	case $k in patched | baseline) ;; *) die "unknown kernel '$k': patched or baseline" ;; esac
done
for t in stress-ng:stress-ng hackbench:rt-tests; do
	[ -x "/usr/bin/${t%%:*}" ] || die "/usr/bin/${t%%:*} not found: install the Debian package '${t#*:}' (or run 'make setup' as root)"
done

OUT=$BUILD/stress
mkdir -p "$OUT"
# baseline gets the series' kselftests, as in make mutate.
selftests_patch "$BUILD/tree" "$OUT/selftests.patch"
# What baseline must fail: the cases that guard the two mechanisms.
BASELINE_EXPECT="stress.root_tg_load_avg_zero
stress.indicator_clear_after_stress
sched_fastpath_root_tg.root_tg.root_group_load_avg_untouched
sched_fastpath_root_tg.root_tg.cpu_offline_online
sched_fastpath_newidle.newidle.light_load_skips_balance
kselftest.selftests: sched: sched_fastpath_root_tg
kselftest.selftests: sched: sched_fastpath_newidle"
rc=0
for k in "${kernels[@]}"; do
	stage_start "stress $k: debug kernel, $VCPUS vCPUs, ${SECS}s"
	log=$OUT/$k
	rm -rf "$log"
	krc=0
	pargs=()
	[ "$k" != baseline ] || pargs=(-p "$OUT/selftests.patch")
	SMP=$VCPUS MEM=${MEM:-1024} BOOT_TIMEOUT=$((900 + 3 * SECS)) \
		APPEND="panic_on_warn=1 sfp.stress=$SECS${APPEND:+ $APPEND}" \
		"$ROOT/scripts/run.sh" -r "$k" "${pargs[@]}" -p "$ROOT/tests/debug/avg_vruntime-assert-rq-lock.patch" \
		-f "$ROOT/kernel-config/debug.config" -n debug -l "$log" \
		-x "$ROOT/scripts/guest/stress.sh" -d /usr/bin/stress-ng -d /usr/bin/hackbench \
		>"$OUT/$k.out" 2>&1 || krc=$?
	figures=$(sed -n 's/^# sfp-stress //p' "$log/guest.log" 2>/dev/null | tr -d '\r' | head -n 1)
	failed=$(failed_cases "$log/results.tsv" | tr '\n' ' ')
	splat=$(grep -m1 'boot.sh: error' "$OUT/$k.out" || true)
	say "$k: ${figures:-no figures}"
	if [ -n "$splat" ]; then
		say "$k: $splat"
		grep -m1 -A25 -E 'WARNING:|BUG:|UBSAN:|Oops|detected stalls|blocked for more than' "$log/console.log" >&2 || true
		rc=1
	fi
	if [ "$k" = baseline ]; then
		got=$(failed_cases "$log/results.tsv")
		unexpected=$(printf '%s\n' "$got" | grep -v '^$' | grep -vxF "$BASELINE_EXPECT" | tr '\n' ';' || true)
		missed=$(printf '%s\n' "$BASELINE_EXPECT" | grep -vxF "${got:-<no failures>}" | tr '\n' ';' || true)
		say "baseline: unexpected failures: ${unexpected:-none}; expected failures that passed: ${missed:-none}"
		[ -z "$unexpected" ] && [ -z "$missed" ] || rc=1
	elif [ "$krc" != 0 ]; then
		say "$k: failed: ${failed:-see $OUT/$k.out}"
		rc=1
	else
		say "$k: clean, $(grep -c PASS "$log/results.tsv") cases passed"
	fi
	stage_end
done
exit "$rc"
