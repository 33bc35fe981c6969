#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# sfp_stress: the guest side of 'make stress' and of make check's short
# stress phase, meant for the debug kernel (kernel-config/debug.config,
# panic_on_warn=1: any splat ends the boot, and the host fails the run).
#
# For sfp.stress=SECONDS (default 30), all at once:
#   - stress-ng: CPU offline/online (--cpu-online), sched_setaffinity
#     churn (--affinity), fork/exit storms (--fork);
#   - hackbench (rt-tests) in a loop, as background load;
#   - cgroup churn: cpu-controller groups created, a busy task moved in
#     and out, the group removed;
#   - readers of /sys/kernel/debug/sched/debug and /proc/schedstat.
# Then, with the load stopped, the invariants (KTAP cases):
#   - stress_ng_clean: stress-ng exited 0, and every stressor and
#     hackbench did work (a stressor stress-ng skips is a failure);
#   - all_cpus_online: every CPU is back online;
#   - root_tg_load_avg_zero: every root cfs_rq block of sched/debug shows
#     tg_load_avg_contrib 0 and tg_load_avg 0 (the root-group skip; so a
#     kernel without it fails here);
#   - child_contrib_out_and_back: with a busy task per CPU in a child
#     group, taking the last CPU offline removes its contribution from the
#     group's tg_load_avg (the sum of the online CPUs' contributions
#     matches it within 10%), and putting it back online adds it back;
#   - indicator_clear_after_stress: the series' newly-idle kselftest, run
#     again once the stress has stopped, passes: the light load skips
#     the newly-idle balance (the indicator is clear), its overload
#     control does not.
# The figures go to a "# sfp-stress" line.
PATH=/bin:/usr/bin:/tests
# shellcheck source=scripts/guest/cmdline.sh
. /etc/sfp-cmdline.sh
DUR=$(arg sfp.stress 30)
F=/sys/kernel/debug/sched/debug
CG=/sys/fs/cgroup
NCPU=$(grep -c ^processor /proc/cpuinfo)
LAST=$((NCPU - 1))
n=0
fail=0
ok() {
	n=$((n + 1))
	echo "ok $n $1"
}
notok() {
	n=$((n + 1))
	echo "not ok $n $1"
	fail=1
}
echo "KTAP version 1"
echo "1..5"
echo 1 >/proc/sys/kernel/sched_schedstats
echo +cpu >"$CG/cgroup.subtree_control" || echo "# cannot enable the cpu controller"
rm -f /tmp/stress-stop /tmp/stress-count.* /tmp/stress-hackbench.err

# count NAME: one more event of kind NAME (each loop keeps its own file).
loop_readers() {
	c=0
	while [ ! -e /tmp/stress-stop ]; do
		cat "$F" /proc/schedstat >/dev/null
		c=$((c + 2))
		echo "$c" >"/tmp/stress-count.reads.$1"
	done
}
loop_cgroups() {
	c=0
	while [ ! -e /tmp/stress-stop ]; do
		g=$CG/sfp-stress-$c
		mkdir "$g" || break
		sh -c 'while :; do :; done' &
		p=$!
		echo "$p" >"$g/cgroup.procs"
		usleep 20000
		echo "$p" >"$CG/cgroup.procs"
		kill "$p"
		wait "$p" 2>/dev/null
		rmdir "$g"
		c=$((c + 1))
		echo "$c" >/tmp/stress-count.cgroups
	done
}
loop_hackbench() {
	c=0
	while [ ! -e /tmp/stress-stop ]; do
		if ! hackbench --pipe -g 2 -f 4 -l 50 >/dev/null 2>/tmp/stress-hackbench.out; then
			err=$(head -c 200 /tmp/stress-hackbench.out)
			echo "hackbench failed: $err" >>/tmp/stress-hackbench.err
		fi
		c=$((c + 1))
		echo "$c" >/tmp/stress-count.hackbench
	done
}
loop_readers 1 &
loop_readers 2 &
loop_cgroups &
loop_hackbench &
# --pathological: stress-ng runs --cpu-online only when told that it may
# hang or reboot the machine, which is what the debug kernel is here to see.
stress-ng --pathological --cpu-online 1 --affinity 2 --fork 2 --timeout "${DUR}s" --metrics-brief \
	>/tmp/stress-ng.out 2>&1
sng=$?
touch /tmp/stress-stop
wait
sed 's/^/# /' /tmp/stress-ng.out | grep -E 'bogo|cpu-online|affinity|fork|fail|error' | head -n 12
# bogo ops of one stressor from the --metrics-brief table
ops() {
	awk -v s="$1" '$0 ~ "] " s " " { for (i = 1; i <= NF; i++) if ($i == s) { print $(i + 1); exit } }' /tmp/stress-ng.out
}
sum() {
	cat /tmp/stress-count."$1"* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}
hotplug=$(ops cpu-online)
affinity=$(ops affinity)
forks=$(ops fork)
cgroups=$(sum cgroups)
hackbench=$(sum hackbench)
reads=$(sum reads)
echo "# sfp-stress seconds=$DUR cpus=$NCPU hotplug_ops=$hotplug affinity_ops=$affinity fork_ops=$forks cgroups=$cgroups hackbench_runs=$hackbench debug_reads=$reads"
# Every stressor asked for ran and did work.
missing=
for st in cpu-online affinity fork; do
	nops=$(ops "$st")
	[ "$nops" -gt 0 ] 2>/dev/null || missing="$missing $st"
done
if [ "$hackbench" = 0 ] || [ -s /tmp/stress-hackbench.err ]; then
	missing="$missing hackbench"
	sed 's/^/# /' /tmp/stress-hackbench.err 2>/dev/null | head -n 3
fi
if [ "$sng" = 0 ] && [ -z "$missing" ]; then
	ok stress_ng_clean
else
	echo "# stress-ng exited $sng; no work from:${missing:- -}"
	notok stress_ng_clean
fi

# Every CPU back online (stress-ng puts back what it took).
off=
for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
	v=$(cat "$c")
	[ "$v" = 1 ] || off="$off $c"
done
if [ -z "$off" ]; then ok all_cpus_online; else echo "# offline:$off"; notok all_cpus_online; fi

# A child group with a busy task pinned to each CPU; its blocks in
# sched/debug give each online CPU's contribution and the group's total.
# group_read WHEN: sum of contributions vs the total, within 10%, in one
# read of sched/debug.
group_read() {
	awk -v when="$1" -v try="$2" '/^cfs_rq\[/ { g = ($0 ~ /:\/sfp-keep$/) }
		g && /\.tg_load_avg_contrib / { s += $NF; k++ }
		g && /\.tg_load_avg / { t = $NF }
		END {
			d = s - t; if (d < 0) d = -d
			printf "# %s: %d CPUs contribute %d, group tg_load_avg %d (read %d of 10)\n", when, k, s, t, try
			exit !(k > 0 && t > 0 && d * 10 <= t)
		}' "$F"
}
# group_check WHEN: group_read agrees at one of 10 reads 0.2 s apart. One
# read is not a snapshot (each CPU's block is printed at its own moment, a
# vCPU the host did not run propagates late); a contribution left behind
# by an offline CPU stays, and fails every read.
group_check() {
	i=1
	while ! group_read "$1" "$i" >/tmp/stress-group.out; do
		if [ "$i" -ge 10 ]; then
			cat /tmp/stress-group.out
			return 1
		fi
		i=$((i + 1))
		usleep 200000
	done
	cat /tmp/stress-group.out
}
g=$CG/sfp-keep
mkdir -p "$g"
pids=
c=0
while [ "$c" -lt "$NCPU" ]; do
	taskset -c "$c" sh -c 'while :; do :; done' &
	pids="$pids $!"
	echo "$!" >"$g/cgroup.procs"
	c=$((c + 1))
done
sleep 2
# The root cfs_rq blocks, with the stress stopped (the busy tasks of the
# child group keep every root cfs_rq on the list that sched/debug prints).
awk '/^cfs_rq\[/ { root = ($0 ~ /^cfs_rq\[[0-9]+\]:\/$/) }
	root && /\.tg_load_avg_contrib / { c = $NF }
	root && /\.tg_load_avg / { print "# root " c " " $NF; if (c != 0 || $NF != 0) bad = 1 }
	END { exit bad }' "$F" >/tmp/stress-root.out
rrc=$?
head -n "$NCPU" /tmp/stress-root.out
if [ "$rrc" = 0 ] && [ -s /tmp/stress-root.out ]; then ok root_tg_load_avg_zero; else notok root_tg_load_avg_zero; fi

crc=0
group_check "all $NCPU CPUs online" || crc=1
if [ "$LAST" -gt 0 ] && echo 0 >"/sys/devices/system/cpu/cpu$LAST/online"; then
	sleep 2
	group_check "CPU $LAST offline" || crc=1
	echo 1 >"/sys/devices/system/cpu/cpu$LAST/online" || crc=1
	# the task that left CPU $LAST stays where it was moved; pin it back
	taskset -pc "$LAST" "${pids##* }" >/dev/null 2>&1
	sleep 2
	group_check "CPU $LAST back online" || crc=1
else
	echo "# cannot take CPU $LAST offline"
	crc=1
fi
# shellcheck disable=SC2086 # a list of pids
kill $pids 2>/dev/null
wait 2>/dev/null
rmdir "$g" 2>/dev/null
if [ "$crc" = 0 ]; then ok child_contrib_out_and_back; else notok child_contrib_out_and_back; fi

# The indicator once the stress has stopped: the series' newly-idle
# kselftest again, through the kernel's runner (its light load must skip
# the newly-idle balance, its overload control must not).
if [ -x /kselftest/sched/sched_fastpath_newidle ]; then
	/kselftest/run_kselftest.sh -t sched:sched_fastpath_newidle >/tmp/stress-newidle.out 2>&1
	grep -E 'newly-idle balance attempts|wakeups of a partner|^(not )?ok [0-9]+ selftests' /tmp/stress-newidle.out | sed 's/^[# ]*/# /'
	# The light load's own precondition unmet: the program passes with
	# that case skipped, which says nothing of the indicator.
	light_skip=$(grep -m1 -o 'SKIP precondition: the light load .*' /tmp/stress-newidle.out || true)
	if grep -q '^ok 1 selftests: sched: sched_fastpath_newidle' /tmp/stress-newidle.out &&
		[ -n "$light_skip" ]; then
		n=$((n + 1))
		echo "ok $n indicator_clear_after_stress # $light_skip"
	elif grep -q '^ok 1 selftests: sched: sched_fastpath_newidle' /tmp/stress-newidle.out; then
		ok indicator_clear_after_stress
	else
		notok indicator_clear_after_stress
	fi
else
	echo "ok 5 indicator_clear_after_stress # SKIP no /kselftest/sched/sched_fastpath_newidle in this guest"
fi
exit "$fail"
