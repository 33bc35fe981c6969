#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A/B benchmark: baseline and patched kernels with one config, booted in
# turn under QEMU, running the project's workloads. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [-t "TOPOLOGIES..."] [-d SECONDS] [-r REPS] [-F MODE] [-o OUTDIR] [--smoke]

Build 'baseline' (both mechanisms backed out) and 'patched' (the series)
from the prepared work tree with the same config (the fragments of kind
bench in sfp.toml [kinds]; no KUnit suites), then for every
repetition and vCPU count boot each kernel once per guest CPU topology,
alternating which goes first, and run in the guest
(scripts/guest/sfp_bench.sh):
  rr        sfp_rr: request/response over UNIX sockets, servers pinned to
            half the vCPUs: the light load (patch 3: newly-idle balance
            attempts per idle entry, and how many found nothing to do)
  mix       sfp_rr -b: the same with bursts of unpinned CPU-bound threads,
            real overload between light phases (patch 3 must keep the
            useful pulls: tasks gained by newly-idle balancing)
  pool      sfp_pool: CPU-bound and wake/sleep threads in the root group
            (patch 2: the root group's tg_load_avg over time)
  cgpool    sfp_pool -g: the same in a child cgroup, whose load_avg
            updates patch 2 must leave alone
each once alone (counters, throughput, latency, the newly-idle
load-balance counters of /proc/schedstat per domain level), once under
write watchpoints (writes to root_task_group.load_avg and the indicator),
rr and mix once with a watchpoint on the idle CPUs' blocked-load refresh
(nohz.next_blocked: how often, and whether the newly-idle exit's kick
started it), and, rr and pool, once under the ftrace function profiler and perf
record -e cpu-clock (calls, time and sample shares of
sched_balance_newidle, sched_balance_rq and task_tick_fair).
Then write OUTDIR/report.md with the tables and plots (scripts/bench-report.py).

Options:
  -t LIST    guest topologies of sfp.toml [topologies], quoted
             [default "smp2 smp8 smt2x2x2 sock4x2"]
  -s LIST    vCPU counts, quoted: the flat topologies smpN
  -d SEC     guest seconds per workload and phase [default 3]
  -r N       repetitions per kernel and topology [default 3]
  -F MODE    the sched features that skip newly-idle balances by a rule of
             their own (NI_RANDOM; NI_RATE on 7.1): 'measure' turns them
             off in both kernels, so that the counters show the overload
             gate alone; 'shipped' leaves them as the line ships them
             [default measure]
  -o DIR     output directory; must not hold an earlier run
             [default \$BUILD/bench/run-DATE-TIME; \$BUILD/bench/latest links it]
  -Q OPTS    extra QEMU options for every boot (sfp boot -Q), e.g.
             "-icount shift=1,sleep=off" for instruction-counted guest
             time; see docs/bench/README.md for what that changes (the
             guest loses its LAPIC timer: periodic ticks only)
  --smoke    one repetition on smp2 for 3 s, then check that every metric
             was collected and moved the expected way (what 'make check' runs)
Environment: MEM (guest MiB, default 1024), JOBS, BUILD ($BUILD),
BENCH_APPEND (more guest kernel command line, e.g. sfp.features=NO_DELAY_DEQUEUE
or sfp.rrwork=LOOPS; see scripts/guest/sfp_bench.sh),
BENCH_BASELINE and BENCH_PATCHED (commits of the work tree to build as the
two sides; default the branches 'baseline' and 'patched': e.g.
BENCH_PATCHED=baseline shows what the smoke checks say of a kernel
without the mechanisms).
Both kernels are built and booted by ./sfp run (-r REF -n
bench-baseline / bench-patched, then --boot-only per boot), in
\$BUILD/wt/bench-KERNEL; a rebuild only compiles what changed. A boot
that fails is retried once. docs/benchmark.md has the wall time of the
committed full run.
EOF
}

ARGS=$(printf '%q ' "$@")
ARGS=${ARGS% }
TOPOS="smp2 smp8 smt2x2x2 sock4x2"
DUR=3
REPS=3
OUT=
SMOKE=
NIMODE=measure
QOPTS=${QEMU_OPTS:-}
while [ $# -gt 0 ]; do
	case $1 in
	-t | --topologies) TOPOS=${2:?}; shift 2 ;;
	-s | --smp)
		TOPOS=
		for v in ${2:?}; do TOPOS="$TOPOS smp$v"; done
		shift 2
		;;
	-d | --duration) DUR=${2:?}; shift 2 ;;
	-r | --reps) REPS=${2:?}; shift 2 ;;
	-o | --out) OUT=${2:?}; shift 2 ;;
	-Q | --qemu-opts) QOPTS=${2:?}; shift 2 ;;
	-F | --newidle-features) NIMODE=${2:?}; shift 2 ;;
	--smoke) SMOKE=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
if [ -n "$SMOKE" ]; then
	TOPOS=smp2 DUR=3 REPS=1
fi
case $DUR in '' | *[!0-9]* | 0) die "-d wants a whole number of seconds > 0, not '$DUR'" ;; esac
case $REPS in '' | *[!0-9]* | 0) die "-r wants a number of repetitions > 0, not '$REPS'" ;; esac
[ -n "${TOPOS// /}" ] || die "-t wants at least one topology"
case $NIMODE in measure | shipped) ;; *) die "-F wants 'measure' or 'shipped', not '$NIMODE'" ;; esac
MEM=${MEM:-1024}
declare -A VCPUS=()
for t in $TOPOS; do
	# In this shell, so that an unknown name ends the run here.
	topology "$t" >/dev/null
	v=$(topology_vcpus "$t")
	VCPUS[$t]=$v
	{ [ "$v" -ge 2 ] && [ "$v" -le 8 ]; } || die "topology $t has $v vCPUs, outside 2..8 (the config has NR_CPUS=8; the workloads need 2)"
done
WT=$BUILD/tree
[ -d "$WT/.git" ] || die "no work tree at $WT: run 'make prepare' first"
declare -A REF=([baseline]=${BENCH_BASELINE:-baseline} [patched]=${BENCH_PATCHED:-patched})
for k in baseline patched; do
	git -C "$WT" rev-parse -q --verify "${REF[$k]}^{commit}" >/dev/null ||
		die "work tree $WT has no commit '${REF[$k]}' for $k: run 'make prepare'"
done
need gcc gcc
# Debian's python3 has Debian's matplotlib; a python3 earlier in PATH
# (pyenv, venv) may not.
PY=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import matplotlib' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || die "python3-matplotlib not found: install the Debian package 'python3-matplotlib' (or run 'make setup' as root)"
need perf linux-perf

B=$BUILD/bench
if [ -z "$OUT" ]; then
	OUT=$B/run-$(date +%Y%m%d-%H%M%S)
	[ -z "$SMOKE" ] || OUT=$B/smoke
	[ -z "$SMOKE" ] || rm -rf "$OUT"
fi
if [ -d "$OUT" ]; then
	out_files=$(ls -A "$OUT")
	[ -z "$out_files" ] || die "output directory '$OUT' is not empty: name a new one with -o"
elif [ -e "$OUT" ]; then
	die "output directory '$OUT' is not empty: name a new one with -o"
fi
mkdir -p "$OUT/raw" "$B/bin"
OUT=$(realpath "$OUT")
[ -n "$SMOKE" ] || ln -sfn "$OUT" "$B/latest"
# The bench kind (sfp.toml [kinds]): its config and its command
# line, sched_verbose for the domains' debugfs files (max_newidle_lb_cost)
# and RCU stall warnings off: under -icount, guest time once jumped 41 s in
# a busy phase (clocksource watchdog: "Long readout interval") and RCU
# printed a stall warning with a stack dump, which sfp boot counts as a
# failure. (sfp boot's own command line has oops=panic: an oops ends the
# boot.)
f=$(kernel_kind_fragments bench "$BUILD/tree")
CFGS=()
split_lines CFGS "$f"
GUEST_APPEND="sfp.dur=$DUR sfp.newidle=$NIMODE${BENCH_APPEND:+ $BENCH_APPEND}"

stage_start "workload programs"
for p in sfp_rr sfp_pool sfp_writes; do
	gcc -O2 -Wall -Werror -static -pthread -o "$B/bin/$p" "$ROOT/bench/$p.c" ||
		die "cannot build bench/$p.c"
done
install -m 755 "$ROOT/scripts/guest/sfp_bench.sh" "$B/bin/sfp_bench"
stage_end

# Each kernel is built by ./sfp run -r REF -n bench-KERNEL, in its own
# worktree laid out like the main tree, so ccache serves the second build
# from the first; later runs only rebuild what changed.
GUEST_OPTS=(-K bench -x "$B/bin/sfp_bench" -b "$B/bin/sfp_rr" -b "$B/bin/sfp_pool"
	-b "$B/bin/sfp_writes" --perf)
for k in baseline patched; do
	stage_start "build $k (${REF[$k]})"
	"$SFP" run -r "${REF[$k]}" -n "bench-$k" "${GUEST_OPTS[@]}" --build-only ||
		die "building $k (${REF[$k]}) failed"
	stage_end
done
kobj() { kernel_obj "$BUILD" "bench-$1" ref; }
ktree() { kernel_wt "$BUILD" "bench-$1"; }
# The offsets of the fields the write counter watches, as each kernel
# lays them out, for the guest's command line (sfp.offsets=NAME:BYTES,...).
declare -A OFFS=()
for k in baseline patched; do
	# Two steps: a failure of kernel-offsets.sh must reach the die, which
	# it would not through a pipe into awk.
	obj=$(kobj "$k")
	offs=$("$ROOT/scripts/kernel-offsets.sh" "$obj") ||
		die "cannot compute the field offsets of $k"
	OFFS[$k]=$(printf '%s\n' "$offs" | awk '{ printf "%s%s:%s", s, $1, $2; s = "," }')
done
# The same options set on both sides; patched's tree also knows the
# (unset) options of the test patches.
setopts() { grep '^CONFIG_' "$1"; }
cfg_a=$(kobj baseline)/.config
cfg_b=$(kobj patched)/.config
opts_a=$(setopts "$cfg_a")
opts_b=$(setopts "$cfg_b")
[ "$opts_a" = "$opts_b" ] ||
	die "baseline and patched were built with different configs ($cfg_a, $cfg_b)"

# meta: what the run was and where it ran, meta.tsv's rows.
meta() {
	local t k v c cfgs=
	printf 'command\t%s\n' "scripts/$PROG${ARGS:+ $ARGS}"
	printf 'topologies\t%s\ndur\t%s\nreps\t%s\nmem\t%s\n' "${TOPOS# }" "$DUR" "$REPS" "$MEM"
	printf 'newidle_features\t%s\n' "$NIMODE"
	for t in $TOPOS; do
		v=$(topology "$t")
		printf 'topology_%s\t%s\t%s\n' "$t" "${VCPUS[$t]}" "$v"
	done
	printf 'qemu_opts\t%s\n' "-accel tcg -cpu max${QOPTS:+ $QOPTS}"
	v=$(kernel_kind_append bench)
	printf 'append\t%s\n' "$v $GUEST_APPEND"
	for k in baseline patched; do printf 'offsets_%s\t%s\n' "$k" "${OFFS[$k]}"; done
	v=$(ktree patched)
	v=$(kernel_version "$v")
	printf 'version\t%s\n' "$v"
	v=$(wt_meta "$WT" source)
	printf 'source\t%s\n' "$v"
	for k in baseline patched; do
		v=$(ktree "$k")
		v=$(git -C "$v" log -1 --format='%H %s')
		printf 'commit_%s\t%s\n' "$k" "$v"
	done
	for c in "${CFGS[@]}"; do
		case $c in */kernel-config/*) c=kernel-config/${c##*/kernel-config/} ;; esac
		cfgs+="${cfgs:+ }$c"
	done
	v=$(cat "${CFGS[@]}" | sha256sum | cut -c1-16)
	printf 'config\t%s (sha256 %s)\n' "$cfgs" "$v"
	v=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo)
	printf 'host_cpu\t%s\n' "${v%%$'\n'*}"
	v=$(nproc)
	printf 'host_cpus\t%s\n' "$v"
	v=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
	printf 'host_mem\t%s\n' "$v"
	v=$(. /etc/os-release && echo "$PRETTY_NAME")
	printf 'host_os\t%s\n' "$v"
	v=$(qemu-system-x86_64 --version)
	printf 'qemu\t%s\n' "${v%%$'\n'*}"
	v=$(perf --version 2>/dev/null || echo none)
	printf 'perf\t%s\n' "$v"
	v=$(date -u '+%Y-%m-%d %H:%M UTC')
	printf 'date\t%s\n' "$v"
}
meta >"$OUT/meta.tsv"

ntopo=$(echo "$TOPOS" | wc -w)
total=$((REPS * ntopo * 2))
i=0
failed=0
retried=0
# boot_once KERNEL TOPOLOGY LOGDIR: boot, run the workloads; prints "ok"
# or what went wrong.
boot_once() {
	local log=$3 why
	TOPOLOGY=$2 MEM=$MEM BOOT_TIMEOUT=$((300 + 60 * DUR * ${VCPUS[$2]})) QEMU_OPTS=$QOPTS \
		APPEND="$GUEST_APPEND sfp.offsets=${OFFS[$1]}" \
		"$SFP" run -K bench -r "${REF[$1]}" -n "bench-$1" --boot-only -l "$log" >"$log.boot" 2>&1 || true
	if grep -q '^boot	' "$log/results.tsv" 2>/dev/null || [ ! -s "$log/results.tsv" ]; then
		why=$(grep -m1 'sfp: error' "$log.boot" || tail -n 1 "$log.boot")
		echo "boot failed ($why)"
	elif ! grep -q '^sfp-end: sfp_bench rc=0' "$log/guest.log"; then
		why=$(grep -m1 'sfp-bench error' "$log/guest.log" || echo 'see guest.log')
		echo "workload failed: $why"
	elif ! grep -q '^ok 1 guest_preconditions' "$log/guest.log"; then
		echo "guest preconditions failed (wrong kernel?)"
	else
		echo ok
	fi
}
runs_t0=$EPOCHSECONDS
stage_start "A/B runs: $REPS repetitions x topologies (${TOPOS# }) x 2 kernels = $total boots"
for rep in $(seq 1 "$REPS"); do
	j=0
	for v in $TOPOS; do
		# Alternate which kernel boots first, so drift hits both alike.
		if [ $(((rep + j) % 2)) = 1 ]; then order="baseline patched"; else order="patched baseline"; fi
		j=$((j + 1))
		for k in $order; do
			i=$((i + 1))
			log=$OUT/raw/$k-$v-r$rep
			t0=$EPOCHSECONDS
			status=$(boot_once "$k" "$v" "$log")
			if [ "$status" != ok ]; then
				# One retry: an emulator fault (a hang, a guest-time jump)
				# should not void a 30-boot run. Both attempts are kept
				# and the report counts retries.
				printf '[%d/%d] rep %d, %-8s %-8s FAILED: %s; retrying once\n' "$i" "$total" "$rep" "$v" "$k" "$status" >&2
				mv "$log" "$log.failed"
				mv "$log.boot" "$log.failed.boot"
				retried=$((retried + 1))
				status=$(boot_once "$k" "$v" "$log")
			fi
			rr=$(sed -n 's/^sfp-bench rr count .*tps=\([0-9.]*\).* newidle_per_idle=\([0-9.]*\).*/\2 newly-idle attempts per idle entry, \1 tps/p' "$log/guest.log" 2>/dev/null | head -n 1 || true)
			pool=$(sed -n 's/^sfp-bench pool count .*tg_load_avg_changes=\([0-9]*\).*/\1 root tg_load_avg changes/p' "$log/guest.log" 2>/dev/null | head -n 1 || true)
			mix=$(sed -n 's/^sfp-bench mix lb level=all .* lb_gained=\([0-9]*\).*/\1 tasks gained/p' "$log/guest.log" 2>/dev/null | head -n 1 || true)
			bad=
			[ "$status" = ok ] || bad="  FAILED: $status"
			printf '[%d/%d] rep %d, %-8s %-8s %4ds  rr: %s; mix: %s; pool: %s%s\n' "$i" "$total" "$rep" "$v" "$k" \
				"$((EPOCHSECONDS - t0))" "${rr:--}" "${mix:--}" "${pool:--}" "$bad" >&2
			[ "$status" = ok ] || failed=$((failed + 1))
		done
	done
done
stage_end
printf 'retried\t%s\n' "$retried" >>"$OUT/meta.tsv"
printf 'wall\t%s\n' "$total boots in $((EPOCHSECONDS - runs_t0)) s" >>"$OUT/meta.tsv"

stage_start report
args=()
[ -z "$SMOKE" ] || args+=(--check)
rc=0
"$PY" "$ROOT/scripts/bench-report.py" "${args[@]}" "$OUT" || rc=$?
stage_end
say "report: $OUT/report.md"
[ "$failed" = 0 ] || die "$failed of $total boots failed (logs under $OUT/raw)"
exit "$rc"
