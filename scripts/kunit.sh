#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run the series' KUnit suites with the kernel's own runner, kunit.py, on
# the prepared work tree. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [--arch x86_64|arm64|um] [-s VCPUS]

In the prepared work tree (\$BUILD/tree, as checked out: normally
'patched'), run what a kernel developer runs:

  tools/testing/kunit/kunit.py run --kunitconfig=kernel/sched/tests \\
      --arch=x86_64 --kconfig_add CONFIG_SMP=y --qemu_args "-smp VCPUS"

kunit.py configures and builds its own kernel (in \$BUILD/kunit/ARCH,
with ccache) and boots it in QEMU under TCG. The suites need SMP and, for
the overload recompute cases, 2 CPUs: with -s 1 those cases are skipped,
and with --arch um (UML, kunit.py's default architecture, which has no SMP
in 6.12) every suite is skipped with its reason. --arch arm64 cross
builds with aarch64-linux-gnu-gcc and boots kunit.py's arm64 QEMU machine
(virt); the write-count cases, whose watchpoint semantics are x86's, skip
there with their reason. The output goes to the terminal and to
\$BUILD/kunit/ARCH.log.

  --arch A   x86_64 (default), arm64 or um
  -s N       vCPUs for QEMU [default 4; x86_64 and arm64]
Environment: JOBS (default nproc+1).
EOF
}

ARCH=x86_64
VCPUS=4
while [ $# -gt 0 ]; do
	case $1 in
	--arch) ARCH=${2:?}; shift 2 ;;
	-s) VCPUS=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
case $ARCH in x86_64 | arm64 | um) ;; *) die "--arch wants x86_64, arm64 or um, not '$ARCH'" ;; esac
case $VCPUS in '' | *[!0-9]* | 0) die "-s wants a number of vCPUs > 0, not '$VCPUS'" ;; esac
WT=$BUILD/tree
[ -d "$WT/.git" ] || die "no work tree at $WT: run 'make prepare' first"
[ -f "$WT/kernel/sched/tests/.kunitconfig" ] ||
	die "$WT has no kernel/sched/tests/.kunitconfig: check out a branch with the series' tests (patched)"
need python3 python3
need ccache ccache
OUT=$BUILD/kunit
mkdir -p "$OUT"
JOBS=${JOBS:-$(($(nproc) + 1))}
args=(run --kunitconfig=kernel/sched/tests --build_dir="$OUT/$ARCH" --jobs="$JOBS" --timeout=1800)
case $ARCH in
x86_64)
	need qemu-system-x86_64 qemu-system-x86
	args+=(--make_options "CC=ccache gcc"
		--arch=x86_64 --kconfig_add CONFIG_SMP=y --qemu_args "-smp $VCPUS")
	;;
arm64)
	need qemu-system-aarch64 qemu-system-arm
	need aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu
	# A CC given on the make command line wins over CROSS_COMPILE's, so
	# it names the cross gcc.
	args+=(--make_options "CC=ccache aarch64-linux-gnu-gcc"
		--arch=arm64 --cross_compile=aarch64-linux-gnu- --kconfig_add CONFIG_SMP=y
		--qemu_args "-smp $VCPUS")
	;;
um) args+=(--make_options "CC=ccache gcc") ;;
esac
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(realpath "$BUILD")}
say "in $WT: tools/testing/kunit/kunit.py ${args[*]}"
t0=$EPOCHSECONDS
rc=0
(cd "$WT" && python3 tools/testing/kunit/kunit.py "${args[@]}") 2>&1 | tee "$OUT/$ARCH.log" || rc=$?
say "kunit.py exited $rc after $((EPOCHSECONDS - t0))s (log: $OUT/$ARCH.log)"
exit "$rc"
