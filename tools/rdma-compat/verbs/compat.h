/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Internals of the libibverbs stand-in, shared by its files. */
#ifndef COMPAT_VERBS_H
#define COMPAT_VERBS_H

#include <errno.h>
#include <srnic_compat.h>

/* The completion channel behind an ibv_comp_channel: fd is an eventfd in
 * semaphore mode whose count is the number of queued CQ events. */
struct compat_channel {
	struct ibv_comp_channel ch;
	pthread_mutex_t lock;
	struct compat_cq **queue;	/* ring of notified CQs */
	unsigned int head, count, size;
};

void compat_set_ops(struct ibv_context_ops *ops);
void compat_stop_thread(struct compat_context *c);
/* After a close that failed: the objects left keep their events coming. */
void compat_restart_thread(struct compat_context *c);
void compat_pick_interface(uint8_t mac[6], uint32_t *mtu, bool *up);
__be64 compat_mac_to_guid(const uint8_t mac[6]);
/* Queues one event of cq on its channel (the event thread, or an arm that
 * found completions already present). */
void compat_channel_push(struct compat_cq *cq);

/* Ops of struct ibv_context_ops (the inline post/poll/notify of verbs.h). */
int compat_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int compat_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int compat_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int compat_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int compat_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* libsrnic answers -errno; the verbs API wants errno set (and NULL/-1) or a
 * positive errno, depending on the call. */
static inline void *compat_null(int err)
{
	errno = err;
	return NULL;
}

#endif /* COMPAT_VERBS_H */
