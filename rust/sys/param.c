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
 * One unsigned parameter, writable by root (0644), and its reader
 * srnic_param_NAME(): each value is read when it is used (see below), so a
 * change applies from then on.
 */
#define SRNIC_UINT_PARAM(name, def, desc)			\
	static unsigned int name = def;				\
	module_param(name, uint, 0644);				\
	MODULE_PARM_DESC(name, desc);				\
	unsigned int srnic_param_##name(void)			\
	{							\
		return READ_ONCE(name);				\
	}

/* Read when a file is opened: a change applies to files opened later. */
SRNIC_UINT_PARAM(file_mem_mib, 64,
		 "Kernel memory one open file may make srnic allocate, in MiB (default 64; read at open)")

/* Read when a listener accepts a connection. */
SRNIC_UINT_PARAM(mpa_request_timeout_ms, 10000,
		 "How long an accepted connection may take to send its MPA Request (ms, default 10000)")

/* Read when a connection is established. */
SRNIC_UINT_PARAM(tx_stall_timeout_ms, 30000,
		 "How long a peer may stop reading or acknowledging before its QP fails (ms, default 30000)")

/* Read when a TCP connection is made (accepted, or connected). */
SRNIC_UINT_PARAM(min_mss, 536,
		 "Smallest TCP MSS a connection may have; one with less is refused (bytes, default 536)")

/* Read when a message starts. */
SRNIC_UINT_PARAM(zcopy_min, 0,
		 "Smallest SEND or WRITE sent zero-copy from its pages, completing once TCP is done with them (bytes; default 0: every message is copied)")
