// SPDX-License-Identifier: GPL-2.0
/*
 * sfp_cost_plugin: a QEMU TCG plugin (x86_64 system emulation) that
 * counts the guest instructions executed inside the newly-idle balance.
 * A call's count does not depend on the host's speed; which calls the
 * guest makes does (under TCG guest time is host time).
 *
 * A vCPU is "in the balance" from the first translated block at the
 * entry of sched_balance_newidle() (newidle_balance() before v6.10) to
 * the first block at one of its return sites (the instruction after
 * each direct call of it). Interrupts and exceptions taken meanwhile
 * (from a block at an entry the host lists, asm_exc_*, asm_sysvec_*,
 * asm_common_interrupt, to the block that ends in iretq) are counted
 * apart; an iretq outside an interrupt's return (sync_core()'s) would
 * end one early. Counts are per vCPU and made per translated block when
 * it starts (TCG ends a block at every branch, call, return and iretq,
 * and takes interrupts between blocks), so a block that faults half way
 * is counted whole. A call that entered
 * sched_balance_rq() (load_balance() before v6.10) is a balance, any
 * other a skip; each call's instructions are added to its kind when it
 * returns.
 *
 * The guest marks the edges of a measurement by executing
 * "nopl 0x5346NNNN(%rax)" (bench/sfp_mark.c): at each mark the plugin
 * logs the sums over all vCPUs with the mark's number NNNN, then, per
 * kind of call, how many calls so far cost each number of instructions
 * (a histogram, exact below HIST_MAX; dearer calls are counted at
 * HIST_MAX): the host takes a window's median call from the difference
 * of two marks' histograms. Each histogram line ends with " end", so
 * that a line cut short is seen.
 *
 * Arguments: syms=FILE, lines "entry ADDR", "balance ADDR", "ret ADDR"
 * and "irq ADDR" (hex), made on the host from the kernel's vmlinux and
 * System.map.
 * Output goes to QEMU's log: run with "-d plugin -D LOGFILE".
 */
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_ADDRS	1024
#define MAX_VCPUS	64
#define MARK_MAGIC	0x5346u
#define HIST_MAX	65535	/* the histograms' last bucket: this many or more */

#define BIT(n)		(1u << (n))

/* What a block is, packed with its instruction count into the callback's data. */
#define B_ENTRY		BIT(16)	/* starts at the balance's entry */
#define B_RET		BIT(17)	/* starts at a return site */
#define B_IRQ		BIT(18)	/* starts at an interrupt or exception entry */
#define B_IRET		BIT(19)	/* ends with iretq */
#define B_USER		BIT(20)	/* user-space code */
#define B_BAL		BIT(21)	/* starts at sched_balance_rq() */
#define B_INSNS		0xffffu

/* The counters, per vCPU; the log names them as here. */
enum { ENTRIES, SKIPS, SKIP_INSNS, BALANCES, BALANCE_INSNS, IRQ_INSNS, KERNEL, USER, NR_COUNTERS };
static const char * const names[NR_COUNTERS] = {
	"entries",		/* calls entered */
	"skips",		/* calls returned without balancing */
	"skip_insns",		/* their instructions, interrupts excluded */
	"balances",		/* calls returned that balanced */
	"balance_insns",
	"irq_insns",		/* instructions of interrupts taken in a call */
	"kernel",		/* all kernel instructions */
	"user",			/* all user instructions */
};

/* The histograms' kinds of call, in the log's words. */
enum { H_SKIP, H_BALANCE, NR_HISTS };
static const char * const hist_names[NR_HISTS] = { "skip", "balance" };

struct vcpu {
	unsigned long long c[NR_COUNTERS];
	unsigned long long *hist[NR_HISTS];	/* [HIST_MAX + 1]: calls per instruction count */
	unsigned long long cur;		/* the current call's instructions */
	int in;				/* in a call */
	int balanced;			/* the current call entered sched_balance_rq() */
	int depth;			/* interrupt nesting in the call */
};

static struct vcpu vcpus[MAX_VCPUS];
static int nr_vcpus;
static unsigned long long entry, balance;
static unsigned long long rets[MAX_ADDRS], irqs[MAX_ADDRS];
static int nr_rets, nr_irqs;

static bool listed(const unsigned long long *v, int n, unsigned long long a)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i] == a)
			return true;
	return false;
}

/* One line: " COST:CALLS" for every instruction count some call had. */
static void log_hist(int k, long mark)
{
	unsigned long long sum;
	size_t cap = 4096, n;
	char *buf = malloc(cap), *p;
	int i, c;

	if (!buf)
		return;
	n = snprintf(buf, cap, "sfp-cost hist=%ld kind=%s", mark, hist_names[k]);
	for (c = 0; c <= HIST_MAX; c++) {
		for (sum = 0, i = 0; i < nr_vcpus; i++)
			sum += __atomic_load_n(&vcpus[i].hist[k][c], __ATOMIC_RELAXED);
		if (!sum)
			continue;
		if (cap - n < 64) {
			p = realloc(buf, cap * 2);
			if (!p) {
				free(buf);
				return;
			}
			buf = p;
			cap *= 2;
		}
		n += snprintf(buf + n, cap - n, " %d:%llu", c, sum);
	}
	snprintf(buf + n, cap - n, " end\n");
	qemu_plugin_outs(buf);
	free(buf);
}

static void log_sums(const char *what, long mark, unsigned int vcpu)
{
	unsigned long long sum;
	char buf[400];
	int i, k, n;

	n = snprintf(buf, sizeof(buf), "sfp-cost %s=%ld vcpu=%u", what, mark, vcpu);
	for (k = 0; k < NR_COUNTERS; k++) {
		for (sum = 0, i = 0; i < nr_vcpus; i++)
			sum += __atomic_load_n(&vcpus[i].c[k], __ATOMIC_RELAXED);
		n += snprintf(buf + n, sizeof(buf) - n, " %s=%llu", names[k], sum);
	}
	snprintf(buf + n, sizeof(buf) - n, "\n");
	qemu_plugin_outs(buf);
	for (k = 0; k < NR_HISTS && !strcmp(what, "mark"); k++)
		log_hist(k, mark);
}

/* Only vCPU i's thread writes its counters; a mark on another vCPU reads them. */
static void add(struct vcpu *v, int k, unsigned long long n)
{
	__atomic_store_n(&v->c[k], v->c[k] + n, __ATOMIC_RELAXED);
}

static void block_exec(unsigned int i, void *udata)
{
	unsigned int b = (unsigned int)(uintptr_t)udata, n = b & B_INSNS;
	unsigned long long *c;
	struct vcpu *v;

	if (i >= MAX_VCPUS)
		return;
	v = &vcpus[i];
	add(v, b & B_USER ? USER : KERNEL, n);
	if ((b & B_ENTRY) && !v->in) {
		v->in = 1;
		v->balanced = 0;
		v->depth = 0;
		v->cur = 0;
		add(v, ENTRIES, 1);
	} else if ((b & B_RET) && v->in && !v->depth) {
		v->in = 0;
		add(v, v->balanced ? BALANCES : SKIPS, 1);
		add(v, v->balanced ? BALANCE_INSNS : SKIP_INSNS, v->cur);
		c = v->hist[v->balanced ? H_BALANCE : H_SKIP];
		c += v->cur < HIST_MAX ? v->cur : HIST_MAX;
		__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
	}
	if (!v->in)
		return;
	if (b & B_IRQ)
		v->depth++;
	if (v->depth) {
		add(v, IRQ_INSNS, n);
	} else {
		v->cur += n;
		if (b & B_BAL)
			v->balanced = 1;
	}
	if ((b & B_IRET) && v->depth)
		v->depth--;
}

static void mark_exec(unsigned int i, void *udata)
{
	log_sums("mark", (long)(uintptr_t)udata, i);
}

static void block_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), k;
	unsigned long long pc = qemu_plugin_tb_vaddr(tb);
	unsigned int b = n > B_INSNS ? B_INSNS : (unsigned int)n;
	struct qemu_plugin_insn *last;
	const unsigned char *d;

	if (!n)
		return;
	if (pc < 0xffff800000000000ull)
		b |= B_USER;
	else if (pc == entry)
		b |= B_ENTRY;
	else if (listed(rets, nr_rets, pc))
		b |= B_RET;
	else if (pc == balance)
		b |= B_BAL;
	else if (listed(irqs, nr_irqs, pc))
		b |= B_IRQ;
	last = qemu_plugin_tb_get_insn(tb, n - 1);
	d = qemu_plugin_insn_data(last);
	if (!(b & B_USER) && ((qemu_plugin_insn_size(last) == 2 && d[0] == 0x48 && d[1] == 0xcf) ||
			      (qemu_plugin_insn_size(last) == 1 && d[0] == 0xcf)))
		b |= B_IRET;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)b);
	if (!(b & B_USER))
		return;
	/* nopl 0x5346NNNN(%rax): 0f 1f 80, then the displacement */
	for (k = 0; k < n; k++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, k);

		d = qemu_plugin_insn_data(insn);
		if (qemu_plugin_insn_size(insn) == 7 && d[0] == 0x0f && d[1] == 0x1f &&
		    d[2] == 0x80 && (d[5] | d[6] << 8) == MARK_MAGIC) {
			uintptr_t mark = d[3] | d[4] << 8;

			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_exec,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)mark);
		}
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	log_sums("exit", 0, 0);
}

static int read_syms(const char *path)
{
	char kind[16];
	unsigned long long a;
	FILE *f = fopen(path, "r");
	int r;

	if (!f) {
		fprintf(stderr, "sfp_cost_plugin: cannot open %s\n", path);
		return -1;
	}
	while ((r = fscanf(f, "%15s %llx", kind, &a)) == 2) {
		if (!strcmp(kind, "entry")) {
			entry = a;
		} else if (!strcmp(kind, "balance")) {
			balance = a;
		} else if ((!strcmp(kind, "ret") && nr_rets == MAX_ADDRS) ||
			   (!strcmp(kind, "irq") && nr_irqs == MAX_ADDRS)) {
			fprintf(stderr, "sfp_cost_plugin: %s: more than %d %s lines\n",
				path, MAX_ADDRS, kind);
			fclose(f);
			return -1;
		} else if (!strcmp(kind, "ret")) {
			rets[nr_rets++] = a;
		} else if (!strcmp(kind, "irq")) {
			irqs[nr_irqs++] = a;
		} else {
			fprintf(stderr, "sfp_cost_plugin: %s: bad line '%s %llx'\n",
				path, kind, a);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	if (r != EOF || !entry || !balance || !nr_rets || !nr_irqs) {
		fprintf(stderr, "sfp_cost_plugin: %s: %s\n", path,
			"want lines 'entry ADDR', 'balance ADDR', 'ret ADDR', 'irq ADDR'");
		return -1;
	}
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *syms = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "syms=", 5)) {
			syms = argv[i] + 5;
		} else {
			fprintf(stderr, "sfp_cost_plugin: unknown argument '%s'\n", argv[i]);
			return -1;
		}
	}
	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "sfp_cost_plugin: needs qemu-system-x86_64\n");
		return -1;
	}
	nr_vcpus = info->system.max_vcpus;
	if (nr_vcpus > MAX_VCPUS) {
		fprintf(stderr, "sfp_cost_plugin: at most %d vCPUs\n", MAX_VCPUS);
		return -1;
	}
	if (!syms || read_syms(syms))
		return -1;
	for (i = 0; i < nr_vcpus; i++) {
		int k;

		for (k = 0; k < NR_HISTS; k++) {
			vcpus[i].hist[k] = calloc(HIST_MAX + 1, sizeof(unsigned long long));
			if (!vcpus[i].hist[k]) {
				fprintf(stderr, "sfp_cost_plugin: out of memory\n");
				return -1;
			}
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
