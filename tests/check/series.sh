# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
set -o pipefail # as in tests/check.sh, which sources this
# tests/check.sh, stage 1: the series of each line. Sourced; never run.

# check_reproduces WT: the source's kernel/sched/ with the series'
# prerequisite fixes applied is exactly what the prerequisite and feature
# patches make of series-base; whatever else differs between base and
# patched comes from the test patches. Prints the intended differences.
check_reproduces() {
	local wt=$1 i fixed featend p v files top
	patch_states "$wt" | tee "$CHK/patch-states.txt"
	grep -q 'feature, in the source' "$CHK/patch-states.txt" ||
		{ echo "the source contains none of the series' features"; return 1; }
	featend=$(features_end "$wt")
	top=$(git -C "$wt" log -1 --format='%h %s' "$featend")
	echo "feature patches end at $top"
	# The source plus the prerequisites the work tree applied, in a
	# scratch index: no checkout, nothing written to the work tree.
	fixed=$(source_fixed "$wt") || { echo "a prerequisite does not apply to base"; return 1; }
	v=$(wt_meta "$wt" version)
	for i in "${!SERIES[@]}"; do
		p=${SERIES[i]}
		[ "${SERIES_ROLE[i]}" = prereq ] || continue
		! in_rev "$wt" base "$p" || continue
		files=$(git -C "$wt" apply --numstat "$p" | awk '{ printf "%s%s", sep, $3; sep = ", " }')
		echo "intended difference from the source $v: ${p##*/} ($files)"
	done
	if ! git -C "$wt" diff --quiet "$fixed" "$featend" -- kernel/sched; then
		git -C "$wt" diff --stat "$fixed" "$featend" -- kernel/sched
		echo "series-base + prerequisite and feature patches differs from the source's kernel/sched (+ prerequisites)"
		return 1
	fi
	echo "kernel/sched/ of series-base + prerequisites + features = source + prerequisites: identical"
	echo "git diff base patched -- kernel/sched (prerequisites and test patches):"
	git -C "$wt" diff --stat base patched -- kernel/sched
}

# checkpatch --strict on every patch. A prerequisite is a backport and
# carries its upstream id ('commit <40 hex> upstream.'); the work tree,
# made from a tarball, has no upstream history to look it up in, so that
# one finding (UNKNOWN_COMMIT_ID) is ignored for it, and the line must be
# there.
checkpatch_all() {
	local i p out bad=0 opts id
	[ -f "$WT/scripts/checkpatch.pl" ] || { echo "no work tree"; return 1; }
	for i in "${!SERIES[@]}"; do
		p=${SERIES[i]}
		opts=(--strict --no-tree -q)
		if [ "${SERIES_ROLE[i]}" = prereq ]; then
			if ! grep -qE '^commit [0-9a-f]{40} upstream\.$' "$p"; then
				echo "${p##*/}: a prerequisite without its 'commit <id> upstream.' line"
				bad=1
			fi
			opts+=(--ignore UNKNOWN_COMMIT_ID)
		fi
		out=$(cd "$WT" && perl scripts/checkpatch.pl "${opts[@]}" "$p" 2>&1) || true
		if [ -n "$out" ]; then
			printf '%s:\n%s\n' "${p##*/}" "$out"
			bad=1
		else
			id=$(sed -n 's/^commit \([0-9a-f]\{12\}\).* upstream\.$/\1/p' "$p")
			echo "${p##*/}: clean${opts[3]:+ (upstream id $id not looked up: no upstream history here)}"
		fi
	done
	return "$bad"
}

# series_numbered: patch I of the N in the series is '[PATCH I/N]'.
series_numbered() {
	local i n=${#SERIES[@]} want got bad=0
	for i in "${!SERIES[@]}"; do
		want="[PATCH $((i + 1))/$n]"
		got=$(sed -n 's/^Subject: \(\[PATCH[^]]*\]\).*/\1/p' "${SERIES[i]}" | head -n 1)
		if [ "$got" = "$want" ]; then
			echo "${SERIES[i]##*/}: $got"
		else
			echo "${SERIES[i]##*/}: ${got:-no [PATCH] prefix}, expected $want"
			bad=1
		fi
	done
	return "$bad"
}

# series_cases LINE: prepare LINE's work tree from its source,
# checkpatch, numbering, the source reproduced, the generated patches.
# Run it in a subshell: it selects the line.
series_cases() {
	local l=$1
	stage_start "series $l: prepare, checkpatch, reproduce the source"
	use_line "$l"
	t prepare_work_tree on_line "$l" "$SFP" prepare
	grep -E 'work tree (ready|.* is up to date)' "$CHK/$SUITE.prepare_work_tree.log" | sed 's/^/         /' || true
	t checkpatch_strict checkpatch_all
	t series_numbered series_numbered
	t series_reproduces_source check_reproduces "$WT"
	grep -E '^(kernel/sched/ of|intended)' "$CHK/$SUITE.series_reproduces_source.log" | sed 's/^/         /' || true
	t test_patches_match_sources on_line "$l" "$SFP" gen-patches --check
	stage_end
}
