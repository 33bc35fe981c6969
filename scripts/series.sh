# shellcheck shell=bash disable=SC2034 # the SERIES_* arrays are its callers' results
# SPDX-License-Identifier: GPL-2.0
set -o pipefail # as in every script that sources lib.sh
# The series library for the shell scripts, sourced by scripts/lib.sh:
# each function asks `sfp series` (harness/sfp_series.py, the one
# implementation: read a line's series, back its features out of a
# source, apply it, say per patch what happened) and takes its answers as
# shell variables. The series is $PATCHES/series; THREEWAY_FROM, set or
# not, goes along.

# sfp_series WHAT ARGS...: sfp series for the series in $PATCHES.
sfp_series() {
	THREEWAY_FROM=${THREEWAY_FROM:-} "$SFP" series --patches "$PATCHES" "$@"
}

# load_series: the arrays SERIES (the patch files, in order) and
# SERIES_ROLE (per patch: prereq, feature or test, from the section
# comment above it). Call it in the calling shell, never inside $(...):
# a bad series stops the caller before anything is applied or recorded.
load_series() {
	local out
	out=$(sfp_series load) || exit 1
	eval "$out"
}

# series_hash: identifies the series' content, to know when to re-apply.
series_hash() { sfp_series hash; }

# patch_subject FILE: the Subject of a git format-patch file, unfolded
# and without its [PATCH n/m] prefix.
patch_subject() { sfp_series subject "$1"; }

# in_rev WT REV PATCH: PATCH reverse-applies to REV of the git tree WT
# (REV contains it), tried in a scratch index.
in_rev() { sfp_series in-rev "$@"; }

# patch_states WT: per patch, its role and what the work tree WT did with
# it, derived from WT's 'base' (tab-separated).
patch_states() { sfp_series states "$1"; }

# series_paths [DIR]: the paths the patches in DIR (default $PATCHES)
# change and do not create, and the top Makefile; sorted.
series_paths() { PATCHES=${1:-$PATCHES} sfp_series paths; }

# series_mini_tree SOURCE DIR [REV [EXTRA...]]: those files of SOURCE (a
# tarball, a git checkout at REV, a directory) as a git tree with one
# commit on branch 'base'; EXTRA paths too (a git checkout only).
series_mini_tree() { sfp_series mini-tree "$@"; }

# features_end WT: the commit of WT's 'patched' after the last feature patch.
features_end() { sfp_series features-end "$1"; }

# source_fixed WT: the tree id of WT's 'base' plus the prerequisite
# fixes it lacks, made in a scratch index. Fails if one does not apply.
source_fixed() { sfp_series source-fixed "$1"; }

# series_back_out DIR: on DIR's checked-out branch, back out, newest
# first, every feature patch DIR contains, one commit each. Per feature
# patch i, SERIES_STATE[i]: contained, drifted (three-way merge), absent
# or stuck (SERIES_CONFLICTS[i]: the files a merge conflicted in; DIR
# left as it was). SERIES_BACKED_OUT counts the commits. Status 1 only
# when git fails.
series_back_out() {
	local out
	out=$(sfp_series back-out "$1") || return 1
	eval "$out"
}

# series_apply DIR [ROLE...]: on DIR's checked-out branch, git am each
# patch of the roles ROLE (default: all), in order. Per patch i,
# SERIES_HOW[i]: am, 3way (SERIES_WHERE[i]: the first hunk that did not
# fit) or contained (a prerequisite DIR has: skipped). SERIES_PREREQ_END:
# the commit after the last prerequisite. A patch that does not go in
# leaves DIR at the commit before it and returns 1 with SERIES_FAILED
# (its index), SERIES_FAIL_WHERE ("FILE at line N (HUNK)"),
# SERIES_FAIL_CONFLICTS and SERIES_FAIL_ERR (git's first error line).
series_apply() {
	local out rc=0
	out=$(sfp_series apply "$@") || rc=$?
	eval "$out"
	return "$rc"
}
