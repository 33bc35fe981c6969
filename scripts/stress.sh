#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The series under a debug kernel with stress: KUnit, kselftests, then a
# stress phase, on patched (and baseline). See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [-m MINUTES | -S SECONDS] [-s VCPUS | -t TOPOLOGY] [-K KIND] [-N RUNS]
                 [-b BUSY] [KERNEL]...

Boot each KERNEL (default: patched; also baseline) built with
kernel-config/debug.config (lockdep, KASAN, UBSAN, DEBUG_LIST, atomic
sleep, hung task and soft lockup detection) and the debug hook
tests/debug/avg_vruntime-assert-rq-lock.patch, with panic_on_warn=1, and
run in the guest: the KUnit suites (patched), the kselftests (patched),
then scripts/guest/stress.sh for the given time: stress-ng CPU
offline/online, affinity churn and fork storms, hackbench, cgroup
create/destroy with a task moved in and out, sched/debug and
/proc/schedstat readers; then its invariants. Every kernel goes through
./sfp run (-n KIND: one worktree and build for both kernels).

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
  -t TOPOLOGY  a CPU topology of sfp.toml [topologies] instead of -s
               (multi-level: smt2x2x2, sock4x2)
  -K KIND      the kind of debug kernel, a row of sfp.toml [kinds]
               with the debug hook [default debug; debug-numa adds the
               NUMA level]; it is also the build's name
  -N RUNS      boot each kernel RUNS times (built by the first) and tally:
               result, the newly-idle figures of both kselftest runs and
               the control's missed partner wakeups [default 1]
  -b BUSY      BUSY busy loops on the host meanwhile [default 0]
With -N, the logs of run I are in \$BUILD/stress/KERNEL-I/. With -t or
another -K, in \$BUILD/stress/KIND-TOPOLOGY/ instead of \$BUILD/stress/.
EOF
}

SECS=600
VCPUS=4
RUNS=1
BUSY=0
KIND=debug
TOPO=
while [ $# -gt 0 ]; do
	case $1 in
	-m)
		case ${2:-} in '' | *[!0-9]* | 0) die "-m wants a whole number of minutes > 0, not '${2:-}'" ;; esac
		SECS=$(($2 * 60))
		shift 2 ;;
	-S) SECS=${2:?}; shift 2 ;;
	-s) VCPUS=${2:?}; shift 2 ;;
	-t) TOPO=${2:?}; shift 2 ;;
	-K) KIND=${2:?}; shift 2 ;;
	-N) RUNS=${2:?}; shift 2 ;;
	-b) BUSY=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
case $SECS in '' | *[!0-9]* | 0) die "the stress time must be a whole number > 0, not '$SECS'" ;; esac
case $VCPUS in '' | *[!0-9]* | 0 | 1) die "-s wants 2 to 8 vCPUs, not '$VCPUS'" ;; esac
[ "$VCPUS" -le 8 ] || die "-s $VCPUS: the config has NR_CPUS=8"
kernel_kind "$KIND" >/dev/null
kind_patches=$(kernel_kind_patches "$KIND")
grep -q '/tests/debug/' <<<"$kind_patches" ||
	die "kind '$KIND' has no debug hook (tests/debug/): not a debug kernel"
if [ -n "$TOPO" ]; then
	sfp validate -K "$KIND" -t "$TOPO" || exit 1
	VCPUS=$(topology_vcpus "$TOPO")
	export TOPOLOGY=$TOPO
else
	unset TOPOLOGY
fi
case $RUNS in '' | *[!0-9]* | 0) die "-N wants a number of runs > 0, not '$RUNS'" ;; esac
case $BUSY in '' | *[!0-9]*) die "-b wants a number of busy loops, not '$BUSY'" ;; esac
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(patched)
for k in "${kernels[@]}"; do
	case $k in patched | baseline) ;; *) die "unknown kernel '$k': patched or baseline" ;; esac
done
for t in stress-ng:stress-ng hackbench:rt-tests; do
	[ -x "/usr/bin/${t%%:*}" ] || die "/usr/bin/${t%%:*} not found: install the Debian package '${t#*:}' (or run 'make setup' as root)"
done

OUT=$BUILD/stress
tag=$KIND${TOPO:+-$TOPO}
[ "$tag" = debug ] || OUT=$OUT/$tag
mkdir -p "$OUT"
# baseline gets the series' kselftests, as in make mutate.
selftests_patch "$BUILD/tree" "$OUT/selftests.patch"
# What baseline must fail: sfp baseline-verdict (sfp.toml
# expect.baseline_fails and their programs' runner verdicts) and this
# script's own two checks.
# stress_run KERNEL LOG [RUN-OPTION]: one boot; 0 when it is what KERNEL
# must give.
stress_run() {
	local k=$1 log=$2 krc=0 pargs=() figures failed splat got verdict n
	rm -rf "$log"
	[ "$k" != baseline ] || pargs=(-p "$OUT/selftests.patch")
	[ -z "${3:-}" ] || pargs+=("$3")
	SMP=$VCPUS MEM=${MEM:-1024} BOOT_TIMEOUT=$((900 + 3 * SECS)) \
		APPEND="sfp.stress=$SECS${APPEND:+ $APPEND}" \
		"$SFP" run -K "$KIND" -r "$k" "${pargs[@]}" -n "$KIND" -l "$log" \
		-x "$ROOT/scripts/guest/stress.sh" -d /usr/bin/stress-ng -d /usr/bin/hackbench \
		>"$log.out" 2>&1 || krc=$?
	figures=$(sed -n 's/^# sfp-stress //p' "$log/guest.log" 2>/dev/null | tr -d '\r' | head -n 1 || true)
	failed=$(failed_cases "$log/results.tsv" | tr '\n' ' ')
	splat=$(grep -m1 'sfp: error' "$log.out" || true)
	say "$k: ${figures:-no figures}"
	if [ -n "$splat" ]; then
		say "$k: $splat"
		splat_context "$log/console.log" >&2
		return 1
	fi
	if [ "$k" = baseline ]; then
		verdict=0
		got=$(sfp baseline-verdict "$log" --also stress.root_tg_load_avg_zero \
			--also stress.indicator_clear_after_stress) || verdict=$?
		say "$got"
		[ "$verdict" = 0 ]
	elif [ "$krc" != 0 ]; then
		say "$k: failed: ${failed:-see $log.out}"
		return 1
	else
		n=$(grep -c PASS "$log/results.tsv" || true)
		say "$k: clean, $n cases passed"
	fi
}

busy_start "$BUSY"
rc=0
for k in "${kernels[@]}"; do
	runs=
	[ "$RUNS" = 1 ] || runs=", $RUNS runs, $BUSY busy loops"
	stage_start "stress $k: debug kernel ($KIND), $VCPUS vCPUs${TOPO:+ ($TOPO)}, ${SECS}s$runs"
	if [ "$RUNS" = 1 ]; then
		stress_run "$k" "$OUT/$k" || rc=1
		stage_end
		continue
	fi
	tally=$OUT/$k-runs.txt
	{
		echo "stress.sh -S $SECS ${TOPO:+-t $TOPO }-s $VCPUS -K $KIND -N $RUNS -b $BUSY $k: $BUSY busy loops on the host"
		printf '%-4s %-6s %-6s %-18s %-18s %-7s %-18s %-7s %s\n' run result passed \
			"light load" "overload control" missed "after stress: ctrl" missed failed
	} >"$tally"
	clean=0
	for i in $(seq 1 "$RUNS"); do
		log=$OUT/$k-$i
		res=clean
		# the first run builds; the others boot what it built
		again=
		[ "$i" = 1 ] || again=--boot-only
		stress_run "$k" "$log" "$again" 2>>"$OUT/$k-runs.err" || { res=FAILED; rc=1; }
		[ "$res" = FAILED ] || clean=$((clean + 1))
		fig=$(newidle_figures "$log/guest.log")
		split_lines fig "$fig"
		IFS=$'\t' read -r l1 c1 m1 <<<"${fig[0]:-}" || true
		IFS=$'\t' read -r _ c2 m2 <<<"${fig[1]:-}" || true
		npass=0
		[ ! -f "$log/results.tsv" ] || npass=$(awk '/PASS/ { n++ } END { print n + 0 }' "$log/results.tsv")
		failed=$(failed_cases "$log/results.tsv")
		printf '%-4s %-6s %-6s %-18s %-18s %-7s %-18s %-7s %s\n' "$i" "$res" \
			"$npass" "${l1:--}" "${c1:--}" "${m1:--}" \
			"${c2:--}" "${m2:--}" "${failed//$'\n'/ }" |
			tee -a "$tally"
	done
	echo "$k: $clean of $RUNS runs clean" | tee -a "$tally"
	say "tally in $tally"
	stage_end
done
exit "$rc"
