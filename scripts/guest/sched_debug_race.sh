#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# sched_debug_race: load the scheduler while several readers cat
# /sys/kernel/debug/sched/debug, for sfp.racedur seconds (default 60).
# On a 6.12 kernel with the zero_vruntime backport but without upstream
# e08d007f9d81, each read writes cfs_rq state without the rq lock; a lost
# update can leave pick_eevdf() with nothing eligible (an oops in
# pick_task_fair()). Prints KTAP; an oops ends the boot before it can.
# Load: sfp_pool (CPU-bound and wake/sleep threads, it also samples the
# file) and sfp.sleepers loops of 'usleep 300'; sfp.readers readers.
# shellcheck source=scripts/guest/cmdline.sh
. /etc/sfp-cmdline.sh
DUR=$(arg sfp.racedur 60)
READERS=$(arg sfp.readers 4)
SLEEPERS=$(arg sfp.sleepers 4)
F=/sys/kernel/debug/sched/debug
echo "KTAP version 1"
echo "1..1"
if [ ! -r "$F" ]; then
	echo "not ok 1 sched_debug_race # SKIP no $F"
	exit 0
fi
rm -f /tmp/race-stop /tmp/race-reads.*
i=0
while [ "$i" -lt "$SLEEPERS" ]; do
	(while [ ! -e /tmp/race-stop ]; do usleep 300; done) &
	i=$((i + 1))
done
i=0
while [ "$i" -lt "$READERS" ]; do
	(n=0
	 while [ ! -e /tmp/race-stop ]; do cat "$F" >/dev/null; n=$((n + 1)); done
	 echo "$n" >/tmp/race-reads.$i) &
	i=$((i + 1))
done
sfp_pool -d "$DUR" >/tmp/race-pool.out 2>&1
touch /tmp/race-stop
wait
reads=$(cat /tmp/race-reads.* | awk '{ s += $1 } END { print s + 0 }')
pool=$(head -c 200 /tmp/race-pool.out | tr '\n' ' ')
echo "# sched_debug_race: ${DUR}s, $READERS readers ($reads reads), $SLEEPERS usleep loops, sfp_pool: $pool"
echo "ok 1 sched_debug_race"
