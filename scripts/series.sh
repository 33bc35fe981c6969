# shellcheck shell=bash disable=SC2034 # the SERIES_* arrays are its callers' results
# SPDX-License-Identifier: GPL-2.0
set -o pipefail # as in every script that sources lib.sh
# The series library, sourced by scripts/lib.sh: read a line's series,
# back its features out of a source, apply it, and say per patch what
# happened. prepare-tree.sh, matrix.sh, gen-test-patches.sh and
# tests/check use it; nothing else applies or backs out a patch.

# load_series: read patches/series into three arrays, in order:
#   SERIES       the patch files
#   SERIES_ROLE  per patch: prereq, feature or test, from the section
#                comment above it ("# prerequisites...", "# features...",
#                "# generated..."; patches before any section are features)
# It runs in the calling shell (never inside $(...)), so that a missing
# file stops the caller before anything is applied or recorded.
load_series() {
	local line role=feature name
	SERIES=()
	SERIES_ROLE=()
	[ -f "$PATCHES/series" ] || die "no series file at $PATCHES/series"
	while IFS= read -r line; do
		case $line in
		"# prerequisites"*) role=prereq; continue ;;
		"# features"*) role=feature; continue ;;
		"# generated"*) role='test'; continue ;;
		esac
		name=${line%%#*}
		name=${name//[[:space:]]/}
		[ -n "$name" ] || continue
		[ -f "$PATCHES/$name" ] || die "patches/series names $name, which is not in $PATCHES"
		SERIES+=("$PATCHES/$name")
		SERIES_ROLE+=("$role")
	done <"$PATCHES/series"
	[ ${#SERIES[@]} -gt 0 ] || die "$PATCHES/series names no patches"
}

# series_hash: identifies the series content, to know when to re-apply.
# Call load_series first.
series_hash() {
	cat "${SERIES[@]}" | sha256sum | cut -c1-16
}

# patch_subject FILE: the Subject of a git format-patch file, unfolded and
# without its [PATCH n/m] prefix.
patch_subject() {
	awk '/^Subject: / { s = $0; while ((getline l) > 0 && l ~ /^[ \t]/) s = s l; print s; exit }' "$1" |
		sed 's/^Subject: \(\[PATCH[^]]*\] \)\{0,1\}//'
}

# in_rev WT REV PATCH: PATCH reverse-applies to REV of the git tree WT,
# i.e. REV already contains it. Uses a scratch index: WT is not touched.
in_rev() {
	local idx rc=0
	idx=$(mktemp "${TMPDIR:-/tmp}/sfp-index.XXXXXX")
	rm -f "$idx"
	{ GIT_INDEX_FILE=$idx git -C "$1" read-tree "$2" &&
		GIT_INDEX_FILE=$idx git -C "$1" apply --cached --check -R "$3" 2>/dev/null; } || rc=1
	rm -f "$idx"
	return "$rc"
}

# patch_states WT: per patch of the series (load_series first), its role
# and what the work tree WT did with it, derived from WT's 'base'.
patch_states() {
	local i p state
	for i in "${!SERIES[@]}"; do
		p=${SERIES[i]}
		case ${SERIES_ROLE[i]} in
		prereq) in_rev "$1" base "$p" && state="prerequisite, in the source: skipped" ||
			state="prerequisite, not in the source: applied" ;;
		feature) in_rev "$1" base "$p" && state="feature, in the source: backed out, re-applied" ||
			state="feature, not in the source: applied" ;;
		*) state="test: applied" ;;
		esac
		printf '%s\t%s\n' "${p##*/}" "$state"
	done
}

# series_paths [DIR]: the paths of a kernel tree that the patches in DIR
# (default $PATCHES) change and do not create, and the top Makefile (its
# version): enough of a source for the series to apply and for
# series-base to be checked (mini trees: tests/check, the matrix). One a
# line, sorted.
series_paths() {
	{
		echo Makefile
		awk '/^diff --git a\// { f = substr($3, 3); if (!(f in seen)) { seen[f] = 1; ord[++n] = f } }
			/^new file mode / { created[f] = 1 }
			END { for (i = 1; i <= n; i++) if (!(ord[i] in created)) print ord[i] }' "${1:-$PATCHES}"/*.patch
	} | sort -u
}

# series_mini_tree SOURCE DIR [REV [EXTRA...]]: the files of SOURCE
# that series_paths names, as a git tree with one commit on branch
# 'base'. SOURCE is a source tarball, a kernel git checkout (its REV,
# default HEAD) or a source directory. EXTRA (a git checkout only): files
# or directories taken too where REV has them.
series_mini_tree() {
	local src=$1 dir=$2 rev=${3:-HEAD} top p paths=() xpaths=() v
	shift $(($# < 3 ? $# : 3))
	p=$(series_paths "$PATCHES")
	split_lines paths "$p"
	mkdir -p "$dir"
	if [ -f "$src" ]; then
		[ $# = 0 ] || return 1
		# head closes the pipe early: tar's SIGPIPE is expected
		top=$(tar -tf "$src" | head -n 1) || true
		top=${top%%/*}
		tar -xf "$src" -C "$dir" --strip-components=1 "${paths[@]/#/$top/}" || return 1
	elif [ -e "$src/.git" ]; then
		if [ $# -gt 0 ]; then
			p=$(git -C "$src" ls-tree --name-only "$rev" -- "$@") || return 1
			split_lines xpaths "$p"
			paths+=("${xpaths[@]}")
		fi
		git -C "$src" archive "$rev" -- "${paths[@]}" | tar -x -C "$dir" || return 1
	else
		[ $# = 0 ] || return 1
		for p in "${paths[@]}"; do
			case $p in */*) mkdir -p "$dir/${p%/*}" ;; esac
			cp -a "$src/$p" "$dir/$p" || return 1
		done
	fi
	git -C "$dir" init -q -b base
	git -C "$dir" add -A -f
	v=$(kernel_version "$dir")
	git -C "$dir" "${GIT_ID[@]}" commit -q -m "base: $v"
}

# features_end WT: the commit of WT's 'patched' after the last feature
# patch (the test patches are the series' last ones). Call load_series.
features_end() {
	local i ntests=0
	for i in "${!SERIES[@]}"; do
		[ "${SERIES_ROLE[i]}" != test ] || ntests=$((ntests + 1))
	done
	git -C "$1" rev-parse "patched~$ntests"
}

# source_fixed WT: the tree id of WT's 'base' (the source) plus the
# prerequisite fixes it lacks, made in a scratch index: what the feature
# patches on series-base must give back. Fails if a prerequisite does not
# apply. Call load_series.
source_fixed() {
	local i idx rc=0
	idx=$(mktemp "${TMPDIR:-/tmp}/sfp-index.XXXXXX")
	rm -f "$idx"
	GIT_INDEX_FILE=$idx git -C "$1" read-tree base || rc=1
	for i in "${!SERIES[@]}"; do
		[ "$rc" = 0 ] || break
		[ "${SERIES_ROLE[i]}" = prereq ] || continue
		! in_rev "$1" base "${SERIES[i]}" || continue
		GIT_INDEX_FILE=$idx git -C "$1" apply --cached "${SERIES[i]}" 2>/dev/null || rc=1
	done
	[ "$rc" != 0 ] || GIT_INDEX_FILE=$idx git -C "$1" write-tree || rc=1
	rm -f "$idx"
	return "$rc"
}


# series_back_out DIR: on DIR's checked-out branch, back out, newest
# first, every feature patch of the series (load_series first) that DIR
# contains, one commit each. Per feature patch i, SERIES_STATE[i]:
#   contained  it reverse-applied: backed out
#   drifted    DIR has the change with other context: backed out with a
#              three-way merge (THREEWAY_FROM, threeway)
#   absent     it applies as it is: nothing to back out
#   stuck      neither, and no three-way merge backs it out; DIR is left
#              as it was, SERIES_CONFLICTS[i] names the files a merge
#              conflicted in
# SERIES_BACKED_OUT counts the commits. Status 1 only when git fails.
series_back_out() {
	local dir=$1 i p name how version subject lname
	SERIES_STATE=()
	SERIES_CONFLICTS=()
	SERIES_BACKED_OUT=0
	version=$(kernel_version "$dir")
	for ((i = ${#SERIES[@]} - 1; i >= 0; i--)); do
		[ "${SERIES_ROLE[i]}" = feature ] || continue
		p=${SERIES[i]}
		name=${p##*/}
		lname=${p%/*}
		lname=${lname##*/}
		how=
		if git -C "$dir" apply --check -R "$p" 2>/dev/null; then
			git -C "$dir" apply -R --index "$p" || return 1
			SERIES_STATE[i]=contained
		elif git -C "$dir" apply --check "$p" 2>/dev/null; then
			SERIES_STATE[i]=absent
			continue
		elif [ -n "${THREEWAY_FROM:-}" ] &&
			threeway git -C "$dir" apply -R --3way --index "$p" >/dev/null 2>&1; then
			SERIES_STATE[i]=drifted
			how=" (three-way merge: its context differs here)"
		else
			SERIES_STATE[i]=stuck
			SERIES_CONFLICTS[i]=$(git -C "$dir" diff --name-only --diff-filter=U 2>/dev/null | tr '\n' ' ' || true)
			git -C "$dir" reset -q --hard || return 1
			continue
		fi
		subject=$(patch_subject "$p")
		git -C "$dir" "${GIT_ID[@]}" commit -q -F - <<EOF || return 1
Back out "$subject"

The source ($version) already contains this change; patches/$lname/$name
reverse-applies to it$how. It is backed out here so that 'series-base'
is the kernel before the series and 'patched' (git am of the series onto
series-base) shows exactly what the series adds.
EOF
		SERIES_BACKED_OUT=$((SERIES_BACKED_OUT + 1))
	done
}

# series_apply DIR [ROLE...]: on DIR's checked-out branch, git am each
# patch of the series (load_series first) of the roles ROLE (default:
# all), in order. A prerequisite DIR already contains is skipped; a patch
# whose context differs goes in with a three-way merge where
# THREEWAY_FROM is set. Per patch i, SERIES_HOW[i]: am, 3way (with
# SERIES_WHERE[i], the first hunk that did not fit), contained (a
# prerequisite, skipped); unset for the others. SERIES_PREREQ_END: the
# commit after the last prerequisite (DIR's HEAD at the start if none).
# A patch that does not go in leaves DIR at the commit before it (the am
# aborted) and returns 1 with SERIES_FAILED (its index),
# SERIES_FAIL_WHERE ("FILE at line N (HUNK)"), SERIES_FAIL_CONFLICTS
# (the files a three-way merge conflicted in) and SERIES_FAIL_ERR (git's
# first error line).
series_apply() {
	local dir=$1 i p err where file line hunk roles
	shift
	roles=" ${*:-prereq feature test} "
	SERIES_HOW=()
	SERIES_WHERE=()
	SERIES_FAILED=
	SERIES_FAIL_WHERE=
	SERIES_FAIL_CONFLICTS=
	SERIES_FAIL_ERR=
	SERIES_PREREQ_END=$(git -C "$dir" rev-parse HEAD) || return 1
	for i in "${!SERIES[@]}"; do
		case $roles in *" ${SERIES_ROLE[i]} "*) ;; *) continue ;; esac
		p=${SERIES[i]}
		if [ "${SERIES_ROLE[i]}" = prereq ] && git -C "$dir" apply --check -R "$p" 2>/dev/null; then
			SERIES_HOW[i]=contained
			continue
		fi
		if err=$(git -C "$dir" apply --check -v "$p" 2>&1) &&
			err=$(git -C "$dir" "${GIT_ID[@]}" am -q "$p" 2>&1); then
			SERIES_HOW[i]=am
		else
			git -C "$dir" am --abort >/dev/null 2>&1 || true
			where=$(printf '%s\n' "$err" | sed -n 's/^error: patch failed: //p' | head -n 1)
			file=${where%:*}
			line=${where##*:}
			hunk=$(grep -m1 "^@@ -$line," "$p" || true)
			where="${file:-?} at line ${line:-?}${hunk:+ ($hunk)}"
			if [ -n "${THREEWAY_FROM:-}" ] &&
				err=$(threeway git -C "$dir" "${GIT_ID[@]}" am -q --3way "$p" 2>&1 >/dev/null); then
				SERIES_HOW[i]=3way
				SERIES_WHERE[i]=$where
			else
				SERIES_FAILED=$i
				SERIES_FAIL_WHERE=$where
				SERIES_FAIL_CONFLICTS=$(git -C "$dir" diff --name-only --diff-filter=U 2>/dev/null | tr '\n' ' ' || true)
				SERIES_FAIL_ERR=$(printf '%s\n' "$err" | grep -m1 -E '^(error|CONFLICT)' || true)
				git -C "$dir" am --abort >/dev/null 2>&1 || true
				return 1
			fi
		fi
		[ "${SERIES_ROLE[i]}" != prereq ] || SERIES_PREREQ_END=$(git -C "$dir" rev-parse HEAD) || return 1
	done
}
