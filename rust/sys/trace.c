// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: the tracepoints of srnic_trace.h, created here and emitted
 * through one function each, declared in glue.h and wrapped once in
 * rust/sys/trace.rs (a tracepoint is a static key and a macro: Rust cannot
 * reach it through kernel::bindings). A disabled tracepoint costs the call
 * and a test of its key.
 */
#define CREATE_TRACE_POINTS
#include "srnic_trace.h"

#include "glue.h"

#define SRNIC_CM_GLUE(name)								\
void srnic_trace_##name(int pid, u32 id, const struct srnic_sockaddr *local,		\
			const struct srnic_sockaddr *remote, int status)		\
{											\
	trace_srnic_##name(pid, id, local, remote, status);				\
}

SRNIC_CM_GLUE(connect)
SRNIC_CM_GLUE(request)
SRNIC_CM_GLUE(accept)
SRNIC_CM_GLUE(reject)
SRNIC_CM_GLUE(rejected)
SRNIC_CM_GLUE(connect_error)
SRNIC_CM_GLUE(established)
SRNIC_CM_GLUE(qp_error)
SRNIC_CM_GLUE(disconnect)

void srnic_trace_terminate(bool received, int pid, u32 id, const struct srnic_sockaddr *local,
			   const struct srnic_sockaddr *remote, u8 layer, u8 etype, u8 ecode)
{
	if (received)
		trace_srnic_terminate_received(pid, id, local, remote, layer, etype, ecode);
	else
		trace_srnic_terminate_sent(pid, id, local, remote, layer, etype, ecode);
}

void srnic_trace_crc_error(int pid, u32 id, const struct srnic_sockaddr *local,
			   const struct srnic_sockaddr *remote, u32 received, u32 computed)
{
	trace_srnic_crc_error(pid, id, local, remote, received, computed);
}

void srnic_trace_rmpp_retransmit(int pid, u32 id, int ifindex, u32 nid, u32 peer,
				 const u8 *peer_mac, u64 wr_id, u32 attempt)
{
	trace_srnic_rmpp_retransmit(pid, id, ifindex, nid, peer, peer_mac, wr_id, attempt);
}

void srnic_trace_rmpp_drop(int pid, u32 id, int ifindex, u32 nid, u32 peer, const char *reason)
{
	trace_srnic_rmpp_drop(pid, id, ifindex, nid, peer, reason);
}
