#!/bin/sh
# guest_preconditions: the guest booted the kernel this run built, and the
# observables the sched-fastpath tests read exist. Prints KTAP.
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
root_cfs_rq_observable() {
	grep -q '^cfs_rq\[0\]:/$' /sys/kernel/debug/sched/debug &&
		grep -q '\.tg_load_avg  *:' /sys/kernel/debug/sched/debug
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
