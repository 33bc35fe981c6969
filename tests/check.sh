#!/usr/bin/env bash
# sched-fastpath's own test suite ('make check'). See --help.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [--quick]

Run the project's whole test suite and end with 'N passed, N failed':
  1. the series of every line (patches/LINE/: $(lines)) whose source is
     here (SFP_SRC_<LINE>, else its Debian package's tarball; a line
     without one is reported as not checked, a skip): prepare the
     line's work tree from that source, checkpatch --strict, the
     generated patches match kunit/ and selftests/, the feature patches
     reproduce the source's kernel/sched/ byte for byte;
  2. the scripts: shellcheck, --help, and every bad input (no tree, not a
     kernel tree, dirty user tree, a tree where a patch is 'neither',
     missing package, QEMU not installed) gives a one-line error and leaves
     the user's tree (git status, HEAD) untouched;
  3. the main job (scripts/run.sh) on every line checked in 1: build,
     boot, KUnit and kselftests in the guest;
  4. the robot checks (scripts/robot.sh --quick) on every line checked
     in 1: kernel/sched/ of each patch of the series on its own, of
     patched in the configs of kernel-config/robot/, with W=1 and sparse
     against series-base, and cross built for arm64;
  5. the guest watchdog: a guest that hangs and one that panics are
     reported as failures;
  6. the benchmark's smoke mode (scripts/bench.sh --smoke): baseline and
     patched built with one config, one short A/B round, every metric
     collected and the counters moving the expected way;
  7. the debug kernel (kernel-config/debug.config): the sched/debug race
     check (scripts/race.sh --lockdep-only: lockdep reports the unlocked
     avg_vruntime() call without patch 1 and stays quiet with it, where
     the KUnit suites and kselftests pass too), then a 20 s stress phase
     (scripts/stress.sh -S 20).
--quick runs 1 and 2 only (no kernel build). Wall time is printed per
stage. Steps 5 to 7 test the harness and the 6.12 line's race fix and
run on the default line only. Results of line-specific checks carry the
line: suite check-6.1, source 6.1/kunit, and so on.
EOF
}

QUICK=
case ${1:-} in
--quick) QUICK=1 ;;
-h | --help) usage; exit 0 ;;
'') ;;
*) die "unknown argument '$1' (see --help)" ;;
esac

# lib.sh made BUILD the default line's directory; each line has its own.
BUILD_TOP=${BUILD%/"$LINE"}
DEFAULT=$LINE
CHK=$BUILD_TOP/check
rm -rf "$CHK"
mkdir -p "$CHK"
RESULTS=$CHK/results.tsv
: >"$RESULTS"
export STAGE_TIMES=$CHK/stage-times.tsv
: >"$STAGE_TIMES"

# t NAME CMD...: one test case of suite $SUITE; its output goes to
# $CHK/$SUITE.NAME.log.
SUITE=check
t() {
	local name=$1 rc=0 log=$CHK/$SUITE.$1.log
	shift
	"$@" >"$log" 2>&1 || rc=$?
	if [ "$rc" = 0 ]; then
		printf 'project\t%s\t%s\tPASS\t\n' "$SUITE" "$name" >>"$RESULTS"
		printf '  ok     %s.%s\n' "$SUITE" "$name"
	else
		printf 'project\t%s\t%s\tFAIL\tsee %s\n' "$SUITE" "$name" "$log" >>"$RESULTS"
		printf '  FAILED %s.%s (log: %s)\n' "$SUITE" "$name" "$log"
		sed 's/^/         | /' "$log" | tail -n 15
	fi
}

# on_line LINE CMD...: CMD for the kernel line LINE, from its default
# source (patches/LINE/series, $BUILD_TOP/LINE).
on_line() {
	local l=$1
	shift
	env -u KSRC LINE="$l" LINE_FROM=LINE BUILD="$BUILD_TOP" "$@"
}

# use_line LINE: the series, work tree and suite name of LINE here.
use_line() {
	PATCHES=$PATCHES_TOP/$1
	WT=$BUILD_TOP/$1/tree
	SUITE=check-$1
	load_series
}

# expect_error PATTERN CMD...: CMD fails with one 'error:' line matching
# PATTERN on stderr.
expect_error() {
	local pat=$1 rc=0
	shift
	"$@" >"$CHK/out" 2>"$CHK/err" || rc=$?
	cat "$CHK/err"
	[ "$rc" != 0 ] || { echo "expected a failure, got exit 0"; return 1; }
	[ "$(grep -c 'error:' "$CHK/err")" = 1 ] || { echo "expected exactly one error line"; return 1; }
	grep -q -- "$pat" "$CHK/err" || { echo "error does not match '$pat'"; return 1; }
}

# tree_state DIR: what must not change in a user's git tree.
tree_state() {
	git -C "$1" rev-parse HEAD
	git -C "$1" status --porcelain
	git -C "$1" stash list
	git -C "$1" branch -a
}

# unchanged DIR CMD...: run CMD and check DIR's git state did not move.
unchanged() {
	local dir=$1 before
	shift
	before=$(tree_state "$dir")
	"$@" || return 1
	[ "$(tree_state "$dir")" = "$before" ] || { echo "user tree $dir changed"; return 1; }
	echo "user tree unchanged: $(git -C "$dir" rev-parse --short HEAD), $(git -C "$dir" status --porcelain | wc -l) modified"
}

# mini_tree DIR [WT]: a small kernel-like git tree, the files of the
# source (the work tree's 'base', WT or the default line's) that the
# series touches, enough for it to apply.
mini_tree() {
	local dir=$1 wt=${2:-$WT} src
	src=$CHK/mini-src-$(basename "$(dirname "$wt")")
	mkdir -p "$dir"
	if [ ! -d "$src" ]; then
		mkdir -p "$src"
		# shellcheck disable=SC2086 # a list of paths
		git -C "$wt" archive base $SERIES_PATHS | tar -x -C "$src"
	fi
	cp -a "$src"/. "$dir"/
	git -C "$dir" init -q -b main
	git -C "$dir" add -A
	git -C "$dir" -c user.name=t -c user.email=t@t commit -q -m "user commit"
}

export BUILD
REAL_BUILD=$BUILD
WT=$BUILD/tree

# check_reproduces WT: the source's kernel/sched/ with the series'
# prerequisite fixes applied is exactly what the prerequisite and feature
# patches make of series-base; whatever else differs between base and
# patched comes from the test patches. Prints the intended differences.
check_reproduces() {
	local wt=$1 i fixed featend p
	patch_states "$wt" | tee "$CHK/patch-states.txt"
	grep -q 'feature, in the source' "$CHK/patch-states.txt" ||
		{ echo "the source contains none of the series' features"; return 1; }
	featend=$(features_end "$wt")
	echo "feature patches end at $(git -C "$wt" log -1 --format='%h %s' "$featend")"
	# The source plus the prerequisites the work tree applied, in a
	# scratch index: no checkout, nothing written to the work tree.
	fixed=$(source_fixed "$wt") || { echo "a prerequisite does not apply to base"; return 1; }
	for i in "${!SERIES[@]}"; do
		p=${SERIES[i]}
		[ "${SERIES_ROLE[i]}" = prereq ] || continue
		! in_rev "$wt" base "$p" || continue
		echo "intended difference from the source $(wt_meta "$wt" version): $(basename "$p") ($(git -C "$wt" apply --numstat "$p" | awk '{ printf "%s%s", sep, $3; sep = ", " }'))"
	done
	if ! git -C "$wt" diff --quiet "$fixed" "$featend" -- kernel/sched; then
		git -C "$wt" diff --stat "$fixed" "$featend" -- kernel/sched
		echo "series-base + prerequisite and feature patches differs from the source's kernel/sched (+ prerequisites)"
		return 1
	fi
	echo "kernel/sched/ of series-base + prerequisites + features = source + prerequisites: identical"
	echo "git diff base patched -- kernel/sched (prerequisites and test patches):"
	git -C "$wt" diff --stat base patched -- kernel/sched
}

# checkpatch --strict on every patch. A prerequisite is a backport and
# carries its upstream id ('commit <40 hex> upstream.'); the work tree,
# made from a tarball, has no upstream history to look it up in, so that
# one finding (UNKNOWN_COMMIT_ID) is ignored for it, and the line must be
# there.
checkpatch_all() {
	local i p out bad=0 opts
	[ -f "$WT/scripts/checkpatch.pl" ] || { echo "no work tree"; return 1; }
	for i in "${!SERIES[@]}"; do
		p=${SERIES[i]}
		opts=(--strict --no-tree -q)
		if [ "${SERIES_ROLE[i]}" = prereq ]; then
			if ! grep -qE '^commit [0-9a-f]{40} upstream\.$' "$p"; then
				echo "$(basename "$p"): a prerequisite without its 'commit <id> upstream.' line"
				bad=1
			fi
			opts+=(--ignore UNKNOWN_COMMIT_ID)
		fi
		out=$(cd "$WT" && perl scripts/checkpatch.pl "${opts[@]}" "$p" 2>&1) || true
		if [ -n "$out" ]; then
			printf '%s:\n%s\n' "$(basename "$p")" "$out"
			bad=1
		else
			echo "$(basename "$p"): clean${opts[3]:+ (upstream id $(sed -n 's/^commit \([0-9a-f]\{12\}\).* upstream\.$/\1/p' "$p") not looked up: no upstream history here)}"
		fi
	done
	return "$bad"
}
# series_numbered: patch I of the N in the series is '[PATCH I/N]'.
series_numbered() {
	local i n=${#SERIES[@]} want got bad=0
	for i in "${!SERIES[@]}"; do
		want="[PATCH $((i + 1))/$n]"
		got=$(sed -n 's/^Subject: \(\[PATCH[^]]*\]\).*/\1/p' "${SERIES[i]}" | head -n 1)
		if [ "$got" = "$want" ]; then
			echo "$(basename "${SERIES[i]}"): $got"
		else
			echo "$(basename "${SERIES[i]}"): ${got:-no [PATCH] prefix}, expected $want"
			bad=1
		fi
	done
	return "$bad"
}
# The lines that have a source: SFP_SRC_<LINE>, or a Debian package
# (whose tarball setup.sh installed; a missing one fails below). A line
# with neither is not checked, and says so: a skip, never a pass.
CHECKED_LINES=
for l in $(lines); do
	if [ -n "$(line_source "$l")" ]; then
		CHECKED_LINES="$CHECKED_LINES $l"
		continue
	fi
	msg="line $l not checked: $(line_source_hint "$l")"
	echo "$msg"
	printf 'project\tcheck-%s\tline_checked\tSKIP\t%s\n' "$l" "$msg" >>"$RESULTS"
done
for l in $CHECKED_LINES; do
	stage_start "series $l: prepare, checkpatch, reproduce the source"
	use_line "$l"
	t prepare_work_tree on_line "$l" "$ROOT/scripts/prepare-tree.sh"
	grep -E 'work tree (ready|.* is up to date)' "$CHK/$SUITE.prepare_work_tree.log" | sed 's/^/         /' || true
	t checkpatch_strict checkpatch_all
	t series_numbered series_numbered
	t series_reproduces_source check_reproduces "$WT"
	grep -E '^(kernel/sched/ of|intended)' "$CHK/$SUITE.series_reproduces_source.log" | sed 's/^/         /' || true
	t test_patches_match_sources on_line "$l" "$ROOT/scripts/gen-test-patches.sh" --check
	stage_end
done
use_line "$DEFAULT"
SUITE=check

stage_start "project: scripts and bad input"
need shellcheck shellcheck
# shellcheck disable=SC2046 # the file list is wanted split
t shellcheck shellcheck -x $(grep -rlE '^#!.*(ba)?sh' "$ROOT/scripts" "$ROOT/tests" "$ROOT/.ci")
help_all() {
	local s
	for s in "$ROOT"/scripts/*.sh "$ROOT"/scripts/*.py "$ROOT"/tests/*.sh; do
		case $s in */lib.sh) continue ;; esac
		"$s" --help >/dev/null || { echo "$s --help failed"; return 1; }
		echo "$s --help: ok"
	done
}
t help_on_every_script help_all
t bad_arguments_rejected expect_error "unknown argument" "$ROOT/scripts/run.sh" --bogus
t bench_bad_vcpus_rejected expect_error "unknown topology 'smp16'" "$ROOT/scripts/bench.sh" -s "2 16"
t bench_bad_topology_rejected expect_error "unknown topology 'mesh'" "$ROOT/scripts/bench.sh" -t "smp2 mesh"

# Scratch work trees go under $CHK, never over the real one.
BUILD=$CHK/build
t no_tree expect_error "does not exist" env KSRC="$CHK/nonexistent" "$ROOT/scripts/prepare-tree.sh"
mkdir -p "$CHK/notkernel"
git -C "$CHK/notkernel" init -q
echo hello >"$CHK/notkernel/README"
t not_a_kernel_tree unchanged "$CHK/notkernel" expect_error "is not a kernel source tree" \
	env KSRC="$CHK/notkernel" "$ROOT/scripts/prepare-tree.sh"

if [ -d "$WT/.git" ]; then
	mini_tree "$CHK/dirty"
	echo "/* a user's edit */" >>"$CHK/dirty/kernel/sched/fair.c"
	t dirty_user_tree unchanged "$CHK/dirty" expect_error "uncommitted changes" \
		env KSRC="$CHK/dirty" "$ROOT/scripts/prepare-tree.sh" -o "$CHK/wt-dirty"

	mini_tree "$CHK/drift"
	# Context drift around update_tg_load_avg(): patch 1 can neither apply
	# nor reverse-apply, while patch 2 still reverse-applies.
	sed -i 's/No need to update load_avg for root_task_group as it is not used./Root: nothing reads its load_avg./' \
		"$CHK/drift/kernel/sched/fair.c"
	git -C "$CHK/drift" -c user.name=t -c user.email=t@t commit -q -am "drift"
	neither() {
		expect_error "0002-.*neither applies.*kernel/sched/fair.c at line [0-9]*.*known to work" \
			env KSRC="$CHK/drift" "$ROOT/scripts/prepare-tree.sh" -o "$CHK/wt-drift" || return 1
		[ ! -e "$CHK/wt-drift" ] || { echo "a half-made work tree was left behind"; return 1; }
	}
	t patch_neither_applies_nor_contained unchanged "$CHK/drift" neither
	# With the blobs of the prepared work tree a three-way merge is tried;
	# here the drifted line is one the patch itself adds: a conflict, named.
	conflict() {
		expect_error "0002-.*neither applies.*a three-way merge conflicts in kernel/sched/fair.c" \
			env KSRC="$CHK/drift" THREEWAY_FROM="$WT" "$ROOT/scripts/prepare-tree.sh" -o "$CHK/wt-drift" || return 1
		[ ! -e "$CHK/wt-drift" ] || { echo "a half-made work tree was left behind"; return 1; }
	}
	t patch_conflict_named unchanged "$CHK/drift" conflict

	# The line follows the source's version, and a version with no line
	# is refused with the lines there are.
	mini_tree "$CHK/line510"
	sed -i 's/^VERSION = .*/VERSION = 5/; s/^PATCHLEVEL = .*/PATCHLEVEL = 10/' "$CHK/line510/Makefile"
	git -C "$CHK/line510" -c user.name=t -c user.email=t@t commit -q -am "5.10"
	t line_without_series_refused unchanged "$CHK/line510" expect_error \
		"Linux 5.10.[0-9]* .* is on the 5.10 line, which has no series: lines are $(lines)" \
		env -u LINE -u LINE_FROM KSRC="$CHK/line510" "$ROOT/scripts/prepare-tree.sh" -o "$CHK/wt-510"
	# A version between lines names the nearest one below it.
	mini_tree "$CHK/line613"
	sed -i 's/^PATCHLEVEL = .*/PATCHLEVEL = 13/' "$CHK/line613/Makefile"
	git -C "$CHK/line613" -c user.name=t -c user.email=t@t commit -q -am "6.13"
	t line_between_names_nearest unchanged "$CHK/line613" expect_error \
		"Linux 6.13.[0-9]* .* no series: .* the nearest is 6.12, LINE=6.12 forces it" \
		env -u LINE -u LINE_FROM KSRC="$CHK/line613" "$ROOT/scripts/prepare-tree.sh" -o "$CHK/wt-613"
	# A line without a Debian package and without SFP_SRC_<LINE> names
	# both ways to give it a source.
	for l in $(lines); do
		[ -z "$(series_field "$l" "debian package")" ] || continue
		t line_without_source_named expect_error \
			"no source for the $l line: no Debian package carries $l: give a tree as KSRC=.* or SFP_SRC_${l//./_}=" \
			env -u KSRC -u "SFP_SRC_${l//./_}" LINE="$l" LINE_FROM=LINE "$ROOT/scripts/prepare-tree.sh" -o "$CHK/wt-nosrc"
		break
	done
	t line_unknown_refused expect_error "LINE=4.19: no series patches/4.19/series; lines are $(lines)" \
		env LINE=4.19 "$ROOT/scripts/prepare-tree.sh" -o "$CHK/wt-419"
	if [ -d "$BUILD_TOP/6.1/tree/.git" ]; then
		mini_tree "$CHK/line61" "$BUILD_TOP/6.1/tree"
		line61() {
			# -s does not choose the line: a 6.1 source on the 6.12 line is refused...
			expect_error "is Linux 6.1.[0-9]*, not on the 6.12 line: give it as KSRC=" \
				env -u KSRC LINE=6.12 LINE_FROM=default "$ROOT/scripts/prepare-tree.sh" \
				-s "$CHK/line61" -o "$CHK/wt-61" || return 1
			# ...KSRC does, and the 6.1 series applies to it
			env -u LINE -u LINE_FROM KSRC="$CHK/line61" "$ROOT/scripts/prepare-tree.sh" \
				-o "$CHK/wt-61" || return 1
			git -C "$CHK/wt-61" log --oneline base..patched
			[ "$(git -C "$CHK/wt-61" log --format=%s base..patched | grep -c .)" = 6 ] ||
				{ echo "expected 2 back-outs and 4 patches of the 6.1 series"; return 1; }
		}
		t line_follows_the_source unchanged "$CHK/line61" line61
	fi

	mini_tree "$CHK/good"
	good() {
		env KSRC="$CHK/good" "$ROOT/scripts/prepare-tree.sh" -o "$CHK/wt-good" || return 1
		git -C "$CHK/wt-good" log --oneline base..patched
		check_reproduces "$CHK/wt-good"
	}
else
	for n in dirty_user_tree patch_neither_applies_nor_contained series_reproduces_source_mini_tree; do
		printf 'project\tcheck\t%s\tFAIL\tno work tree to take files from\n' "$n" >>"$RESULTS"
	done
fi

# A PATH that has everything but one tool, to stand for a missing package.
path_without() {
	local dir=$CHK/path-without-$1 d f
	mkdir -p "$dir"
	for d in /usr/local/bin /usr/bin /bin; do
		for f in "$d"/*; do
			[ -e "$dir/${f##*/}" ] || ln -s "$f" "$dir/${f##*/}"
		done
	done
	rm -f "$dir/$1"
	echo "$dir"
}
t missing_package expect_error "ccache not found: install the Debian package 'ccache'" \
	env PATH="$(path_without ccache)" "$ROOT/scripts/build-kernel.sh" -t "$CHK/mini-src-$DEFAULT" -o "$CHK/obj-x"
: >"$CHK/fake-bzImage"
: >"$CHK/fake-initrd"
t qemu_not_installed expect_error "qemu-system-x86_64 not found: install the Debian package 'qemu-system-x86'" \
	env PATH="$(path_without qemu-system-x86_64)" "$ROOT/scripts/boot.sh" \
	-k "$CHK/fake-bzImage" -i "$CHK/fake-initrd" -l "$CHK/logs-x"
[ "$(type -t good)" != function ] || t series_reproduces_source_mini_tree unchanged "$CHK/good" good

# A series that names a file that is not there stops before anything is
# applied or recorded: for a new work tree and for a prepared one.
mkdir -p "$CHK/patches-broken"
cp "$PATCHES_TOP/$DEFAULT"/* "$CHK/patches-broken/"
awk '{ print } /\.patch$/ && !done { print "0009-not-there.patch"; done = 1 }' \
	"$PATCHES_TOP/$DEFAULT/series" >"$CHK/patches-broken/series"
wt_state() {
	git -C "$1" for-each-ref --format='%(refname) %(objectname)'
	git -C "$1" notes --ref=sfp list
}
missing_series_file() {
	expect_error "names 0009-not-there.patch, which is not in" env PATCHES="$CHK/patches-broken" \
		KSRC="$CHK/good" "$ROOT/scripts/prepare-tree.sh" -o "$CHK/wt-broken" || return 1
	if [ -e "$CHK/wt-broken" ] || [ -e "$CHK/wt-broken.new" ]; then
		echo "a work tree was left behind"
		return 1
	fi
	[ -d "$CHK/wt-good/.git" ] || { echo "no prepared mini work tree to reuse"; return 1; }
	local before
	before=$(wt_state "$CHK/wt-good")
	expect_error "names 0009-not-there.patch, which is not in" env PATCHES="$CHK/patches-broken" \
		KSRC="$CHK/good" "$ROOT/scripts/prepare-tree.sh" -o "$CHK/wt-good" || return 1
	[ "$(wt_state "$CHK/wt-good")" = "$before" ] || { echo "the prepared work tree changed"; return 1; }
	echo "nothing made, nothing recorded"
}
t series_missing_file_stops_early missing_series_file
BUILD=$REAL_BUILD
stage_end


if [ -z "$QUICK" ]; then
	# The main job on every line. Its own stages (build, guest, boot,
	# tests) print their wall times; its results are merged below, the
	# source column saying the line.
	for l in $CHECKED_LINES; do
		run_rc=0
		t0=$(date +%s)
		src=$(line_source "$l")
		echo "==> main job, line $l: Linux $(source_version "$src") from $src"
		on_line "$l" "$ROOT/scripts/run.sh" || run_rc=$?
		lres=$BUILD_TOP/$l/logs/patched/results.tsv
		if [ -s "$lres" ]; then
			awk -F'\t' -v OFS='\t' -v l="$l" '{ $1 = l "/" $1; print }' "$lres" >>"$CHK/main-job.tsv"
		else
			printf '%s/project\trun\tmain_job\tFAIL\tscripts/run.sh exited %s before any test ran\n' "$l" "$run_rc" >>"$RESULTS"
		fi
		sed "s/^/line $l: /" "$BUILD_TOP/$l/logs/patched/stage-times.tsv" >>"$STAGE_TIMES" 2>/dev/null || true
		printf 'main job, line %s\t%s\n' "$l" "$(($(date +%s) - t0))" >>"$STAGE_TIMES"
		echo "<== main job, line $l: $(($(date +%s) - t0))s"
	done

	# What the kernel test robot would build, bounded: kernel/sched/
	# objects only, per patch, per config, W=1 and sparse, arm64.
	for l in $CHECKED_LINES; do
		stage_start "robot checks, line $l (kernel/sched/ objects)"
		use_line "$l"
		t robot_builds on_line "$l" "$ROOT/scripts/robot.sh" --quick
		grep -E '^\| .* \| (FAILED|n/a)|^W=1|^    ' "$CHK/$SUITE.robot_builds.log" | sed 's/^/         /' || true
		stage_end
	done
	use_line "$DEFAULT"
	SUITE=check

	stage_start "watchdog: hang and panic"
	KIMG=$BUILD/obj/patched/arch/x86/boot/bzImage
	# tiny_initrd NAME INIT-SCRIPT: busybox and an init that misbehaves.
	tiny_initrd() {
		local d=$CHK/initrd-$1
		mkdir -p "$d/bin"
		cp /bin/busybox "$d/bin/busybox"
		printf '#!/bin/busybox sh\n%s\n' "$2" >"$d/init"
		chmod +x "$d/init"
		(cd "$d" && find . | cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$CHK/$1.cpio.gz"
		echo "$CHK/$1.cpio.gz"
	}
	if [ -f "$KIMG" ]; then
		t guest_hang_reported expect_error "guest hung" \
			env BOOT_TIMEOUT=25 SMP=1 "$ROOT/scripts/boot.sh" -k "$KIMG" \
			-i "$(tiny_initrd hang '/bin/busybox sleep 100000')" -l "$CHK/logs-hang"
		t guest_panic_reported expect_error "Kernel panic" \
			env BOOT_TIMEOUT=120 SMP=1 "$ROOT/scripts/boot.sh" -k "$KIMG" \
			-i "$(tiny_initrd panic 'exit 1')" -l "$CHK/logs-panic"
	else
		printf 'project\tcheck\twatchdog\tFAIL\tno kernel was built\n' >>"$RESULTS"
	fi
	stage_end

	stage_start "bench: smoke A/B round"
	t bench_smoke "$ROOT/scripts/bench.sh" --smoke
	grep -E '^\[|^  smp2: |target: |smoke check|check not made' "$CHK/check.bench_smoke.log" | sed 's/^/         /' || true
	mkdir -p "$CHK/bench-used"
	: >"$CHK/bench-used/earlier-run"
	t bench_keeps_earlier_results expect_error "is not empty" "$ROOT/scripts/bench.sh" -o "$CHK/bench-used"
	stage_end

	stage_start "debug kernel: the sched/debug race check, the tests, a short stress"
	t race_lockdep_check "$ROOT/scripts/race.sh" --lockdep-only
	grep -E '^\| (unfixed|fixed) ' "$BUILD/race/report.md" | sed 's/^/         /' || true
	t stress_short "$ROOT/scripts/stress.sh" -S 20
	grep -E 'stress.sh: patched' "$CHK/check.stress_short.log" | sed 's/^/         /' || true
	stage_end
fi

echo
echo "stage times (wall):$(awk -F'\t' '{ printf " %s %ss;", $1, $2 }' "$STAGE_TIMES")"
args=(--tsv "$RESULTS")
[ -n "$QUICK" ] || args+=(--tsv "$CHK/main-job.tsv")
python3 "$ROOT/scripts/summarize.py" --title "make check: all results" "${args[@]}" --out "$CHK/all.tsv"
