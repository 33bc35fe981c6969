#!/usr/bin/env bash
# sched-fastpath's own test suite ('make check'). See --help.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [--quick]

Run the project's whole test suite and end with 'N passed, N failed':
  1. the series: prepare the work tree, checkpatch --strict, the
     generated patches match kunit/ and selftests/, the feature patches
     reproduce the source's kernel/sched/ byte for byte;
  2. the scripts: shellcheck, --help, and every bad input (no tree, not a
     kernel tree, dirty user tree, a tree where a patch is 'neither',
     missing package, QEMU not installed) gives a one-line error and leaves
     the user's tree (git status, HEAD) untouched;
  3. the main job (scripts/run.sh): build, boot, KUnit and kselftests in
     the guest;
  4. the guest watchdog: a guest that hangs and one that panics are
     reported as failures;
  5. the benchmark's smoke mode (scripts/bench.sh --smoke): baseline and
     patched built with one config, one short A/B round, every metric
     collected and the counters moving the expected way;
  6. the debug kernel (kernel-config/debug.config): the sched/debug race
     check (scripts/race.sh --lockdep-only: lockdep reports the unlocked
     avg_vruntime() call without patch 1 and stays quiet with it, where
     the KUnit suites and kselftests pass too), then a 20 s stress phase
     (scripts/stress.sh -S 20).
--quick runs 1 and 2 only (no kernel build). Wall time is printed per stage.
EOF
}

QUICK=
case ${1:-} in
--quick) QUICK=1 ;;
-h | --help) usage; exit 0 ;;
'') ;;
*) die "unknown argument '$1' (see --help)" ;;
esac

CHK=$BUILD/check
rm -rf "$CHK"
mkdir -p "$CHK"
RESULTS=$CHK/results.tsv
: >"$RESULTS"
export STAGE_TIMES=$CHK/stage-times.tsv
: >"$STAGE_TIMES"

# t NAME CMD...: one test case; its output goes to $CHK/NAME.log.
t() {
	local name=$1 rc=0
	shift
	"$@" >"$CHK/$name.log" 2>&1 || rc=$?
	if [ "$rc" = 0 ]; then
		printf 'project\tcheck\t%s\tPASS\t\n' "$name" >>"$RESULTS"
		printf '  ok     %s\n' "$name"
	else
		printf 'project\tcheck\t%s\tFAIL\tsee %s\n' "$name" "$CHK/$name.log" >>"$RESULTS"
		printf '  FAILED %s\n' "$name"
		sed 's/^/         | /' "$CHK/$name.log" | tail -n 15
	fi
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

# A small kernel-like git tree: the files of the source (the work tree's
# 'base') that the series touches, enough for it to apply.
mini_tree() {
	local dir=$1
	mkdir -p "$dir"
	if [ ! -d "$CHK/mini-src" ]; then
		mkdir -p "$CHK/mini-src"
		git -C "$WT" archive base Makefile MAINTAINERS kernel/sched lib/Kconfig.debug \
			tools/testing/selftests/sched | tar -x -C "$CHK/mini-src"
	fi
	cp -a "$CHK/mini-src"/. "$dir"/
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
	local wt=$1 i ntests=0 fixed featend p idx=$CHK/reproduce.index
	for i in "${!SERIES[@]}"; do
		[ "${SERIES_ROLE[i]}" != test ] || ntests=$((ntests + 1))
	done
	patch_states "$wt" | tee "$CHK/patch-states.txt"
	grep -q 'feature, in the source' "$CHK/patch-states.txt" ||
		{ echo "the source contains none of the series' features"; return 1; }
	featend=$(git -C "$wt" rev-parse "patched~$ntests")
	echo "feature patches end at $(git -C "$wt" log -1 --format='%h %s' "$featend")"
	# The source plus the prerequisites the work tree applied, in a
	# scratch index: no checkout, nothing written to the work tree.
	rm -f "$idx"
	GIT_INDEX_FILE=$idx git -C "$wt" read-tree base
	for i in "${!SERIES[@]}"; do
		p=${SERIES[i]}
		[ "${SERIES_ROLE[i]}" = prereq ] || continue
		! in_rev "$wt" base "$p" || continue
		GIT_INDEX_FILE=$idx git -C "$wt" apply --cached "$p" || { echo "$(basename "$p") does not apply to base"; return 1; }
		echo "intended difference from the source $(wt_meta "$wt" version): $(basename "$p") ($(git -C "$wt" apply --numstat "$p" | awk '{ printf "%s%s", sep, $3; sep = ", " }'))"
	done
	fixed=$(GIT_INDEX_FILE=$idx git -C "$wt" write-tree)
	rm -f "$idx"
	if ! git -C "$wt" diff --quiet "$fixed" "$featend" -- kernel/sched; then
		git -C "$wt" diff --stat "$fixed" "$featend" -- kernel/sched
		echo "series-base + prerequisite and feature patches differs from the source's kernel/sched (+ prerequisites)"
		return 1
	fi
	echo "kernel/sched/ of series-base + prerequisites + features = source + prerequisites: identical"
	echo "git diff base patched -- kernel/sched (prerequisites and test patches):"
	git -C "$wt" diff --stat base patched -- kernel/sched
}

load_series
stage_start "series: prepare, checkpatch, reproduce the source"
t prepare_work_tree "$ROOT/scripts/prepare-tree.sh"
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
t checkpatch_strict checkpatch_all
t series_reproduces_source check_reproduces "$WT"
t test_patches_match_sources "$ROOT/scripts/gen-test-patches.sh" --check
stage_end

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
t bench_bad_vcpus_rejected expect_error "outside 2..8" "$ROOT/scripts/bench.sh" -s "2 16"

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
	env PATH="$(path_without ccache)" "$ROOT/scripts/build-kernel.sh" -t "$CHK/mini-src" -o "$CHK/obj-x"
: >"$CHK/fake-bzImage"
: >"$CHK/fake-initrd"
t qemu_not_installed expect_error "qemu-system-x86_64 not found: install the Debian package 'qemu-system-x86'" \
	env PATH="$(path_without qemu-system-x86_64)" "$ROOT/scripts/boot.sh" \
	-k "$CHK/fake-bzImage" -i "$CHK/fake-initrd" -l "$CHK/logs-x"
[ "$(type -t good)" != function ] || t series_reproduces_source_mini_tree unchanged "$CHK/good" good

# A series that names a file that is not there stops before anything is
# applied or recorded: for a new work tree and for a prepared one.
mkdir -p "$CHK/patches-broken"
cp "$ROOT"/patches/* "$CHK/patches-broken/"
awk '{ print } /\.patch$/ && !done { print "0009-not-there.patch"; done = 1 }' \
	"$ROOT/patches/series" >"$CHK/patches-broken/series"
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
	# The main job. Its own stages (build, guest, boot, tests) print their
	# wall times; its results are merged below.
	run_rc=0
	"$ROOT/scripts/run.sh" || run_rc=$?
	if [ ! -s "$BUILD/logs/patched/results.tsv" ]; then
		printf 'project\trun\tmain_job\tFAIL\tscripts/run.sh exited %s before any test ran\n' "$run_rc" >>"$RESULTS"
	fi
	cat "$BUILD/logs/patched/stage-times.tsv" >>"$STAGE_TIMES" 2>/dev/null || true

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
	grep -E '^\[|vCPUs: (newly-idle|writes)|smoke check' "$CHK/bench_smoke.log" | sed 's/^/         /' || true
	mkdir -p "$CHK/bench-used"
	: >"$CHK/bench-used/earlier-run"
	t bench_keeps_earlier_results expect_error "is not empty" "$ROOT/scripts/bench.sh" -o "$CHK/bench-used"
	stage_end

	stage_start "debug kernel: the sched/debug race check, the tests, a short stress"
	t race_lockdep_check "$ROOT/scripts/race.sh" --lockdep-only
	grep -E '^\| (unfixed|fixed) ' "$BUILD/race/report.md" | sed 's/^/         /' || true
	t stress_short "$ROOT/scripts/stress.sh" -S 20
	grep -E 'stress.sh: patched' "$CHK/stress_short.log" | sed 's/^/         /' || true
	stage_end
fi

echo
echo "stage times (wall):$(awk -F'\t' '{ printf " %s %ss;", $1, $2 }' "$STAGE_TIMES")"
args=(--tsv "$RESULTS")
[ -n "$QUICK" ] || args+=(--tsv "$BUILD/logs/patched/results.tsv")
python3 "$ROOT/scripts/summarize.py" --title "make check: all results" "${args[@]}" --out "$CHK/all.tsv"
