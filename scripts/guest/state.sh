#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# guest_state: the scheduler knobs the tests change are as they were
# before the tests. 'guest_state snapshot' (run by guest_preconditions,
# before any test) saves them; 'guest_state' (after the kselftests)
# compares, prints KTAP, and puts back whatever differs, so that a case
# the runner's timeout killed before its teardown fails here, by name,
# and leaves nothing to the programs after it.
set -u
SAVED=/tmp/sfp-state
FEATURES=/sys/kernel/debug/sched/features
CG=/sys/fs/cgroup

# The knobs, one per line: NAME FILE (FILE may be missing on a kernel).
knobs() {
	echo "schedstats /proc/sys/kernel/sched_schedstats"
	echo "autogroup /proc/sys/kernel/sched_autogroup_enabled"
	echo "sched_features $FEATURES"
	echo "sched_verbose /sys/kernel/debug/sched/verbose"
	echo "cgroup_controllers $CG/cgroup.subtree_control"
	echo "cpus_online /sys/devices/system/cpu/online"
}

value() {
	[ -r "$1" ] && tr '\n' ' ' <"$1" | sed 's/ *$//'
}

if [ "${1:-}" = snapshot ]; then
	mkdir -p "$SAVED"
	knobs | while read -r name file; do
		value "$file" >"$SAVED/$name" || rm -f "$SAVED/$name"
	done
	exit 0
fi

# 'guest_state differs': the names of the knobs not as the snapshot has
# them and of the tests' cgroups that exist, one per line, nothing
# changed (guest_killed watches with it).
if [ "${1:-}" = differs ]; then
	knobs | while read -r name file; do
		[ -f "$SAVED/$name" ] || continue
		got=$(value "$file") || got=
		want=$(cat "$SAVED/$name") || want=
		[ "$got" = "$want" ] || echo "$name"
	done
	for d in "$CG"/sfp_*; do
		[ ! -d "$d" ] || echo "${d#"$CG"/}"
	done
	exit 0
fi

# restore NAME FILE WANT: write the saved value back.
restore() {
	case $1 in
	sched_features)
		for f in $3; do echo "$f" >"$2"; done ;;
	cgroup_controllers)
		for c in $(value "$2"); do
			case " $3 " in *" $c "*) ;; *) echo "-$c" >"$2" ;; esac
		done
		for c in $3; do echo "+$c" >"$2"; done ;;
	cpus_online)
		for c in /sys/devices/system/cpu/cpu[0-9]*; do
			[ ! -w "$c/online" ] || echo 1 >"$c/online"
		done ;;
	*)
		echo "$3" >"$2" ;;
	esac
}

# The cgroups the tests make (sfp_*), each moved back to member and
# removed, its tasks killed first.
leftover_cgroups() {
	left=
	for d in "$CG"/sfp_*; do
		[ -d "$d" ] || continue
		left="$left ${d#"$CG"/}"
		[ ! -f "$d/cgroup.procs" ] || xargs -r kill -9 <"$d/cgroup.procs" 2>/dev/null
		[ ! -f "$d/cpuset.cpus.partition" ] || echo member >"$d/cpuset.cpus.partition" 2>/dev/null
		for _ in 1 2 3 4 5; do rmdir "$d" 2>/dev/null && break; usleep 100000; done
	done
	[ -z "$left" ] || { echo "left behind:$left (removed)"; return 1; }
}

# 'guest_state restore': put back what differs, silently.
if [ "${1:-}" = restore ]; then
	knobs | while read -r name file; do
		[ -f "$SAVED/$name" ] || continue
		want=$(cat "$SAVED/$name") || continue
		got=$(value "$file") || got=
		[ "$got" = "$want" ] || restore "$name" "$file" "$want" 2>/dev/null
	done
	leftover_cgroups >/dev/null || true
	exit 0
fi

# The knobs this kernel has: those the snapshot saved.
names=
for name in $(knobs | cut -d' ' -f1); do
	[ ! -f "$SAVED/$name" ] || names="$names $name"
done
echo "KTAP version 1"
echo "1..1"
echo "    KTAP version 1"
echo "    # Subtest: guest_state"
n=$(echo "$names" | wc -w)
echo "    1..$((n + 1))"
fail=0
i=0
if [ ! -d "$SAVED" ]; then
	echo "    # no snapshot in $SAVED: guest_preconditions did not run first"
	fail=1
fi
for name in $names; do
	file=$(knobs | awk -v n="$name" '$1 == n { print $2 }')
	i=$((i + 1))
	want=$(cat "$SAVED/$name")
	got=$(value "$file")
	if [ "$got" = "$want" ]; then
		echo "    ok $i ${name}_restored"
	else
		echo "    # $file: '$got', before the tests '$want'; putting it back"
		restore "$name" "$file" "$want" 2>/dev/null
		got=$(value "$file")
		echo "    # now: '$got'"
		echo "    not ok $i ${name}_restored"
		fail=1
	fi
done
i=$((i + 1))
if out=$(leftover_cgroups); then
	echo "    ok $i no_cgroups_left"
else
	echo "    # $out"
	echo "    not ok $i no_cgroups_left"
	fail=1
fi
if [ $fail = 0 ]; then echo "ok 1 guest_state"; else echo "not ok 1 guest_state"; fi
