# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
set -o pipefail # as in tests/check.sh, which sources this
# tests/check.sh's framework: result recording, running for a line, and
# the checks on a user's tree. Sourced after scripts/lib.sh, with CHK,
# RESULTS and BUILD_TOP set; never run.

# t NAME CMD...: one test case of suite $SUITE (check, or check-LINE in a
# line's subshell); its output goes to $CHK/$SUITE.NAME.log.
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

# use_line LINE [SUITE]: the series and work tree of LINE, and the suite
# name (check-LINE unless SUITE). Only in a subshell of its own, so that
# nothing after it sees another line's.
use_line() {
	# shellcheck disable=SC2034 # read by load_series and the cases
	PATCHES=$PATCHES_TOP/$1
	WT=$BUILD_TOP/$1/tree
	SUITE=${2:-check-$1}
	load_series
}

# expect_error PATTERN CMD...: CMD fails with one 'error:' line matching
# PATTERN on stderr.
expect_error() {
	local pat=$1 rc=0 n
	shift
	"$@" >"$CHK/out" 2>"$CHK/err" || rc=$?
	echo "$rc" >"$CHK/rc"
	cat "$CHK/err"
	[ "$rc" != 0 ] || { echo "expected a failure, got exit 0"; return 1; }
	n=$(grep -c 'error:' "$CHK/err" || true)
	[ "$n" = 1 ] || { echo "expected exactly one error line"; return 1; }
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
	local dir=$1 before after head n
	shift
	before=$(tree_state "$dir")
	"$@" || return 1
	after=$(tree_state "$dir")
	[ "$after" = "$before" ] || { echo "user tree $dir changed"; return 1; }
	head=$(git -C "$dir" rev-parse --short HEAD)
	n=$(git -C "$dir" status --porcelain | wc -l)
	echo "user tree unchanged: $head, $n modified"
}

# mini_tree DIR [WT]: a small kernel-like git tree in DIR, a clone of
# series_mini_tree of the source (the work tree's 'base', WT or the
# default line's): the files its line's series changes, enough for the
# series to apply. The first one per line is kept in $CHK/mini-src-LINE.
mini_tree() {
	local dir=$1 wt=${2:-$WT} line src
	line=$(basename "$(dirname "$wt")")
	src=$CHK/mini-src-$line
	[ -d "$src/.git" ] || PATCHES=$PATCHES_TOP/$line series_mini_tree "$wt" "$src" base
	git clone -q "$src" "$dir"
}
