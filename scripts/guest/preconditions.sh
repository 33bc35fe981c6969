#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# guest_preconditions: the guest booted the kernel this run built, and the
# observables the sched-fastpath tests read exist. Prints KTAP.
# The knobs the tests may change, as they are before any test ran, for
# guest_state (after the kselftests) to compare with.
[ ! -x /tests/guest_state ] || /tests/guest_state snapshot
n=0
fail=0
check() {
	name=$1
	shift
	n=$((n + 1))
	if "$@" >/tmp/preconditions.out 2>&1; then
		echo "    ok $n $name"
	else
		sed 's/^/    # /' /tmp/preconditions.out
		echo "    not ok $n $name"
		fail=1
	fi
}
kernel_is_the_build() {
	want=$(cat /tests/expected-version)
	got=$(cat /proc/version)
	echo "expected: $want"
	echo "running:  $got"
	[ "$got" = "$want" ]
}
schedstat_has_domains() {
	head -n 1 /proc/schedstat
	grep -q '^version ' /proc/schedstat && grep -q '^domain0 ' /proc/schedstat
}
# sched/debug lists a cfs_rq only while it is on its CPU's leaf list, and
# an idle CPU's root cfs_rq decays off it: keep CPU 0 busy while reading.
root_cfs_rq_observable() {
	taskset -c 0 sh -c 'while :; do :; done' &
	busy=$!
	ok=1
	for _ in 1 2 3 4 5; do
		usleep 200000
		if grep -q '^cfs_rq\[0\]:/$' /sys/kernel/debug/sched/debug &&
			grep -q '\.tg_load_avg  *:' /sys/kernel/debug/sched/debug; then
			ok=0
			break
		fi
	done
	kill "$busy"
	wait "$busy" 2>/dev/null
	[ "$ok" = 0 ] || grep '^cfs_rq\[' /sys/kernel/debug/sched/debug | head -n 8
	return "$ok"
}
echo "KTAP version 1"
echo "1..1"
echo "    KTAP version 1"
echo "    # Subtest: guest_preconditions"
echo "    1..3"
check kernel_is_the_build kernel_is_the_build
check schedstat_has_domains schedstat_has_domains
check root_cfs_rq_observable root_cfs_rq_observable
if [ $fail = 0 ]; then echo "ok 1 guest_preconditions"; else echo "not ok 1 guest_preconditions"; fi
