# shellcheck shell=bash
# Common helpers for sched-fastpath scripts. Sourced, never run.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PATCHES=${PATCHES:-$ROOT/patches}
PROG=$(basename "$0")

# Known-good sources, for error messages.
# shellcheck disable=SC2034
KNOWN_GOOD="Linux 6.12.117 (Debian linux-source-6.12 6.12.117-1~deb12u1)"

die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}

say() {
	printf '%s: %s\n' "$PROG" "$*" >&2
}

# need CMD PACKAGE: fail with a one-line hint when a tool is missing.
need() {
	command -v "$1" >/dev/null 2>&1 ||
		die "$1 not found: install the Debian package '$2' (or run 'make setup' as root)"
}

# Wall-clock stage timing: stage_start NAME; ...; stage_end
stage_start() {
	STAGE_NAME=$1
	STAGE_T0=$(date +%s)
	printf '==> %s\n' "$STAGE_NAME" >&2
}

stage_end() {
	local dt=$(($(date +%s) - STAGE_T0))
	printf '<== %s: %ds\n' "$STAGE_NAME" "$dt" >&2
	if [ -n "${STAGE_TIMES:-}" ]; then
		printf '%s\t%s\n' "$STAGE_NAME" "$dt" >>"$STAGE_TIMES"
	fi
}

# is_kernel_tree DIR: a Linux source tree with the files the series touches.
is_kernel_tree() {
	[ -f "$1/Makefile" ] && [ -f "$1/kernel/sched/fair.c" ] &&
		grep -q '^PATCHLEVEL = ' "$1/Makefile"
}

# kernel_version DIR: "6.12.117" from the top-level Makefile.
kernel_version() {
	awk '/^VERSION =/ {v=$3} /^PATCHLEVEL =/ {p=$3} /^SUBLEVEL =/ {s=$3}
	     /^EXTRAVERSION =/ {e=$3} END {printf "%s.%s.%s%s\n", v, p, s, e}' "$1/Makefile"
}

# series_files: the patch files named in patches/series, in order.
series_files() {
	local p
	[ -f "$PATCHES/series" ] || die "no series file at $PATCHES/series"
	# shellcheck disable=SC2013 # patch names have no spaces
	for p in $(sed -e 's/#.*//' "$PATCHES/series"); do
		[ -f "$PATCHES/$p" ] || die "patches/series names $p, which is not in $PATCHES"
		printf '%s\n' "$PATCHES/$p"
	done
}

# series_hash: identifies the series content, to know when to re-apply.
series_hash() {
	series_files | xargs cat | sha256sum | cut -c1-16
}
