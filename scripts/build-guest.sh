#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest's initramfs: busybox-static, the project's init and the
# static test programs. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG -k OBJDIR -o INITRAMFS [-t TREE] [-x PROGRAM]... [-b FILE]...
          [-d BINARY]... [-p]

Make a gzip'd newc initramfs holding /bin/busybox (Debian busybox-static),
/init (scripts/guest/init), and the test programs the guest runs in order:
  guest_preconditions  scripts/guest/preconditions.sh (always)
  kselftest            TREE's sched kselftests, installed as
                       'make -C tools/testing/selftests TARGETS=sched install'
                       does (static, into /kselftest) and run by the kernel's
                       run_kselftest.sh, when TREE has the series' tests;
                       coreutils' timeout goes along, so the runner enforces
                       the tests' 'settings' timeout
  guest_state          scripts/guest/state.sh, after the kselftests: the
                       knobs they change are as before them (else put back,
                       and a failure), no cgroup of theirs is left
  -x PROGRAM           any extra static program or script (run as its
                       name without .sh)
Other contents:
  -b FILE           a file for /bin that the guest does not run by itself
  -d BINARY         a dynamically linked host program (e.g. /usr/bin/stress-ng)
                    and the libraries it links, at their host paths
  -p                perf (the host's /usr/bin/perf, Debian linux-perf) and
                    the shared libraries it links, at their host paths

OBJDIR is the kernel build directory: the initramfs records the version
string of that build, which the preconditions check compares with /proc/version.
EOF
}

OBJ=
OUT=
TREE=
EXTRA=()
BINS=()
DYNS=()
PERF=
while [ $# -gt 0 ]; do
	case $1 in
	-k | --obj) OBJ=${2:?}; shift 2 ;;
	-o | --out) OUT=${2:?}; shift 2 ;;
	-t | --tree) TREE=${2:?}; shift 2 ;;
	-x | --extra) EXTRA+=("${2:?}"); shift 2 ;;
	-b | --bin) BINS+=("${2:?}"); shift 2 ;;
	-d | --dynamic) DYNS+=("${2:?}"); shift 2 ;;
	-p | --perf) PERF=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
{ [ -n "$OBJ" ] && [ -n "$OUT" ]; } || die "need -k OBJDIR and -o INITRAMFS (see --help)"
[ -f "$OBJ/include/generated/utsversion.h" ] || die "'$OBJ' holds no built kernel (no include/generated/utsversion.h)"
need cpio cpio
need gzip gzip
BUSYBOX=/bin/busybox
# static: no program interpreter in its program headers
interp=$(readelf -l "$BUSYBOX" 2>/dev/null || echo INTERP)
{ [ -x "$BUSYBOX" ] && [ "${interp#*INTERP}" = "$interp" ]; } ||
	die "static busybox not found at $BUSYBOX: install the Debian package 'busybox-static' (or run 'make setup' as root)"

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/sfp-guest.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,dev,proc,sys,tmp,tests}
cp "$BUSYBOX" "$STAGE/bin/busybox"
ln -s busybox "$STAGE/bin/sh"
install -m 755 "$ROOT/scripts/guest/init" "$STAGE/init"
mkdir -p "$STAGE/etc"
install -m 644 "$ROOT/scripts/guest/cmdline.sh" "$STAGE/etc/sfp-cmdline.sh"
install -m 755 "$ROOT/scripts/guest/preconditions.sh" "$STAGE/tests/guest_preconditions"
echo guest_preconditions >"$STAGE/tests/order"

# The exact /proc/version of this build: Linux version, compiler, UTS_VERSION.
release=$(cat "$OBJ/include/config/kernel.release")
utsver=$(sed -n 's/^#define[[:space:]]*UTS_VERSION[[:space:]]*"\(.*\)"$/\1/p' "$OBJ/include/generated/utsversion.h")
compiler=$(sed -n 's/^#define[[:space:]]*LINUX_COMPILER[[:space:]]*"\(.*\)"$/\1/p' "$OBJ/include/generated/compile.h")
printf 'Linux version %s (sched-fastpath@qemu) (%s) %s\n' "$release" "$compiler" "$utsver" \
	>"$STAGE/tests/expected-version"

# add_dynamic BINARY: a host program and every library it links, at their
# host paths (Debian's perf and coreutils are not static).
add_dynamic() {
	local missing
	need ldd libc-bin
	missing=$(ldd "$1" | grep 'not found' || true)
	[ -z "$missing" ] || die "$1 needs libraries this host lacks: ${missing//$'\n'/ }"
	mkdir -p "$STAGE$(dirname "$1")"
	cp "$1" "$STAGE$1"
	ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do
			mkdir -p "$STAGE$(dirname "$lib")"
			cp -L "$lib" "$STAGE$lib"
		done
}

# kselftests from the tree, if the series added them there: built and
# installed by the selftests' own Makefile, out of tree (O=), static.
# TEST_PROGS= : 6.12's sched/Makefile lists its generated cs_prctl_test
# under TEST_PROGS as well, which an O= install looks for in the source
# directory and fails on; the override leaves it out of the run list.
KST_DIR=${TREE:+$TREE/tools/testing/selftests}
if [ -n "$KST_DIR" ] && compgen -G "$KST_DIR/sched/sched_fastpath_*.c" >/dev/null; then
	need gcc gcc
	need rsync rsync
	kst=$OBJ/kselftest
	rm -rf "$kst"
	mkdir -p "$kst"
	say "installing the sched kselftests (static) from $KST_DIR"
	make -C "$KST_DIR" TARGETS=sched O="$kst/build" INSTALL_PATH="$STAGE/kselftest" \
		LDFLAGS=-static TEST_PROGS= install >"$kst/install.log" 2>&1 || {
		tail -n 20 "$kst/install.log" >&2
		die "kselftest build or install failed (log: $kst/install.log)"
	}
	[ -x /usr/bin/timeout ] || die "/usr/bin/timeout not found: install the Debian package 'coreutils'"
	add_dynamic /usr/bin/timeout
	install -m 755 "$ROOT/scripts/guest/kselftest.sh" "$STAGE/tests/kselftest"
	echo kselftest >>"$STAGE/tests/order"
	# The knobs the kselftests change, compared with guest_preconditions'
	# snapshot and put back (a case the runner's timeout killed).
	install -m 755 "$ROOT/scripts/guest/state.sh" "$STAGE/tests/guest_state"
	echo guest_state >>"$STAGE/tests/order"
fi
for x in "${EXTRA[@]}"; do
	[ -x "$x" ] || die "extra test program '$x' is not an executable file"
	install -m 755 "$x" "$STAGE/tests/$(basename "$x" .sh)"
	basename "$x" .sh >>"$STAGE/tests/order"
done
for b in "${BINS[@]}"; do
	[ -f "$b" ] || die "file '$b' for /bin not found"
	install -m 755 "$b" "$STAGE/bin/"
done
for d in "${DYNS[@]}"; do
	[ -x "$d" ] || die "program '$d' for the guest not found"
	add_dynamic "$d"
done
if [ -n "$PERF" ]; then
	magic=
	[ ! -x /usr/bin/perf ] || [ ! -s /usr/bin/perf ] || magic=$(head -c 2 /usr/bin/perf)
	if [ -z "$magic" ] || [ "$magic" = '#!' ]; then
		die "no perf binary at /usr/bin/perf: install the Debian package 'linux-perf' (or run 'make setup' as root)"
	fi
	add_dynamic /usr/bin/perf
fi

mkdir -p "$(dirname "$OUT")"
(cd "$STAGE" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
order=$(cat "$STAGE/tests/order")
kib=$(du -k "$OUT" | cut -f1)
say "initramfs $OUT: ${order//$'\n'/ } ($kib KiB)"
