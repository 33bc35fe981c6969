#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the line's series the ways the kernel test robot would: patch by
# patch, in other configs, with W=1 and sparse, for arm64. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

VARIANTS=$ROOT/kernel-config/robot
CROSS=aarch64-linux-gnu-

variant_names() {
	local v
	for v in "$VARIANTS"/*.config; do
		v=${v##*/}
		printf '%s ' "${v%.config}"
	done
}

usage() {
	local names
	names=$(variant_names)
	cat <<EOF
Usage: $PROG [--quick] [-o TABLE]

Build the series of the line's prepared work tree (\$BUILD/tree, here
$BUILD/tree; make prepare) as the kernel test robot would, and write a
table of what built and what did not:
  bisect    series-base (the features backed out), then each patch of the
            series on top of the ones before it, in the main job's config
            (the config fragments of sfp build-kernel);
  configs   patched in the main config with each fragment of
            kernel-config/robot/ merged last ($names).
            A fragment whose options the line's Kconfig cannot give (an
            option that is gone, a bool asked as a module) is 'n/a' with
            the option named, never built and never a pass;
  warnings  series-base and patched with W=1 and sparse (C=2) over
            kernel/sched/: a finding of patched's that series-base does not
            have (file and message, line numbers left out) is new;
  arm64     patched in the main config, cross built with ${CROSS}gcc.

What is built: the kernel (bzImage, arm64 Image); with --quick, the
kernel/sched/ objects only (a compile, no link), which is what make check
runs. One git worktree (\$BUILD/wt/robot/tree) and one build directory per
architecture (\$BUILD/wt/robot/obj/ARCH), so that each build after the
first recompiles only what changed; ccache as for every kernel here.

Writes TABLE (default \$BUILD/robot/table.md) and the logs beside it,
\$BUILD/robot/NN-NAME.log. Exit status 1 if a build fails or a warning
is new. Environment: JOBS (default nproc+1).
EOF
}

QUICK=
TABLE=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; shift ;;
	-o) TABLE=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done

TREE=$BUILD/tree
[ -d "$TREE/.git" ] || die "no prepared work tree at $TREE (make prepare, or ./sfp prepare)"
for r in series-base patched; do
	git -C "$TREE" rev-parse -q --verify "$r" >/dev/null ||
		die "$TREE has no 'series-base' and 'patched' (prepare it again: ./sfp prepare)"
done
for t in gcc:gcc make:make ccache:ccache sparse:sparse "${CROSS}gcc:gcc-aarch64-linux-gnu"; do
	need "${t%%:*}" "${t#*:}"
done
OUT=$BUILD/robot
WT=$(kernel_wt "$BUILD" robot)
# One build directory per architecture beside the worktree, as
# kernel_obj B NAME ref puts a -r build (obj/ARCH instead of obj/NAME).
OBJTOP=$(dirname "$WT")/obj
TABLE=${TABLE:-$OUT/table.md}
JOBS=${JOBS:-$(($(nproc) + 1))}
mkdir -p "$OUT" "$OBJTOP"
rm -f "$OUT"/*.log "$OUT"/*.findings
# The same relative layout as every -r build of ./sfp run (source
# two levels above the build directory), so ccache shares their objects.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(realpath "$BUILD")}

t_all=$EPOCHSECONDS
if [ ! -e "$WT/.git" ]; then
	need_space "$BUILD" 2 "the robot's worktree and builds"
	say "checking out a worktree of $TREE at $WT"
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add -q --detach "$WT" patched
fi

# checkout REV: the robot's worktree at REV; only the files that differ
# are rewritten, so the builds stay incremental.
checkout() {
	git -C "$WT" checkout -q -f --detach "$1"
	git -C "$WT" clean -q -fdx
}

# arch_env ARCH: the make variables of a build for ARCH.
arch_args() {
	case $1 in
	x86_64) AARGS=(ARCH=x86_64) ;;
	arm64) AARGS=(ARCH=arm64 "CROSS_COMPILE=$CROSS") ;;
	esac
}

# kmake ARCH LOG MAKE-ARGS...: make in the robot's worktree for ARCH;
# output to LOG.
kmake() {
	local arch=$1 log=$2 cc=gcc
	shift 2
	[ "$arch" = x86_64 ] || cc=${CROSS}gcc
	arch_args "$arch"
	make -C "$WT" O="$OBJTOP/$arch" "${AARGS[@]}" CC="ccache $cc" HOSTCC="ccache gcc" \
		KBUILD_BUILD_USER=sched-fastpath KBUILD_BUILD_HOST=robot -j"$JOBS" "$@" >>"$log" 2>&1
}

# make_config ARCH NAME FRAGMENT...: merge the fragments onto allnoconfig
# in the worktree as it is, save the result as $OUT/NAME.config.
make_config() {
	local arch=$1 name=$2 log=$OUT/config-$2.log
	shift 2
	mkdir -p "$OBJTOP/$arch"
	arch_args "$arch"
	(cd "$WT" && env "${AARGS[@]}" scripts/kconfig/merge_config.sh -n -O "$OBJTOP/$arch" "$@") \
		>"$log" 2>&1 || { tail -n 5 "$log" >&2; die "merge_config.sh failed for $name (log: $log)"; }
	cp "$OBJTOP/$arch/.config" "$OUT/$name.config"
}

ROWS=()
FAILED=0
STEP=0
# build ARCH CONFIG-NAME WHAT [TARGET [MAKE-ARGS...]]: build TARGET (by
# default the kernel, or kernel/sched/ with --quick) of the worktree as
# it is with \$OUT/CONFIG-NAME.config; one row of the table.
build() {
	local arch=$1 cfg=$2 what=$3 target=${4:-} log t0 dt res
	shift 3
	[ $# = 0 ] || shift
	STEP=$((STEP + 1))
	log=$OUT/$(printf '%02d' "$STEP")-$cfg-$(git -C "$WT" rev-parse --short HEAD).log
	if [ -n "$target" ]; then
		:
	elif [ -n "$QUICK" ]; then
		target=kernel/sched/
	elif [ "$arch" = x86_64 ]; then
		target=bzImage
	else
		target=Image
	fi
	say "[$STEP] $what, $cfg config, $arch: make $* $target"
	: >"$log"
	cp "$OUT/$cfg.config" "$OBJTOP/$arch/.config"
	t0=$EPOCHSECONDS
	if kmake "$arch" "$log" olddefconfig && kmake "$arch" "$log" "$@" "$target"; then
		dt=$((EPOCHSECONDS - t0))
		res="built ($target, ${dt}s)"
	else
		res="FAILED: $(grep -m 1 -E 'error:|Error [0-9]' "$log" | sed -E 's#^[^ ]*/(kernel|include|arch)/#\1/#' | cut -c1-160)"
		FAILED=1
		say "  $res (log: $log)"
	fi
	ROWS+=("| $what | $cfg | $arch | $res |")
	LAST_LOG=$log
}

# findings LOG: the W=1 and sparse findings of a build log, without paths
# above the tree or line and column numbers, sorted.
findings() {
	grep -E '^[^ ]+:[0-9]+:([0-9]+:)? (warning|error): ' "$1" |
		sed -E 's#^[^ :]*/((kernel|include|arch|lib|mm|fs)/)#\1#; s#^([^ :]+):[0-9]+:([0-9]+:)? #\1: #' |
		sort || true
}

NPATCHES=$(git -C "$TREE" rev-list --count series-base..patched)
say "line $LINE, work tree $TREE: $NPATCHES patches on series-base${QUICK:+, --quick: kernel/sched/ only}"

# The configs, all made from patched (whose fragments name the tests'
# own options; an older commit's olddefconfig drops what it lacks).
checkout patched
f=$(default_fragments "$WT")
split_lines FRAGS "$f"
make_config x86_64 main "${FRAGS[@]}"
NA=()
for v in "$VARIANTS"/*.config; do
	name=$(basename "$v" .config)
	make_config x86_64 "$name" "${FRAGS[@]}" "$v"
	# An option asked off must be listed off: one the line does not have
	# at all is not met either, since the build would be the main
	# config's again.
	miss=$(config_unmet --strict "$OUT/$name.config" "$v")
	if [ -n "$miss" ]; then
		NA+=("| patched | $name | x86_64 | n/a: not possible on this line: ${miss//$'\n'/; } |")
		rm -f "$OUT/$name.config"
	fi
done
make_config arm64 arm64-main "${FRAGS[@]}"

# bisect: series-base, then every patch.
i=0
revs=$(git -C "$TREE" rev-list --reverse series-base..patched)
checkout series-base
build x86_64 main "series-base (features backed out)"
for rev in $revs; do
	i=$((i + 1))
	checkout "$rev"
	subject=$(git -C "$WT" log -1 --format=%s)
	build x86_64 main "patch $i/$NPATCHES: $subject"
done

# configs, on patched (checked out by the last step above).
for v in "$VARIANTS"/*.config; do
	name=$(basename "$v" .config)
	[ -f "$OUT/$name.config" ] || continue
	build x86_64 "$name" patched
done
ROWS+=("${NA[@]}")

# warnings: W=1 and sparse, series-base against patched.
checkout series-base
build x86_64 main "series-base, W=1 C=2" kernel/sched/ W=1 C=2
findings "$LAST_LOG" >"$OUT/series-base.findings"
checkout patched
build x86_64 main "patched, W=1 C=2" kernel/sched/ W=1 C=2
findings "$LAST_LOG" >"$OUT/patched.findings"
NEW=$(comm -13 "$OUT/series-base.findings" "$OUT/patched.findings")
[ -z "$NEW" ] || FAILED=1
# A tree may refuse the installed sparse (7.1's scripts/checker-valid.sh
# wants __typeof_unqual__, which Debian 12's 0.6.4 lacks): then only W=1
# ran, and the table says so.
SPARSE="sparse (C=2)"
if grep -q 'is not available or not up to date' "$LAST_LOG"; then
	SPARSE="sparse: not run, the tree refuses $(sparse --version 2>&1 | head -n 1) ('C=2 specified, but sparse is not available or not up to date')"
	say "$SPARSE"
fi

# arm64
build arm64 arm64-main patched

version=$(kernel_version "$TREE")
built='the kernel image'
[ -z "$QUICK" ] || built='kernel/sched/ objects (--quick)'
nbase=$(wc -l <"$OUT/series-base.findings")
npatched=$(wc -l <"$OUT/patched.findings")
nnew=$(grep -c . <<<"$NEW" || true)
{
	echo "# Robot checks, line $LINE"
	echo
	echo "Linux $version, $NPATCHES patches on series-base;"
	echo "built: $built; ${CROSS}gcc for arm64."
	echo
	echo "| commit | config | arch | result |"
	echo "|---|---|---|---|"
	printf '%s\n' "${ROWS[@]}"
	echo
	echo "W=1 and $SPARSE over kernel/sched/: series-base $nbase findings, patched $npatched; new in patched: $nnew"
	[ -z "$NEW" ] || printf '%s\n' "$NEW" | sed 's/^/    /'
	echo
	echo "Wall time: $((EPOCHSECONDS - t_all))s."
} >"$TABLE"
cat "$TABLE"
[ "$FAILED" = 0 ] || die "a build failed or a finding is new (table: $TABLE)"
