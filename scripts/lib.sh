# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Common helpers for sched-fastpath scripts. Sourced, never run, by
# scripts that all set -euo pipefail; set here for shellcheck too.
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROG=$(basename "$0")
PATCHES_TOP=$ROOT/patches

die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}

say() {
	printf '%s: %s\n' "$PROG" "$*" >&2
}

# split_lines ARRAY TEXT: TEXT's lines into the array named ARRAY; no
# element for an empty TEXT. Callers take TEXT from $(...) on a line of
# its own, so that a failing command is not masked.
split_lines() {
	local -n _sl_a=$1
	_sl_a=()
	[ -z "$2" ] || mapfile -t _sl_a <<<"$2"
}

# need CMD PACKAGE: fail with a one-line hint when a tool is missing.
need() {
	command -v "$1" >/dev/null 2>&1 ||
		die "$1 not found: install the Debian package '$2' (or run 'make setup' as root)"
}

# need_space DIR GIB WHAT: fail with a one-line message when the file
# system that holds DIR (or its nearest existing parent) has less than
# GIB GiB free. SFP_NO_SPACE_CHECK=1 skips the check.
need_space() {
	local d=$1 have
	[ "${SFP_NO_SPACE_CHECK:-0}" = 0 ] || return 0
	while [ ! -e "$d" ]; do d=$(dirname "$d"); done
	have=$(df -Pk "$d" | awk 'NR == 2 { print int($4 / 1048576) }')
	[ "${have:-0}" -ge "$2" ] ||
		die "$3 needs about $2 GiB free where $d is; there are $have GiB (df -h $d): free some, or point BUILD= (or TMPDIR=) elsewhere; SFP_NO_SPACE_CHECK=1 runs anyway"
}

# Wall-clock stage timing: stage_start NAME; ...; stage_end
stage_start() {
	STAGE_NAME=$1
	STAGE_T0=$EPOCHSECONDS
	printf '==> %s\n' "$STAGE_NAME" >&2
}

stage_end() {
	local dt=$((EPOCHSECONDS - STAGE_T0))
	printf '<== %s: %ds\n' "$STAGE_NAME" "$dt" >&2
	if [ -n "${STAGE_TIMES:-}" ]; then
		printf '%s\t%s\n' "$STAGE_NAME" "$dt" >>"$STAGE_TIMES"
	fi
}

# ccache_counts: "HITS MISSES FILES" of ccache's statistics as they
# stand (a hit served from the cache, a miss compiled, the files in the
# cache), or "0 0 0" without ccache. Two readings bracket a run: their
# difference is what it compiled (and what anything else on the machine
# compiled meanwhile).
ccache_counts() {
	local st
	st=$(ccache --print-stats 2>/dev/null) || st=
	awk -F'\t' '$1 ~ /^(direct|preprocessed)_cache_hit$/ { h += $2 }
		$1 == "cache_miss" { m += $2 }
		$1 == "files_in_cache" { f += $2 }
		END { printf "%d %d %d\n", h, m, f }' <<<"$st"
}

# first_splat CONSOLE_LOG: the first splat line without its timestamp, or
# nothing (also when the log is missing). What counts as a splat is
# defined once, in harness/sfp_results.py (sfp get splat-re).
first_splat() {
	grep -m1 -E "$(sfp get splat-re)" "$1" 2>/dev/null | tr -d '\r' | sed 's/^\[[ 0-9.]*\] //' || true
}

# The identity of every commit the harness makes in a work tree.
# shellcheck disable=SC2034 # used by the scripts that source this file
GIT_ID=(-c user.name=sched-fastpath -c user.email=sched-fastpath@example.org)

# The layout of a line's build directory B (BUILD), for the shell
# scripts; harness/sfp_run.py has the same functions (its unit tests
# check that the two agree): kernel NAME's logs, its worktree (a build from a ref, sfp run
# -r) and its build directory (O=), two levels below that worktree's
# source for a -r build, as B/obj/NAME is below B/tree (so that ccache's
# base_dir at B gives every build the same relative paths).
kernel_logs() { printf '%s/logs/%s\n' "$1" "$2"; }
kernel_wt() { printf '%s/wt/%s/tree\n' "$1" "$2"; }
# kernel_obj B NAME [ref]: ref for a -r build, in its worktree.
kernel_obj() {
	if [ "${3:-}" = ref ]; then
		printf '%s/wt/%s/obj/%s\n' "$1" "$2" "$2"
	else
		printf '%s/obj/%s\n' "$1" "$2"
	fi
}

# is_kernel_tree DIR: a Linux source tree with the files the series touches.
is_kernel_tree() {
	[ -f "$1/Makefile" ] && [ -f "$1/kernel/sched/fair.c" ] &&
		grep -q '^PATCHLEVEL = ' "$1/Makefile"
}

# kernel_version DIR: "6.12.117" from the top-level Makefile.
kernel_version() {
	makefile_version <"$1/Makefile"
}

# makefile_version: "6.12.117" from a top-level kernel Makefile on stdin.
makefile_version() {
	awk '/^VERSION =/ {v=$3} /^PATCHLEVEL =/ {p=$3} /^SUBLEVEL =/ {s=$3}
	     /^EXTRAVERSION =/ {e=$3} END {if (v != "") printf "%s.%s.%s%s\n", v, p, s, e}'
}

# source_version SRC: the version of a kernel source directory, git
# checkout or tarball, without extracting it (empty if none is found).
source_version() {
	local top
	if [ -d "$1" ]; then
		[ ! -f "$1/Makefile" ] || makefile_version <"$1/Makefile"
	elif [ -f "$1" ]; then
		top=$(tar -tf "$1" 2>/dev/null | head -n 1) || true
		top=${top%%/*}
		[ -z "$top" ] || { tar -xOf "$1" --occurrence=1 "$top/Makefile" 2>/dev/null || true; } | makefile_version
	fi
}

# sfp ARGS...: the harness tool, which reads sfp.toml (the project's
# facts: lines, kinds, topologies, expectations). Its refusals are one
# 'sfp: error:' line on stderr, so callers stop without adding their own.
SFP=$ROOT/sfp
sfp() { "$SFP" "$@"; }

# lines: the kernel lines the project has a series for (sfp.toml).
lines() {
	sfp get lines
}

# line_field LINE FIELD: one fact of a line (sfp get --help: known_good,
# debian_package, config_absent, kunit_header, mutation_table), or nothing.
line_field() {
	sfp get line "$1" "$2"
}

# line_source LINE: the source taken for LINE when KSRC is not given:
# \$SFP_SRC_<LINE> (6.19: SFP_SRC_6_19), else the tarball of the line's
# Debian package, else nothing.
line_source() {
	sfp get line "$1" source
}

# line_source_hint LINE: how to give LINE a source, for messages.
line_source_hint() {
	local pkg
	pkg=$(line_field "$1" debian_package)
	if [ -n "$pkg" ]; then
		echo "install $pkg (make setup), or give a tree as KSRC=/path/to/linux or SFP_SRC_${1//./_}=/path/to/linux"
	else
		echo "no Debian package carries $1: give a tree as KSRC=/path/to/linux or SFP_SRC_${1//./_}=/path/to/linux"
	fi
}

# select_line: set LINE (say 6.1), LINE_FROM, the series directory
# PATCHES, the build directory BUILD, the line's default source
# DEFAULT_SRC (line_source; empty if it has none) and KNOWN_GOOD, from
# 'sfp line-env' (LINE, else the version of $KSRC, else sfp.toml's
# default_line; BUILD is \$BUILD/LINE, default build/LINE). A source
# that does not exist or has no version is left to the caller to report;
# a version with no line stops here. Scripts that call scripts inherit
# LINE and BUILD.
select_line() {
	local assignments
	assignments=$(sfp line-env) || exit 1
	eval "$assignments"
	PATCHES=${PATCHES:-$PATCHES_TOP/$LINE}
	SFP_LINE_BUILD=$BUILD
	export LINE LINE_FROM BUILD SFP_LINE_BUILD
}

# has_sched_debug_race TREE: TREE's avg_vruntime() writes cfs_rq state
# (update_zero_vruntime()) and print_cfs_rq() still calls it after
# dropping the rq lock, i.e. it lacks upstream e08d007f9d81.
has_sched_debug_race() {
	grep -q 'update_zero_vruntime(cfs_rq, delta)' "$1/kernel/sched/fair.c" 2>/dev/null &&
		grep -q 'SPLIT_NS(avg_vruntime(cfs_rq))' "$1/kernel/sched/debug.c" 2>/dev/null
}

# default_fragments TREE: the config fragments a kernel of TREE gets, one
# path a line in merge order (sfp fragments --help; the rule is
# harness/sfp_run.py default_fragments).
default_fragments() {
	sfp fragments "$1"
}

# Work tree metadata lives in git: the ref refs/sfp/prepared (where
# 'patched' stood when it was prepared) and notes under refs/notes/sfp:
# on 'base' "source <id>" and "version <x.y.z>", on refs/sfp/prepared
# "series <hash>". wt_meta WT KEY prints one value (empty if none).
wt_meta() {
	local rev=base
	[ "$2" != series ] || rev=refs/sfp/prepared
	{ git -C "$1" notes --ref=sfp show "$rev" 2>/dev/null || true; } | sed -n "s/^$2 //p"
}

select_line

# Kinds of kernel and guest topologies: records of sfp.toml. Each helper
# stops the script (sfp's one error line names the known ones) when NAME
# is not a record; call it once outside $(...) first, or as VAR=$(...) ||
# exit.

# kernel_kind_fragments NAME TREE: the config fragments of kind NAME for
# TREE, one path a line, in merge order.
kernel_kind_fragments() {
	sfp fragments -K "$1" "$2" || exit 1
}

# kernel_kind_patches NAME: its patches, one path a line.
kernel_kind_patches() {
	local p ps
	ps=$(sfp get kind "$1" patches) || exit 1
	for p in $ps; do printf '%s\n' "$ROOT/$p"; done
}

# kernel_kind_append NAME: its command line (may be empty).
kernel_kind_append() {
	sfp get kind "$1" append || exit 1
}

# topology NAME: succeeds when NAME is a topology.
topology() {
	sfp get topology "$1" vcpus >/dev/null || exit 1
}
# topology_vcpus NAME: its vCPU count (the first number of -smp).
topology_vcpus() {
	sfp get topology "$1" vcpus || exit 1
}
# topology_qemu NAME MEM: its QEMU options, one per line (-smp SPEC, and
# per NUMA node a memory backend of MEM/nodes MiB and a -numa node).
topology_qemu() {
	sfp get topology "$1" qemu "$2" || exit 1
}

# config_unmet [--strict] CONFIG FRAGMENT...: the options the fragments
# ask for that the .config CONFIG does not have as asked, one per line
# (sfp config-unmet --help; harness/sfp_build.py).
config_unmet() {
	sfp config-unmet "$@"
}

# The series library: load_series, series_back_out, series_apply, ...
# shellcheck source=scripts/series.sh
. "$ROOT/scripts/series.sh"
