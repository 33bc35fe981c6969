#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kselftest: run the kselftests installed in /kselftest with the kernel's
# own runner (one KTAP stream; each test's output nested under "# ").
cd /kselftest || exit 1
exec ./run_kselftest.sh
