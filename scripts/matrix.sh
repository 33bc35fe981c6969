#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The point-release matrix: every linux-source version Debian serves for
# every line, checked against that line's series. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	local ls
	ls=$(lines)
	cat <<EOF
Usage: $PROG [-l LINES] [-n] [-o FILE]

For every version of linux-source-LINE that the Debian archive serves
(apt-cache madison; fetched with apt-get download, no other network),
for every line with a series and a Debian package (default: $ls),
and for a line without a package its one source where one is given
(SFP_SRC_<LINE>, say SFP_SRC_6_19=/path/to/linux: a directory, git
checkout or tarball; without one, a row says so):

  features   per feature patch of the line's series: contained (it
             reverse-applies), drifted (the source has the change with
             other context: it neither applies nor reverse-applies) or
             absent (it applies)
  baseline   whether every feature the source has backs out
             ('series-base'): plainly, else with a three-way merge
  applies    whether the series applies to series-base: 'git am', else
             'git am --3way', else the patch and the file that conflict
             (three-way merges read the blobs of the line's prepared work
             tree, \$BUILD/LINE/tree, where it exists: make prepare)
  reproduced whether series-base + the feature patches gives back the
             source's kernel/sched/ byte for byte (+ any prerequisite the
             source lacks)

These four need only the files the series touches, taken from the
source. Then, for the newest and the oldest version of each line (the
one source of a line without a package),
the main job (./sfp run: build, boot, KUnit, kselftests) on the
whole source (with THREEWAY_FROM where the checks needed a three-way
merge), unless -n.

  -l LINES   the lines, e.g. -l 6.1 (default: every line)
  -n         no builds and boots, the table only
  -o FILE    also write the table (markdown) to FILE

Work and downloads go to \$BUILD/../matrix ($(dirname "$BUILD")/matrix): the
.deb files are kept and not fetched again. Exit status 1 if a version
fails a check or a build and boot fails; the table lists every version,
failing ones with the reason.
EOF
}

ARGS="$*"
MLINES=$(lines)
BOOT=1
OUTFILE=
while [ $# -gt 0 ]; do
	case $1 in
	-l) MLINES=${2:?-l needs lines}; shift 2 ;;
	-n) BOOT=; shift ;;
	-o) OUTFILE=${2:?-o needs a file}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
for l in $MLINES; do
	[ -f "$PATCHES_TOP/$l/series" ] && continue
	ls=$(lines)
	die "no line '$l': lines are $ls"
done
need apt-get apt
need dpkg-deb dpkg
need git git

TOP=$(dirname "$BUILD")
M=$TOP/matrix
mkdir -p "$M/debs"
rows=$M/rows.md
: >"$rows"
rc=0
THREEWAY_FROM=

# versions LINE: the versions of linux-source-LINE the archive serves,
# newest first.
versions() {
	{ apt-cache madison "linux-source-$1" 2>/dev/null || true; } | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' |
		sort -u -V -r
}

# fetch LINE VERSION: the .deb in $M/debs (downloaded once); prints its path.
fetch() {
	local deb file="linux-source-$1_${2//:/%3a}_all.deb"
	deb=$(find "$M/debs" -name "$file" | head -n 1)
	if [ -z "$deb" ]; then
		(cd "$M/debs" && apt-get download -q "linux-source-$1=$2" >/dev/null 2>"$M/debs/download.err") ||
			return 1
		deb=$(find "$M/debs" -name "$file" | head -n 1)
	fi
	[ -n "$deb" ] && echo "$deb"
}

# source_tarball DEB OUT: the kernel source tarball inside DEB, to OUT.
source_tarball() {
	dpkg-deb --fsys-tarfile "$1" | tar -xO --wildcards './usr/src/linux-source-*.tar.xz' >"$2"
}

# check_version LINE VERSION SOURCE: the four checks; one table row.
check_version() {
	local l=$1 v=$2 src=$3 d i n have="" absent="" drift="" base applies repro
	d=$M/$l/$v
	rm -rf "$d"
	PATCHES=$PATCHES_TOP/$l
	load_series
	series_mini_tree "$src" "$d" || { say "$l $v: cannot extract the series' files from $src"; rc=1; return 0; }
	# The objects of the line's prepared work tree, where there is one:
	# the blobs the patches were made from, which a three-way merge reads.
	THREEWAY_FROM=
	[ ! -d "$TOP/$l/tree/.git/objects" ] || THREEWAY_FROM=$TOP/$l/tree
	# baseline: back out every feature the source has (series_back_out);
	# features: contained (reverse-applies), absent (applies) or drifted
	# (neither: the source has the change with other context)
	base=yes
	git -C "$d" checkout -q -b series-base
	series_back_out "$d" || base="no: git failed backing out"
	for i in "${!SERIES[@]}"; do
		n=$(basename "${SERIES[i]}" | cut -c1-4)
		case ${SERIES_STATE[i]:-} in
		contained) have+=" $n" ;;
		absent) absent+=" $n" ;;
		drifted)
			drift+=" $n"
			[ "$base" != yes ] || base="yes (3way: $n)"
			;;
		stuck)
			drift+=" $n"
			case $base in no:*) ;; *)
				base="no: $n does not back out${THREEWAY_FROM:+, even with --3way (conflict in ${SERIES_CONFLICTS[i]:-?})}" ;;
			esac
			;;
		esac
	done
	# applies: git am, else git am --3way, else name the conflict
	applies=am
	git -C "$d" checkout -q -b patched
	if series_apply "$d"; then
		for i in "${!SERIES[@]}"; do
			[ "${SERIES_HOW[i]:-}" = 3way ] || continue
			applies="3way ($(basename "${SERIES[i]}" .patch | cut -c1-4))"
			break
		done
	else
		applies="no: $(basename "${SERIES[SERIES_FAILED]}") conflicts in ${SERIES_FAIL_CONFLICTS:-?}${SERIES_FAIL_ERR:+ ($SERIES_FAIL_ERR)}"
	fi
	case $base in no:*) applies="n/a (no baseline)" ;; esac
	# reproduced: kernel/sched of series-base + prerequisites + features
	# against the source + the prerequisites it lacks
	repro=n/a
	case $applies in
	no:* | n/a*) ;;
	*)
		local feat fixed
		feat=$(features_end "$d")
		fixed=$(source_fixed "$d")
		if git -C "$d" diff --quiet "$fixed" "$feat" -- kernel/sched; then
			repro=identical
		else
			repro="differs: $(git -C "$d" diff --name-only "$fixed" "$feat" -- kernel/sched | tr '\n' ' ')"
		fi
		;;
	esac
	case "$base|$applies|$repro" in
	*no:* | *n/a* | *differs*) rc=1 ;;
	esac
	[ -n "$have$drift" ] || rc=1
	printf '| %s | %s |%s |%s |%s | %s | %s | %s |\n' "$l" "$v" "${have:- none}" "${drift:- none}" \
		"${absent:- none}" "$base" "$applies" "$repro" >>"$rows"
	say "$l $v: features${have:- none}, drifted${drift:- none}, absent${absent:- none}; baseline $base; applies $applies; reproduced $repro"
}

# boot_version LINE VERSION SOURCE: the main job on the whole source,
# when its checks passed; one row of the boots table.
boot_version() {
	local l=$1 v=$2 src=$3 brc=0 tw="" res logs times
	grep -q "^| $l | $v |.*| identical |$" "$rows" || {
		printf '| %s | %s | not booted: the checks above failed |\n' "$l" "$v" >>"$boots"
		return 0
	}
	stage_start "line $l, Linux $v: build, boot, tests"
	! grep -q "^| $l | $v |.*3way" "$rows" || tw=$TOP/$l/tree
	env -u LINE -u LINE_FROM KSRC="$src" BUILD="$M/build-$v" \
		THREEWAY_FROM="$tw" "$SFP" run >"$M/run-$v.log" 2>&1 || brc=$?
	logs=$(kernel_logs "$M/build-$v/$l" patched)
	res=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/report.txt" 2>/dev/null || true)
	[ "$brc" = 0 ] || rc=1
	times=
	[ ! -f "$logs/stage-times.tsv" ] ||
		times=$(awk -F'\t' '{ printf "%s%s %ss", sep, $1, $2; sep = ", " }' "$logs/stage-times.tsv")
	printf '| %s | %s | %s | %s |\n' "$l" "$v" "${res:-no result (exit $brc, see run-$v.log)}" \
		"$times" >>"$boots"
	stage_end
}

boots=$M/boots.md
: >"$boots"
for l in $MLINES; do
	pkg=$(line_field "$l" debian_package)
	if [ -z "$pkg" ]; then
		# No point releases to fetch: the line's one source, if given.
		src=$(line_source "$l")
		if [ -z "$src" ] || [ ! -e "$src" ]; then
			hint=$(line_source_hint "$l")
			say "line $l: not in the matrix: $hint"
			printf '| %s | - | not in the matrix: no Debian package, no SFP_SRC_%s | | | | | |\n' "$l" "${l//./_}" >>"$rows"
			continue
		fi
		v=$(source_version "$src")
		stage_start "line $l: its source, Linux $v (SFP_SRC_${l//./_})"
		check_version "$l" "$v" "$src"
		stage_end
		[ -n "$BOOT" ] || continue
		boot_version "$l" "$v" "$src"
		continue
	fi
	vl=$(versions "$l")
	vs=()
	split_lines vs "$vl"
	[ ${#vs[@]} -gt 0 ] || { say "apt-cache knows no linux-source-$l version (apt-get update?)"; rc=1; continue; }
	stage_start "line $l: ${#vs[@]} versions (${vs[*]})"
	for v in "${vs[@]}"; do
		if ! deb=$(fetch "$l" "$v"); then
			err=
			[ ! -f "$M/debs/download.err" ] || err=$(tail -n 1 "$M/debs/download.err")
			printf '| %s | %s | not fetched: %s | | | | | |\n' "$l" "$v" "$err" >>"$rows"
			rc=1
			continue
		fi
		tarball=$M/$l/linux-source-$v.tar.xz
		mkdir -p "$M/$l"
		[ -s "$tarball" ] || source_tarball "$deb" "$tarball"
		check_version "$l" "$v" "$tarball"
	done
	stage_end
	[ -n "$BOOT" ] || continue
	# newest and oldest: the main job on the whole source
	for v in "${vs[0]}" "${vs[${#vs[@]} - 1]}"; do
		boot_version "$l" "$v" "$M/$l/linux-source-$v.tar.xz"
	done
done

table=$M/matrix.md
{
	echo "# Point-release matrix"
	echo
	day=$(date -u '+%Y-%m-%d')
	echo "Made by \`scripts/matrix.sh${ARGS:+ $ARGS}\` (\`make matrix\`), $day: every"
	echo "\`linux-source-LINE\` version the Debian archive served that day. Features"
	echo "are the line's feature patches by number (\`patches/LINE/\`): contained (the"
	echo "patch reverse-applies), drifted (the source has the change with other"
	echo "context: neither applies) or absent. \"3way\" means a three-way merge"
	echo "(\`git apply -R --3way\` to back a drifted feature out, \`git am --3way\`"
	echo "to apply), reading the blobs of the line's prepared work tree, was"
	echo "needed. \"identical\" means series-base + the feature patches gives back"
	echo "the source's \`kernel/sched/\` (plus any prerequisite fix it lacks) byte"
	echo "for byte."
	echo
	echo "| line | version | features contained | drifted | absent | baseline | series applies | kernel/sched reproduced |"
	echo "|---|---|---|---|---|---|---|---|"
	cat "$rows"
	if [ -s "$boots" ]; then
		echo
		echo "The newest and the oldest version of each line, built from the whole"
		echo "source and booted with the tests (a version whose series needed a"
		echo "three-way merge is prepared with \`THREEWAY_FROM=build/LINE/tree\`):"
		echo "| line | version | main job (build, boot, KUnit, kselftests) | wall time per stage |"
		echo "|---|---|---|---|"
		cat "$boots"
	fi
} >"$table"
echo
cat "$table"
[ -z "$OUTFILE" ] || cp "$table" "$OUTFILE"
exit "$rc"
