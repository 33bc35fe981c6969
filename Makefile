# SPDX-License-Identifier: GPL-2.0
# sched-fastpath: see README.md. Every target is a thin wrapper over ./sfp
# or scripts/; the project's facts are in sfp.toml.
BUILD ?= $(CURDIR)/build
export BUILD
# BOOT_JOBS=J: make mutate, bench, stress and matrix boot J guests at once;
# with BOOT_BACKEND=lava-server make mutate submits every boot as its build
# ends and the server schedules them, the others keep J jobs on the server.
BOOT_JOBS_OPT = $(if $(BOOT_JOBS),-j $(BOOT_JOBS))

.PHONY: all run check check-quick certify unit setup prepare patches kunit mutate mutate-generated coverage selftest-ab repeat race stress bench bench-smoke bench-cost bench-lines matrix robot submission clean clean-tree lab lab-down help

all: run

help:
	@echo "Each target works on one kernel line: the line of KSRC's version (KSRC=path"
	@echo "to a kernel tree or tarball), else LINE=X.Y, else 6.12. Lines: patches/*/."
	@echo "A line's work tree, kernels and logs are in $(BUILD)/LINE/."
	@echo
	@echo "make [run]      prepare tree, apply series, build, boot, test, report"
	@echo "make check      the presubmit suite, every line (what CI runs)"
	@echo "make certify    make check and the robot checks and the benchmark's smoke round"
	@echo "make check-quick  scripts and series checks only (no kernel build)"
	@echo "make unit       the harness tool's own unit tests (seconds; in make check)"
	@echo "make setup      install missing Debian packages (root)"
	@echo "make prepare    only prepare the work tree ($(BUILD)/LINE/tree)"
	@echo "make patches    regenerate the test patches from kunit/ and selftests/"
	@echo "make kunit [KUNIT_ARCH=x86_64|arm64|um] [KUNIT_OPTS='--stock --runs 10']"
	@echo "                the KUnit suites with the kernel's kunit.py run (--stock: the"
	@echo "                source as given plus the upstream tier's patch only)"
	@echo "make mutate [MUTATE_BOOTS=5] [MUTATE_DEBUG_BOOTS=1]  every mutant of"
	@echo "                tests/mutants/LINE/ and baseline, each booted MUTATE_BOOTS times,"
	@echo "                and MUTATE_DEBUG_BOOTS times on the debug kernel; table of catching cases;"
	@echo "                MUTATE_ICOUNT=1: deterministic guests (sfp mutate --icount; every boot"
	@echo "                of a variant the same, so MUTATE_BOOTS=1 is the whole verdict)"
	@echo "make mutate-generated [GEN_BOOTS=1]  every mutant made by rule (./sfp mutants:"
	@echo "                one-line mutations of the mechanisms and their call sites), each booted;"
	@echo "                survivors triaged in tests/mutgen/LINE.toml ($(BUILD)/LINE/mutate-gen/table.md)"
	@echo "make coverage   gcov of the mechanisms' functions and call sites after every test,"
	@echo "                main and distro configs ($(BUILD)/LINE/coverage/)"
	@echo "make selftest-ab  the kselftests on patched and on baseline"
	@echo "make repeat [N=10] [BUSY=0]  boot the built patched kernel N times; flake rate"
	@echo "                (BUSY busy loops on the host meanwhile)"
	@echo "make race [BOOTS=4] [RACE_SECONDS=60]  the sched/debug race of 6.12.117:"
	@echo "                lockdep check and oops rate, without and with patch 1"
	@echo "make stress [MIN=10 | STRESS_SECONDS=20] [RUNS=1] [BUSY=0] [STRESS_KERNELS=patched]"
	@echo "                [STRESS_KIND=debug|debug-numa] [TOPOLOGY=smt2x2x2|sock4x2]"
	@echo "                debug kernel: KUnit, kselftests, then MIN minutes of hotplug,"
	@echo "                cgroup, affinity and fork stress; RUNS boots, tallied, with"
	@echo "                BUSY busy loops on the host"
	@echo "make bench [TOPOLOGIES='smp2 smp8 smt2x2x2 sock4x2'] [DURATION=3] [REPS=3] [NEWIDLE=measure|shipped]"
	@echo "                A/B benchmark, baseline vs patched; report under $(BUILD)/LINE/bench/latest"
	@echo "                (NEWIDLE=shipped: NI_RANDOM/NI_RATE as the line ships them)"
	@echo "make bench-lines BENCH_RUNS='DIR...'  one table across bench runs (lines, NEWIDLE modes)"
	@echo "make bench-smoke  one short A/B round with checks (part of make certify)"
	@echo "make bench-cost [COST_TOPOLOGIES=smp4] [DURATION=3] [REPS=3] [BUSY=0] [ICOUNT=1 [SEED=1]]"
	@echo "                the newly-idle balance's cost in guest instructions (a QEMU plugin),"
	@echo "                baseline vs patched; ICOUNT=1: deterministic guests (sfp bench --icount)"
	@echo "make matrix [MATRIX_OPTS=] [MATRIX_OUT=]  every linux-source point release Debian"
	@echo "                serves, per line: features, baseline, series applies, reproduced;"
	@echo "                newest and oldest built, booted and tested ($(BUILD)/matrix.md;"
	@echo "                MATRIX_OUT=docs/records/matrix.md renews the committed record)"
	@echo "make robot [ROBOT_OPTS=--quick]  the series as the kernel test robot builds it:"
	@echo "                per patch, per config of kernel-config/robot/, W=1 and sparse"
	@echo "                against series-base, arm64 ($(BUILD)/LINE/robot/table.md)"
	@echo "make submission [SUBMISSION_OPTS=--cert]  the upstream tier's patch on the"
	@echo "                source as given, as you would post it with b4, with"
	@echo "                get_maintainer.pl's list ($(BUILD)/LINE/submission; sends nothing)"
	@echo "BOOT_JOBS=J     make mutate, bench, stress and matrix boot J guests at once; with"
	@echo "                BOOT_BACKEND=lava-server (as root, after make lab) make mutate"
	@echo "                submits each variant's boots as soon as it is built and the server"
	@echo "                queues and schedules them (J is no limit); bench, stress and"
	@echo "                matrix keep J jobs on the server at once"
	@echo "BOOT_BACKEND=   qemu (default), lava (lava-run here) or lava-server (the lab;"
	@echo "                LAVA_IDENTITY, LAVA_DEVICE_TYPE, LAVA_IMAGE_DIR, LAVA_IMAGE_URL:"
	@echo "                a lab elsewhere, docs/harness.md)"
	@echo "make lab [LAB_DEVICES=2 LAB_WORKERS=2 LAB_HEALTH=DIR]  (as root) install LAVA's"
	@echo "                server, lavacli, gunicorn and PostgreSQL, and start a local lab"
	@echo "                (./sfp lab up: 1-16 devices, workers at most one per device);"
	@echo "                make lab-down stops it"
	@echo "make clean      remove what $(BUILD)/LINE holds for every line, except the"
	@echo "                work tree and its edits and the benchmark's reports; and"
	@echo "                make check's and make matrix's files"
	@echo "make clean-tree remove every line's work tree (refuses if one has uncommitted edits)"

setup:
	scripts/setup.sh

LAB_DEVICES ?= 2
LAB_WORKERS ?= 2
lab:
	scripts/setup.sh --lab
	./sfp lab up --devices $(LAB_DEVICES) -w $(LAB_WORKERS) $(if $(LAB_HEALTH),--health $(LAB_HEALTH))

lab-down:
	./sfp lab down

run: setup
	./sfp run

check: setup
	./sfp check

check-quick: setup
	./sfp check --quick

certify: setup
	./sfp check --full

prepare: setup
	./sfp prepare

patches: prepare
	./sfp gen-patches

ROBOT_OPTS ?=
robot: prepare
	./sfp robot $(ROBOT_OPTS)

SUBMISSION_OPTS ?=
submission: prepare
	./sfp submission $(SUBMISSION_OPTS)

KUNIT_ARCH ?= x86_64
KUNIT_OPTS ?=
kunit: prepare
	./sfp kunit --arch $(KUNIT_ARCH) $(KUNIT_OPTS)

MUTATE_BOOTS ?= 5
MUTATE_DEBUG_BOOTS ?= 1
mutate: prepare
	./sfp mutate -k $(MUTATE_BOOTS) --debug-boots $(MUTATE_DEBUG_BOOTS) $(BOOT_JOBS_OPT) $(if $(filter 1,$(MUTATE_ICOUNT)),--icount)

GEN_BOOTS ?= 1
mutate-generated: prepare
	./sfp mutate --generated -k $(GEN_BOOTS) $(BOOT_JOBS_OPT)

coverage: prepare
	./sfp coverage

selftest-ab: prepare
	./sfp mutate -k $(MUTATE_BOOTS) patched baseline

# The interpreter ./sfp runs with: Debian's, which has python3-yaml and lava-common.
unit:
	/usr/bin/python3 -m unittest discover -s harness/tests -t .

N ?= 10
BUSY ?= 0
repeat:
	./sfp repeat -b $(BUSY) $(N)

BOOTS ?= 4
RACE_SECONDS ?= 60
race: prepare
	./sfp race -k $(BOOTS) -d $(RACE_SECONDS)

MIN ?= 10
STRESS_SECONDS ?=
RUNS ?= 1
STRESS_KERNELS ?= patched
STRESS_KIND ?= debug
stress: prepare
	./sfp stress $(if $(STRESS_SECONDS),-S $(STRESS_SECONDS),--minutes $(MIN)) $(if $(TOPOLOGY),-t $(TOPOLOGY)) -K $(STRESS_KIND) -N $(RUNS) -b $(BUSY) $(BOOT_JOBS_OPT) $(STRESS_KERNELS)

TOPOLOGIES ?= smp2 smp8 smt2x2x2 sock4x2
DURATION ?= 3
REPS ?= 3
NEWIDLE ?= measure
bench: prepare
	./sfp bench -t "$(TOPOLOGIES)" -d $(DURATION) --reps $(REPS) -F $(NEWIDLE) $(BOOT_JOBS_OPT)

bench-lines:
	./sfp bench-lines $(BENCH_RUNS)

bench-smoke: prepare
	./sfp bench --smoke

COST_TOPOLOGIES ?= smp4
ICOUNT ?=
SEED ?= 1
bench-cost: prepare
	./sfp bench --cost -t "$(COST_TOPOLOGIES)" -d $(DURATION) --reps $(REPS) -F $(NEWIDLE) --busy $(BUSY) $(if $(ICOUNT),--icount --seed $(SEED))

MATRIX_OPTS ?=
MATRIX_OUT ?= $(BUILD)/matrix.md
matrix: setup
	./sfp matrix $(MATRIX_OPTS) $(BOOT_JOBS_OPT) -o $(MATRIX_OUT)

# Every line has its build directory, $(BUILD)/LINE (say build/6.1).
clean:
	@for d in $(sort $(patsubst %/tree/.git/HEAD,%,$(patsubst %/obj,%,$(wildcard $(BUILD)/*/tree/.git/HEAD $(BUILD)/*/obj)))); do \
		echo "rm -rf $$d/{obj,logs,bench/smoke,race,stress,mutate,kunit,robot,submission,wt,stock,post}"; \
		rm -rf $$d/obj $$d/logs $$d/bench/smoke $$d/race $$d/stress $$d/mutate $$d/kunit $$d/robot $$d/submission $$d/wt $$d/stock $$d/post; \
		[ ! -d $$d/tree/.git ] || git -C $$d/tree worktree prune; \
	done
	@echo "rm -rf $(BUILD)/check $(BUILD)/matrix"
	@rm -rf $(BUILD)/check $(BUILD)/matrix

clean-tree:
	@for t in $(patsubst %/.git/HEAD,%,$(wildcard $(BUILD)/*/tree/.git/HEAD)); do \
		if [ -n "$$(git -C $$t status --porcelain --untracked-files=no)" ]; then \
			echo "make: $$t has uncommitted edits; commit or discard them first" >&2; exit 1; fi; \
	done; \
	for t in $(wildcard $(BUILD)/*/tree); do d=$${t%/tree}; \
		echo "rm -rf $$t $$d/stock $$d/post"; rm -rf $$t $$d/stock $$d/post; done
