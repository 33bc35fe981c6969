# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest's programs (installed as /etc/sfp-cmdline.sh):
# arg NAME DEFAULT prints the value of NAME= on the kernel command line,
# or DEFAULT.
arg() {
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tail -n 1)
	echo "${v:-$2}"
}
