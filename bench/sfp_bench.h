/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the sched-fastpath benchmarks: a unit of CPU work defined by
 * a loop count, not by time, so that throughput counts work done even
 * when a thread is preempted or the machine is emulated.
 */
#ifndef SFP_BENCH_H
#define SFP_BENCH_H

#include "../selftests/sched_fastpath.h"

static volatile unsigned long sfp_sink;

/* @loops rounds of a 64-bit LCG; the result is kept so it is not elided. */
static inline void sfp_work(unsigned long loops)
{
	unsigned long x = loops, i;

	for (i = 0; i < loops; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sfp_sink = x;
}

/*
 * A whole command-line number; exits with a message naming @opt when
 * @s is not one.
 */
static inline double sfp_arg(const char *prog, int opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end) {
		fprintf(stderr, "%s: -%c wants a number, not '%s'\n", prog, opt, s);
		exit(2);
	}
	return v;
}

#endif /* SFP_BENCH_H */
