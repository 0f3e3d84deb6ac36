// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Compile-time checks of the layouts the stand-ins rely on, against rdma-core's
 * own headers (built by `make -C tools/rdma-compat layout`; it only has to
 * compile).
 */
#include <assert.h>
#include <stddef.h>
#include <rdma/rdma_cma.h>
#include <srnic_compat.h>
#include "../rdmacm/cma.h"
#include "../verbs/compat.h"

/* The inline helpers of verbs.h find struct verbs_context right before the
 * ibv_context a program holds: it must be the last member, and ours must be
 * the whole verbs_context. */
static_assert(offsetof(struct verbs_context, context) + sizeof(struct ibv_context) ==
	      sizeof(struct verbs_context), "ibv_context ends verbs_context");
static_assert(offsetof(struct verbs_context, sz) + sizeof(size_t) ==
	      offsetof(struct verbs_context, context), "sz right before the context");
static_assert(offsetof(struct compat_context, vctx) == 0, "compat_context starts with vctx");

/* Every object handed out is the rdma-core structure at offset 0 of its
 * wrapper, so the wrapper can be found from the pointer the program passes. */
static_assert(offsetof(struct compat_pd, pd) == 0, "compat_pd");
static_assert(offsetof(struct compat_mr, mr) == 0, "compat_mr");
static_assert(offsetof(struct compat_cq, cq) == 0, "compat_cq");
static_assert(offsetof(struct compat_qp, qp) == 0, "compat_qp");
static_assert(offsetof(struct compat_channel, ch) == 0, "compat_channel");
static_assert(offsetof(struct cma_id, id) == 0, "cma_id");
static_assert(offsetof(struct cma_channel, ch) == 0, "cma_channel");
static_assert(offsetof(struct cma_event, ev) == 0, "cma_event");

/* Scatter/gather lists pass through to srnic unconverted. */
static_assert(sizeof(struct ibv_sge) == sizeof(struct srnic_sge), "sge size");
static_assert(offsetof(struct ibv_sge, addr) == offsetof(struct srnic_sge, addr), "sge addr");
static_assert(offsetof(struct ibv_sge, length) == offsetof(struct srnic_sge, length), "sge len");
static_assert(offsetof(struct ibv_sge, lkey) == offsetof(struct srnic_sge, lkey), "sge lkey");

/* Private data: srnic's limit fits rdma_conn_param's 8-bit length, and an
 * event's copy holds what srnic reports. */
static_assert(SRNIC_MAX_PRIVATE_DATA <= UINT8_MAX, "private data length fits");
static_assert(CMA_EVENT_PRIVATE_DATA >=
	      sizeof(((struct srnic_conn_info *)0)->private_data), "event private data");

/* Completion opcodes and the statuses that share rdma-core's numbering (cq.c
 * still maps every one by name). */
static_assert(SRNIC_WC_SEND == IBV_WC_SEND && SRNIC_WC_RDMA_WRITE == IBV_WC_RDMA_WRITE &&
	      SRNIC_WC_RDMA_READ == IBV_WC_RDMA_READ && SRNIC_WC_RECV == IBV_WC_RECV,
	      "completion opcodes");
static_assert(SRNIC_WC_SUCCESS == IBV_WC_SUCCESS && SRNIC_WC_WR_FLUSH_ERR == IBV_WC_WR_FLUSH_ERR &&
	      SRNIC_WC_REM_ACCESS_ERR == IBV_WC_REM_ACCESS_ERR &&
	      SRNIC_WC_GENERAL_ERR == IBV_WC_GENERAL_ERR, "completion statuses");
