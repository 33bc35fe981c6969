# SPDX-License-Identifier: GPL-2.0
# One line per test case of a (K)TAP stream, for LAVA's monitors:
#
#	sfp-case: RESULT SUITE.CASE
#
# RESULT is pass, fail or skip (a precondition not met; any other skip is
# a fail, as in the host's Result); SUITE is the name of the test the case is
# nested in (4 spaces of indentation a level, as KUnit nests), or the
# stream's own name (-v stream=NAME) for a case at the top. A stream that
# run_kselftest.sh embeds under '# ' (a test program's own TAP, after its
# '# selftests: COLLECTION: PROGRAM' line) is a stream of its own, named
# PROGRAM, and a case of the 6.1 kselftest harness printed without its
# name ('ok N # SKIP reason') takes the name of the '#  RUN  NAME ...'
# line before it. These are the names and results the host's parser
# (kunit.py parse, harness/sfp_report.py) gives the same stream. A test
# whose nested cases are fewer than its plan ('1..N') promised adds a
# failed case SUITE.missing_M_of_N.

# The project's guest meets every prerequisite, so a skip is a failure
# unless it is an 'ok' whose reason starts 'precondition:' (one it could
# not set up in time), as the host's Result has it (harness/sfp_report.py).
# REASON is what follows '# SKIP': ' precondition: ...' exactly, as the host
# reads it.
function skip(ok, reason) {
	return (ok && reason ~ /^ precondition:/) ? "skip" : "fail"
}

function result(s, line,    depth, rest, ok, name, st, i, p, miss) {
	match(line, /^ */)
	depth = int(RLENGTH / 4)
	rest = substr(line, RLENGTH + 1)
	if (rest !~ /^(not ok|ok) [0-9]+/)
		return
	ok = (rest ~ /^ok/)
	sub(/^(not ok|ok) [0-9]+/, "", rest)
	# As kunit.py reads a result line: ' # SKIP' (in capitals) makes
	# a skip, whether ok or not ok; any other '#' must start ' # '.
	if (rest ~ /^ # SKIP/ || substr(rest, 1, 7) == "# SKIP") {
		name = ""
		st = skip(ok, substr(rest, index(rest, "# SKIP") + 6))
	} else if ((p = index(rest, " # SKIP")) > 0) {
		name = substr(rest, 1, p - 1)
		st = skip(ok, substr(rest, p + 7))
	} else {
		name = rest
		if ((p = index(rest, " # ")) > 0)
			name = substr(rest, 1, p - 1)
		if (name ~ /#/)
			return
		st = ok ? "pass" : "fail"
	}
	sub(/^ /, "", name)
	sub(/^- /, "", name)
	if (name == "" && run[s] != "")
		name = run[s]
	run[s] = ""
	if (name == "")
		name = "(unnamed)"
	# A test with cases nested under it is their suite, not a case;
	# fewer cases than its plan promised is a failure of its own.
	if (npend[s, depth + 1] > 0 || seen[s, depth + 1] > 0) {
		for (i = 1; i <= npend[s, depth + 1]; i++)
			print "sfp-case: " pend[s, depth + 1, i, "st"] " " name "." \
				pend[s, depth + 1, i, "name"]
		miss = plan[s, depth + 1] - seen[s, depth + 1]
		if (plan[s, depth + 1] != "" && miss > 0)
			print "sfp-case: fail " name ".missing_" miss "_of_" plan[s, depth + 1]
		npend[s, depth + 1] = 0
		seen[s, depth + 1] = 0
		plan[s, depth + 1] = ""
		seen[s, depth]++
		return
	}
	seen[s, depth]++
	if (depth == 0) {
		print "sfp-case: " st " " sname[s] "." name
		return
	}
	i = ++npend[s, depth]
	pend[s, depth, i, "name"] = name
	pend[s, depth, i, "st"] = st
}

# Cases whose suite never ended (a crash) are named by their
# '# Subtest:' line, or the stream's name.
function flush(s,    d, i, suite) {
	for (d = 1; d <= 8; d++) {
		suite = (sub_name[s, d] != "") ? sub_name[s, d] : sname[s]
		for (i = 1; i <= npend[s, d]; i++)
			print "sfp-case: " pend[s, d, i, "st"] " " suite "." pend[s, d, i, "name"]
		npend[s, d] = 0
	}
}

function line_of(s, line,    rest) {
	if (line ~ /^ *# Subtest: /) {
		match(line, /^ */)
		rest = line
		sub(/^ *# Subtest: /, "", rest)
		sub_name[s, int(RLENGTH / 4)] = rest
		return
	}
	if (line ~ /^ *1\.\.[0-9]+$/) {
		match(line, /^ */)
		rest = line
		sub(/^ *1\.\./, "", rest)
		if (RLENGTH > 0)
			plan[s, int(RLENGTH / 4)] = rest + 0
		return
	}
	if (line ~ /^#  RUN  +[^ ]+ \.\.\.$/) {
		rest = line
		sub(/^#  RUN  +/, "", rest)
		sub(/ \.\.\.$/, "", rest)
		run[s] = rest
		return
	}
	result(s, line)
}

BEGIN {
	sname[0] = stream
	inner = 0
}

{
	sub(/\r+$/, "")
}

/^# selftests: [^:]*: / {
	if (inner)
		flush(inner)
	inner++
	n = split($0, f, " ")
	sname[inner] = f[n]
	in_prog = 1
	next
}

/^(not ok|ok) [0-9]+ selftests: / {
	if (in_prog)
		flush(inner)
	in_prog = 0
	line_of(0, $0)
	next
}

in_prog && /^# / {
	line_of(inner, substr($0, 3))
	next
}

{
	line_of(0, $0)
}

END {
	if (in_prog)
		flush(inner)
	flush(0)
}
