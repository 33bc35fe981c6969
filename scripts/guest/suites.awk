# SPDX-License-Identifier: GPL-2.0
# The 'sfp-case: RESULT SUITE.CASE' lines of cases.awk, grouped by SUITE
# (the name up to the first '.'), each group between
#
#	sfp-suite: SUITE
#	...
#	sfp-suite-end: SUITE
#
# and the groups in the order of their names, byte by byte, whatever
# order the kernel ran the suites in: a LAVA job has one monitor per
# KUnit suite, in that order, and records each case under its suite.
# Within a group the lines keep their order. Each name of -v always=
# (names separated by spaces) has a group, if an empty one: a monitor
# waits for its suite's start line until the job's timeout.
BEGIN {
	na = split(always, a, " ")
	for (i = 1; i <= na; i++)
		if (!(a[i] in n)) {
			names[++k] = a[i]
			n[a[i]] = 0
		}
}
$1 == "sfp-case:" {
	s = $3
	sub(/\..*/, "", s)
	if (!(s in n))
		names[++k] = s
	lines[s, ++n[s]] = $0
}
END {
	for (i = 2; i <= k; i++)
		for (j = i; j > 1 && names[j - 1] > names[j]; j--) {
			t = names[j]
			names[j] = names[j - 1]
			names[j - 1] = t
		}
	for (i = 1; i <= k; i++) {
		s = names[i]
		print "sfp-suite: " s
		for (j = 1; j <= n[s]; j++)
			print lines[s, j]
		print "sfp-suite-end: " s
	}
}
