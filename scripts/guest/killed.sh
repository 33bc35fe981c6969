#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# guest_killed: a sched kselftest program killed while its first test has
# the system changed, as the kselftest harness kills a test on its timeout
# (SIGKILL to the test's process group) and the runner then kills the
# program, leaves nothing changed: the guard of the test's undo log puts
# back what it had changed. Runs after the kselftests and before
# guest_state, whose snapshot, comparison ('guest_state differs') and
# restore it uses: what a guard leaves is reported here and put back.
set -u
DIR=/kselftest/sched
WAIT_CHANGE=300	# tenths of a second for the test to change something
WAIT_UNDO=100	# tenths of a second for the guard to undo it
SIDFILE=/tmp/sfp-killed.sid

# The session id of process $1 (the 6th field of /proc/PID/stat; the
# command name, the 2nd, is in parentheses and may hold spaces).
sid() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f4
}

# SIGKILL to every process of session $1, in rounds until none is left;
# how many there were in $killed.
kill_session() {
	killed=0
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		found=0
		for st in /proc/[0-9]*/stat; do
			p=${st#/proc/}
			p=${p%/stat}
			s=$(sid "$p") || s=
			[ "$s" = "$1" ] || continue
			if kill -9 "$p" 2>/dev/null; then
				found=1
				killed=$((killed + 1))
			fi
		done
		[ $found = 1 ] || return 0
		usleep 100000
	done
}

# wait_for TENTHS CMD...: until CMD succeeds, at most TENTHS tenths of a
# second. 0 if it did.
wait_for() {
	n=$1
	shift
	while ! "$@"; do
		[ "$n" -gt 0 ] || return 1
		n=$((n - 1))
		usleep 100000
	done
}

# What differs from the snapshot, on one line.
differs() {
	guest_state differs | tr '\n' ' '
}

changed() {
	d=$(differs) || return 1
	[ -n "$d" ]
}

unchanged() {
	d=$(differs) || return 1
	[ -z "$d" ]
}

# sched_fastpath_root_tg is not here: killed so, its test processes
# were not found in /proc while its harness parent was, and it went on to
# its own teardown; this check cannot yet kill it as its runner does.
progs="sched_fastpath_newidle"
echo "KTAP version 1"
echo "1..1"
echo "    KTAP version 1"
echo "    # Subtest: guest_killed"
n=0
for prog in $progs; do n=$((n + 1)); done
echo "    1..$n"
fail=0
i=0
for prog in $progs; do
	i=$((i + 1))
	case=${prog}_undone_after_kill
	if [ ! -x "$DIR/$prog" ]; then
		echo "    ok $i $case # SKIP no $DIR/$prog"
		continue
	fi
	if changed; then
		echo "    # changed before $prog started: $d"
		echo "    ok $i $case # SKIP the system is not as the snapshot has it"
		continue
	fi
	# The program leads a session of its own (setsid may fork first:
	# the shell that execs it writes its own pid, the session's id).
	rm -f "$SIDFILE"
	# shellcheck disable=SC2016 # $$ and $0 are the inner shell's
	setsid sh -c 'echo $$ >"$1"; exec "$0"' "$DIR/$prog" "$SIDFILE" >/dev/null 2>&1 &
	pid=$!
	wait_for 50 test -s "$SIDFILE" || true
	session=$(cat "$SIDFILE" 2>/dev/null) || session=
	if [ -z "$session" ]; then
		echo "    not ok $i $case # $prog did not start"
		fail=1
		continue
	fi
	if ! wait_for $WAIT_CHANGE changed; then
		kill_session "$session"
		wait "$pid" 2>/dev/null
		echo "    ok $i $case # SKIP precondition: $prog changed nothing the snapshot covers in $((WAIT_CHANGE / 10)) s"
		continue
	fi
	what=$d
	kill_session "$session"
	wait "$pid" 2>/dev/null
	if [ "$killed" = 0 ]; then
		echo "    ok $i $case # SKIP precondition: $prog ended before it could be killed"
		wait_for $WAIT_UNDO unchanged || guest_state restore
		continue
	fi
	if wait_for $WAIT_UNDO unchanged; then
		echo "    # $prog ($killed processes) killed with $what changed; all put back"
		echo "    ok $i $case"
	else
		echo "    # $prog ($killed processes) killed with $what changed; left: $d"
		echo "    not ok $i $case"
		fail=1
		# The next program starts from the snapshot; guest_state then
		# finds nothing of this one's.
		guest_state restore
	fi
done
if [ $fail = 0 ]; then echo "ok 1 guest_killed"; else echo "not ok 1 guest_killed"; fi
