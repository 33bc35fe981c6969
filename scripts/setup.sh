#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the project needs (as root), or say which
# are missing. See --help.
set -euo pipefail
PROG=$(basename "$0")
SFP=$(cd "$(dirname "$0")/.." && pwd)/sfp

die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}

say() {
	printf '%s: %s\n' "$PROG" "$*" >&2
}

# The kernel lines (sfp.toml), space-separated.
lines() {
	"$SFP" get lines
}

PKGS="git make gcc bc flex bison libelf-dev libssl-dev perl python3 python3-yaml cpio gzip
xz-utils ccache qemu-system-x86 busybox-static shellcheck linux-perf rsync mypy
python3-typeshed
sparse gcc-aarch64-linux-gnu qemu-system-arm unifdef b4 python3-ply
stress-ng rt-tests
python3-matplotlib lava-dispatcher"

# --lab: a local LAVA lab's server side (sfp lab up), on top of the rest.
LAB_PKGS="lava-server lavacli gunicorn postgresql"

usage() {
	local ls
	ls=$(lines)
	cat <<EOF
Usage: $PROG [--check] [--lab]

Make sure these Debian packages are installed:
  ${PKGS//$'\n'/ }
and, when KSRC is not set, the Debian package of every line that has one
(debian_package in sfp.toml; lines: $ls): each such
line's default kernel source, used by make check; and the package of
each line's distribution config (distro_config: the distro kind's
scheduler options).
As root, missing packages are installed with apt-get; otherwise, or with
--check, the missing ones are listed and the exit status is 1.
--lab adds what a local LAVA lab needs (./sfp lab up):
  $LAB_PKGS
EOF
}

check_only=
for arg in "$@"; do
	case $arg in
	--check) check_only=1 ;;
	--lab) PKGS="$PKGS $LAB_PKGS" ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$arg' (see --help)" ;;
	esac
done

if [ -z "${KSRC:-}" ]; then
	for l in $(lines); do
		pkg=$("$SFP" get line "$l" debian_package)
		[ -z "$pkg" ] || PKGS="$PKGS $pkg"
	done
fi
# The distro kind's configurations (distro_config): small packages of
# config files, wanted with or without KSRC.
for l in $(lines); do
	pkg=$("$SFP" get line "$l" distro_package)
	case " $PKGS " in *" $pkg "*) ;; *) [ -z "$pkg" ] || PKGS="$PKGS $pkg" ;; esac
done
command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script supports Debian 12 only"
missing=
for p in $PKGS; do
	# one status per architecture the package is known for, unseparated
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case $st in *'install ok installed'*) ;; *) missing="$missing $p" ;; esac
done
[ -n "$missing" ] || exit 0
if [ -n "$check_only" ] || [ "$EUID" != 0 ]; then
	die "missing Debian packages:$missing (as root: apt-get install$missing, or make setup)"
fi
say "installing:$missing"
apt-get update -q >/dev/null
# shellcheck disable=SC2086 # word splitting of the package list is wanted
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null
