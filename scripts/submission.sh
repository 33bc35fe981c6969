#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The series in the form it would be mailed upstream: git format-patch
# with a cover letter, and the tree's get_maintainer.pl on it. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG [-o DIR]

Write the line's series (here $LINE; KSRC=... or LINE=X.Y for another)
as an upstream submission, without sending anything:

  git format-patch --cover-letter series-base..patched of the line's
  prepared work tree (\$BUILD/tree), numbered [PATCH n/N] over the whole
  series, the cover letter's subject and text taken from
  docs/cover-letter-LINE.txt (docs/cover-letter.txt, which describes two
  feature and two test patches, if the line has no own letter and no
  prerequisite patches), with the diffstat and shortlog git writes;

  then the tree's scripts/get_maintainer.pl on every patch (no git
  history needed: --no-git --no-git-fallback), and once on the whole
  series: the To/Cc list a maintainer expects.

DIR defaults to \$BUILD/submission ($BUILD/submission); it must not exist
or be empty. Needs a prepared work tree (make prepare).
EOF
}

OUT=$BUILD/submission
while [ $# -gt 0 ]; do
	case $1 in
	-o) OUT=${2:?-o needs a directory}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
need git git
need perl perl
WT=$BUILD/tree
[ -d "$WT/.git" ] || die "no work tree at $WT: run 'make prepare' (or KSRC=... ./sfp prepare) first"
[ -x "$WT/scripts/get_maintainer.pl" ] || die "$WT has no scripts/get_maintainer.pl"
load_series
cover=$ROOT/docs/cover-letter-$LINE.txt
if [ ! -f "$cover" ]; then
	# The common letter describes a series of two features and two test
	# patches; a line with prerequisite fixes needs its own.
	for role in "${SERIES_ROLE[@]}"; do
		[ "$role" != prereq ] ||
			die "the $LINE series has prerequisite patches, which docs/cover-letter.txt does not describe: write docs/cover-letter-$LINE.txt"
	done
	cover=$ROOT/docs/cover-letter.txt
fi
[ -f "$cover" ] || die "no docs/cover-letter.txt"
if [ -d "$OUT" ]; then
	out_files=$(ls -A "$OUT")
	[ -z "$out_files" ] || die "'$OUT' is not empty: move it away, or give another with -o"
elif [ -e "$OUT" ]; then
	die "'$OUT' is not empty: move it away, or give another with -o"
fi
mkdir -p "$OUT"
OUT=$(realpath "$OUT")

# The cover letter's first line is its subject, the rest its text: git
# takes both from the branch description (--cover-from-description=subject).
n=$(git -C "$WT" rev-list --count series-base..patched)
say "format-patch --cover-letter series-base..patched ($n patches) -> $OUT"
description=$(cat "$cover")
git -C "$WT" -c user.name=sched-fastpath -c user.email=sched-fastpath@example.org \
	-c branch.patched.description="$description" -c core.abbrev=12 \
	format-patch -q --cover-letter --cover-from-description=subject --zero-commit \
	-o "$OUT" series-base..patched

say "scripts/get_maintainer.pl per patch -> $OUT/get_maintainer.txt"
{
	for p in "$OUT"/0*.patch; do
		case $p in */0000-*) continue ;; esac
		echo "## ${p##*/}"
		(cd "$WT" && perl scripts/get_maintainer.pl --no-git --no-git-fallback "$p")
		echo
	done
	echo "## the whole series"
	all=()
	for p in "$OUT"/0*.patch; do
		case $p in */0000-*) ;; *) all+=("$p") ;; esac
	done
	(cd "$WT" && perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats "${all[@]}")
} >"$OUT/get_maintainer.txt"
cat "$OUT/get_maintainer.txt"
written=("$OUT"/*.patch)
say "wrote ${#written[@]} files to $OUT; nothing was sent"
