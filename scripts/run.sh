#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The main job: prepare the work tree, build kernel and guest, boot, run the
# tests inside, report. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	local kinds
	kinds=$(sfp get kinds)
	cat <<EOF
Usage: $PROG [-K KIND] [-t TREE | -r REF [-p PATCH]...] [-n NAME] [-l LOGDIR]
             [-f FRAGMENT]... [-F FRAGMENT]... [-x PROGRAM]... [-b FILE]...
             [-d BINARY]...              [--perf] [--build-only | --boot-only]

The one path from a kernel tree to a verdict: build it, make the guest,
boot it in QEMU, run every test inside, report. Every kernel the project
builds and boots goes through here.

Without -t or -r: prepare \$BUILD/tree from \$KSRC (default Debian's
linux-source-6.12), build its checked-out 'patched'. A prepared work tree
is reused as it is, so a developer can edit it and re-run: the build is
incremental.

  -K KIND      a kind of kernel, a row of sfp.toml [kinds]
               ($kinds):
               its config fragments (instead of the defaults below), its
               patches (after -p's) and its command line (before APPEND's)
  -t TREE      build and test that kernel tree exactly as it is (a distro
               tree that carries the series, a bisect step). TREE is only read.
  -r REF       a commit of the work tree (a branch such as baseline,
               series-base, base, patched): checked out in the git worktree
               \$BUILD/wt/NAME/tree, a scratch checkout that every run resets to
               REF, discarding edits there (edit \$BUILD/tree instead). One
               worktree per NAME: switching REF rebuilds only what differs
  -p PATCH     with -r: apply PATCH on top (a mutant, a debug-only hook)
  -n NAME      names the build (\$BUILD/obj/NAME), logs and worktree;
               default 'patched', TREE's directory name, or REF
  -f FRAGMENT  one more config fragment after the defaults
               (kernel-config/base.config, then the tests' own
               kernel/sched/tests/.kunitconfig and
               tools/testing/selftests/sched/config where the tree has
               them), e.g. kernel-config/debug.config
  -F FRAGMENT  use FRAGMENT instead of the defaults (repeatable; -f adds
               to these)
  -x PROGRAM   one more program for the guest to run after the tests
  -b FILE      one more file for the guest's /bin
  -d BINARY    a host program for the guest, with the libraries it links
  --perf       put perf (Debian linux-perf) and its libraries in the guest
  -l LOGDIR    write the logs there instead of \$BUILD/logs/NAME
  --build-only prepare and build the kernel and the guest, do not boot
  --boot-only  boot the kernel and initramfs that an earlier run of the same
               NAME built, without preparing or building anything (repeated
               boots: scripts/repeat.sh, scripts/bench.sh, scripts/race.sh)

Outputs:
  \$BUILD/obj/NAME     kernel build (O=), kselftest binaries, initramfs
                      (\$BUILD/wt/NAME/obj/NAME for -r)
  \$BUILD/logs/NAME    console.log, guest.log, parsed results, report.txt

Environment: BUILD ($BUILD), KSRC, SMP, TOPOLOGY, MEM, ACCEL, BOOT_TIMEOUT, APPEND,
QEMU_OPTS, JOBS (see ./sfp boot --help and scripts/build-kernel.sh
--help).
EOF
}

TREE=
REF=
NAME=
KIND=
XPATCHES=()
XFRAGS=()
FRAGS=()
GUEST_ARGS=()
LOG=
BOOT_ONLY=
BUILD_ONLY=
while [ $# -gt 0 ]; do
	case $1 in
	-K | --kind) KIND=${2:?}; shift 2 ;;
	-t | --tree) TREE=${2:?}; shift 2 ;;
	-r | --ref) REF=${2:?}; shift 2 ;;
	-p | --patch) XPATCHES+=("$(realpath "${2:?}")"); shift 2 ;;
	-n | --name) NAME=${2:?}; shift 2 ;;
	-f | --fragment) XFRAGS+=("${2:?}"); shift 2 ;;
	-F | --only-fragment) FRAGS+=("${2:?}"); shift 2 ;;
	-l | --logdir) LOG=${2:?}; shift 2 ;;
	--perf) GUEST_ARGS+=(-p); shift ;;
	--boot-only) BOOT_ONLY=1; shift ;;
	--build-only) BUILD_ONLY=1; shift ;;
	-x | --extra) GUEST_ARGS+=(-x "${2:?}"); shift 2 ;;
	-b | --bin) GUEST_ARGS+=(-b "${2:?}"); shift 2 ;;
	-d | --dynamic) GUEST_ARGS+=(-d "${2:?}"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done

# Every variable and the kind and topology, before anything is touched.
sfp validate ${KIND:+-K "$KIND"} || exit 1
if [ -n "$KIND" ]; then
	kpatches=$(kernel_kind_patches "$KIND")
	split_lines kp "$kpatches"
	XPATCHES+=("${kp[@]}")
	kappend=$(kernel_kind_append "$KIND")
	[ -z "$kappend" ] || export APPEND="$kappend${APPEND:+ $APPEND}"
fi
[ -z "$TREE" ] || [ -z "$REF" ] || die "-t and -r exclude each other"
[ -z "$BOOT_ONLY" ] || [ -z "$BUILD_ONLY" ] || die "--boot-only and --build-only exclude each other"
[ ${#XPATCHES[@]} = 0 ] || [ -n "$REF" ] || die "-p needs -r (a tree given with -t is only read)"
for f in "${XPATCHES[@]}" "${XFRAGS[@]}" "${FRAGS[@]}"; do
	[ -f "$f" ] || die "'$f' not found"
done
if [ -n "$TREE" ]; then
	[ -d "$TREE" ] || die "kernel tree '$TREE' does not exist"
	is_kernel_tree "$TREE" || die "'$TREE' is not a kernel source tree"
	TREE=$(realpath "$TREE")
	NAME=${NAME:-$(basename "$TREE")}
fi
[ -z "$REF" ] || NAME=${NAME:-$(printf '%s' "$REF" | tr -c 'A-Za-z0-9._-' '-')}
NAME=${NAME:-patched}
case $NAME in *[!A-Za-z0-9._-]*) die "name '$NAME' may only use letters, digits, '.', '_' and '-'" ;; esac
# Where the build goes (the layout: kernel_obj in lib.sh). With ccache's
# base_dir at \$BUILD (scripts/build-kernel.sh) every build compiles with
# the same relative paths, and a file one build compiled is a cache hit
# for the others.
if [ -n "$REF" ]; then
	WTREE=$(kernel_wt "$BUILD" "$NAME")
	OBJ=$(kernel_obj "$BUILD" "$NAME" ref)
else
	OBJ=$(kernel_obj "$BUILD" "$NAME")
fi
LOG_GIVEN=$LOG
LOG=${LOG:-$(kernel_logs "$BUILD" "$NAME")}
# Absolute: the report's parsers run in other directories.
LOG=$(realpath -m "$LOG")
if [ -n "$BOOT_ONLY" ]; then
	if [ ! -f "$OBJ/arch/x86/boot/bzImage" ] || [ ! -f "$OBJ/initramfs.cpio.gz" ]; then
		die "--boot-only: nothing built for '$NAME' in $OBJ (run once without --boot-only)"
	fi
	[ -z "$REF" ] || TREE=$WTREE
	TREE=${TREE:-$BUILD/tree}
fi
# The last run's logs of this name are kept as NAME.prev (one generation);
# a log directory given with -l is the caller's to manage, and emptied.
if [ -z "$LOG_GIVEN" ] && [ -d "$LOG" ]; then
	rm -rf "$LOG.prev"
	mv "$LOG" "$LOG.prev"
else
	rm -rf "$LOG"
fi
mkdir -p "$OBJ" "$LOG"
export STAGE_TIMES=$LOG/stage-times.tsv
: >"$STAGE_TIMES"

if [ -z "$TREE" ] && [ -z "$BOOT_ONLY" ]; then
	stage_start tree
	"$ROOT/scripts/prepare-tree.sh"
	TREE=$BUILD/tree
	if [ -n "$REF" ]; then
		rev=$(git -C "$TREE" rev-parse -q --verify "$REF^{commit}") ||
			die "the work tree $TREE has no commit '$REF'"
		if [ ! -e "$WTREE/.git" ]; then
			need_space "$BUILD" 2 "a worktree and its build"
			git -C "$TREE" worktree prune
			say "checking out $REF at $WTREE (a git worktree of $TREE)"
			git -C "$TREE" worktree add -q --detach "$WTREE" "$rev"
		fi
		# Only the files that differ are rewritten: the build stays incremental.
		git -C "$WTREE" checkout -q -f --detach "$rev"
		git -C "$WTREE" clean -q -fdx
		for p in "${XPATCHES[@]}"; do
			git -C "$WTREE" apply "$p" || die "$(basename "$p") does not apply to $REF"
			say "applied $(basename "$p") on $REF"
		done
		TREE=$WTREE
	fi
	stage_end
fi

if [ -z "$BOOT_ONLY" ]; then
	stage_start build
	if [ ${#FRAGS[@]} = 0 ] && [ -n "$KIND" ]; then
		f=$(kernel_kind_fragments "$KIND" "$TREE")
		split_lines FRAGS "$f"
	fi
	if [ ${#FRAGS[@]} = 0 ]; then
		f=$(default_fragments "$TREE")
		split_lines FRAGS "$f"
	fi
	fargs=()
	for f in "${FRAGS[@]}" "${XFRAGS[@]}"; do fargs+=(-f "$f"); done
	"$ROOT/scripts/build-kernel.sh" -t "$TREE" -o "$OBJ" "${fargs[@]}"
	for f in "${FRAGS[@]}" "${XFRAGS[@]}"; do printf '%s ' "${f##*/}"; done >"$OBJ/fragments.txt"
	stage_end

	stage_start guest
	"$ROOT/scripts/build-guest.sh" -k "$OBJ" -t "$TREE" -o "$OBJ/initramfs.cpio.gz" "${GUEST_ARGS[@]}"
	stage_end
fi

if [ -n "$BUILD_ONLY" ]; then
	say "built $OBJ/arch/x86/boot/bzImage and $OBJ/initramfs.cpio.gz"
	exit 0
fi

stage_start boot
boot_rc=0
"$ROOT/sfp" boot -k "$OBJ/arch/x86/boot/bzImage" -i "$OBJ/initramfs.cpio.gz" -l "$LOG" || boot_rc=$?
stage_end

# run_header: the report's first lines, what was built from what.
run_header() {
	local when src ref p version release=unknown head edits='' config=''
	when=$(date -u '+%Y-%m-%d %H:%M UTC')
	echo "sched-fastpath run '$NAME', $when"
	echo "  tree:    $TREE"
	src=$(wt_meta "$TREE" source)
	if [ -n "$src" ]; then
		echo "  source:  $src"
		load_series
		patch_states "$TREE" | sed 's/^/  patch:   /'
	fi
	if [ -n "$REF" ]; then
		ref=$REF
		for p in "${XPATCHES[@]}"; do ref="$ref + ${p##*/}"; done
		echo "  ref:     $ref"
	fi
	version=$(kernel_version "$TREE")
	[ ! -f "$OBJ/include/config/kernel.release" ] || release=$(cat "$OBJ/include/config/kernel.release")
	echo "  version: $version ($release)"
	if git -C "$TREE" rev-parse HEAD >/dev/null 2>&1; then
		head=$(git -C "$TREE" log -1 --format='%h %s' HEAD)
		git -C "$TREE" diff --quiet HEAD -- 2>/dev/null || edits=' + uncommitted edits'
		echo "  HEAD:    $head$edits"
	fi
	[ ! -f "$OBJ/fragments.txt" ] || config=$(cat "$OBJ/fragments.txt")
	echo "  config:  $config"
	# The tests read /sys/kernel/debug/sched/debug; on a tree with the
	# zero_vruntime backport but not its fix, each read races the scheduler.
	if has_sched_debug_race "$TREE"; then
		echo "  WARNING: this tree lacks upstream e08d007f9d81 (patch 1 of the series): every"
		echo "           read of sched/debug by the tests can corrupt the scheduler (docs/background.md)"
	fi
}

stage_start tests
run_header | tee "$LOG/report.txt"
rep_rc=0
"$ROOT/sfp" report -l "$LOG" -t "$TREE" -k "$OBJ" | tee -a "$LOG/report.txt" || rep_rc=$?
stage_end

printf '\nstage times (wall):' | tee -a "$LOG/report.txt"
awk -F'\t' '{ printf " %s %ss", $1, $2 }' "$STAGE_TIMES" | tee -a "$LOG/report.txt"
echo | tee -a "$LOG/report.txt"
say "report: $LOG/report.txt"
if [ "$boot_rc" != 0 ]; then
	# The guest did not finish cleanly: count that, whatever ran before.
	printf 'boot\tboot\t(guest run)\tFAIL\tsee %s/console.log\n' "$LOG" >>"$LOG/results.tsv"
	sfp summarize --title "Results, with the failed guest run" --tsv "$LOG/results.tsv" | tail -n 1
	exit 1
fi
exit "$rep_rc"
