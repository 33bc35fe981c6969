# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
set -o pipefail # as in tests/check.sh, which sources this
# tests/check.sh, stage 2: the scripts and every bad input. Sourced; never
# run.

help_all() {
	local s
	for s in "$ROOT"/scripts/*.sh "$ROOT"/scripts/*.py "$ROOT"/tests/*.sh; do
		case $s in */lib.sh | */series.sh) continue ;; esac
		"$s" --help >/dev/null || { echo "$s --help failed"; return 1; }
		echo "$s --help: ok"
	done
	"$SFP" --help >/dev/null || { echo "sfp --help failed"; return 1; }
	for s in data get line-env validate prepare series gen-patches submission kunit robot run repeat figures fragments build-kernel build-guest config-unmet boot result report summarize baseline-verdict mutate stress race prose compare lava-job lava-result fanout bench-lines lab; do
		"$SFP" "$s" --help >/dev/null || { echo "sfp $s --help failed"; return 1; }
		echo "sfp $s --help: ok"
	done
}

# The drifted tree is refused with the patch and place named, and no
# half-made work tree is left.
neither() {
	expect_error "0002-.*neither applies.*kernel/sched/fair.c at line [0-9]*.*known to work" \
		env KSRC="$CHK/drift" "$SFP" prepare -o "$CHK/wt-drift" || return 1
	[ ! -e "$CHK/wt-drift" ] || { echo "a half-made work tree was left behind"; return 1; }
}

# With the blobs of the prepared work tree a three-way merge is tried;
# here the drifted line is one the patch itself adds: a conflict, named.
conflict() {
	expect_error "0002-.*neither applies.*a three-way merge conflicts in kernel/sched/fair.c" \
		env KSRC="$CHK/drift" THREEWAY_FROM="$WT" "$SFP" prepare -o "$CHK/wt-drift" || return 1
	[ ! -e "$CHK/wt-drift" ] || { echo "a half-made work tree was left behind"; return 1; }
}

# A 6.1 source: the line follows KSRC's version, not -s.
line61() {
	local n
	# -s does not choose the line: a 6.1 source on the 6.12 line is refused...
	expect_error "is Linux 6.1.[0-9]*, not on the 6.12 line: give it as KSRC=" \
		env -u KSRC LINE=6.12 LINE_FROM=default "$SFP" prepare \
		-s "$CHK/line61" -o "$CHK/wt-61" || return 1
	# ...KSRC does, and the 6.1 series applies to it
	env -u LINE -u LINE_FROM KSRC="$CHK/line61" "$SFP" prepare \
		-o "$CHK/wt-61" || return 1
	git -C "$CHK/wt-61" log --oneline base..patched
	n=$(git -C "$CHK/wt-61" rev-list --count base..patched)
	[ "$n" = 6 ] ||
		{ echo "expected 2 back-outs and 4 patches of the 6.1 series"; return 1; }
}

# versioned_tree DIR SED: a mini tree whose Makefile version SED rewrites,
# committed.
versioned_tree() {
	mini_tree "$1"
	sed -i "$2" "$1/Makefile"
	git -C "$1" -c user.name=t -c user.email=t@t commit -q -am "version"
}

# An unchanged copy of the source: prepared, and the series reproduces it.
good() {
	env KSRC="$CHK/good" "$SFP" prepare -o "$CHK/wt-good" || return 1
	git -C "$CHK/wt-good" log --oneline base..patched
	check_reproduces "$CHK/wt-good"
}

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

# wt_state WT: the refs and notes of a work tree, to see that it did not move.
wt_state() {
	git -C "$1" for-each-ref --format='%(refname) %(objectname)'
	git -C "$1" notes --ref=sfp list
}

# A series naming a missing file stops before making or recording anything.
missing_series_file() {
	expect_error "names 0009-not-there.patch, which is not in" env PATCHES="$CHK/patches-broken" \
		KSRC="$CHK/good" "$SFP" prepare -o "$CHK/wt-broken" || return 1
	if [ -e "$CHK/wt-broken" ] || [ -e "$CHK/wt-broken.new" ]; then
		echo "a work tree was left behind"
		return 1
	fi
	[ -d "$CHK/wt-good/.git" ] || { echo "no prepared mini work tree to reuse"; return 1; }
	local before after
	before=$(wt_state "$CHK/wt-good")
	expect_error "names 0009-not-there.patch, which is not in" env PATCHES="$CHK/patches-broken" \
		KSRC="$CHK/good" "$SFP" prepare -o "$CHK/wt-good" || return 1
	after=$(wt_state "$CHK/wt-good")
	[ "$after" = "$before" ] || { echo "the prepared work tree changed"; return 1; }
	echo "nothing made, nothing recorded"
}

# A work tree on a file system without room for it is refused before
# anything is written there.
small_disk() {
	expect_error "a new work tree needs about 3 GiB free where $CHK/small is" \
		env -u SFP_NO_SPACE_CHECK KSRC="$CHK/good" "$SFP" prepare -o "$CHK/small/wt" || return 1
	local left
	left=$(ls -A "$CHK/small")
	[ -z "$left" ] || { echo "something was written: $left"; return 1; }
	echo "refused; nothing written"
}

# ksrc_missing_keeps_report: a KSRC that is not there is refused before
# the last run's report is touched.
ksrc_missing_keeps_report() {
	local b=$CHK/build-keep logs
	logs=$b/$DEFAULT/logs/patched
	mkdir -p "$logs"
	echo "the last run's report" >"$logs/report.txt"
	expect_error "KSRC=$CHK/nonexistent does not exist" env -u SFP_LINE_BUILD -u LINE \
		BUILD="$b" KSRC="$CHK/nonexistent" "$SFP" run || return 1
	grep -qx "the last run's report" "$logs/report.txt" 2>/dev/null ||
		{ echo "the last report was lost"; return 1; }
	[ ! -e "$logs.prev" ] || { echo "the logs were moved"; return 1; }
	echo "refused; the last report kept"
}

# user_state: what a refused input must leave as it was: the project's
# git status and what the runs made under BUILD: every file of the logs
# and reports, and the work trees and build directories themselves (not
# their contents: a kernel tree is 80k files); make check's own aside.
user_state() {
	git -C "$ROOT" status --porcelain
	find "$BUILD_TOP" -maxdepth 5 \( -path "$CHK" -prune \) -o \
		\( \( -name tree -o -name wt -o -name obj \) -print -prune \) -o -print 2>/dev/null | sort
}

# refused_row INPUT PATTERN CMD...: CMD stops with one error line matching
# PATTERN, and the project's git status and BUILD are as they were; a
# row of $CHK/bad-input.md says so, with the exit status and the line.
refused_row() {
	local input=$1 pat=$2 before after rc=0 line same=yes code
	shift 2
	before=$(user_state | sha256sum)
	expect_error "$pat" "$@" || rc=$?
	after=$(user_state | sha256sum)
	[ "$after" = "$before" ] || same=NO
	line=$(grep 'error:' "$CHK/err" | head -n 1 | sed "s#$ROOT/##g; s#$CHK/#CHK/#g; s#|#\\\\|#g")
	code=$(cat "$CHK/rc")
	input=$(sed "s#$CHK/#CHK/#g; s#$ROOT/##g" <<<"$input")
	printf '| %s | %s | %s | %s |\n' "\`$input\`" "$code" "$line" "$same" >>"$CHK/bad-input.md"
	[ "$rc" = 0 ] || return 1
	[ "$same" = yes ] || { echo "git status or $BUILD_TOP changed"; return 1; }
}

# refused_before_work PATTERN VAR=VALUE...: ./sfp run with those
# variables stops with one error line matching PATTERN, and makes nothing
# under its BUILD nor anywhere else.
refused_before_work() {
	local pat=$1 b=$CHK/build-bad
	shift
	rm -rf "$b"
	refused_row "$* make" "$pat" env -u SFP_LINE_BUILD BUILD="$b" "$@" "$SFP" run || return 1
	if [ -e "$b" ]; then
		echo "sfp run made $b:"
		find "$b" | head -n 3
		return 1
	fi
	echo "refused before any work: $*"
}

# bad_variables: every variable the main job takes and the bad flags of
# the other targets, refused in one line before any work; the table of
# them is $CHK/bad-input.md.
bad_variables() {
	local rc=0
	printf '| input | exit | the one line | git status and build/ unchanged |\n|---|---|---|---|\n' \
		>"$CHK/bad-input.md"
	refused_before_work "KSRC=$CHK/nonexistent does not exist" KSRC="$CHK/nonexistent" || rc=1
	refused_before_work "KSRC=$CHK/notkernel is not a kernel source tree" KSRC="$CHK/notkernel" || rc=1
	refused_before_work "LINE=4.19: no series" LINE=4.19 || rc=1
	refused_before_work "unknown topology 'nosuch'" TOPOLOGY=nosuch || rc=1
	refused_before_work "topology sock4x2 has 4 NUMA nodes, but kernel kind 'main'" TOPOLOGY=sock4x2 || rc=1
	refused_before_work "SMP=abc: a number of vCPUs" SMP=abc || rc=1
	refused_before_work "SMP=16: a number of vCPUs from 1 to 8" SMP=16 || rc=1
	refused_before_work "MEM=lots: a memory size" MEM=lots || rc=1
	refused_before_work "ACCEL=hvf: one of tcg, kvm, auto" ACCEL=hvf || rc=1
	refused_before_work "BOOT_TIMEOUT=-5: a timeout" BOOT_TIMEOUT=-5 || rc=1
	refused_before_work "JOBS=0: a number of build jobs" JOBS=0 || rc=1
	refused_row "./sfp run -K fast" "unknown kernel kind 'fast'" "$SFP" run -K fast || rc=1
	refused_row "sfp stress -m abc" "-m wants a whole number of minutes > 0, not 'abc'" \
		"$SFP" stress -m abc || rc=1
	refused_row "sfp stress -t sock4x2 (kind debug)" "kernel kind 'debug' is built without" \
		"$SFP" stress -t sock4x2 || rc=1
	refused_row "scripts/bench.sh -t 'smp2 mesh'" "unknown topology 'mesh'" \
		"$ROOT/scripts/bench.sh" -t "smp2 mesh" || rc=1
	refused_row "sfp mutate nosuch" "unknown variant 'nosuch'" "$SFP" mutate nosuch || rc=1
	refused_row "sfp mutate -k 0" "-k needs a number of boots" "$SFP" mutate -k 0 || rc=1
	refused_row "BOOT_BACKEND=vm sfp boot" "-B wants qemu, lava or lava-server, not 'vm'" \
		env BOOT_BACKEND=vm "$SFP" boot -k "$ROOT/sfp" -i "$ROOT/sfp" -l "$CHK/logs-bad" || rc=1
	cat "$CHK/bad-input.md"
	return "$rc"
}

# sfp_unit_tests: the harness tool's own unit tests.
sfp_unit_tests() {
	python3 -m unittest discover -s "$ROOT/harness/tests" -t "$ROOT/harness/tests" 2>&1
}

# scripts_cases: shellcheck, --help, and the bad inputs, each giving one
# error line and leaving the user's tree as it was. Run it in a subshell
# with the default line selected (use_line LINE check): it sets BUILD to a
# scratch directory.
scripts_cases() {
	local sh ls l pkg no_ccache no_qemu
	stage_start "project: scripts and bad input"
	ls=$(lines)
	need shellcheck shellcheck
	# Every script and every sourced library, with .shellcheckrc's
	# checks (masked return values among them).
	mapfile -t sh < <(grep -rlE '^#!.*(ba)?sh|^# shellcheck shell=' "$ROOT/scripts" "$ROOT/tests" "$ROOT/.ci" || true)
	t shellcheck shellcheck -x "${sh[@]}"
	t help_on_every_script help_all
	t sfp_unit_tests sfp_unit_tests
	t sfp_data_loads "$SFP" data
	t prose_counts_match_data "$SFP" prose
	t bad_arguments_rejected expect_error "unrecognized arguments: --bogus" "$SFP" run --bogus
	t bench_bad_vcpus_rejected expect_error "unknown topology 'smp16'" "$ROOT/scripts/bench.sh" -s "2 16"
	t bench_bad_topology_rejected expect_error "unknown topology 'mesh'" "$ROOT/scripts/bench.sh" -t "smp2 mesh"

	# Scratch work trees go under $CHK, never over the real one: BUILD is
	# this stage's (tests/check.sh runs it in a subshell).
	export BUILD=$CHK/build
	t no_tree expect_error "does not exist" env KSRC="$CHK/nonexistent" "$SFP" prepare
	mkdir -p "$CHK/notkernel"
	git -C "$CHK/notkernel" init -q
	echo hello >"$CHK/notkernel/README"
	t not_a_kernel_tree unchanged "$CHK/notkernel" expect_error "is not a kernel source tree" \
		env KSRC="$CHK/notkernel" "$SFP" prepare
	t ksrc_missing_keeps_last_report ksrc_missing_keeps_report
	t bad_variables_refused_before_work bad_variables

	if [ -d "$WT/.git" ]; then
		mini_tree "$CHK/dirty"
		echo "/* a user's edit */" >>"$CHK/dirty/kernel/sched/fair.c"
		t dirty_user_tree unchanged "$CHK/dirty" expect_error "uncommitted changes" \
			env KSRC="$CHK/dirty" "$SFP" prepare -o "$CHK/wt-dirty"

		mini_tree "$CHK/drift"
		# Context drift around update_tg_load_avg(): patch 1 can neither apply
		# nor reverse-apply, while patch 2 still reverse-applies.
		sed -i 's/No need to update load_avg for root_task_group as it is not used./Root: nothing reads its load_avg./' \
			"$CHK/drift/kernel/sched/fair.c"
		git -C "$CHK/drift" -c user.name=t -c user.email=t@t commit -q -am "drift"
		t patch_neither_applies_nor_contained unchanged "$CHK/drift" neither
		t patch_conflict_named unchanged "$CHK/drift" conflict

		# The line follows the source's version, and a version with no line
		# is refused with the lines there are.
		versioned_tree "$CHK/line510" 's/^VERSION = .*/VERSION = 5/; s/^PATCHLEVEL = .*/PATCHLEVEL = 10/'
		t line_without_series_refused unchanged "$CHK/line510" expect_error \
			"Linux 5.10.[0-9]* .* is on the 5.10 line, which has no series: lines are $ls" \
			env -u LINE -u LINE_FROM KSRC="$CHK/line510" "$SFP" prepare -o "$CHK/wt-510"
		# A version between lines names the nearest one below it.
		versioned_tree "$CHK/line613" 's/^PATCHLEVEL = .*/PATCHLEVEL = 13/'
		t line_between_names_nearest unchanged "$CHK/line613" expect_error \
			"Linux 6.13.[0-9]* .* no series: .* the nearest is 6.12, LINE=6.12 forces it" \
			env -u LINE -u LINE_FROM KSRC="$CHK/line613" "$SFP" prepare -o "$CHK/wt-613"
		# A line without a Debian package and without SFP_SRC_<LINE> names
		# both ways to give it a source.
		for l in $ls; do
			pkg=$(line_field "$l" debian_package)
			[ -z "$pkg" ] || continue
			t line_without_source_named expect_error \
				"no source for the $l line: no Debian package carries $l: give a tree as KSRC=.* or SFP_SRC_${l//./_}=" \
				env -u KSRC -u "SFP_SRC_${l//./_}" LINE="$l" LINE_FROM=LINE "$SFP" prepare -o "$CHK/wt-nosrc"
			break
		done
		t line_unknown_refused expect_error "LINE=4.19: no series patches/4.19/series; lines are $ls" \
			env LINE=4.19 "$SFP" prepare -o "$CHK/wt-419"
		if [ -d "$BUILD_TOP/6.1/tree/.git" ]; then
			mini_tree "$CHK/line61" "$BUILD_TOP/6.1/tree"
			t line_follows_the_source unchanged "$CHK/line61" line61
		fi

		mini_tree "$CHK/good"
	else
		for n in dirty_user_tree patch_neither_applies_nor_contained series_reproduces_source_mini_tree; do
			printf 'project\tcheck\t%s\tFAIL\tno work tree to take files from\n' "$n" >>"$RESULTS"
		done
	fi

	no_ccache=$(path_without ccache)
	no_qemu=$(path_without qemu-system-x86_64)
	t missing_package expect_error "ccache not found: install the Debian package 'ccache'" \
		env PATH="$no_ccache" "$SFP" build-kernel -t "$CHK/mini-src-$DEFAULT" -o "$CHK/obj-x"
	: >"$CHK/fake-bzImage"
	: >"$CHK/fake-initrd"
	t qemu_not_installed expect_error "qemu-system-x86_64 not found: install the Debian package 'qemu-system-x86'" \
		env PATH="$no_qemu" "$SFP" boot \
		-k "$CHK/fake-bzImage" -i "$CHK/fake-initrd" -l "$CHK/logs-x"
	[ ! -d "$WT/.git" ] || t series_reproduces_source_mini_tree unchanged "$CHK/good" good

	# A series that names a file that is not there stops before anything is
	# applied or recorded: for a new work tree and for a prepared one.
	mkdir -p "$CHK/patches-broken"
	cp "$PATCHES_TOP/$DEFAULT"/* "$CHK/patches-broken/"
	awk '{ print } /\.patch$/ && !done { print "0009-not-there.patch"; done = 1 }' \
		"$PATCHES_TOP/$DEFAULT/series" >"$CHK/patches-broken/series"
	t series_missing_file_stops_early missing_series_file

	# A 16 MiB tmpfs stands for a full disk; mounting one needs root.
	mkdir -p "$CHK/small"
	if mount -t tmpfs -o size=16m sfp-small "$CHK/small" 2>/dev/null; then
		t no_space_refused small_disk
		umount "$CHK/small"
	else
		printf 'project\tcheck\tno_space_refused\tSKIP\t%s\n' "cannot mount a small tmpfs (needs root)" >>"$RESULTS"
		echo "  skip   check.no_space_refused: cannot mount a small tmpfs (needs root)"
	fi
	stage_end
}
