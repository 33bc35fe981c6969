#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Configure (merge_config.sh onto allnoconfig) and build a kernel. See --help.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
Usage: $PROG -t TREE -o OBJDIR [-f FRAGMENT]...

Merge the config fragments (default: kernel-config/base.config, then the
tests' own kernel/sched/tests/.kunitconfig and
tools/testing/selftests/sched/config where TREE has them) onto
allnoconfig with TREE's scripts/kconfig/merge_config.sh into OBJDIR, fail
if any requested option is missing from the final .config (but for
those sfp.toml lists as absent for the line (config_absent), which are
named and left out), then build
bzImage out of tree (O=OBJDIR) with ccache. Incremental: re-running after
an edit rebuilds only what changed.

TREE is only read: it must not carry an in-tree build (.config).
Environment: JOBS (default nproc+1), CCACHE_DIR (ccache's default),
CCACHE_BASEDIR (default \$BUILD: compile paths under it are hashed
relative to the build directory).
EOF
}

TREE=
OBJ=
FRAGS=()
while [ $# -gt 0 ]; do
	case $1 in
	-t | --tree) TREE=${2:?}; shift 2 ;;
	-o | --obj) OBJ=${2:?}; shift 2 ;;
	-f | --fragment) FRAGS+=("${2:?}"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
{ [ -n "$TREE" ] && [ -n "$OBJ" ]; } || die "need -t TREE and -o OBJDIR (see --help)"
[ -d "$TREE" ] || die "kernel tree '$TREE' does not exist"
is_kernel_tree "$TREE" || die "'$TREE' is not a kernel source tree"
[ ! -f "$TREE/.config" ] || die "'$TREE' has an in-tree .config; out-of-tree builds need a clean source (make mrproper there)"
if [ ${#FRAGS[@]} = 0 ]; then
	f=$(default_fragments "$TREE")
	split_lines FRAGS "$f"
fi
for f in "${FRAGS[@]}"; do
	[ -f "$f" ] || die "config fragment '$f' not found"
done
for t in gcc:gcc make:make flex:flex bison:bison bc:bc ccache:ccache perl:perl; do
	need "${t%%:*}" "${t#*:}"
done
[ -f /usr/include/libelf.h ] || die "libelf.h not found: install the Debian package 'libelf-dev' (or run 'make setup' as root)"

TREE=$(realpath "$TREE")
for i in "${!FRAGS[@]}"; do FRAGS[i]=$(realpath "${FRAGS[i]}"); done
mkdir -p "$OBJ"
OBJ=$(realpath "$OBJ")
JOBS=${JOBS:-$(($(nproc) + 1))}
# kbuild passes absolute source paths; ccache rewrites those under
# base_dir into relative ones, so builds of two checkouts laid out alike
# (source two levels above the build directory) share cache entries.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(realpath "$BUILD")}

say "config: $(printf '%s ' "${FRAGS[@]##*/}")-> $OBJ/.config"
(cd "$TREE" && scripts/kconfig/merge_config.sh -n -O "$OBJ" "${FRAGS[@]}") \
	>"$OBJ/merge_config.log" 2>&1 || {
	tail -n 20 "$OBJ/merge_config.log" >&2
	die "merge_config.sh failed (log: $OBJ/merge_config.log)"
}

# Every option a fragment asks for must be in the final .config as asked:
# merge_config.sh only warns when Kconfig drops one for a missing dependency.
missing=$(config_unmet "$OBJ/.config" "${FRAGS[@]}")
# An option the line does not have (config_absent in sfp.toml:
# the fragments serve every line, and options come and go between them)
# is named and left out; any other missing option is an error.
absent=" $(line_field "$LINE" config_absent) "
if [ -n "$missing" ]; then
	kept=
	while IFS= read -r m; do
		sym=$(printf '%s\n' "$m" | sed -E 's/^(# )?CONFIG_([A-Za-z0-9_]+)[= ].*/\2/')
		case $absent in
		*" $sym "*) say "CONFIG_$sym: not an option of the $LINE line (sfp.toml config_absent): left out" ;;
		*) kept+="$m"$'\n' ;;
		esac
	done <<<"$missing"
	missing=${kept%$'\n'}
fi
if [ -n "$missing" ]; then
	printf '%s\n' "$missing" | sed 's/^/  not in final .config: /' >&2
	die "requested config options are missing from $OBJ/.config (unmet dependencies?)"
fi

say "building bzImage with ccache, $JOBS jobs (log: $OBJ/build.log)"
t0=$EPOCHSECONDS
# Progress every 200 build steps; the full output is in the log.
progress() {
	local line n=0
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$OBJ/build.log"
		case $line in "  "[A-Z]*) n=$((n + 1)) ;; *) continue ;; esac
		[ $((n % 200)) = 0 ] && printf '  %5d build steps, %4ds: %s\n' "$n" "$((EPOCHSECONDS - t0))" "${line##* }"
	done
	return 0
}
: >"$OBJ/build.log"
if ! make -C "$TREE" O="$OBJ" CC="ccache gcc" HOSTCC="ccache gcc" \
	KBUILD_BUILD_USER=sched-fastpath KBUILD_BUILD_HOST=qemu \
	-j"$JOBS" bzImage 2>&1 | progress; then
	grep -E 'error|Error' "$OBJ/build.log" | head -n 20 >&2 || true
	die "kernel build failed (log: $OBJ/build.log)"
fi
rel=$(make -s -C "$TREE" O="$OBJ" kernelrelease)
say "built $OBJ/arch/x86/boot/bzImage ($rel) in $((EPOCHSECONDS - t0))s"
