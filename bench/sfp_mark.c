// SPDX-License-Identifier: GPL-2.0
/*
 * sfp_mark begin|end N FILE: mark N (0..15) for the host's QEMU plugin
 * (bench/sfp_cost_plugin.c) and copy /proc/schedstat to FILE, in one
 * process: "begin" marks first and then copies, "end" copies first and
 * then marks, so that the plugin's window holds schedstat's with only
 * the copy between them.
 *
 * The mark is "nopl 0x5346000N(%rax)", a no-op the plugin recognises and
 * answers by logging its counts; without the plugin nothing happens.
 * The mark is an immediate, so each N is its own instruction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARK(n) case n: asm volatile("nopl 0x53460000 + " #n "(%%rax)" ::: "memory"); break

static void mark(long n)
{
#if defined(__x86_64__)
	switch (n) {
	MARK(0); MARK(1); MARK(2); MARK(3); MARK(4); MARK(5); MARK(6); MARK(7);
	MARK(8); MARK(9); MARK(10); MARK(11); MARK(12); MARK(13); MARK(14); MARK(15);
	}
#else
	fprintf(stderr, "sfp_mark: the cost plugin's marks are x86_64 instructions\n");
	exit(2);
#endif
}

/* /proc/schedstat into @path, read whole before anything is written. */
static void copy(const char *path)
{
	static char buf[1 << 20];
	size_t len;
	FILE *in = fopen("/proc/schedstat", "r"), *out;

	if (!in) {
		perror("sfp_mark: /proc/schedstat");
		exit(1);
	}
	len = fread(buf, 1, sizeof(buf), in);
	if (ferror(in) || !feof(in)) {
		fprintf(stderr, "sfp_mark: cannot read /proc/schedstat whole\n");
		exit(1);
	}
	fclose(in);
	out = fopen(path, "w");
	if (!out || fwrite(buf, 1, len, out) != len || fclose(out)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	char *end;
	long n;

	if (argc != 4 || (strcmp(argv[1], "begin") && strcmp(argv[1], "end"))) {
		fprintf(stderr, "usage: sfp_mark begin|end N FILE (N: 0..15)\n");
		return 2;
	}
	n = strtol(argv[2], &end, 10);
	if (end == argv[2] || *end || n < 0 || n > 15) {
		fprintf(stderr, "sfp_mark: N must be 0..15, not '%s'\n", argv[2]);
		return 2;
	}
	if (!strcmp(argv[1], "begin")) {
		mark(n);
		copy(argv[3]);
	} else {
		copy(argv[3]);
		mark(n);
	}
	return 0;
}
