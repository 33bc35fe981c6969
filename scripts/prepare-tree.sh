#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Prepare the work tree: base (source as found), series-base (features
# backed out), baseline (+ prerequisite fixes), patched (git am of the
# series). See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
SERIES_LINES=$(lines)
DEFAULT_LINE=$(sfp get default-line)

usage() {
	cat <<EOF
Usage: $PROG [-s SOURCE] [-o WORKTREE]

Make a git work tree with these branches from one kernel source:
  base         the source as found
  series-base  base with every feature patch of the series that it already
               contains reverse-applied, one commit per patch: what
               'git am' of the series applies onto
  baseline     series-base + the series' prerequisite fixes: the kernel
               without the features, the 'A' side of every A/B comparison
  patched      series-base + 'git am' of the series (checked out)

The series is patches/LINE/series (here patches/$LINE/series): LINE is
the kernel line of \$KSRC (6.1.192 is on line 6.1), else \$LINE, else
$DEFAULT_LINE (sfp.toml). Lines with a series: $SERIES_LINES.

The series file has up to three sections, each opened by a comment line:
'# prerequisites' (fixes both kernels need: one the source already
contains is skipped, never backed out), '# features' (backed out of a
source that contains them) and '# generated' (the test patches).

SOURCE is a kernel git checkout, a kernel source directory or a source
tarball (default: \$KSRC, else \$SFP_SRC_${LINE//./_}, else the tarball of
the line's Debian package where it has one; here: ${DEFAULT_SRC:-none}).
A SOURCE on another line than \$LINE is refused unless LINE was given.
The source itself is never modified: a git checkout is cloned (--shared),
anything else is copied or extracted under the build folder. A tarball's
'base' is kept, by the tarball's sha256, as a bare git repository in
\$SFP_CACHE (default \$XDG_CACHE_HOME/sched-fastpath, else
~/.cache/sched-fastpath; here ${CACHE}): the next work tree from the same
tarball is a local clone of it (hard links) and a checkout, not an
extraction and a commit of 80,000 files.

WORKTREE defaults to \$BUILD/tree ($BUILD/tree). If it exists it is
reused as it is; if patches/ changed since it was prepared, 'baseline' and
'patched' are rebuilt from 'series-base' provided the work tree has no
uncommitted edits.

Per patch, the source either contains it (it reverse-applies), lacks it (it
applies) or neither (context drifted). 'Neither' stops with the patch, the
file and the first failing hunk, and leaves nothing behind; unless
THREEWAY_FROM names a work tree prepared from a known-good source of the
line (say build/$LINE/tree): then the patch is backed out or applied with a
three-way merge (git apply/am --3way, reading the blobs the patch was made
from in that tree), and only a conflict stops, naming the files.
EOF
}
CACHE=${SFP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sched-fastpath}
SRC=${KSRC:-}
WT=$BUILD/tree
while [ $# -gt 0 ]; do
	case $1 in
	-s | --source) SRC=${2:?}; shift 2 ;;
	-o | --out) WT=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
SRC=${SRC:-$DEFAULT_SRC}
# A line without a default source: a work tree prepared before (with
# KSRC) goes on with the source it was made from.
if [ -z "$SRC" ] && [ -d "$WT/.git" ]; then
	SRC=$(wt_meta "$WT" source | sed -E 's/^dir://; t; s/^(git|tar)://; s/@[^@]*$//')
fi
if [ -z "$SRC" ]; then
	hint=$(line_source_hint "$LINE")
	die "no source for the $LINE line: $hint"
fi
need git git

export GIT_COMMITTER_NAME=sched-fastpath GIT_COMMITTER_EMAIL=sched-fastpath@example.org

# --- the source -------------------------------------------------------------
if [ ! -e "$SRC" ]; then
	[ "$SRC" != "$DEFAULT_SRC" ] || { hint=$(line_source_hint "$LINE") && die "$SRC not found: $hint"; }
	die "kernel source '$SRC' does not exist"
fi
SRC=$(realpath "$SRC")
# The series must be the source's line, unless LINE forced it.
v=$(source_version "$SRC")
vline=$(echo "$v" | cut -d. -f1-2)
if [ -n "$v" ] && [ "$vline" != "$LINE" ]; then
	[ "$LINE_FROM" = LINE ] ||
		die "'$SRC' is Linux $v, not on the $LINE line: give it as KSRC=$SRC, and the line follows the source (lines: $SERIES_LINES), or force one with LINE=X.Y"
	say "LINE=$LINE: the $LINE series on Linux $v, as asked"
fi
wt_abs=$(realpath -m "$WT")
case $SRC/ in
"$wt_abs"/*) die "the source '$SRC' is inside the work tree '$WT'" ;;
esac

src_kind=
if [ -d "$SRC" ]; then
	is_kernel_tree "$SRC" || die "'$SRC' is not a kernel source tree (no Makefile with PATCHLEVEL, or no kernel/sched/fair.c)"
	top=$(git -C "$SRC" rev-parse --show-toplevel 2>/dev/null || true)
	if [ "$top" = "$SRC" ]; then
		src_kind=git
		edits=$(git -C "$SRC" status --porcelain --untracked-files=no)
		if [ -n "$edits" ]; then
			die "'$SRC' has uncommitted changes; commit or stash them (the work tree is a clone of HEAD and would not see them)"
		fi
		src_id="git:$SRC@$(git -C "$SRC" rev-parse HEAD)"
	else
		src_kind=dir
		src_id="dir:$SRC"
	fi
elif [ -f "$SRC" ]; then
	case $SRC in
	*.tar | *.tar.xz | *.tar.gz | *.tgz | *.tar.bz2) src_kind=tar ;;
	*) die "'$SRC' is neither a directory nor a .tar[.xz|.gz|.bz2] kernel tarball" ;;
	esac
	src_id="tar:$SRC@$(stat -c %s-%Y "$SRC")"
else
	die "'$SRC' is not a directory or a file"
fi

load_series

# THREEWAY_FROM: a work tree prepared from a known-good source of the
# line, whose objects (the blobs the patches were made from) let a patch
# whose context differs go in with a three-way merge (threeway, lib.sh).
THREEWAY_FROM=${THREEWAY_FROM:-}
if [ -n "$THREEWAY_FROM" ]; then
	[ -d "$THREEWAY_FROM/.git/objects" ] ||
		die "THREEWAY_FROM=$THREEWAY_FROM is not a git work tree (no .git/objects)"
	THREEWAY_FROM=$(realpath "$THREEWAY_FROM")
fi

# apply_series DIR: on DIR's checked-out branch (series-base), 'git am'
# the series (series_apply), say what went in how, and point 'baseline'
# at the commit after the prerequisites. Dies naming the patch, the hunk
# and the conflict when a patch does not go in.
apply_series() {
	local dir=$1 i p v
	if ! series_apply "$dir"; then
		p=${SERIES[SERIES_FAILED]##*/}
		v=$(kernel_version "$dir")
		die "$p neither applies to nor is contained in $SRC ($v): first failing hunk in $SERIES_FAIL_WHERE${THREEWAY_FROM:+; a three-way merge conflicts in ${SERIES_FAIL_CONFLICTS:-?}}; known to work: $KNOWN_GOOD${THREEWAY_FROM:-; THREEWAY_FROM=<a work tree prepared from it> tries a three-way merge}"
	fi
	for i in "${!SERIES[@]}"; do
		p=${SERIES[i]##*/}
		case ${SERIES_HOW[i]:-} in
		contained) say "$p: prerequisite already in the source, skipped" ;;
		3way) say "$p: applied with a three-way merge (first hunk that did not fit: ${SERIES_WHERE[i]})" ;;
		esac
	done
	git -C "$dir" branch -f baseline "$SERIES_PREREQ_END"
}

# --- an existing work tree is reused --------------------------------------------
if [ -d "$WT/.git" ]; then
	prepared_from=$(wt_meta "$WT" source)
	[ -n "$prepared_from" ] || die "'$WT' exists but was not made by $PROG (or by an older version of it); move it away, or remove it (make clean-tree)"
	if [ "$prepared_from" != "$src_id" ]; then
		die "'$WT' was prepared from $prepared_from, not $src_id; remove it first (make clean-tree)"
	fi
	had=$(wt_meta "$WT" series)
	want=$(series_hash)
	if [ "$had" = "$want" ]; then
		v=$(wt_meta "$WT" version)
		say "work tree $WT is up to date ($v, series $want)"
		exit 0
	fi
	edits=$(git -C "$WT" status --porcelain --untracked-files=no)
	[ -z "$edits" ] ||
		die "patches/ changed but '$WT' has uncommitted edits; commit or discard them, or remove the work tree (make clean-tree)"
	head=$(git -C "$WT" rev-parse patched 2>/dev/null || true)
	prepared=$(git -C "$WT" rev-parse refs/sfp/prepared 2>/dev/null || true)
	[ -n "$head" ] || head=none
	[ "$head" = "$prepared" ] ||
		die "patches/ changed but 'patched' in '$WT' has commits of yours; move them to another branch, or remove the work tree (make clean-tree)"
	# A tree prepared before the series had prerequisites: its 'baseline'
	# is what the series applies onto.
	git -C "$WT" rev-parse -q --verify series-base >/dev/null ||
		git -C "$WT" branch series-base baseline
	say "patches/ changed: rebuilding 'baseline' and 'patched' from 'series-base' in $WT"
	# On failure, put both branches back as they were.
	old_patched=$(git -C "$WT" rev-parse patched)
	old_baseline=$(git -C "$WT" rev-parse baseline)
	# shellcheck disable=SC2317 # called from the EXIT trap
	restore() {
		git -C "$WT" am --abort >/dev/null 2>&1 || true
		git -C "$WT" checkout -q -f -B patched "$old_patched"
		git -C "$WT" branch -f baseline "$old_baseline"
	}
	trap restore EXIT
	git -C "$WT" checkout -q -B patched series-base
	git -C "$WT" branch -f baseline series-base
	apply_series "$WT"
	trap - EXIT
	wt_record_prepared "$WT"
	exit 0
fi

[ ! -e "$WT" ] || die "'$WT' exists and is not a work tree; move it away"

# --- a new work tree, made aside and moved into place when complete ----------
mkdir -p "$(dirname "$WT")"
TMP=$WT.new
rm -rf "$TMP"
trap 'rm -rf "$TMP"' EXIT

t0=$EPOCHSECONDS
# A source tree (1.4 GB), its git objects and a build beside it.
need_space "$WT" 3 "a new work tree"
say "new work tree from $src_kind source $SRC"
case $src_kind in
git)
	# As clone --shared, without the source's branches: its own may be
	# called base, baseline or patched.
	git init -q -b sfp-unborn "$TMP"
	git -C "$SRC" rev-parse --git-path objects | sed "s|^\([^/]\)|$SRC/\1|" >"$TMP/.git/objects/info/alternates"
	git -C "$TMP" fetch -q --no-tags "$SRC" HEAD
	git -C "$TMP" checkout -q -b base FETCH_HEAD
	;;
tar | dir)
	cached=
	if [ "$src_kind" = tar ]; then
		cached=$(sha256sum "$SRC")
		cached=$CACHE/base-${cached%% *}.git
	fi
	if [ -n "$cached" ] && git -C "$cached" rev-parse -q --verify refs/heads/base >/dev/null 2>&1; then
		say "checking out the source's 'base' from the cache $cached"
		git clone -q --local -b base "$cached" "$TMP"
		git -C "$TMP" remote remove origin
	else
		mkdir -p "$TMP"
		if [ "$src_kind" = tar ]; then
			say "extracting $(basename "$SRC")"
			tar -xf "$SRC" -C "$TMP" --strip-components=1
			is_kernel_tree "$TMP" || die "'$SRC' does not contain a kernel source tree"
		else
			say "copying $SRC"
			cp -a "$SRC"/. "$TMP"/
		fi
		git -C "$TMP" init -q -b base
		say "committing the source as 'base' (about a minute)"
		git -C "$TMP" add -A
		# Debian's linux-source tarball ignores '/*' (its packaging
		# .gitignore), so a plain add sees nothing: take every file then.
		git -C "$TMP" ls-files --error-unmatch kernel/sched/fair.c >/dev/null 2>&1 ||
			git -C "$TMP" add -A -f
		v=$(kernel_version "$TMP")
		git -C "$TMP" "${GIT_ID[@]}" commit -q -m "base: ${SRC##*/} ($v)"
		# Kept for the next work tree from this tarball; a cache that
		# cannot be written costs only the next extraction.
		if [ -n "$cached" ]; then
			rm -rf "$cached.new"
			if err=$(mkdir -p "$CACHE" 2>&1 && git clone -q --bare --local "$TMP" "$cached.new" 2>&1 &&
				mv -T "$cached.new" "$cached" 2>&1); then
				say "kept 'base' in the cache $cached"
			else
				rm -rf "$cached.new"
				say "could not keep 'base' in the cache $CACHE (carrying on): ${err%%$'\n'*}"
			fi
		fi
	fi
	;;
esac
say "base committed in $((EPOCHSECONDS - t0))s"

version=$(kernel_version "$TMP")

# series-base: back out, newest first, each feature patch the source
# already contains (series_back_out).
git -C "$TMP" checkout -q -b series-base base
series_back_out "$TMP" || die "git failed while backing the features out of $SRC"
for i in "${!SERIES[@]}"; do
	name=$(basename "${SERIES[i]}")
	case ${SERIES_STATE[i]:-} in
	contained) say "$name: contained in the source, backed out for series-base" ;;
	drifted) say "$name: contained in the source, backed out for series-base (three-way merge: its context differs here)" ;;
	esac
done
backed_out=$SERIES_BACKED_OUT

# patched: git am of the whole series onto series-base; baseline is the
# commit after the prerequisites.
git -C "$TMP" branch baseline series-base
git -C "$TMP" checkout -q -b patched series-base
apply_series "$TMP"

git -C "$TMP" notes --ref=sfp add -f -m "source $src_id" -m "version $version" base 2>/dev/null
wt_record_prepared "$TMP"
trap - EXIT
rm -rf "$WT"
mv "$TMP" "$WT"
say "work tree ready: $WT ($version; $backed_out feature patch(es) backed out for series-base)"
