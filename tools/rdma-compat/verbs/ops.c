// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The operation table the inline functions of verbs.h call through, and the
 * small helpers of libibverbs that do not touch the device.
 */
#include "compat.h"

void compat_set_ops(struct ibv_context_ops *ops)
{
	ops->poll_cq = compat_poll_cq;
	ops->req_notify_cq = compat_req_notify_cq;
	ops->post_send = compat_post_send;
	ops->post_recv = compat_post_recv;
	ops->post_srq_recv = compat_post_srq_recv;
	/* alloc_mw, bind_mw, dealloc_mw stay NULL: the inline ibv_alloc_mw()
	 * then fails with EOPNOTSUPP (srnic has no memory windows). */
}

/* There is nothing to set up: srnic pins registered pages in the kernel, and
 * fork() does not move them. */
int ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

const char *ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const s[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	return (t >= 0 && (size_t)t < sizeof(s) / sizeof(s[0]) && s[t]) ? s[t] : "unknown";
}

const char *ibv_port_state_str(enum ibv_port_state s)
{
	static const char *const n[] = {
		[IBV_PORT_NOP] = "PORT_NOP",
		[IBV_PORT_DOWN] = "PORT_DOWN",
		[IBV_PORT_INIT] = "PORT_INIT",
		[IBV_PORT_ARMED] = "PORT_ARMED",
		[IBV_PORT_ACTIVE] = "PORT_ACTIVE",
		[IBV_PORT_ACTIVE_DEFER] = "PORT_ACTIVE_DEFER",
	};

	return ((size_t)s < sizeof(n) / sizeof(n[0])) ? n[s] : "invalid state";
}

const char *ibv_event_type_str(enum ibv_event_type e)
{
	static const char *const n[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	return ((size_t)e < sizeof(n) / sizeof(n[0]) && n[e]) ? n[e] : "unknown";
}

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const n[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	return ((size_t)status < sizeof(n) / sizeof(n[0]) && n[status]) ? n[status] :
									"unknown";
}

int ibv_rate_to_mult(enum ibv_rate rate)
{
	switch (rate) {
	case IBV_RATE_2_5_GBPS: return 1;
	case IBV_RATE_5_GBPS: return 2;
	case IBV_RATE_10_GBPS: return 4;
	case IBV_RATE_20_GBPS: return 8;
	case IBV_RATE_30_GBPS: return 12;
	case IBV_RATE_40_GBPS: return 16;
	case IBV_RATE_60_GBPS: return 24;
	case IBV_RATE_80_GBPS: return 32;
	case IBV_RATE_120_GBPS: return 48;
	default: return -1;
	}
}
