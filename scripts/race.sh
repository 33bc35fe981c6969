#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sched/debug race of 6.12.117 (fixed upstream by e08d007f9d81, patch 1
# of the series): a deterministic lockdep check and the oops rate under
# load, without and with the fix. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [-n BOOTS] [-d SECONDS] [-s VCPUS] [--lockdep-only]

Two kernels from the work tree: 'unfixed' is 'base' (the source as it
is, e.g. Debian's 6.12.117) and 'fixed' is base + the series' prerequisite
patch (upstream e08d007f9d81), both with the benchmark's config
(the fragments of kind race in sfp.toml [kinds]). Every kernel
goes through ./sfp run.

1. Deterministic: 'patched' (which carries the fix) and 'patched' with
   the fix reverse-applied, both with kernel-config/debug.config added
   (PROVE_LOCKING, KASAN, UBSAN...) and the debug hook
   tests/debug/avg_vruntime-assert-rq-lock.patch (lockdep_assert_rq_held()
   in avg_vruntime()), booted with panic_on_warn=1; the guest runs the
   KUnit suites, the kselftests and reads /sys/kernel/debug/sched/debug.
   Without the fix, the first read (the guest's preconditions check) must
   make lockdep report avg_vruntime() called without the rq lock; with it,
   the kernel must pass every test and boot clean.
2. Oops rate: both kernels without debug.config, BOOTS boots each
   [default 4] at VCPUS vCPUs [default 8] under multi-threaded TCG, each
   running SECONDS [default 60] of load (sfp_pool, usleep loops) while
   4 readers cat sched/debug (scripts/guest/sched_debug_race.sh).
   An oops ends a boot (oops=panic); the table counts them.

Output: \$BUILD/race/report.md (the tables) and the console logs of
every boot under \$BUILD/race/. Exit status 1 if the lockdep check does
not behave as stated or the fixed kernel oopses.
EOF
}

BOOTS=4
DUR=60
VCPUS=8
LOCKDEP_ONLY=
while [ $# -gt 0 ]; do
	case $1 in
	-n) BOOTS=${2:?}; shift 2 ;;
	-d) DUR=${2:?}; shift 2 ;;
	-s) VCPUS=${2:?}; shift 2 ;;
	--lockdep-only) LOCKDEP_ONLY=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
for v in "$BOOTS" "$DUR" "$VCPUS"; do
	case $v in '' | *[!0-9]* | 0) die "-n, -d and -s want whole numbers > 0, not '$v'" ;; esac
done
[ "$VCPUS" -le 8 ] || die "-s $VCPUS: the config has NR_CPUS=8"

load_series
FIX=
for i in "${!SERIES[@]}"; do
	[ "${SERIES_ROLE[i]}" != prereq ] || FIX=${SERIES[i]}
done
[ -n "$FIX" ] || die "patches/series has no prerequisite fix"
# The debug kind's hook (sfp.toml [kinds]), named in the report.
HOOK=$(kernel_kind_patches debug | head -n 1)
OUT=$BUILD/race
rm -rf "$OUT"
mkdir -p "$OUT"
REPORT=$OUT/report.md
rc=0

stage_start "lockdep: one read of sched/debug, unfixed and fixed"
fix=$(git -C "$BUILD/tree" log -1 --format=%s base 2>/dev/null || true)
{
	echo "# The sched/debug race: $fix"
	echo
	echo "## Deterministic check (lockdep)"
	echo
	echo "Command: \`scripts/race.sh\`. Kernels: \`patched\` (fixed) and \`patched\` with"
	echo "\`patches/$(basename "$FIX")\` reverse-applied (unfixed), both with"
	echo "\`kernel-config/debug.config\` and \`tests/debug/$(basename "$HOOK")\`, booted"
	echo "with \`panic_on_warn=1\`."
	echo
	echo "| kernel | boot | first splat | verdict |"
	echo "|---|---|---|---|"
} >"$REPORT"
# patched without the fix: the fix, reversed (baseline is series-base +
# the prerequisites).
git -C "$BUILD/tree" diff baseline series-base -- kernel/sched >"$OUT/unfix.patch"
[ -s "$OUT/unfix.patch" ] || die "'baseline' and 'series-base' do not differ: the source already carries the fix"
for k in unfixed fixed; do
	pargs=()
	[ "$k" = fixed ] || pargs=(-p "$OUT/unfix.patch")
	log=$OUT/lockdep-$k
	brc=0
	"$SFP" run -K debug -r patched "${pargs[@]}" -n debug \
		-x "$ROOT/scripts/guest/read_sched_debug.sh" >"$log.out" 2>&1 || brc=$?
	cp "$(kernel_logs "$BUILD" debug)/console.log" "$log.console.log" 2>/dev/null || true
	splat=$(first_splat "$log.console.log")
	caller=$(grep -m1 -oE 'print_cfs_rq\+0x[0-9a-f]+' "$log.console.log" 2>/dev/null || true)
	if [ "$k" = unfixed ]; then
		if [ "$brc" != 0 ] && [[ $splat == *avg_vruntime* ]] && [ -n "$caller" ]; then
			verdict="fires as expected (called from $caller)"
		else
			verdict="MISSED: no lockdep report from avg_vruntime()"
			rc=1
		fi
	else
		if [ "$brc" = 0 ]; then
			verdict="clean as expected"
		else
			verdict="FAILED: $(tail -n 1 "$log.out")"
			rc=1
		fi
	fi
	booted=failed
	[ "$brc" != 0 ] || booted=passed
	printf '| %s | %s | %s | %s |\n' "$k" "$booted" \
		"${splat:-none}" "$verdict" >>"$REPORT"
	say "lockdep, $k: $verdict"
done
stage_end

if [ -z "$LOCKDEP_ONLY" ]; then
	stage_start "oops rate: $BOOTS boots x 2 kernels, $VCPUS vCPUs, ${DUR}s each"
	NPROC=$(nproc)
	gcc -O2 -Wall -Werror -static -pthread -o "$OUT/sfp_pool" "$ROOT/bench/sfp_pool.c" ||
		die "cannot build bench/sfp_pool.c"
	{
		echo
		echo "## Oops rate under load"
		echo
		echo "Command: \`scripts/race.sh -n $BOOTS -d $DUR -s $VCPUS\`: $VCPUS vCPUs under"
		echo "multi-threaded TCG on a $NPROC-core host; per boot ${DUR} s of sfp_pool and 4"
		echo "\`usleep 300\` loops while 4 readers cat sched/debug."
		echo
		echo "| kernel | boots | minutes of load (an oops ends a boot early) | oopses | where | reads of sched/debug (boots that finished) |"
		echo "|---|---|---|---|---|---|"
	} >>"$REPORT"
	for k in unfixed fixed; do
		pargs=()
		[ "$k" = unfixed ] || pargs=(-p "$FIX")
		oops=0
		where=
		reads=0
		for i in $(seq 1 "$BOOTS"); do
			log=$OUT/rate-$k-$i
			brc=0
			SMP=$VCPUS MEM=1024 BOOT_TIMEOUT=$((600 + 20 * DUR)) \
				APPEND="sfp.racedur=$DUR${APPEND:+ $APPEND}" \
				"$SFP" run -K race -r base "${pargs[@]}" -n race \
				-x "$ROOT/scripts/guest/sched_debug_race.sh" -b "$OUT/sfp_pool" >"$log.out" 2>&1 || brc=$?
			cp "$(kernel_logs "$BUILD" race)/console.log" "$log.console.log" 2>/dev/null || true
			cp "$(kernel_logs "$BUILD" race)/guest.log" "$log.guest.log" 2>/dev/null || true
			status=clean
			splat=$(first_splat "$log.console.log")
			if [ -n "$splat" ]; then
				oops=$((oops + 1))
				rip=$(grep -m1 -oE 'RIP: 0010:[A-Za-z0-9_.]+\+0x[0-9a-f]+' "$log.console.log" | sed 's/RIP: 0010://' || true)
				where="$where${where:+, }${rip:-?}"
				status="OOPS at ${rip:-?}"
			elif [ "$brc" != 0 ]; then
				status="failed without an oops: $(tail -n 1 "$log.out")"
				[ "$k" != fixed ] || rc=1
			fi
			n=$(sed -n 's/.*sched_debug_race: .*(\([0-9]*\) reads).*/\1/p' "$log.guest.log" 2>/dev/null | head -n 1 || true)
			reads=$((reads + ${n:-0}))
			say "$k boot $i/$BOOTS: $status"
		done
		[ "$k" != fixed ] || [ "$oops" = 0 ] || rc=1
		minutes=$(awk -v b="$BOOTS" -v d="$DUR" 'BEGIN { printf "%.0f", b * d / 60 }')
		printf '| %s | %d | %s | %d | %s | %d |\n' "$k" "$BOOTS" "$minutes" \
			"$oops" "${where:--}" "$reads" >>"$REPORT"
	done
	stage_end
fi
echo
cat "$REPORT"
exit "$rc"
