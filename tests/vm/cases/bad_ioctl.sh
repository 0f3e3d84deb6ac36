# SPDX-License-Identifier: GPL-2.0
# bad_ioctl: every malformed ioctl gets its errno (ENOTTY, EINVAL, EFAULT), and
# the read/write/poll paths answer correctly with nothing pending.
. /srnic/lib.sh
load_srnic
bad_ioctl || fail "bad_ioctl reported failures"
expect_idle
pass
