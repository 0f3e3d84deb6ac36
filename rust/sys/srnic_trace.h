/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic's tracepoints: the "srnic" trace system (/sys/kernel/tracing/events/srnic/).
 *
 * Connection management and errors, not the data path: each event names the
 * object (QP, listener or RMPP endpoint handle), the pid of the process that
 * created it (the thread group id; kernel clients show the loading task's)
 * and the addresses. Defined here, emitted only from rust/sys/trace.c (the
 * glue the Rust side calls through rust/sys/trace.rs);
 * Documentation/srnic/observability.rst lists them with examples.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM srnic

#if !defined(SRNIC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SRNIC_TRACE_H

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "../../uapi/srnic.h"

#ifndef SRNIC_TRACE_SOCKADDR
#define SRNIC_TRACE_SOCKADDR
/*
 * An ABI address as a struct sockaddr_in or sockaddr_in6 in `dst` (room for a
 * sockaddr_in6), printed by %pISpc; an address not known yet (family 0)
 * prints as 0.0.0.0:0. The ABI's port is in host byte order.
 */
static inline void srnic_trace_sockaddr(void *dst, const struct srnic_sockaddr *a)
{
	memset(dst, 0, sizeof(struct sockaddr_in6));
	if (a && a->family == AF_INET6) {
		struct sockaddr_in6 *s6 = dst;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(a->port);
		s6->sin6_scope_id = a->scope_id;
		memcpy(&s6->sin6_addr, a->addr, sizeof(s6->sin6_addr));
	} else {
		struct sockaddr_in *s4 = dst;

		s4->sin_family = AF_INET;
		if (a && a->family == AF_INET) {
			s4->sin_port = htons(a->port);
			memcpy(&s4->sin_addr, a->addr, sizeof(s4->sin_addr));
		}
	}
}

/*
 * Where an iWARP event happens (rust/sys/trace.rs's Site), the fields every
 * iWARP event starts with: the owner's `pid`, the QP (or listener) `id` and
 * the connection's addresses. For TP_STRUCT__entry, TP_fast_assign and
 * TP_printk (format and values); expanded at each use, so with each pass's
 * meaning of __field and __array.
 */
#define SRNIC_SITE_FIELDS					\
	__field(int, pid)					\
	__field(u32, id)					\
	__array(u8, local, sizeof(struct sockaddr_in6))		\
	__array(u8, remote, sizeof(struct sockaddr_in6))
#define SRNIC_SITE_ASSIGN					\
	do {							\
		__entry->pid = pid;				\
		__entry->id = id;				\
		srnic_trace_sockaddr(__entry->local, local);	\
		srnic_trace_sockaddr(__entry->remote, remote);	\
	} while (0)
#define SRNIC_SITE_FMT "pid=%d qp=%u local=%pISpc remote=%pISpc"
#define SRNIC_SITE_VALUES __entry->pid, __entry->id, __entry->local, __entry->remote
#endif

/*
 * Connection management: an event on QP (or listener) `id` of process `pid`,
 * between `local` and `remote` (zero while not known yet), with `status`
 * (0, or a negative errno: what failed).
 */
DECLARE_EVENT_CLASS(srnic_cm_class,
	TP_PROTO(int pid, u32 id, const struct srnic_sockaddr *local,
		 const struct srnic_sockaddr *remote, int status),
	TP_ARGS(pid, id, local, remote, status),
	TP_STRUCT__entry(
		SRNIC_SITE_FIELDS
		__field(int, status)
	),
	TP_fast_assign(
		SRNIC_SITE_ASSIGN;
		__entry->status = status;
	),
	TP_printk(SRNIC_SITE_FMT " status=%d", SRNIC_SITE_VALUES, __entry->status)
);

#define SRNIC_CM_EVENT(name)						\
DEFINE_EVENT(srnic_cm_class, name,					\
	TP_PROTO(int pid, u32 id, const struct srnic_sockaddr *local,	\
		 const struct srnic_sockaddr *remote, int status),	\
	TP_ARGS(pid, id, local, remote, status))

/* CONNECT: QP `id` starts connecting to `remote`. */
SRNIC_CM_EVENT(srnic_connect);
/* The listener `id` filed a connection request from `remote`. */
SRNIC_CM_EVENT(srnic_request);
/* ACCEPT: QP `id` answers the request from `remote`. */
SRNIC_CM_EVENT(srnic_accept);
/* REJECT: this side refused the request from `remote` (id: the listener). */
SRNIC_CM_EVENT(srnic_reject);
/* The peer `remote` refused QP `id`'s connection. */
SRNIC_CM_EVENT(srnic_rejected);
/* QP `id`'s connection start-up failed with `status`. */
SRNIC_CM_EVENT(srnic_connect_error);
/* QP `id` is connected, MPA negotiated. */
SRNIC_CM_EVENT(srnic_established);
/*
 * QP `id`'s connection failed without a TERMINATE: -ETIMEDOUT (the peer
 * stopped reading or acknowledging), -ENETDOWN (its interface went down),
 * -ECONNRESET (the stream ended inside a message).
 */
SRNIC_CM_EVENT(srnic_qp_error);
/* QP `id`'s connection ended (either side closed it, or after an error). */
SRNIC_CM_EVENT(srnic_disconnect);

/*
 * A TERMINATE (RFC 5040 section 7.4), sent or received on QP `id`: the layer,
 * error type and code of its control field (Documentation/srnic/protocols.rst,
 * "TERMINATE codes").
 */
DECLARE_EVENT_CLASS(srnic_term_class,
	TP_PROTO(int pid, u32 id, const struct srnic_sockaddr *local,
		 const struct srnic_sockaddr *remote, u8 layer, u8 etype, u8 ecode),
	TP_ARGS(pid, id, local, remote, layer, etype, ecode),
	TP_STRUCT__entry(
		SRNIC_SITE_FIELDS
		__field(u8, layer)
		__field(u8, etype)
		__field(u8, ecode)
	),
	TP_fast_assign(
		SRNIC_SITE_ASSIGN;
		__entry->layer = layer;
		__entry->etype = etype;
		__entry->ecode = ecode;
	),
	TP_printk(SRNIC_SITE_FMT " layer=%s etype=%u ecode=0x%02x", SRNIC_SITE_VALUES,
		  __print_symbolic(__entry->layer, { 0, "RDMAP" }, { 1, "DDP" }, { 2, "LLP" }),
		  __entry->etype, __entry->ecode)
);

#define SRNIC_TERM_EVENT(name)						\
DEFINE_EVENT(srnic_term_class, name,					\
	TP_PROTO(int pid, u32 id, const struct srnic_sockaddr *local,	\
		 const struct srnic_sockaddr *remote, u8 layer, u8 etype, u8 ecode), \
	TP_ARGS(pid, id, local, remote, layer, etype, ecode))

SRNIC_TERM_EVENT(srnic_terminate_sent);
SRNIC_TERM_EVENT(srnic_terminate_received);

/* An FPDU with a bad MPA CRC on QP `id`: the CRC it carried and the one computed. */
TRACE_EVENT(srnic_crc_error,
	TP_PROTO(int pid, u32 id, const struct srnic_sockaddr *local,
		 const struct srnic_sockaddr *remote, u32 received, u32 computed),
	TP_ARGS(pid, id, local, remote, received, computed),
	TP_STRUCT__entry(
		SRNIC_SITE_FIELDS
		__field(u32, received)
		__field(u32, computed)
	),
	TP_fast_assign(
		SRNIC_SITE_ASSIGN;
		__entry->received = received;
		__entry->computed = computed;
	),
	TP_printk(SRNIC_SITE_FMT " received=0x%08x computed=0x%08x", SRNIC_SITE_VALUES,
		  __entry->received, __entry->computed)
);

/*
 * RMPP (Documentation/srnic/rmpp.rst): endpoint `id` of process `pid`, node
 * `nid` on interface `ifindex`, and the peer node `peer` (its MAC when known).
 */

/* A message's packets are sent again after a timeout (`attempt`: 1 the first retry). */
TRACE_EVENT(srnic_rmpp_retransmit,
	TP_PROTO(int pid, u32 id, int ifindex, u32 nid, u32 peer, const u8 *peer_mac,
		 u64 wr_id, u32 attempt),
	TP_ARGS(pid, id, ifindex, nid, peer, peer_mac, wr_id, attempt),
	TP_STRUCT__entry(
		__field(int, pid)
		__field(u32, id)
		__field(int, ifindex)
		__field(u32, nid)
		__field(u32, peer)
		__field(u64, wr_id)
		__field(u32, attempt)
		__array(u8, peer_mac, 6)
	),
	TP_fast_assign(
		__entry->pid = pid;
		__entry->id = id;
		__entry->ifindex = ifindex;
		__entry->nid = nid;
		__entry->peer = peer;
		__entry->wr_id = wr_id;
		__entry->attempt = attempt;
		if (peer_mac)
			memcpy(__entry->peer_mac, peer_mac, 6);
		else
			memset(__entry->peer_mac, 0, 6);
	),
	TP_printk("pid=%d ep=%u ifindex=%d nid=%u peer=%u peer_mac=%pM wr_id=%llu attempt=%u",
		  __entry->pid, __entry->id, __entry->ifindex, __entry->nid,
		  __entry->peer, __entry->peer_mac, __entry->wr_id, __entry->attempt)
);

/*
 * A frame endpoint `id` dropped, from node `peer` (0xffffffff: not parsed that
 * far); `reason` is the name of the RMPP counter it counts in (srnic stats).
 */
TRACE_EVENT(srnic_rmpp_drop,
	TP_PROTO(int pid, u32 id, int ifindex, u32 nid, u32 peer, const char *reason),
	TP_ARGS(pid, id, ifindex, nid, peer, reason),
	TP_STRUCT__entry(
		__field(int, pid)
		__field(u32, id)
		__field(int, ifindex)
		__field(u32, nid)
		__field(u32, peer)
		__string(reason, reason)
	),
	TP_fast_assign(
		__entry->pid = pid;
		__entry->id = id;
		__entry->ifindex = ifindex;
		__entry->nid = nid;
		__entry->peer = peer;
		__assign_str(reason);
	),
	TP_printk("pid=%d ep=%u ifindex=%d nid=%u peer=%u reason=%s",
		  __entry->pid, __entry->id, __entry->ifindex, __entry->nid,
		  __entry->peer, __get_str(reason))
);

#endif /* SRNIC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE srnic_trace
#include <trace/define_trace.h>
