// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: module parameters. The 6.12 module! macro of the Rust side
 * has no parameters, so they are declared here and read through
 * rust/sys/param.rs.
 */
#include <linux/compiler.h>
#include <linux/moduleparam.h>

#include "glue.h"

/*
 * The kernel memory one open file of /dev/srnic may make srnic allocate, in
 * MiB. Read when a file is opened: a change applies to files opened later.
 */
static unsigned int file_mem_mib = 64;
module_param(file_mem_mib, uint, 0644);
MODULE_PARM_DESC(file_mem_mib,
		 "Kernel memory one open file may make srnic allocate, in MiB (default 64; read at open)");

unsigned int srnic_param_file_mem_mib(void)
{
	return READ_ONCE(file_mem_mib);
}

/*
 * How long a connection accepted by an iWARP listener may take to send its
 * MPA Request, in ms. Read when the connection is accepted.
 */
static unsigned int mpa_request_timeout_ms = 10000;
module_param(mpa_request_timeout_ms, uint, 0644);
MODULE_PARM_DESC(mpa_request_timeout_ms,
		 "How long an accepted connection may take to send its MPA Request (ms, default 10000)");

unsigned int srnic_param_mpa_request_timeout_ms(void)
{
	return READ_ONCE(mpa_request_timeout_ms);
}

/*
 * How long a connected QP's peer may leave sent data unacknowledged, or its
 * receive window closed (it stopped reading), before the QP fails, in ms.
 * Read when a connection is established.
 */
static unsigned int tx_stall_timeout_ms = 30000;
module_param(tx_stall_timeout_ms, uint, 0644);
MODULE_PARM_DESC(tx_stall_timeout_ms,
		 "How long a peer may stop reading or acknowledging before its QP fails (ms, default 30000)");

unsigned int srnic_param_tx_stall_timeout_ms(void)
{
	return READ_ONCE(tx_stall_timeout_ms);
}
