#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# sched-fastpath's own test suite ('make check'). See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

usage() {
	local ls
	ls=$(lines)
	cat <<EOF
Usage: $PROG [--quick | --full]

Run the project's whole test suite and end with 'N passed, N failed':
  1. the series of every line (patches/LINE/: $ls) whose source is
     here (SFP_SRC_<LINE>, else its Debian package's tarball; a line
     without one is reported as not checked, a skip): prepare the
     line's work tree from that source, checkpatch --strict, the
     generated patches match kunit/ and selftests/, the feature patches
     reproduce the source's kernel/sched/ byte for byte;
  2. the scripts: shellcheck, --help, and every bad input (no tree, not a
     kernel tree, dirty user tree, a tree where a patch is 'neither',
     missing package, QEMU not installed) gives a one-line error and leaves
     the user's tree (git status, HEAD) untouched;
  3. the main job (./sfp run) on every line checked in 1: build,
     boot, KUnit and kselftests in the guest;
  4. (--full) the robot checks (sfp robot --quick) on every line checked
     in 1: kernel/sched/ of each patch of the series on its own, of
     patched in the configs of kernel-config/robot/, with W=1 and sparse
     against series-base, and cross built for arm64;
  5. the guest watchdog: a guest that hangs and one that panics are
     reported as failures; then the same boots as LAVA jobs
     (BOOT_BACKEND=lava, lava-run): the main job's kernel gives the same
     Result as its direct boot and LAVA's records agree with the logs; a
     hang, a panic, a missing initramfs and a failed case are each
     reported as such;
  6. (--full) the benchmark's smoke mode (scripts/bench.sh --smoke): baseline and
     patched built with one config, one short A/B round, every metric
     collected and the counters moving the expected way;
  7. the debug kernel (kernel-config/debug.config): the sched/debug race
     check (sfp race --lockdep-only: lockdep reports the unlocked
     avg_vruntime() call without patch 1 and stays quiet with it, where
     the KUnit suites and kselftests pass too), then a 20 s stress phase
     (sfp stress -S 20).
Without --full, steps 4 and 6 are left out: that is the presubmit tier
(make check, what CI runs), chosen so that a cold machine finishes well
inside CI's 90 minutes; --full (make certify) adds them.
--quick runs 1 and 2 only (no kernel build). Wall time is printed per
stage. Steps 5 to 7 test the harness and the 6.12 line's race fix and
run on the default line only. Results of line-specific checks carry the
line: suite check-6.1, source 6.1/kunit, and so on.
EOF
}

QUICK=
FULL=
case ${1:-} in
--quick) QUICK=1 ;;
--full) FULL=1 ;;
-h | --help) usage; exit 0 ;;
'') ;;
*) die "unknown argument '$1' (see --help)" ;;
esac

# lib.sh made BUILD the default line's directory; each line has its own.
BUILD_TOP=${BUILD%/"$LINE"}
DEFAULT=$LINE
CHK=$BUILD_TOP/check
# A fresh clone's run peaks at 12.6 GB under BUILD: two lines' work
# trees, the robot's, the benchmark's and the debug kernel's worktrees
# (docs/harness.md). A cold ccache grows by about 0.3 GB. A run in
# place reuses the worktrees.
space=15 what="make check"
[ -z "$QUICK" ] || space=5 what="make check --quick"
[ ! -d "$BUILD_TOP/$DEFAULT/wt" ] || space=3
need_space "$BUILD_TOP" "$space" "$what"
rm -rf "$CHK"
mkdir -p "$CHK"
RESULTS=$CHK/results.tsv
: >"$RESULTS"
export STAGE_TIMES=$CHK/stage-times.tsv
: >"$STAGE_TIMES"
# The speed figure: the whole run's wall time and what it compiled.
CHECK_T0=$EPOCHSECONDS
CCACHE_T0=$(ccache_counts)

# The framework, then the stages' cases, in the order they run.
# shellcheck source=tests/check/lib.sh
. "$ROOT/tests/check/lib.sh"
# shellcheck source=tests/check/series.sh
. "$ROOT/tests/check/series.sh"
# shellcheck source=tests/check/scripts.sh
. "$ROOT/tests/check/scripts.sh"
# shellcheck source=tests/check/kernels.sh
. "$ROOT/tests/check/kernels.sh"

export BUILD

# The lines that have a source: SFP_SRC_<LINE>, or a Debian package
# (whose tarball setup.sh installed; a missing one fails below). A line
# with neither is not checked, and says so: a skip, never a pass.
CHECKED_LINES=
for l in $(lines); do
	src=$(line_source "$l")
	if [ -n "$src" ]; then
		CHECKED_LINES="$CHECKED_LINES $l"
		continue
	fi
	msg="line $l not checked: $(line_source_hint "$l")"
	echo "$msg"
	printf 'project\tcheck-%s\tline_checked\tSKIP\t%s\n' "$l" "$msg" >>"$RESULTS"
done
# Each stage that selects a line runs in a subshell of its own.
for l in $CHECKED_LINES; do
	(series_cases "$l")
done
(
	use_line "$DEFAULT" check
	scripts_cases
)
if [ -z "$QUICK" ]; then
	for l in $CHECKED_LINES; do
		main_job_cases "$l"
	done
	if [ -n "$FULL" ]; then
		for l in $CHECKED_LINES; do
			(robot_cases "$l")
		done
	fi
	watchdog_cases
	lava_cases
	[ -z "$FULL" ] || bench_cases
	debug_cases
fi

echo
times=$(awk -F'\t' '{ printf " %s %ss;", $1, $2 }' "$STAGE_TIMES")
echo "stage times (wall):$times"
ccache_t1=$(ccache_counts)
read -r h0 m0 f0 <<<"$CCACHE_T0"
read -r h1 m1 _ <<<"$ccache_t1"
speed="make check${QUICK:+ --quick}${FULL:+ --full}: $((EPOCHSECONDS - CHECK_T0)) s wall;"
speed+=" ccache: $((m1 - m0)) compiled, $((h1 - h0)) from the cache ($f0 files in it at the start)"
echo "$speed" | tee "$CHK/speed.txt"
args=(--tsv "$RESULTS")
[ -n "$QUICK" ] || args+=(--tsv "$CHK/main-job.tsv")
sfp summarize --title "make check: all results" "${args[@]}" --out "$CHK/all.tsv"
