#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot a kernel + initramfs in QEMU, capture the serial console and the
# guest's test output, and fail on panic, oops, WARNING, BUG or a hang.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG -k BZIMAGE -i INITRAMFS -l LOGDIR [options]

Boot under qemu-system-x86_64 and wait for the guest to power off.
LOGDIR receives console.log (ttyS0: kernel log, KUnit KTAP),
guest.log (ttyS1: TAP from the test programs in the initramfs),
qemu.cmd (the QEMU command line, to boot the same guest by hand) and
qemu.log (QEMU's own output).

Options (environment variable in brackets):
  -s N       vCPUs [SMP, default 4], one domain level
  -t NAME    a CPU topology of sfp.toml [topologies] instead [TOPOLOGY],
             e.g. smt2x2x2 (sockets, cores, threads and NUMA nodes)
  -m MB      memory [MEM, default 512]
  -T SEC     host-side timeout [BOOT_TIMEOUT, default 600]
  -a ACCEL   tcg, kvm or auto [ACCEL, default tcg]; auto boots once under
             KVM with a 30 s limit and uses it only if the guest came up
  -A ARGS    extra kernel command line [APPEND], after
             "console=ttyS0 panic=-1 oops=panic noautogroup"
  -Q OPTS    extra QEMU options, split at spaces [QEMU_OPTS], e.g.
             "-icount shift=0,sleep=off" (instruction-counted guest time)
  -B NAME    the boot backend [BOOT_BACKEND, default qemu]: qemu runs
             QEMU here; lava runs the same boot as a LAVA job with
             lava-run (Debian's lava-dispatcher, as root): the job
             definition and device are in LOGDIR/lava/, and LAVA's own
             records of the cases are checked against the logs;
             lava-server submits the job with lavacli to the lab that
             'sfp lab up' started (sfp lab --help) and waits for it

Exit status 0 when the guest ran every test program and shut down, and the
console shows no splat (panic, oops, WARNING:, BUG:, UBSAN:, an RCU
stall or a hung task); 1 otherwise, with the console's last lines.
EOF
}

KERNEL=
INITRD=
LOGDIR=
SMP=${SMP:-4}
TOPOLOGY=${TOPOLOGY:-}
MEM=${MEM:-512}
TIMEOUT=${BOOT_TIMEOUT:-600}
ACCEL=${ACCEL:-tcg}
BACKEND=${BOOT_BACKEND:-qemu}
APPEND=${APPEND:-}
QEMU_OPTS=${QEMU_OPTS:-}
while [ $# -gt 0 ]; do
	case $1 in
	-k | --kernel) KERNEL=${2:?}; shift 2 ;;
	-i | --initrd) INITRD=${2:?}; shift 2 ;;
	-l | --logdir) LOGDIR=${2:?}; shift 2 ;;
	-s | --smp) SMP=${2:?}; shift 2 ;;
	-t | --topology) TOPOLOGY=${2:?}; shift 2 ;;
	-m | --mem) MEM=${2:?}; shift 2 ;;
	-T | --timeout) TIMEOUT=${2:?}; shift 2 ;;
	-a | --accel) ACCEL=${2:?}; shift 2 ;;
	-A | --append) APPEND=${2:?}; shift 2 ;;
	-Q | --qemu-opts) QEMU_OPTS=${2:?}; shift 2 ;;
	-B | --backend) BACKEND=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
{ [ -n "$KERNEL" ] && [ -n "$INITRD" ] && [ -n "$LOGDIR" ]; } || die "need -k, -i and -l (see --help)"
[ -f "$KERNEL" ] || die "kernel image '$KERNEL' not found"
[ -f "$INITRD" ] || die "initramfs '$INITRD' not found"
case $SMP in '' | *[!0-9]*) die "-s wants a number of vCPUs, not '$SMP'" ;; esac
if [ -n "$TOPOLOGY" ]; then
	topology "$TOPOLOGY" >/dev/null
	SMP=$(topology_vcpus "$TOPOLOGY")
	topo=$(topology_qemu "$TOPOLOGY" "$MEM")
	mapfile -t TOPO_OPTS <<<"$topo"
else
	TOPO_OPTS=(-smp "$SMP")
fi
case $TIMEOUT in '' | *[!0-9]*) die "-T wants seconds, not '$TIMEOUT'" ;; esac
need qemu-system-x86_64 qemu-system-x86
need timeout coreutils
case $BACKEND in
qemu) ;;
lava)
	need lava-run lava-dispatcher
	[ "$EUID" = 0 ] || die "the lava backend runs lava-run, which must run as root"
	;;
lava-server) need lavacli lavacli ;;
*) die "-B wants qemu, lava or lava-server, not '$BACKEND'" ;;
esac
mkdir -p "$LOGDIR"

# oops=panic: an oops ends the run at once (panic=-1 reboots, QEMU exits)
# instead of leaving a dead guest to the timeout; it is a failure either way.
# initramfs_async=0: unpack the initramfs before the built-in KUnit suites
# run, so that its "Freeing initrd memory" line cannot land inside their
# KTAP on the console (between a suite's "KTAP version 1" and its
# "# Subtest:" it made kunit.py parse misnumber a suite).
# tsc=reliable: no clocksource watchdog. Under TCG on a loaded host it
# once found the TSC "skewed" against the HPET and switched the guest to
# the HPET clocksource, where every clock read is an emulated MMIO access:
# the newly-idle kselftest, which reads the clock in its spin loops, then
# made no progress until the boot timeout.
CMDLINE="console=ttyS0 panic=-1 oops=panic noautogroup initramfs_async=0 tsc=reliable $APPEND"

# run_lava SECONDS CONSOLE GUESTLOG CMDLINE QEMU-OPTION...: the boot as a
# LAVA job (sfp lava-job), run by lava-run; its records are checked by
# sfp lava-result. Returns 124 when LAVA timed out (a hang), 1 when the
# job failed otherwise (the cause in LOGDIR/lava/problem).
run_lava() {
	local secs=$1 con=$2 guest=$3 append=$4 rc=0 dir=$LOGDIR/lava id last
	shift 4
	rm -rf "$dir"
	mkdir -p "$dir"
	id=sfp-$$-$EPOCHSECONDS
	sfp lava-job ${SERVER:+--server} --name "sched-fastpath $(basename "$LOGDIR")" \
		--kernel "$KERNEL" --initrd "$INITRD" --append "$append" --timeout "$secs" \
		--console-log "$con" --guest-log "$guest" --out "$dir" -- "$@" || return 1
	if [ -n "$SERVER" ]; then
		sfp lab run --job "$dir/job.yaml" --timeout "$secs" --out "$dir" >"$dir/summary.txt" || rc=$?
		cat "$dir/summary.txt" >&2
		case $rc in 0) return 0 ;; 2) return 124 ;; *) return 1 ;; esac
	fi
	# lava-run has its own timeouts (the job's); this one is the backstop.
	timeout --kill-after=10 $((secs + 300)) lava-run --job-id "$id" --output-dir "$dir/tmp" \
		--device "$dir/device.yaml" "$dir/job.yaml" </dev/null >"$dir/lava-run.out" 2>"$dir/lava.log" || rc=$?
	rm -rf "$dir/tmp"
	[ "$rc" != 124 ] && [ "$rc" != 137 ] || return 124
	rc=0
	sfp lava-result --log "$dir/lava.log" --console-log "$con" --guest-log "$guest" \
		--out "$dir" >"$dir/summary.txt" || rc=$?
	last=$(tail -n 1 "$dir/summary.txt")
	say "$last"
	case $rc in 0) return 0 ;; 2) return 124 ;; *) return 1 ;; esac
}

# run_qemu ACCEL SECONDS CONSOLE GUESTLOG [EXTRA_CMDLINE]
run_qemu() {
	local rc=0 opts cmd
	read -r -a opts <<<"$QEMU_OPTS"
	: >"$3"
	: >"$4"
	if [ "$BACKEND" != qemu ]; then
		SERVER=
		[ "$BACKEND" != lava-server ] || SERVER=1
		run_lava "$2" "$3" "$4" "$CMDLINE ${5:-}" -accel "$1" -cpu max "${TOPO_OPTS[@]}" \
			-m "$MEM" -nodefaults -display none -no-reboot "${opts[@]}" || rc=$?
		return "$rc"
	fi
	cmd=(qemu-system-x86_64
		-accel "$1" -cpu max "${TOPO_OPTS[@]}" -m "$MEM"
		-nodefaults -display none -no-reboot
		-serial "file:$3" -serial "file:$4"
		-kernel "$KERNEL" -initrd "$INITRD" "${opts[@]}"
		-append "$CMDLINE ${5:-}")
	# The command line, to boot the same guest by hand.
	printf '%q ' "${cmd[@]}" >"$LOGDIR/qemu.cmd"
	echo >>"$LOGDIR/qemu.cmd"
	timeout --kill-after=10 "$2" "${cmd[@]}" </dev/null >"$LOGDIR/qemu.log" 2>&1 || rc=$?
	return "$rc"
}

[ "$ACCEL" != auto ] || [ "$BACKEND" = qemu ] ||
	die "ACCEL=auto probes KVM with a direct boot: with the lava backend choose tcg or kvm"
if [ "$ACCEL" = auto ]; then
	ACCEL=tcg
	if [ -w /dev/kvm ]; then
		say "probing KVM (30 s limit)"
		if run_qemu kvm 30 "$LOGDIR/kvm-probe.log" "$LOGDIR/kvm-probe-guest.log" sfp.probe=1 &&
			grep -q '^sfp: guest' "$LOGDIR/kvm-probe.log"; then
			ACCEL=kvm
		else
			say "KVM did not boot the guest; using TCG"
		fi
	fi
fi
case $ACCEL in tcg | kvm) ;; *) die "-a wants tcg, kvm or auto, not '$ACCEL'" ;; esac

say "booting $(basename "$KERNEL") under QEMU/$ACCEL, $SMP vCPUs${TOPOLOGY:+ ($TOPOLOGY)}, ${MEM} MiB, timeout ${TIMEOUT}s"
t0=$EPOCHSECONDS
rc=0
run_qemu "$ACCEL" "$TIMEOUT" "$LOGDIR/console.log" "$LOGDIR/guest.log" || rc=$?
printf 'accel=%s smp=%s topology=%s mem=%s wall=%ss backend=%s\n' "$ACCEL" "$SMP" "${TOPOLOGY:-flat}" "$MEM" "$((EPOCHSECONDS - t0))" "$BACKEND" >"$LOGDIR/boot.info"

problem=
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	problem="guest hung: no power-off within ${TIMEOUT}s"
elif [ "$rc" != 0 ] && [ "$BACKEND" != qemu ]; then
	problem="LAVA job failed: $(head -c 300 "$LOGDIR/lava/problem" 2>/dev/null | tr '\n' ' ' | sed 's/ *$//')"
elif [ "$rc" != 0 ]; then
	problem="QEMU exited with status $rc ($(head -c 300 "$LOGDIR/qemu.log" | tr '\n' ' '))"
fi
bad=$(first_splat "$LOGDIR/console.log")
[ -z "$bad" ] || problem="${problem:+$problem; }kernel reported: $bad"
if [ -z "$problem" ] && ! grep -q '^sfp-done' "$LOGDIR/guest.log"; then
	problem="guest stopped before its tests finished"
fi
if [ -n "$problem" ]; then
	printf -- '--- last lines of %s ---\n' "$LOGDIR/console.log" >&2
	tail -n 25 "$LOGDIR/console.log" >&2
	printf -- '---\n' >&2
	die "$problem"
fi
say "guest finished in $((EPOCHSECONDS - t0))s (logs: $LOGDIR)"
