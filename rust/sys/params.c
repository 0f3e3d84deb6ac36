// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: module parameters (the 6.12 Rust module! macro has none).
 * Read through rust/sys/params.rs; writable at run time through
 * /sys/module/srnic/parameters/ by root.
 */
#include <linux/moduleparam.h>

#include "glue.h"

static unsigned int mpa_request_timeout_ms = 10000;
module_param(mpa_request_timeout_ms, uint, 0644);
MODULE_PARM_DESC(mpa_request_timeout_ms,
		 "How long an accepted connection may take to send its MPA Request (ms, default 10000)");

unsigned int srnic_param_mpa_request_timeout_ms(void)
{
	return READ_ONCE(mpa_request_timeout_ms);
}
