# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
set -o pipefail # as in tests/check.sh, which sources this
# tests/check.sh, stages 3 to 7: the cases that build and boot kernels.
# Sourced; never run.

# main_job_cases LINE: the main job (./sfp run) on LINE. Its own
# stages (build, guest, boot, tests) print their wall times; its results
# are merged into make check's, the source column saying the line.
main_job_cases() {
	local l=$1 run_rc=0 t0 src v lres logs
	t0=$EPOCHSECONDS
	src=$(line_source "$l")
	v=$(source_version "$src")
	echo "==> main job, line $l: Linux $v from $src"
	on_line "$l" "$SFP" run || run_rc=$?
	logs=$(kernel_logs "$BUILD_TOP/$l" patched)
	lres=$logs/results.tsv
	if [ -s "$lres" ]; then
		awk -F'\t' -v OFS='\t' -v l="$l" '{ $1 = l "/" $1; print }' "$lres" >>"$CHK/main-job.tsv"
	else
		printf '%s/project\trun\tmain_job\tFAIL\t./sfp run exited %s before any test ran\n' "$l" "$run_rc" >>"$RESULTS"
	fi
	sed "s/^/line $l: /" "$logs/stage-times.tsv" >>"$STAGE_TIMES" 2>/dev/null || true
	printf 'main job, line %s\t%s\n' "$l" "$((EPOCHSECONDS - t0))" >>"$STAGE_TIMES"
	echo "<== main job, line $l: $((EPOCHSECONDS - t0))s"
}

# robot_cases LINE: what the kernel test robot would build, bounded:
# kernel/sched/ objects only, per patch, per config, W=1 and sparse,
# arm64. Run it in a subshell: it selects the line.
robot_cases() {
	local l=$1
	stage_start "robot checks, line $l (kernel/sched/ objects)"
	use_line "$l"
	t robot_builds on_line "$l" "$SFP" robot --quick
	grep -E '^\| .* \| (FAILED|n/a)|^W=1|^    ' "$CHK/$SUITE.robot_builds.log" | sed 's/^/         /' || true
	stage_end
}

# tiny_initrd NAME INIT-SCRIPT: busybox and an init that misbehaves.
tiny_initrd() {
	local d=$CHK/initrd-$1
	mkdir -p "$d/bin"
	cp /bin/busybox "$d/bin/busybox"
	printf '#!/bin/busybox sh\n%s\n' "$2" >"$d/init"
	chmod +x "$d/init"
	(cd "$d" && find . | cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$CHK/$1.cpio.gz"
	echo "$CHK/$1.cpio.gz"
}

# watchdog_cases: a guest that hangs and one that panics are failures,
# booted on the default line's main kernel.
watchdog_cases() {
	local kimg hang panic
	kimg=$(kernel_obj "$BUILD" patched)/arch/x86/boot/bzImage
	stage_start "watchdog: hang and panic"
	if [ -f "$kimg" ]; then
		hang=$(tiny_initrd hang '/bin/busybox sleep 100000')
		panic=$(tiny_initrd panic 'exit 1')
		t guest_hang_reported expect_error "guest hung" \
			env BOOT_TIMEOUT=25 SMP=1 "$SFP" boot -k "$kimg" \
			-i "$hang" -l "$CHK/logs-hang"
		t guest_panic_reported expect_error "Kernel panic" \
			env BOOT_TIMEOUT=120 SMP=1 "$SFP" boot -k "$kimg" \
			-i "$panic" -l "$CHK/logs-panic"
	else
		printf 'project\tcheck\twatchdog\tFAIL\tno kernel was built\n' >>"$RESULTS"
	fi
	stage_end
}

# lava_compare: the main job's kernel booted as a LAVA job (lava-run)
# gives the same Result as its direct boot in main_job_cases, and LAVA's
# own records agree with the logs (sfp boot checks that).
lava_compare() {
	local direct
	direct=$(kernel_logs "$BUILD" patched)
	BOOT_BACKEND=lava "$SFP" run --boot-only -l "$CHK/lava-main" || return 1
	cat "$CHK/lava-main/lava/summary.txt"
	"$SFP" compare "$direct" "$CHK/lava-main"
}

# lava_failed_case: a guest whose test fails is a failed case in LAVA's
# records (and in their summary), not a passed job.
lava_failed_case() {
	local kimg=$1 tap rc=0
	tap=$(tiny_initrd tap '/bin/busybox mount -t devtmpfs dev /dev
echo "sfp: guest tiny up" >/dev/console
{ echo "sfp-begin: probe"; echo "ok 1 sfp_lava_pass"; echo "not ok 2 sfp_lava_fail"
  echo "sfp-end: probe rc=1"; echo sfp-done; } >/dev/ttyS1
/bin/busybox reboot -f')
	BOOT_BACKEND=lava BOOT_TIMEOUT=120 SMP=1 "$SFP" boot -k "$kimg" -i "$tap" \
		-l "$CHK/logs-lava-tap" || return 1
	grep -qxF "$(printf 'lava\tguest\tsfp_lava_fail\tFAIL\t')" "$CHK/logs-lava-tap/lava/lava-results.tsv" ||
		{ echo "LAVA did not record the failed case"; return 1; }
	"$SFP" summarize --title "LAVA's records" --tsv "$CHK/logs-lava-tap/lava/lava-results.tsv" >"$CHK/lava-tap.summary" || rc=$?
	tail -n 1 "$CHK/lava-tap.summary"
	[ "$rc" = 1 ] || { echo "the summary of a failed case passed"; return 1; }
}

# lava_cases: boots as LAVA jobs (lava-run, Debian's lava-dispatcher) on
# the default line's main kernel: the same Result as the direct boot, and
# a hang, a panic, a missing initramfs and a failed case each reported as
# what they are, within the boot's timeout.
lava_cases() {
	local kimg hang panic
	kimg=$(kernel_obj "$BUILD" patched)/arch/x86/boot/bzImage
	stage_start "LAVA: the main job as a LAVA job, and bad jobs"
	if [ ! -f "$kimg" ]; then
		printf 'project\tcheck\tlava\tFAIL\tno kernel was built\n' >>"$RESULTS"
	elif [ "$EUID" != 0 ]; then
		printf 'project\tcheck\tlava\tSKIP\t%s\n' "lava-run must run as root" >>"$RESULTS"
		echo "  skip   check.lava: lava-run must run as root"
	else
		t lava_main_job_matches_direct lava_compare
		grep -E 'LAVA|differences' "$CHK/check.lava_main_job_matches_direct.log" | sed 's/^/         /' || true
		hang=$(tiny_initrd hang '/bin/busybox sleep 100000')
		panic=$(tiny_initrd panic 'exit 1')
		t lava_hang_reported expect_error "guest hung: no power-off within 25s" \
			env BOOT_BACKEND=lava BOOT_TIMEOUT=25 SMP=1 "$SFP" boot -k "$kimg" \
			-i "$hang" -l "$CHK/logs-lava-hang"
		t lava_panic_reported expect_error "LAVA job failed: .*Kernel panic" \
			env BOOT_BACKEND=lava BOOT_TIMEOUT=120 SMP=1 "$SFP" boot -k "$kimg" \
			-i "$panic" -l "$CHK/logs-lava-panic"
		t lava_missing_initrd_refused expect_error "initramfs '$CHK/no-such.cpio.gz' not found" \
			env BOOT_BACKEND=lava "$SFP" boot -k "$kimg" \
			-i "$CHK/no-such.cpio.gz" -l "$CHK/logs-lava-noinitrd"
		t lava_failed_case_recorded lava_failed_case "$kimg"
	fi
	stage_end
}

# bench_cases: the benchmark's smoke round, and an output directory with
# earlier results in it refused.
bench_cases() {
	stage_start "bench: smoke A/B round"
	t bench_smoke "$ROOT/scripts/bench.sh" --smoke
	grep -E '^\[|^  smp2: |target: |smoke check|check not made' "$CHK/check.bench_smoke.log" | sed 's/^/         /' || true
	mkdir -p "$CHK/bench-used"
	: >"$CHK/bench-used/earlier-run"
	t bench_keeps_earlier_results expect_error "is not empty" "$ROOT/scripts/bench.sh" -o "$CHK/bench-used"
	stage_end
}

# debug_cases: the debug kernel, with the sched/debug race check (lockdep
# fires without patch 1 and stays quiet with it) and a 20 s stress.
debug_cases() {
	stage_start "debug kernel: the sched/debug race check, the tests, a short stress"
	t race_lockdep_check "$SFP" race --lockdep-only
	grep -E '^\| (unfixed|fixed) ' "$BUILD/race/report.md" | sed 's/^/         /' || true
	t stress_short "$SFP" stress -S 20
	grep -E 'sfp: patched' "$CHK/check.stress_short.log" | sed 's/^/         /' || true
	stage_end
}
