#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Parse one guest run (KUnit KTAP on the console, kselftest TAP on ttyS1)
# with the tree's kunit.py and print the merged summary. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG -l LOGDIR -t TREE -k OBJDIR [-o RESULTS.tsv]

Read LOGDIR/console.log and LOGDIR/guest.log of a boot, parse every KTAP /
TAP stream with TREE's tools/testing/kunit/kunit.py parse, and print one
table (per suite, per test: pass / fail / skip) ending in
'N skipped' and 'N passed, N failed'. Rows also go to RESULTS.tsv
(default LOGDIR/results.tsv). Exit 1 if anything failed, was skipped (the
project's guest meets every prerequisite) or is missing. A test that
skipped with a reason starting 'precondition:' (it could not set up a
precondition in time, say a wakeup on a vCPU the host did not run)
stays skipped: that is neither a pass nor a failure of the mechanism.
EOF
}

LOGDIR=
TREE=
OBJ=
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	-l | --logdir) LOGDIR=${2:?}; shift 2 ;;
	-t | --tree) TREE=${2:?}; shift 2 ;;
	-k | --obj) OBJ=${2:?}; shift 2 ;;
	-o | --out) OUT=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
{ [ -n "$LOGDIR" ] && [ -n "$TREE" ] && [ -n "$OBJ" ]; } || die "need -l LOGDIR, -t TREE and -k OBJDIR (see --help)"
[ -f "$LOGDIR/console.log" ] || die "no console.log in '$LOGDIR'"
KUNIT_PY=$TREE/tools/testing/kunit/kunit.py
[ -f "$KUNIT_PY" ] || die "'$TREE' has no tools/testing/kunit/kunit.py"
need python3 python3
OUT=${OUT:-$LOGDIR/results.tsv}

args=()
extra=$LOGDIR/extra.tsv
: >"$extra"

# parse NAME FILE: kunit.py parse into NAME.json, noting the result.
parse() {
	python3 "$KUNIT_PY" parse --json="$LOGDIR/$1.json" "$2" >"$LOGDIR/$1.parsed" 2>&1 || true
}

# KUnit: built-in suites print KTAP on the console at boot.
if grep -q 'KTAP version' "$LOGDIR/console.log"; then
	parse kunit "$LOGDIR/console.log"
	args+=(--json kunit kunit "$LOGDIR/kunit.json")
	# KUnit flags a case not marked slow that ran for a second or more.
	grep 'Test should be marked slow' "$LOGDIR/console.log" | while read -r l; do
		printf 'kunit\tkunit\t(speed)\tFAIL\t%s\n' "$l"
	done >>"$extra" || true
elif grep -q '^CONFIG_[A-Z0-9_]*KUNIT_TEST=y' "$OBJ/.config"; then
	printf 'kunit\tkunit\t(boot)\tERROR\tKUnit tests are configured but the console has no KTAP\n' >>"$extra"
fi

# Guest programs: TAP between 'sfp-begin: NAME' and 'sfp-end: NAME rc=N'.
if [ -f "$LOGDIR/guest.log" ]; then
	tr -d '\r' <"$LOGDIR/guest.log" | awk -v dir="$LOGDIR" '
		/^sfp-begin: / { name = $2; file = dir "/guest-" name ".tap"; printf "" > file; next }
		/^sfp-end: / { close(file); print $2 "\t" substr($3, 4) > (dir "/guest-rc.tsv"); name = ""; next }
		name != "" { print > file }'
	while IFS=$'\t' read -r name rc; do
		parse "guest-$name" "$LOGDIR/guest-$name.tap"
		args+=(--json guest "$name" "$LOGDIR/guest-$name.json")
		if [ "$name" = kselftest ]; then
			# run_kselftest.sh nests each test's own KTAP under "# ", which
			# kunit.py parse reads as comments: its stream gives one result
			# per test program (exit status, timeout). The nested streams,
			# unprefixed, give the per-case results. The 6.1 harness
			# prints a skipped case as "ok N # SKIP reason", without its
			# name, which the parser takes for a missing case (an ERROR):
			# the name is put back from the harness's "#  RUN  NAME ..."
			# line before it.
			awk -v dir="$LOGDIR" '
				/^# selftests: [^:]*: / { name = $NF; file = dir "/kselftest-" name ".tap"; printf "" > file; print name; next }
				name != "" && /^(not )?ok [0-9]+ selftests: / { close(file); name = ""; next }
				name != "" && /^# / {
					l = substr($0, 3)
					if (l ~ /^#  RUN  +[^ ]+ \.\.\.$/) { c = l; sub(/^#  RUN  +/, "", c); sub(/ \.\.\.$/, "", c) }
					if (l ~ /^ok [0-9]+ # SKIP/ && c != "") sub(/ # SKIP/, " " c " # SKIP", l)
					print l > file
				}' "$LOGDIR/guest-kselftest.tap" >"$LOGDIR/kselftest-list"
			while read -r t; do
				parse "kselftest-$t" "$LOGDIR/kselftest-$t.tap"
				args+=(--json guest "$t" "$LOGDIR/kselftest-$t.json")
			done <"$LOGDIR/kselftest-list"
		fi
		if [ "$rc" != 0 ] && ! grep -q '"FAIL"\|"ERROR"' "$LOGDIR/guest-$name.json" 2>/dev/null; then
			printf 'guest\t%s\t(exit status)\tFAIL\texited with %s\n' "$name" "$rc" >>"$extra"
		fi
	done <"$LOGDIR/guest-rc.tsv"
fi

title="In-guest results: $(cat "$LOGDIR/boot.info" 2>/dev/null || echo "boot info missing")"
# The project's guest provides every prerequisite: a skip there is a bug,
# unless the test says that it could not set a precondition up in time
# (its skip reason starts 'precondition:', as the series' tests write it).
# The guest programs (guest-*.tap: the stress phase) say so the same way.
# The 6.1 kselftest harness prints a skipped case without its name.
{ cat "$LOGDIR/console.log" "$LOGDIR"/kselftest-*.tap "$LOGDIR"/guest-*.tap 2>/dev/null || true; } | tr -d '\r' |
	sed -n -e 's/^[[:space:]#]*ok [0-9][0-9]* \([^ #][^ ]*\) # SKIP precondition:.*/\1/p' \
		-e 's/^[[:space:]#]*ok [0-9][0-9]* # SKIP precondition:.*/(unnamed)/p' | sort -u >"$LOGDIR/precondition-skips"
"$ROOT/sfp" summarize --no-skips --precondition-skips "$LOGDIR/precondition-skips" \
	--title "$title" "${args[@]}" --tsv "$extra" --out "$OUT"
