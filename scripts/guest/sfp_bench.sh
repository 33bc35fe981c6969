#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# sfp_bench: the guest side of scripts/bench.sh. Four workloads:
#   rr       sfp_rr: request/response, servers on half the CPUs (light)
#   mix      sfp_rr -b: the same, with bursts of unpinned CPU-bound threads
#            every 100 ms (real overload between light phases)
#   pool     sfp_pool: a thread pool in the root task group
#   cgpool   sfp_pool -g: the same pool in a child cgroup
# Every workload runs in these phases (profile: rr and pool only):
#   count    alone, for throughput, latency and the exact counters, with
#            the newly-idle load-balance counters of /proc/schedstat per
#            domain level (attempts, balanced, failed, tasks gained)
#   writes   under write watchpoints (sfp_writes): every write to
#            root_task_group.load_avg and to the root domain's overload
#            indicator, counted; each write then traps, so nothing is timed
#   refresh  rr, mix and sparse (below), on both kernels: every refresh of the idle CPUs'
#            blocked load (a write to fair.c's nohz.next_blocked, under
#            perf record with its call chain), by what started it: the
#            newly-idle exit's kick (run from the idle loop) or another
#            path (the tick's stats kick, run in the softirq)
#   profile  under the ftrace function profiler (calls and time in the
#            functions below) and system-wide perf record (cpu-clock)
# and prints every result as "sfp-bench WORKLOAD PHASE key=value..." lines.
# All count phases run first; then the profiler is switched on once, while
# nothing runs, and never off: each switch live-patches the profiled
# functions, and under multi-threaded TCG a vCPU can still execute the
# breakpoint of a finished patch (seen as "Oops: int3" in
# sched_balance_rq+0x1). Per-workload figures are differences of snapshots.
# Parameters come from the kernel command line:
#   sfp.dur=SECONDS (5)  sfp.rrwork=LOOPS (10000000)  sfp.poolwork=LOOPS (200000)
#   sfp.sparsework=LOOPS (50000): the sparse load's chunk (refresh phase)
#   sfp.perffreq=HZ (500)
#   sfp.newidle=measure|shipped (measure): measure turns off the sched
#                features that skip newly-idle balances by their own
#                rule (NI_RANDOM, since 6.19 and in 6.1.y/6.12.y; NI_RATE,
#                7.1), so that the counters show the overload gate alone;
#                shipped leaves them as the kernel ships them
#   sfp.features=FEAT[,FEAT...] (none): sched features to write first,
#                e.g. NO_DELAY_DEQUEUE
#   sfp.offsets=tg_load_avg:N,rq_rd:N[,rd_overloaded:N]...: field offsets
#                of this kernel (scripts/kernel-offsets.sh), for sfp_writes
#                and the refresh phase
#   sfp.cost=1 (0): the cost mode (sfp bench --cost): the count phases
#                only, each workload between two marks (sfp_mark) at which
#                the host's QEMU plugin logs its instruction counts
set -u
PATH=/bin:/usr/bin:/tests
# The profiled functions by their names since v6.10; older kernels (the
# 6.1 line) call the first two newidle_balance() and load_balance().
# Every line the guest prints uses the newer names.
FUNCS="sched_balance_newidle sched_balance_rq task_tick_fair"
OLDNAMES="newidle_balance=sched_balance_newidle load_balance=sched_balance_rq"
T=/sys/kernel/tracing
FEAT=/sys/kernel/debug/sched/features
CG=/sys/fs/cgroup

# shellcheck source=scripts/guest/cmdline.sh
. /etc/sfp-cmdline.sh
DUR=$(arg sfp.dur 5)
RRWORK=$(arg sfp.rrwork 10000000)
POOLWORK=$(arg sfp.poolwork 200000)
SPARSEWORK=$(arg sfp.sparsework 50000)
FREQ=$(arg sfp.perffreq 500)
FEATURES=$(arg sfp.features '')
NEWIDLE=$(arg sfp.newidle measure)
OFFSETS=$(arg sfp.offsets '')
COST=$(arg sfp.cost 0)
MARK=0
WARGS=
CARGS=
NBOFF=
for o in $(echo "$OFFSETS" | tr ',' ' '); do
	case $o in
	tg_load_avg:*) WARGS="$WARGS -t ${o#*:}" ;;
	rq_rd:*) WARGS="$WARGS -r ${o#*:}" ;;
	rd_overloaded:*) WARGS="$WARGS -o ${o#*:}" ;;
	rq_sd:*) CARGS="$CARGS -s ${o#*:}" ;;
	sd_lb_count:*) CARGS="$CARGS -c ${o#*:}" ;;
	sd_lb_gained:*) CARGS="$CARGS -g ${o#*:}" ;;
	nohz_next_blocked:*) NBOFF=${o#*:} ;;
	esac
done
fail=0
echo "KTAP version 1"
echo "1..1"

problem() {
	echo "sfp-bench error: $*"
	fail=1
}

# KTAP, for sfp report: the workloads ran and every step worked.
finish() {
	echo "sfp-bench done fail=$fail"
	if [ "$fail" = 0 ]; then echo "ok 1 sfp_bench"; else echo "not ok 1 sfp_bench"; fi
	exit "$fail"
}

# tracefs has its own mount point since v4.1; the old automount under
# debugfs is a config option (TRACEFS_AUTOMOUNT_DEPRECATED, 6.19) that
# the allnoconfig-based configs leave off.
if [ ! -e "$T/set_ftrace_filter" ]; then
	mount -t tracefs tracefs "$T" || problem "cannot mount tracefs on $T"
fi

# Exact counters need schedstats. NI_RANDOM skips newly-idle balances at
# random, in proportion to a domain's past success, and NI_RATE feeds it
# the call rate: on both kernels alike, hiding the overload gate; the
# measure mode turns them off, the shipped mode keeps them.
echo 1 >/proc/sys/kernel/sched_schedstats || problem "cannot enable schedstats"
case $NEWIDLE in
measure)
	for f in NI_RANDOM NI_RATE; do
		grep -qw "$f" "$FEAT" || continue
		echo "NO_$f" >"$FEAT" || problem "cannot clear $f"
	done
	;;
shipped) ;;
*) problem "sfp.newidle=$NEWIDLE: want measure or shipped" ;;
esac
for f in $(echo "$FEATURES" | tr ',' ' '); do
	echo "$f" >"$FEAT" || problem "cannot set sched feature $f"
done
env_cpus=$(grep -c ^processor /proc/cpuinfo)
env_release=$(uname -r)
env_features=$(tr ' ' ',' <"$FEAT")
echo "sfp-bench env cpus=$env_cpus release=$env_release dur=$DUR rrwork=$RRWORK poolwork=$POOLWORK perffreq=$FREQ newidle=$NEWIDLE features=$env_features"

: >"$T/set_ftrace_filter"
# A function the compiler inlined (sched_balance_newidle() in the 6.19
# and 7.1 builds) cannot be profiled: said once, its figures stay empty.
for f in $FUNCS; do
	k=
	for o in "$f=$f" $OLDNAMES; do
		[ "${o#*=}" = "$f" ] || continue
		grep -qx "${o%%=*}" "$T/available_filter_functions" && k=${o%%=*} && break
	done
	if [ -z "$k" ]; then
		echo "sfp-bench note: $f is not traceable on this kernel (inlined): no profiler figures for it"
		continue
	fi
	echo "$k" >>"$T/set_ftrace_filter" || problem "cannot profile $k"
done

# An awk function: name(SYM) is SYM under its newer name (OLDNAMES).
AWK_NAMES='
	function name(sym,    i, m, p) {
		m = split(old, p, " ")
		for (i = 1; i <= m; i++)
			if (index(p[i], sym "=") == 1) return substr(p[i], length(sym) + 2)
		return sym
	}'

# fprof_snap FILE: the profiler's hits and time per function, summed over
# CPUs, as "function hits microseconds" lines.
fprof_snap() {
	cat "$T"/trace_stat/function* | awk -v funcs="$FUNCS" -v old="$OLDNAMES" "$AWK_NAMES"'
		BEGIN { n = split(funcs, f, " "); for (i = 1; i <= n; i++) { hits[f[i]] = 0; us[f[i]] = 0 } }
		name($1) in hits {
			k = name($1)
			hits[k] += $2
			t = $3
			if ($4 == "ns") t /= 1000
			else if ($4 == "ms") t *= 1000
			else if ($4 == "s") t *= 1000000
			us[k] += t
		}
		END { for (i = 1; i <= n; i++) printf "%s %d %.1f\n", f[i], hits[f[i]], us[f[i]] }' >"$1"
}

# fprof WORKLOAD BEFORE AFTER: the profiler lines of one workload.
fprof() {
	awk -v wl="$1" 'FNR == NR { h[$1] = $2; t[$1] = $3; next }
		{ printf "sfp-bench %s fprof func=%s hits=%d time_us=%.1f\n", wl, $1, $2 - h[$1], $3 - t[$1] }' "$2" "$3"
}

# perfsum WORKLOAD: total cpu-clock samples and the functions' shares.
perfsum() {
	perf report -i /tmp/perf.data --stdio -n -q --sort sym 2>/tmp/perf-report.err |
		awk -v wl="$1" -v funcs="$FUNCS" -v old="$OLDNAMES" "$AWK_NAMES"'
		BEGIN { n = split(funcs, f, " "); for (i = 1; i <= n; i++) s[f[i]] = 0 }
		NF >= 4 && $1 ~ /%$/ {
			total += $2
			if (name($NF) in s) s[name($NF)] += $2
			if (top < 5) { top++; tops = tops (tops ? "," : "") $NF ":" $2 }
		}
		END {
			printf "sfp-bench %s perf total_samples=%d top=%s\n", wl, total, tops
			for (i = 1; i <= n; i++)
				printf "sfp-bench %s perf func=%s samples=%d\n", wl, f[i], s[f[i]]
		}'
}

# gate WORKLOAD: the other newly-idle gate, avg_idle against the domains'
# max_newidle_lb_cost (both in us; costs as the largest over domains).
gate() {
	cost=$(cat /sys/kernel/debug/sched/domains/cpu*/domain*/max_newidle_lb_cost 2>/dev/null |
		awk '$1 > m { m = $1 } END { if (NR) printf "%.0f", m / 1000 }')
	idle=$(awk '$1 == ".avg_idle" { s += $3; n++ } END { if (n) printf "%.0f", s / n / 1000 }' "${FEAT%/*}/debug")
	echo "sfp-bench $1 gate max_newidle_lb_cost_us=${cost:-?} mean_avg_idle_us=${idle:-?}"
}

# The domain levels' names, lowest first: schedstat version 17 prints
# them itself; before, the debugfs of sched_verbose has them.
NAMES=$(for d in /sys/kernel/debug/sched/domains/cpu0/domain*; do
	cat "$d/name" 2>/dev/null || echo "?"
done | tr '\n' ' ')

# lbsplit WORKLOAD BEFORE AFTER: from two copies of /proc/schedstat, the
# newly-idle load-balance counters over the run, summed over CPUs: one
# "lb level=N" line per domain level and one "lb level=all" line (the
# sums over levels; attempts = the lowest level's lb_count, since every
# attempt starts there; idle_entries = sched_goidle). Versions 15 and 16:
# 8 counters per idle type (lb_count balanced failed imbalance gained
# hot_gained nobusyq nobusyg), 17: 11 (lb_count balanced failed
# imbalance_load _util _task _misfit gained hot_gained nobusyq nobusyg)
# and the level's name before its mask. The newly-idle type is the third.
lbsplit() {
	awk -v wl="$1" -v names="$NAMES" '
	FNR == 1 { f++ }
	$1 == "version" { ver = $2; next }
	$1 ~ /^cpu[0-9]/ {
		cpu = $1
		if (f == 1) goidle[cpu] = $5; else idle += $5 - goidle[cpu]
		next
	}
	$1 ~ /^domain[0-9]/ {
		lvl = substr($1, 7) + 0
		if (ver >= 17) { per = 11; skip = 3; g = 8; q = 10; b = 11; nm[lvl] = $2 }
		else { per = 8; skip = 2; g = 5; q = 7; b = 8 }
		o = skip + 2 * per
		split("1 2 3 " g " " q " " b, ix, " ")
		for (i = 1; i <= 6; i++) {
			k = cpu SUBSEP lvl SUBSEP i
			if (f == 1) base[k] = $(o + ix[i])
			else d[lvl, i] += $(o + ix[i]) - base[k]
		}
		if (f == 2) { n[lvl]++; if (lvl > top) top = lvl }
	}
	END {
		if (ver < 15 || ver > 17) { print "sfp-bench " wl " lb error=schedstat-version-" ver; exit }
		split(names, dn, " ")
		split("lb_count lb_balanced lb_failed lb_gained lb_nobusyq lb_nobusyg", key, " ")
		for (l = 0; l <= top; l++) {
			line = "sfp-bench " wl " lb level=" l " name=" (l in nm ? nm[l] : (dn[l + 1] ? dn[l + 1] : "?")) " cpus=" n[l]
			for (i = 1; i <= 6; i++) { line = line " " key[i] "=" d[l, i]; s[i] += d[l, i] }
			print line
		}
		line = "sfp-bench " wl " lb level=all levels=" (top + 1) " idle_entries=" idle " attempts=" d[0, 1]
		for (i = 1; i <= 6; i++) line = line " " key[i] "=" s[i]
		print line
	}' "$2" "$3"
}

# count WORKLOAD COMMAND...: the workload alone. In the cost mode sfp_mark
# copies /proc/schedstat right after the first mark and right before the
# second, so that schedstat and the plugin count over the same window.
count() {
	wl=$1
	shift
	if [ "$COST" = 1 ]; then
		sfp_mark begin "$MARK" /tmp/schedstat.before || problem "sfp_mark failed"
	else
		cat /proc/schedstat >/tmp/schedstat.before
	fi
	if "$@" >/tmp/out 2>/tmp/err; then
		if [ "$COST" = 1 ]; then
			sfp_mark end $((MARK + 1)) /tmp/schedstat.after || problem "sfp_mark failed"
			echo "sfp-bench $wl cost marks=$MARK,$((MARK + 1))"
			MARK=$((MARK + 2))
		else
			cat /proc/schedstat >/tmp/schedstat.after
		fi
		lbsplit "$wl" /tmp/schedstat.before /tmp/schedstat.after
		sed "s/^/sfp-bench $wl count /" /tmp/out
	else
		sed "s/^/sfp-bench $wl count stderr: /" /tmp/err
		problem "$wl failed in the count phase"
	fi
	gate "$wl"
}

# writes WORKLOAD COMMAND...: the workload under the write watchpoints.
writes() {
	wl=$1
	shift
	if [ -z "$WARGS" ]; then
		problem "no sfp.offsets on the command line: cannot count writes"
		return
	fi
	# shellcheck disable=SC2086 # WARGS is a list of options
	if sfp_writes $WARGS -- "$@" >/tmp/out 2>/tmp/err; then
		sed "s/^/sfp-bench $wl writes /" /tmp/out
	else
		sed "s/^/sfp-bench $wl writes stderr: /" /tmp/err
		problem "$wl failed under sfp_writes"
	fi
}

# watch_events WORKLOAD PHASE: perf script's watchpoint hits (-F
# cpu,time,comm,event,ip,sym, with call chains) on stdin, one line each:
#   sfp-bench WL PHASE ev cpu=N t=SECONDS comm=TASK addr=ADDRESS chain=F1<F2<...
# the kernel call chain innermost first, folded.
watch_events() {
	awk -v wl="$1" -v phase="$2" '
		function flush() { if (h != "") print h " chain=" ch; h = ""; ch = "" }
		/^[ \t]*$/ { flush(); next }
		# COMM [CPU] TIME: mem:ADDRESS:w: (COMM padded, may hold spaces)
		match($0, /\[[0-9]+\] +[0-9.]+: +mem:[^ ]+:/) {
			flush()
			head = substr($0, RSTART, RLENGTH)
			comm = substr($0, 1, RSTART - 1)
			sub(/^ +/, "", comm); sub(/ +$/, "", comm); gsub(/ /, "_", comm)
			split(head, p, /[][ :]+/)
			h = sprintf("sfp-bench %s %s ev cpu=%d t=%s comm=%s addr=%s", wl, phase, p[2], p[3], comm, p[5])
			next
		}
		h != "" && /^[ \t]+[0-9a-f]+ / { sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); if (length(ch) < 400) ch = ch (ch ? "<" : "") sym }
		END { flush() }'
}

# classify WORKLOAD COMMAND...: the workload under perf record, one per
# CPU, with three write watchpoints each (x86 has four debug registers):
# the overload indicator, and that CPU's lowest domain's newly-idle
# lb_count (a balance starts) and lb_gained (it pulled). Every write is
# printed with its CPU, time, task and kernel call chain, for the host to
# tell what set the indicator before each newly-idle balance
# (scripts/bench-report.py). Only on a kernel with the indicator.
classify() {
	wl=$1
	shift
	# Baseline has no indicator (no -o), and a kernel built before the
	# offsets existed no CARGS.
	case "$WARGS" in *-o*) ;; *) return 0 ;; esac
	[ -n "$CARGS" ] || return 0
	# Before v6.10 the root-level pass stores the indicator whether or not
	# it changes, so a write is not a flip and the replay cannot work.
	case $env_release in
	[1-5].* | 6.[0-9].* | 6.[0-9]-*)
		echo "sfp-bench $wl classify skipped: kernel $env_release stores the indicator unchanged"
		return 0
		;;
	esac
	# shellcheck disable=SC2086 # WARGS and CARGS are lists of options
	if ! sfp_writes -A $WARGS $CARGS >/tmp/addrs 2>/tmp/err; then
		sed "s/^/sfp-bench $wl classify stderr: /" /tmp/err
		problem "$wl: cannot find the addresses to watch"
		return
	fi
	ind=$(awk '$1 == "indicator" { print $2 }' /tmp/addrs)
	pids=
	while read -r what c cnt gain; do
		[ "$what" = cpu ] || continue
		perf record -q --no-buildid --no-buildid-cache -g -C "$c" -o "/tmp/classify.$c" \
			-e "mem:$ind/1:w" -e "mem:$cnt/4:w" -e "mem:$gain/4:w" 2>"/tmp/classify.$c.err" &
		pids="$pids $!"
	done </tmp/addrs
	sleep 1
	# The indicator's value once perf records: the replay starts from it.
	# shellcheck disable=SC2086 # WARGS and CARGS are lists of options
	sfp_writes -A $WARGS $CARGS 2>/dev/null | sed "s/^/sfp-bench $wl classify addr /"
	if "$@" >/tmp/out 2>/tmp/err; then :; else
		sed "s/^/sfp-bench $wl classify stderr: /" /tmp/err
		problem "$wl failed under the classification"
	fi
	# shellcheck disable=SC2086 # a list of PIDs
	kill -INT $pids
	wait
	for f in /tmp/classify.[0-9]*; do
		case $f in *.err) continue ;; esac
		[ -s "$f.err" ] && sed "s/^/sfp-bench $wl classify stderr: /" "$f.err"
		# One line per write: "cpu time comm event" then the chain,
		# innermost first, folded.
		perf script -i "$f" -F cpu,time,comm,event,ip,sym 2>/dev/null | watch_events "$wl" classify
		rm -f "$f" "$f.err"
	done
}

# tickstate: "NOHZ_CPUS TICK_STOPS" from /proc/timer_list: the CPUs whose
# tick may stop when idle (.nohz, .nohz_mode before v6.10), and the idle
# entries since boot that stopped it (.idle_sleeps, all CPUs). Only a CPU
# with its tick stopped is one the idle balance refreshes, so with no stop
# during a workload no refresh can happen. "- -" if the file cannot be read.
tickstate() {
	awk '($1 == ".nohz" || $1 == ".nohz_mode") && $3 != 0 { n++ }
		$1 == ".idle_sleeps" { s += $3; seen = 1 }
		END { if (seen) printf "%d %d\n", n, s; else print "- -" }' /proc/timer_list 2>/dev/null ||
		echo "- -"
}

# refresh WORKLOAD COMMAND...: the workload under perf record with a write
# watchpoint on nohz.next_blocked on every CPU. _nohz_idle_balance()
# writes it when a stats pass refreshed the blocked load of the idle
# CPUs; the newly-idle exit's kick (nohz_newidle_balance(), run by
# nohz_run_idle_balance() before the CPU idles) and the tick's stats kick
# (nohz_balancer_kick(), run in the softirq) both end there. One line per
# workload: the count by path, and the longest time between two
# refreshes (how stale the blocked load got), and tickstate's CPUs and
# the tick stops during the workload. The watch spans the workload alone.
refresh() {
	wl=$1
	shift
	if [ -z "$NBOFF" ]; then
		echo "sfp-bench $wl refresh skipped: no nohz_next_blocked offset (a kernel without NO_HZ_COMMON)"
		return 0
	fi
	base=$(awk '$3 == "nohz" { print $1 }' /proc/kallsyms)
	case $base in
	'' | *[!0-9a-f]*)
		problem "$wl: fair.c's nohz is not in /proc/kallsyms exactly once"
		return
		;;
	esac
	nb=$(printf '0x%x' $((0x$base + NBOFF)))
	# perf starts the workload once the watchpoints are armed.
	rm -f /tmp/refresh
	tick0=$(tickstate)
	if ! perf record -q --no-buildid --no-buildid-cache -g -a -o /tmp/refresh \
		-e "mem:$nb/8:w" -- "$@" >/tmp/out 2>/tmp/err; then
		sed "s/^/sfp-bench $wl refresh stderr: /" /tmp/err
		problem "$wl failed under the refresh watch"
		return
	fi
	tick1=$(tickstate)
	if ! perf script -i /tmp/refresh -F cpu,time,comm,event,ip,sym >/tmp/refresh.txt 2>/tmp/err; then
		sed "s/^/sfp-bench $wl refresh stderr: /" /tmp/err
		problem "$wl: perf script could not read the refresh watch"
		return
	fi
	# The innermost caller that tells the path: the idle loop (the kick
	# runs from do_idle(); nohz_run_idle_balance() tail-calls
	# _nohz_idle_balance(), so its own frame may be gone) or the softirq.
	watch_events "$wl" refresh </tmp/refresh.txt | awk -v wl="$wl" -v t0="$tick0" -v t1="$tick1" '
		{
			t = $6; sub(/^t=/, "", t)
			ch = $NF; sub(/^chain=/, "", ch)
			n = split(ch, f, "<")
			path = "other"
			for (i = 1; i <= n; i++) {
				if (f[i] == "nohz_run_idle_balance" || f[i] == "do_idle") { path = "newidle"; break }
				if (f[i] ~ /^(nohz_idle_balance|sched_balance_softirq|run_rebalance_domains|handle_softirqs|__do_softirq)$/) break
			}
			if (path == "newidle") newidle++; else other++
			if (NR > 1 && t - last > gap) gap = t - last
			last = t
		}
		END {
			split(t0, a, " "); split(t1, b, " ")
			stops = (a[2] == "-" || b[2] == "-") ? "-" : b[2] - a[2]
			printf "sfp-bench %s refresh newidle=%d other=%d max_gap_ms=%.3f nohz_cpus=%s tick_stops=%s\n",
				wl, newidle, other, 1000 * gap, b[1], stops
		}'
	rm -f /tmp/refresh /tmp/refresh.txt
}

# profile WORKLOAD COMMAND...: the workload under the profiler and perf.
profile() {
	wl=$1
	shift
	fprof_snap /tmp/fprof.before
	if perf record -q --no-buildid --no-buildid-cache -e cpu-clock -F "$FREQ" -a -o /tmp/perf.data -- "$@" >/tmp/out 2>/tmp/err; then
		sed "s/^/sfp-bench $wl profile /" /tmp/out
	else
		sed "s/^/sfp-bench $wl profile stderr: /" /tmp/err
		problem "$wl failed under perf record"
	fi
	fprof_snap /tmp/fprof.after
	fprof "$wl" /tmp/fprof.before /tmp/fprof.after
	perfsum "$wl"
	[ -s /tmp/perf-report.err ] && sed "s/^/sfp-bench $wl perf stderr: /" /tmp/perf-report.err
	rm -f /tmp/perf.data
}

# sfp.trace=1: a diagnostic, not a measurement: 1 s of rr under the
# sched_switch and sched_wakeup trace events, dumped to the log.
TRACE=$(arg sfp.trace 0)
if [ "$TRACE" = 1 ]; then
	echo 0 >"$T/tracing_on"
	: >"$T/trace"
	echo 1 >"$T/events/sched/sched_switch/enable"
	echo 1 >"$T/events/sched/sched_wakeup/enable"
	echo 1 >"$T/events/sched/sched_wakeup_new/enable"
	echo 1 >"$T/tracing_on"
	sfp_rr -d 1 -w "$RRWORK" >/dev/null
	echo 0 >"$T/tracing_on"
	echo 0 >"$T/events/enable"
	sed 's/^/sfp-trace /' "$T/trace"
fi
# The mixed load's bursts: as many threads as CPUs, 30 ms of every 100.
NCPU=$(grep -c ^processor /proc/cpuinfo)
MIX="-b $NCPU -P 100 -O 30"
# The child group of cgpool, with the cpu controller (a task group).
if ! { echo +cpu >"$CG/cgroup.subtree_control" && mkdir -p "$CG/sfp"; }; then
	problem "cannot make the cpu cgroup $CG/sfp"
fi
count rr sfp_rr -d "$DUR" -w "$RRWORK"
# shellcheck disable=SC2086 # MIX is a list of options
count mix sfp_rr -d "$DUR" -w "$RRWORK" $MIX
count pool sfp_pool -d "$DUR" -w "$POOLWORK"
count cgpool sfp_pool -d "$DUR" -w "$POOLWORK" -g sfp
[ "$COST" = 1 ] && finish
writes rr sfp_rr -d "$DUR" -w "$RRWORK"
# shellcheck disable=SC2086 # MIX is a list of options
writes mix sfp_rr -d "$DUR" -w "$RRWORK" $MIX
writes pool sfp_pool -d "$DUR" -w "$POOLWORK"
writes cgpool sfp_pool -d "$DUR" -w "$POOLWORK" -g sfp
classify rr sfp_rr -d "$DUR" -w "$RRWORK"
# shellcheck disable=SC2086 # MIX is a list of options
classify mix sfp_rr -d "$DUR" -w "$RRWORK" $MIX
refresh rr sfp_rr -d "$DUR" -w "$RRWORK"
# shellcheck disable=SC2086 # MIX is a list of options
refresh mix sfp_rr -d "$DUR" -w "$RRWORK" $MIX
# sparse: one wake/sleep thread per CPU (a short chunk, then 2 ms
# asleep), nothing CPU-bound: the CPUs are idle most of the time and a
# tick rarely finds one busy, so the blocked load is refreshed by the
# newly-idle exit's kick or not often at all.
refresh sparse sfp_pool -d "$DUR" -c 0 -s "$NCPU" -w "$SPARSEWORK"
sleep 1
echo 1 >"$T/function_profile_enabled" || problem "cannot start the function profiler"
sleep 1
profile rr sfp_rr -d "$DUR" -w "$RRWORK"
profile pool sfp_pool -d "$DUR" -w "$POOLWORK"
finish
