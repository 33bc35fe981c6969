// SPDX-License-Identifier: GPL-2.0
/*
 * sfp_writes: count every write to two scheduler variables while a
 * command runs, with hardware watchpoints (perf breakpoint events, one per
 * CPU): root_task_group.load_avg (8 bytes) and the root domain's overload
 * indicator (1 byte, on kernels that have it). The counts are exact; the
 * watchpoints slow every write down, so the benchmark runs this in a
 * phase of its own, never while it times anything.
 *
 * Addresses: root_task_group, runqueues (per-CPU) and __per_cpu_offset
 * from /proc/kallsyms; CPU 0's rq->rd read from /proc/kcore; field
 * offsets from the command line (./sfp offsets computes them
 * from the kernel build).
 *
 * Usage: sfp_writes -t TG_LOAD_AVG -r RQ_RD [-o RD_OVERLOADED] -- CMD [ARG]...
 * Runs COMMAND with its output discarded, then prints one line:
 *   seconds=S root_tg_load_avg=N indicator=N|none
 *
 * Or, with -A, prints the addresses a tracer watches and exits (the
 * benchmark's classification, scripts/guest/sfp_bench.sh, hands them to
 * perf record as mem: events):
 *   sfp_writes -A -r RQ_RD -o RD_OVERLOADED -s RQ_SD -c LB_COUNT -g LB_GAINED
 *   indicator ADDRESS VALUE        the root domain's flag and its value now
 *   cpu N LB_COUNT LB_GAINED       CPU N's lowest domain's newly-idle
 *                                  lb_count and lb_gained (schedstat)
 */
#include "sfp_bench.h"	/* first: it defines _GNU_SOURCE */
#include <elf.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s -t TG_LOAD_AVG -r RQ_RD [-o RD_OVERLOADED] -- COMMAND [ARG]...\n"
		"       %s -A -r RQ_RD -o RD_OVERLOADED -s RQ_SD -c LB_COUNT -g LB_GAINED\n"
		"  offsets in bytes of task_group.load_avg, rq.rd and root_domain.overloaded\n"
		"  (./sfp offsets); without -o the indicator is not watched;\n"
		"  -A prints the addresses of the indicator and of every CPU's lowest\n"
		"  domain's newly-idle lb_count and lb_gained (offsets of rq.sd and in\n"
		"  struct sched_domain) instead\n",
		prog, prog);
	exit(2);
}

static unsigned long ksym(const char *name)
{
	char line[256], sym[128], type;
	unsigned long addr;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %127s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			fclose(f);
			return addr;
		}
	fclose(f);
	return 0;
}

/* Read the 8 bytes at kernel virtual address @va through /proc/kcore. */
static int kread(int fd, unsigned long va, unsigned long *val)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) != sizeof(ph))
			return -1;
		if (ph.p_type == PT_LOAD && va >= ph.p_vaddr && va + 8 <= ph.p_vaddr + ph.p_filesz)
			return pread(fd, val, 8, ph.p_offset + va - ph.p_vaddr) == 8 ? 0 : -1;
	}
	return -1;
}

/* A write watchpoint on @len bytes at @addr on every CPU; fds in @fd. */
static int watch(unsigned long addr, int len, int *fd, int ncpus)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(attr),
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = addr,
		.bp_len = len,
		.sample_period = 1,
		.exclude_user = 1,
	};
	int c;

	for (c = 0; c < ncpus; c++) {
		fd[c] = syscall(SYS_perf_event_open, &attr, -1, c, -1, 0);
		if (fd[c] < 0 && errno != ENODEV)	/* ENODEV: CPU offline */
			return -1;
	}
	return 0;
}

/* -A: the addresses to watch, read from @kfd; 0 if all were printed. */
static int addresses(int kfd, unsigned long rq, unsigned long pcpu, unsigned long rd,
		     long off_ovl, long off_sd, long off_cnt, long off_gain, int ncpus)
{
	unsigned long off, sd, val;
	int c;

	if (kread(kfd, rd + off_ovl, &val))
		return -1;
	printf("indicator 0x%lx %lu\n", rd + off_ovl, val & 0xff);
	for (c = 0; c < ncpus; c++) {
		if (kread(kfd, pcpu + 8 * c, &off) || kread(kfd, off + rq + off_sd, &sd))
			return -1;
		if (sd)	/* no domain: an offline or isolated CPU */
			printf("cpu %d 0x%lx 0x%lx\n", c, sd + off_cnt, sd + off_gain);
	}
	return 0;
}

static unsigned long long total(int *fd, int ncpus)
{
	unsigned long long sum = 0, v;
	int c;

	for (c = 0; c < ncpus; c++)
		if (fd[c] >= 0 && read(fd[c], &v, sizeof(v)) == sizeof(v))
			sum += v;
	return sum;
}

int main(int argc, char **argv)
{
	long off_tg = -1, off_rd = -1, off_ovl = -1, off_sd = -1, off_cnt = -1, off_gain = -1;
	int print_addresses = 0;
	unsigned long tg, rq, pcpu, pcpu0, rd = 0;
	int ncpus = sysconf(_SC_NPROCESSORS_CONF);
	int *tg_fd, *ovl_fd, opt, kfd, status;
	double t0, t1;
	pid_t child;

	while ((opt = getopt(argc, argv, "t:r:o:s:c:g:Ah")) != -1) {
		switch (opt) {
		case 't': off_tg = sfp_arg(argv[0], opt, optarg); break;
		case 'r': off_rd = sfp_arg(argv[0], opt, optarg); break;
		case 'o': off_ovl = sfp_arg(argv[0], opt, optarg); break;
		case 's': off_sd = sfp_arg(argv[0], opt, optarg); break;
		case 'c': off_cnt = sfp_arg(argv[0], opt, optarg); break;
		case 'g': off_gain = sfp_arg(argv[0], opt, optarg); break;
		case 'A': print_addresses = 1; break;
		default: usage(argv[0]);
		}
	}
	if (print_addresses ? off_rd < 0 || off_ovl < 0 || off_sd < 0 || off_cnt < 0 || off_gain < 0 :
	    off_tg < 0 || off_rd < 0 || optind >= argc)
		usage(argv[0]);
	tg_fd = calloc(ncpus, sizeof(int));
	ovl_fd = calloc(ncpus, sizeof(int));
	tg = ksym("root_task_group");
	rq = ksym("runqueues");
	pcpu = ksym("__per_cpu_offset");
	if (!tg_fd || !ovl_fd || !tg || !rq || !pcpu) {
		fprintf(stderr, "sfp_writes: root_task_group, runqueues or __per_cpu_offset not in /proc/kallsyms\n");
		return 1;
	}
	if (off_ovl >= 0) {
		kfd = open("/proc/kcore", O_RDONLY);
		if (kfd < 0 || kread(kfd, pcpu, &pcpu0) ||
		    kread(kfd, pcpu0 + rq + off_rd, &rd) || !rd) {
			fprintf(stderr, "sfp_writes: cannot read CPU 0's rq->rd through /proc/kcore: %s\n",
				strerror(errno));
			return 1;
		}
		if (print_addresses) {
			if (addresses(kfd, rq, pcpu, rd, off_ovl, off_sd, off_cnt, off_gain, ncpus)) {
				fprintf(stderr, "sfp_writes: cannot read a CPU's rq->sd through /proc/kcore\n");
				return 1;
			}
			return 0;
		}
		close(kfd);
	}
	if (watch(tg + off_tg, HW_BREAKPOINT_LEN_8, tg_fd, ncpus) ||
	    (rd && watch(rd + off_ovl, HW_BREAKPOINT_LEN_1, ovl_fd, ncpus))) {
		fprintf(stderr, "sfp_writes: cannot set a write watchpoint: %s\n", strerror(errno));
		return 1;
	}
	t0 = sfp_now();
	child = fork();
	if (!child) {
		/* the workload's own report is not this program's output */
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	if (child < 0 || waitpid(child, &status, 0) != child)
		return 1;
	t1 = sfp_now();
	printf("seconds=%.2f root_tg_load_avg=%llu indicator=", t1 - t0, total(tg_fd, ncpus));
	if (rd)
		printf("%llu\n", total(ovl_fd, ncpus));
	else
		printf("none\n");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
