// SPDX-License-Identifier: GPL-2.0
/*
 * sfp_mark N: execute "nopl 0x5346000N(%rax)", a no-op that the host's
 * QEMU plugin (bench/sfp_cost_plugin.c) takes as mark N (0..15) and
 * answers by logging its instruction counts. Without the plugin it does
 * nothing. The mark is an immediate, so each N is its own instruction.
 */
#include <stdio.h>
#include <stdlib.h>

#define MARK(n) case n: asm volatile("nopl 0x53460000 + " #n "(%%rax)" ::: "memory"); break

int main(int argc, char **argv)
{
	char *end;
	long n;

	if (argc != 2) {
		fprintf(stderr, "usage: sfp_mark N (0..15)\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (end == argv[1] || *end || n < 0 || n > 15) {
		fprintf(stderr, "sfp_mark: N must be 0..15, not '%s'\n", argv[1]);
		return 2;
	}
#if defined(__x86_64__)
	switch (n) {
	MARK(0); MARK(1); MARK(2); MARK(3); MARK(4); MARK(5); MARK(6); MARK(7);
	MARK(8); MARK(9); MARK(10); MARK(11); MARK(12); MARK(13); MARK(14); MARK(15);
	}
	return 0;
#else
	fprintf(stderr, "sfp_mark: the cost plugin's marks are x86_64 instructions\n");
	return 2;
#endif
}
