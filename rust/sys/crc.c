// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: the kernel's CRC32c.
 * Only what the Rust side cannot reach through kernel::bindings in 6.12;
 * each function is declared in glue.h and wrapped once in rust/sys/crc.rs.
 */
#include <linux/crc32c.h>

#include "glue.h"

u32 srnic_crc32c(u32 crc, const void *data, unsigned int len)
{
	return crc32c(crc, data, len);
}
