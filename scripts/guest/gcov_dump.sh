#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# sched-fastpath guest program of the coverage kinds (sfp coverage), run
# after the tests: the gcov counts of kernel/sched/ (debugfs gcov/) as a
# gzip'd tar, base64, in TAP diagnostic lines between '# gcov-begin' and
# '# gcov-end'. debugfs gives each .gcda a size of 0, so each is copied
# with cat before tar reads it.
d=/sys/kernel/debug/gcov
echo "TAP version 13"
echo "1..1"
files=$(find "$d" -path '*/kernel/sched/*.gcda' 2>/dev/null)
if [ -z "$files" ]; then
	echo "not ok 1 gcov_dump # no kernel/sched/*.gcda under $d"
	exit 1
fi
mkdir -p /tmp/gcov
for f in $files; do
	cat "$f" >"/tmp/gcov/${f##*/}"
done
echo "# gcov-begin"
(cd /tmp/gcov && tar -c -f - ./*.gcda) | gzip -c | base64 | sed 's/^/# /'
echo "# gcov-end"
echo "ok 1 gcov_dump"
