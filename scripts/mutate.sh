#!/usr/bin/env bash
# Build and test the mutants of tests/mutants/ (patched with one mechanism
# removed or changed) and the baseline kernel with the kselftests, and
# print which test cases catch each. See --help.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

MUTANTS=$ROOT/tests/mutants

usage() {
	cat <<EOF
Usage: $PROG [VARIANT]...

Variants:
  patched     the control: 'patched' as it is; every test case must pass
  baseline    'baseline' (both features backed out) + the series'
              kselftests: the mechanism tests must fail
  NAME        'patched' + tests/mutants/NAME.patch, e.g.
$(for m in "$MUTANTS"/*.patch; do printf '                %s\n' "$(basename "$m" .patch)"; done)
Default: all of them. Each mutant file starts with two lines,
  mutant: what it changes
  expect: the test cases (suite.case) that must fail
then the diff against 'patched'. Every variant is built and booted by
scripts/run.sh -r REF [-p PATCH] -n mutant: one worktree and one build
directory for all, so each build after the first only recompiles what the
mutant touches (about 35 s per variant here, measured with make mutate).
A variant is 'caught' when every expected case fails. The table goes to
the terminal and to \$BUILD/mutate/table.md; the logs to
\$BUILD/mutate/NAME/.
Needs a prepared work tree (make prepare).
EOF
}

case ${1:-} in -h | --help) usage; exit 0 ;; esac
names=("$@")
if [ ${#names[@]} = 0 ]; then
	names=(patched)
	for m in "$MUTANTS"/*.patch; do names+=("$(basename "$m" .patch)"); done
	names+=(baseline)
fi
for n in "${names[@]}"; do
	case $n in patched | baseline) continue ;; esac
	[ -f "$MUTANTS/$n.patch" ] || die "unknown variant '$n': no tests/mutants/$n.patch (see --help)"
	grep -q '^expect: .' "$MUTANTS/$n.patch" || die "tests/mutants/$n.patch has no 'expect:' line"
done

WT=$BUILD/tree
[ -d "$WT/.git" ] || die "no work tree at $WT: run 'make prepare' first"
OUT=$BUILD/mutate
mkdir -p "$OUT"
# baseline's kselftests: what the series adds under tools/testing/selftests.
selftests_patch "$WT" "$OUT/selftests.patch"

table=$OUT/table.md
{
	echo "| variant | what | expected to fail | failed | verdict |"
	echo "|---|---|---|---|---|"
} >"$table"
rc=0
for n in "${names[@]}"; do
	case $n in
	patched) what="nothing (control)" expect='' args=(-r patched) ;;
	baseline)
		what="both feature patches (baseline + the kselftests)"
		expect="sched_fastpath_root_tg.root_tg.root_group_load_avg_untouched sched_fastpath_newidle.newidle.light_load_skips_balance"
		args=(-r baseline -p "$OUT/selftests.patch") ;;
	*)
		what=$(sed -n '1s/^mutant: //p' "$MUTANTS/$n.patch")
		expect=$(sed -n '2s/^expect: //p' "$MUTANTS/$n.patch")
		args=(-r patched -p "$MUTANTS/$n.patch") ;;
	esac
	stage_start "variant $n: $what"
	log=$OUT/$n
	rm -rf "$log"
	run_rc=0
	"$ROOT/scripts/run.sh" "${args[@]}" -n mutant >"$OUT/$n.out" 2>&1 || run_rc=$?
	cp -r "$BUILD/logs/mutant" "$log" 2>/dev/null || mkdir -p "$log"
	failed=$(failed_cases "$log/results.tsv" | sort | tr '\n' ' ')
	total=$(wc -l <"$log/results.tsv" 2>/dev/null || echo 0)
	verdict=caught
	if [ "$total" = 0 ]; then
		verdict="NO RESULT (build or boot failed, exit $run_rc: see $OUT/$n.out)"
	elif [ -z "$expect" ]; then
		[ -z "$failed" ] && verdict="clean ($total cases passed)" || verdict="CONTROL FAILED"
	else
		for e in $expect; do
			case " $failed " in *" $e "*) ;; *) verdict="MISSED: $e passed" ;; esac
		done
	fi
	case $verdict in caught | clean*) ;; *) rc=1 ;; esac
	printf '| %s | %s | %s | %s | %s |\n' "$n" "$what" "${expect:-none}" "${failed:-none}" "$verdict" >>"$table"
	say "$n: $verdict; failed: ${failed:-none}"
	stage_end
done
echo
cat "$table"
exit "$rc"
