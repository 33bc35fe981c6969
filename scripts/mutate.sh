#!/usr/bin/env bash
# Build and test variants of the patched kernel with one mechanism removed
# (mutants) and the baseline kernel with the kselftests, and print which
# test cases each removal fails. See --help.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# name | what is removed | test cases that must fail (space separated)
VARIANTS='
patched|nothing (control)|
no-root-skip-update|the root_task_group early return in update_tg_load_avg()|sched_fair_tg_load_avg.root_tg_update_skipped sched_fastpath_root_tg.root_tg.root_group_load_avg_untouched
no-root-skip-clear|the root_task_group early return in clear_tg_load_avg()|sched_fair_tg_load_avg.root_tg_clear_skipped
no-set-in-add_nr_running|the set in add_nr_running()|sched_fair_overload_set.set_on_second_task sched_fair_overload_set.set_on_two_at_once sched_fair_overload_set.sub_never_clears
no-root-recompute|the recompute at the root domain in update_sd_lb_stats()|sched_fair_overload_recompute.recompute_root_clears sched_fair_overload_recompute.recompute_root_sets
recompute-every-level|root-only recompute, moved to every domain level|sched_fair_overload_recompute.recompute_child_keeps_set sched_fair_overload_recompute.recompute_child_keeps_clear
no-group-overload-pick|the nr_running > 1 check in update_sg_lb_stats()|sched_fair_overload_recompute.pick_group_with_two_tasks sched_fair_overload_recompute.recompute_root_sets
no-newidle-gate|the overload check in sched_balance_newidle()|sched_fastpath_newidle.newidle.light_load_skips_balance
baseline|both feature patches (baseline + the kselftest patch)|sched_fastpath_root_tg.root_tg.root_group_load_avg_untouched sched_fastpath_newidle.newidle.light_load_skips_balance
'

usage() {
	cat <<EOF
Usage: $PROG [VARIANT]...

For each variant, check out a copy of 'patched' at \$BUILD/variant/src
(one fixed path, so each build after the first is incremental), remove one
mechanism, build, boot, run the KUnit suites and kselftests, and compare
the failing cases with the ones expected to guard that mechanism:
$(printf '%s\n' "$VARIANTS" | awk -F'|' 'NF == 3 { printf "  %-26s %s\n", $1, $2 }')
Default: all of them. A variant is 'caught' when every guarding case
fails; the control must pass everything. The table goes to the terminal
and to \$BUILD/variant/table.md.
Needs a prepared work tree (make prepare). Takes a cold build plus about
35 s per variant (measured with make mutate).
EOF
}

case ${1:-} in -h | --help) usage; exit 0 ;; esac
names=("$@")
[ ${#names[@]} -gt 0 ] || mapfile -t names < <(printf '%s\n' "$VARIANTS" | awk -F'|' 'NF == 3 { print $1 }')
for n in "${names[@]}"; do
	printf '%s\n' "$VARIANTS" | grep -q "^$n|" || die "unknown variant '$n' (see --help)"
done

WT=$BUILD/tree
[ -d "$WT/.git" ] || die "no work tree at $WT: run 'make prepare' first"
load_series
V=$BUILD/variant
SRC=$V/src
mkdir -p "$V"
if [ ! -e "$SRC/.git" ]; then
	git -C "$WT" worktree prune
	git -C "$WT" worktree add -q --detach "$SRC" patched
fi

export GIT_COMMITTER_NAME=sched-fastpath GIT_COMMITTER_EMAIL=sched-fastpath@example.org

# cut FILE TEXT: remove TEXT (exactly once) from FILE.
cut_text() {
	python3 - "$SRC/$1" "$2" <<'EOF'
import sys
path, text = sys.argv[1], sys.argv[2].encode().decode("unicode_escape")
s = open(path).read()
if s.count(text) != 1:
    sys.exit(f"mutation text found {s.count(text)} times in {path}, expected once")
open(path, "w").write(s.replace(text, ""))
EOF
}

# paste FILE BEFORE TEXT: insert TEXT before the one occurrence of BEFORE.
paste_before() {
	python3 - "$SRC/$1" "$2" "$3" <<'EOF'
import sys
path, before, text = sys.argv[1], *(a.encode().decode("unicode_escape") for a in sys.argv[2:])
s = open(path).read()
if s.count(before) != 1:
    sys.exit(f"anchor found {s.count(before)} times in {path}, expected once")
open(path, "w").write(s.replace(before, text + before))
EOF
}

ROOT_SET='\t\t/* update overload indicator if we are at root domain */\n\t\tset_rd_overloaded(env->dst_rq->rd, sg_overloaded);\n\n'

# mutate NAME: turn the checked-out 'patched' into variant NAME.
mutate() {
	case $1 in
	patched) ;;
	no-root-skip-update)
		cut_text kernel/sched/fair.c '\t/*\n\t * No need to update load_avg for root_task_group as it is not used.\n\t */\n\tif (cfs_rq->tg == &root_task_group)\n\t\treturn;\n\n' ;;
	no-root-skip-clear)
		cut_text kernel/sched/fair.c '\t/*\n\t * No need to update load_avg for root_task_group, as it is not used.\n\t */\n\tif (cfs_rq->tg == &root_task_group)\n\t\treturn;\n\n' ;;
	no-set-in-add_nr_running)
		cut_text kernel/sched/sched.h '\tif (prev_nr < 2 && rq->nr_running >= 2)\n\t\tset_rd_overloaded(rq->rd, 1);\n' ;;
	no-root-recompute)
		cut_text kernel/sched/fair.c "$ROOT_SET" ;;
	recompute-every-level)
		cut_text kernel/sched/fair.c "$ROOT_SET"
		paste_before kernel/sched/fair.c '\tif (!env->sd->parent) {\n\t\t/* Update over-utilization' \
			'\tset_rd_overloaded(env->dst_rq->rd, sg_overloaded);\n\n' ;;
	no-group-overload-pick)
		cut_text kernel/sched/fair.c '\t\tif (nr_running > 1)\n\t\t\t*sg_overloaded = 1;\n\n' ;;
	no-newidle-gate)
		cut_text kernel/sched/fair.c '!get_rd_overloaded(this_rq->rd) ||\n\t    ' ;;
	baseline)
		git -C "$SRC" checkout -q --detach baseline
		local p
		for p in "${SERIES[@]}"; do
			case $(basename "$p") in
			# Its MAINTAINERS hunk needs the KUnit patch's context.
			*selftests*) git -C "$SRC" apply --exclude=MAINTAINERS "$p" ;;
			esac
		done
		;;
	esac
}

table=$V/table.md
{
	echo "| variant | removed | expected to fail | failed | verdict |"
	echo "|---|---|---|---|---|"
} >"$table"
rc=0
for n in "${names[@]}"; do
	line=$(printf '%s\n' "$VARIANTS" | grep "^$n|")
	what=$(echo "$line" | cut -d'|' -f2)
	expect=$(echo "$line" | cut -d'|' -f3)
	stage_start "variant $n: $what"
	git -C "$SRC" checkout -q -f --detach patched
	git -C "$SRC" clean -q -fdx
	mutate "$n"
	git -C "$SRC" diff --stat HEAD | tail -n 1 >&2 || true
	frags=("$ROOT/kernel-config/base.config")
	grep -q SCHED_FAIR_KUNIT_TEST "$SRC/lib/Kconfig.debug" && frags+=("$ROOT/kernel-config/tests.config")
	obj=$V/obj
	log=$V/logs/$n
	rm -rf "$log"
	mkdir -p "$log"
	fargs=()
	for f in "${frags[@]}"; do fargs+=(-f "$f"); done
	ok=1
	"$ROOT/scripts/build-kernel.sh" -t "$SRC" -o "$obj" "${fargs[@]}" || ok=
	[ -z "$ok" ] || "$ROOT/scripts/build-guest.sh" -k "$obj" -t "$SRC" -o "$obj/initramfs.cpio.gz" || ok=
	[ -z "$ok" ] || "$ROOT/scripts/boot.sh" -k "$obj/arch/x86/boot/bzImage" -i "$obj/initramfs.cpio.gz" -l "$log" || true
	[ -z "$ok" ] || "$ROOT/scripts/report.sh" -l "$log" -t "$SRC" -k "$obj" >"$log/summary.txt" 2>&1 || true
	failed=$(awk -F'\t' '$4 != "PASS" && $4 != "SKIP" { print $2 "." $3 }' "$log/results.tsv" 2>/dev/null | sort | tr '\n' ' ')
	total=$(wc -l <"$log/results.tsv" 2>/dev/null || echo 0)
	verdict=caught
	if [ -z "$ok" ] || [ "$total" = 0 ]; then
		verdict="NO RESULT (build or boot failed)"
	elif [ -z "$expect" ]; then
		[ -z "$failed" ] && verdict="clean ($total cases passed)" || verdict="CONTROL FAILED"
	else
		for e in $expect; do
			case " $failed " in *" $e "*) ;; *) verdict="MISSED: $e passed" ;; esac
		done
	fi
	case $verdict in caught | clean*) ;; *) rc=1 ;; esac
	printf '| %s | %s | %s | %s | %s |\n' "$n" "$what" "${expect:-none}" "${failed:-none}" "$verdict" >>"$table"
	say "$n: $verdict; failed: ${failed:-none}"
	stage_end
done
git -C "$SRC" checkout -q -f --detach patched
echo
cat "$table"
exit "$rc"
