#!/usr/bin/env bash
# Build and test the mutants of tests/mutants/LINE/ (patched with one mechanism
# removed or changed) and the baseline kernel with the kselftests, several
# boots each, and print which test cases catch each. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

MUTANTS=$ROOT/tests/mutants/$LINE
BOOTS=5
FROM_LOGS=

usage() {
	local mutants=("$MUTANTS"/*.patch) m examples='' i=0
	for m in "${mutants[@]}"; do
		[ "$i" -lt 6 ] || break
		m=${m##*/}
		examples+="${examples:+$'\n'}                ${m%.patch}"
		i=$((i + 1))
	done
	cat <<EOF
Usage: $PROG [-k BOOTS] [--from-logs] [VARIANT]...

Variants:
  patched     the control: 'patched' as it is; every test case must pass
  baseline    'baseline' (both features backed out) + the series'
              kselftests: the mechanism tests must fail
  NAME        'patched' + tests/mutants/LINE/NAME.patch, e.g.
$examples
              (${#mutants[@]} mutants in all)
Default: all of them. The mutants are the line's: here line $LINE,
tests/mutants/$LINE/ (LINE=X.Y or KSRC=... for another line).

  -k BOOTS    boot each variant BOOTS times (default $BOOTS). A mutant is
              'caught' only when every case on its expect: line fails in
              every boot; the control must pass everything in every boot.
  --from-logs build and boot nothing: recompute the verdicts and the table
              from the results of the boots an earlier run saved under
              \$BUILD/mutate/NAME/N/ (after an expect: line changed)

Each mutant file starts with two lines,
  mutant: what it changes
  expect: the test cases (suite.case) that must fail, or 'any' for
          a mutant written without reading the tests (blind-*): some
          case must fail in every boot
then the diff against 'patched'. Every variant is built once and booted by
scripts/repeat.sh -o \$BUILD/mutate/NAME BOOTS -- -r REF [-p PATCH] -n mutant
(one run.sh --build-only, then BOOTS run.sh --boot-only): one worktree and
one build directory for all, so each build after the first only
recompiles what the mutant touches. Per boot, repeat.sh's line (in
\$BUILD/mutate/NAME.repeat) has the kselftests' light-load and control
figures.

Writes \$BUILD/mutate/table.md: one row per variant (the cases that failed,
with in how many boots when not in all), then one row per test case of the
control with the variants it catches; a case that catches nothing gives
the reason listed in tests/mutants/LINE/no-catcher.txt, or is reported. Logs:
\$BUILD/mutate/NAME/N/. Exit status 1 if a mutant is missed, the
control fails, or a case has neither a catcher nor a reason.
Needs a prepared work tree (make prepare).
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--from-logs) FROM_LOGS=1; shift ;;
	-k)
		BOOTS=${2:-}
		case $BOOTS in '' | *[!0-9]* | 0) die "-k needs a number of boots, 1 or more (see --help)" ;; esac
		shift 2 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
names=("$@")
if [ ${#names[@]} = 0 ]; then
	names=(patched)
	for m in "$MUTANTS"/*.patch; do names+=("$(basename "$m" .patch)"); done
	names+=(baseline)
fi
for n in "${names[@]}"; do
	case $n in patched | baseline) continue ;; esac
	[ -f "$MUTANTS/$n.patch" ] || die "unknown variant '$n': no tests/mutants/$LINE/$n.patch (see --help)"
	grep -q '^expect: .' "$MUTANTS/$n.patch" || die "tests/mutants/$LINE/$n.patch has no 'expect:' line"
done

WT=$BUILD/tree
[ -d "$WT/.git" ] || die "no work tree at $WT: run 'make prepare' first"
OUT=$BUILD/mutate
mkdir -p "$OUT"
# baseline's kselftests: what the series adds under tools/testing/selftests.
selftests_patch "$WT" "$OUT/selftests.patch"

rows=$OUT/rows.md
: >"$rows"
declare -A catches=()
cases=()
rc=0
for n in "${names[@]}"; do
	case $n in
	patched) what="nothing (control)" expect='' args=(-r patched) ;;
	baseline)
		what="both feature patches (baseline + the kselftests)"
		expect=$(grep -v '^#' "$ROOT/tests/baseline-fails" | tr '\n' ' ')
		args=(-r baseline -p "$OUT/selftests.patch") ;;
	*)
		what=$(sed -n '1s/^mutant: //p' "$MUTANTS/$n.patch")
		expect=$(sed -n '2s/^expect: //p' "$MUTANTS/$n.patch")
		args=(-r patched -p "$MUTANTS/$n.patch") ;;
	esac
	stage_start "variant $n: $what ($BOOTS boots)"
	declare -A nfail=()
	caught=0 noresult='' passed=0 unmet=0 unmet_cases=''
	run_rc=0
	[ -n "$FROM_LOGS" ] ||
		"$ROOT/scripts/repeat.sh" -o "$OUT/$n" "$BOOTS" -- "${args[@]}" -n mutant \
			>"$OUT/$n.repeat" 2>&1 || run_rc=$?
	for b in $(seq 1 "$BOOTS"); do
		log=$OUT/$n/$b
		total=$(wc -l <"$log/results.tsv" 2>/dev/null || echo 0)
		if [ "$total" = 0 ]; then
			noresult="NO RESULT in boot $b (build or boot failed, exit $run_rc: see $OUT/$n.repeat and $log.out)"
			say "$n boot $b: no result"
			break
		fi
		if [ "$n" = patched ]; then
			got=$(awk -F'\t' '{ print $2 "." $3 }' "$log/results.tsv")
			split_lines cases "$got"
		fi
		got=$(failed_cases "$log/results.tsv" | sort)
		failed=()
		split_lines failed "$got"
		for f in "${failed[@]}"; do nfail[$f]=$((${nfail[$f]:-0} + 1)); done
		[ ${#failed[@]} -gt 0 ] || passed=$((passed + 1))
		# An expected case that skipped because its precondition could
		# not be set up (summarize.py's note) gives this boot no verdict:
		# neither caught nor missed. Here-strings, not pipes: under
		# pipefail, grep -q leaving at its first match could fail the
		# writer with SIGPIPE and so turn a caught boot into a missed one.
		skipped=$(precondition_skips "$log/results.tsv")
		all=1 skip=''
		if [ "$expect" = any ]; then
			[ ${#failed[@]} -gt 0 ] || all=0
		else
			for e in $expect; do
				grep -qxF -- "$e" <<<"$got" && continue
				if grep -qxF -- "$e" <<<"$skipped"; then skip+="$e "; else all=0; fi
			done
		fi
		if [ "$all" = 1 ] && [ -n "$skip" ]; then
			unmet=$((unmet + 1))
			unmet_cases+="$skip"
			say "$n boot $b: no verdict: the precondition of ${skip% } was not met"
		elif [ "$all" = 1 ]; then
			caught=$((caught + 1))
		fi
		got=
		for f in "${failed[@]}"; do got+="$f; "; done
		say "$n boot $b: failed: ${got:-; }"
	done
	# failed cases, with the number of boots when not every boot
	failed_col=
	got=$(printf '%s\n' "${!nfail[@]}" | sort)
	keys=()
	split_lines keys "$got"
	for f in "${keys[@]}"; do
		[ -n "$f" ] || continue
		if [ "${nfail[$f]}" = "$BOOTS" ]; then
			failed_col+="$f; "
			[ -z "$expect" ] || catches[$f]+="$n "
		else
			failed_col+="$f ($((nfail[$f]))/$BOOTS); "
		fi
	done
	unset nfail
	if [ -n "$noresult" ]; then
		verdict=$noresult
	elif [ -z "$expect" ]; then
		if [ "$passed" = "$BOOTS" ]; then verdict="clean in $BOOTS/$BOOTS boots"; else verdict="CONTROL FAILED in $((BOOTS - passed))/$BOOTS boots"; fi
	elif [ "$caught" = "$BOOTS" ]; then
		verdict="caught $BOOTS/$BOOTS"
	elif [ "$caught" -gt 0 ] && [ $((caught + unmet)) = "$BOOTS" ]; then
		unmet_cases=$(tr ' ' '\n' <<<"$unmet_cases" | sort -u | tr '\n' ' ')
		unmet_cases=${unmet_cases# }
		verdict="caught $caught/$caught with a verdict (precondition unmet in $unmet/$BOOTS boots: ${unmet_cases% })"
	elif [ "$unmet" = "$BOOTS" ]; then
		verdict="NO VERDICT: a precondition unmet in every boot"
	else
		verdict="MISSED in $((BOOTS - caught))/$BOOTS boots"
	fi
	case $verdict in caught* | clean*) ;; *) rc=1 ;; esac
	printf '| %s | %s | %s | %s | %s |\n' "$n" "$what" "${expect:-none}" "${failed_col:-none}" "$verdict" >>"$rows"
	say "$n: $verdict; failed: ${failed_col:-none}"
	stage_end
done

# Which variants each case of the control catches (fails in every boot).
reasons=$MUTANTS/no-catcher.txt
table=$OUT/table.md
{
	echo "Made by: scripts/mutate.sh -k $BOOTS${FROM_LOGS:+ --from-logs}${*:+ $*}"
	echo
	echo "| variant | what | expected to fail | failed (boots, if not all) | verdict |"
	echo "|---|---|---|---|---|"
	cat "$rows"
	if [ ${#cases[@]} -gt 0 ]; then
		echo
		echo "| test case | caught variants (failed in every boot) |"
		echo "|---|---|"
		for c in "${cases[@]}"; do
			by=${catches[$c]:-}
			if [ -z "$by" ]; then
				why=$(awk -v c="$c" 'index($0, c ": ") == 1 { print substr($0, length(c) + 3) }' "$reasons" 2>/dev/null)
				if [ -n "$why" ]; then by="none: $why"; else by="NONE, and no reason in tests/mutants/$LINE/no-catcher.txt"; fi
			fi
			echo "| $c | $by |"
		done
	fi
} >"$table"
if [ ${#cases[@]} -gt 0 ] && grep -q '| NONE, and no reason' "$table" && [ $# = 0 ]; then
	rc=1
fi
echo
cat "$table"
exit "$rc"
