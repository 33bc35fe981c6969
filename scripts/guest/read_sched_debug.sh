#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# read_sched_debug: read /sys/kernel/debug/sched/debug once. With the
# debug hook of tests/debug/ and PROVE_LOCKING, one read is enough for
# lockdep to report avg_vruntime() called without the rq lock on a kernel
# that lacks upstream e08d007f9d81. Prints KTAP.
F=/sys/kernel/debug/sched/debug
echo "KTAP version 1"
echo "1..1"
if cat "$F" >/tmp/sched-debug.out; then
	n=$(wc -l </tmp/sched-debug.out)
	echo "# read $n lines of $F"
	echo "ok 1 read_sched_debug"
else
	echo "not ok 1 read_sched_debug"
fi
