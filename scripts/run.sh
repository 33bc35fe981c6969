#!/usr/bin/env bash
# The main job: prepare the work tree, build kernel and guest, boot, run the
# tests inside, report. See --help.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [-t TREE] [-n NAME]

Without -t: prepare \$BUILD/tree from \$KSRC (default Debian's
linux-source-6.12), check out 'patched', build it, boot it and run every
test in the guest. A prepared work tree is reused as it is, so a developer
can edit it and re-run: the build is incremental.

With -t TREE: build and test that kernel tree exactly as it is (no
preparing, no patches applied), e.g. a mutant, a bisect step or a distro
tree that carries the series. TREE is only read.

Outputs (NAME defaults to 'patched', or the tree's directory name):
  \$BUILD/obj/NAME     kernel build (O=), kselftest binaries
  \$BUILD/logs/NAME    console.log, guest.log, parsed results, report.txt

Environment: BUILD ($BUILD), KSRC, SMP, MEM, ACCEL, BOOT_TIMEOUT, APPEND,
JOBS (see scripts/boot.sh --help and scripts/build-kernel.sh --help).
EOF
}

TREE=
NAME=
while [ $# -gt 0 ]; do
	case $1 in
	-t | --tree) TREE=${2:?}; shift 2 ;;
	-n | --name) NAME=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done

if [ -n "$TREE" ]; then
	[ -d "$TREE" ] || die "kernel tree '$TREE' does not exist"
	is_kernel_tree "$TREE" || die "'$TREE' is not a kernel source tree"
	TREE=$(realpath "$TREE")
	NAME=${NAME:-$(basename "$TREE")}
fi
NAME=${NAME:-patched}
case $NAME in *[!A-Za-z0-9._-]*) die "name '$NAME' may only use letters, digits, '.', '_' and '-'" ;; esac
OBJ=$BUILD/obj/$NAME
LOG=$BUILD/logs/$NAME
rm -rf "$LOG"
mkdir -p "$OBJ" "$LOG"
export STAGE_TIMES=$LOG/stage-times.tsv
: >"$STAGE_TIMES"

if [ -z "$TREE" ]; then
	stage_start tree
	"$ROOT/scripts/prepare-tree.sh"
	TREE=$BUILD/tree
	stage_end
fi

stage_start build
"$ROOT/scripts/build-kernel.sh" -t "$TREE" -o "$OBJ"
stage_end

stage_start guest
"$ROOT/scripts/build-guest.sh" -k "$OBJ" -t "$TREE" -o "$OBJ/initramfs.cpio.gz"
stage_end

stage_start boot
boot_rc=0
"$ROOT/scripts/boot.sh" -k "$OBJ/arch/x86/boot/bzImage" -i "$OBJ/initramfs.cpio.gz" -l "$LOG" || boot_rc=$?
stage_end

stage_start tests
{
	echo "sched-fastpath run '$NAME', $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "  tree:    $TREE"
	if [ -f "$TREE/.git/sched-fastpath/source" ]; then
		echo "  source:  $(cat "$TREE/.git/sched-fastpath/source")"
		load_series
		patch_states "$TREE" | sed 's/^/  patch:   /'
	fi
	echo "  version: $(kernel_version "$TREE") ($(cat "$OBJ/include/config/kernel.release"))"
	if git -C "$TREE" rev-parse HEAD >/dev/null 2>&1; then
		echo "  HEAD:    $(git -C "$TREE" log -1 --format='%h %s' HEAD)$(git -C "$TREE" diff --quiet HEAD -- 2>/dev/null || echo ' + uncommitted edits')"
	fi
	echo "  config:  $(cd "$ROOT" && printf '%s ' kernel-config/*.config)"
	# The tests read /sys/kernel/debug/sched/debug; on a tree with the
	# zero_vruntime backport but not its fix, each read races the scheduler.
	if has_sched_debug_race "$TREE"; then
		echo "  WARNING: this tree lacks upstream e08d007f9d81 (patch 1 of the series): every"
		echo "           read of sched/debug by the tests can corrupt the scheduler (docs/background.md)"
	fi
} | tee "$LOG/report.txt"
rep_rc=0
set -o pipefail
"$ROOT/scripts/report.sh" -l "$LOG" -t "$TREE" -k "$OBJ" | tee -a "$LOG/report.txt" || rep_rc=$?
stage_end

printf '\nstage times (wall):' | tee -a "$LOG/report.txt"
awk -F'\t' '{ printf " %s %ss", $1, $2 }' "$STAGE_TIMES" | tee -a "$LOG/report.txt"
echo | tee -a "$LOG/report.txt"
say "report: $LOG/report.txt"
if [ "$boot_rc" != 0 ]; then
	# The guest did not finish cleanly: count that, whatever ran before.
	printf 'boot\tboot\t(guest run)\tFAIL\tsee %s/console.log\n' "$LOG" >>"$LOG/results.tsv"
	python3 "$ROOT/scripts/summarize.py" --title "Results, with the failed guest run" --tsv "$LOG/results.tsv" | tail -n 1
	exit 1
fi
exit "$rep_rc"
