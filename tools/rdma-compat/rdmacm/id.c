// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Communication identifiers: the shared device context, rdma_create_id,
 * rdma_destroy_id, rdma_migrate_id, rdma_get_devices.
 */
#include <stdlib.h>
#include <string.h>
#include "cma.h"

static pthread_mutex_t cma_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context *cma_dev;

/* As rdma-core, the device is opened once and stays open while loaded. */
struct ibv_context *cma_verbs(void)
{
	struct ibv_device **list;
	int n = 0;

	pthread_mutex_lock(&cma_dev_lock);
	if (!cma_dev) {
		list = ibv_get_device_list(&n);
		if (list && n > 0)
			cma_dev = ibv_open_device(list[0]);
		else
			errno = ENODEV;
		if (list)
			ibv_free_device_list(list);
	}
	pthread_mutex_unlock(&cma_dev_lock);
	return cma_dev;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = calloc(2, sizeof(*list));
	int n = 0;

	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	if (cma_verbs())
		list[n++] = cma_dev;
	if (num_devices)
		*num_devices = n;
	return list;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

int cma_alloc_id(struct rdma_event_channel *channel, struct cma_id **out, void *context,
			enum rdma_port_space ps)
{
	struct cma_id *id;

	/* iWARP carries reliable connections only: no UD port spaces. */
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_IB)
		return cma_fail(EOPNOTSUPP);
	id = calloc(1, sizeof(*id));
	if (!id)
		return cma_fail(ENOMEM);
	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel) {
			free(id);
			return -1;
		}
		id->sync = true;
	}
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&id->lock, NULL);
	pthread_cond_init(&id->cond, NULL);
	cma_attach(id, channel);
	*out = id;
	return 0;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps)
{
	struct cma_id *c;

	if (!id)
		return cma_fail(EINVAL);
	if (cma_alloc_id(channel, &c, context, ps))
		return -1;
	*id = &c->id;
	return 0;
}

void cma_release(struct cma_id *id)
{
	struct ibv_qp *qp = id->qp_watch.qp;

	if (id->listener) {
		srnic_compat_remove_watcher(id->id.verbs, &id->listen_watch);
		srnic_destroy_listener(id->listener);
		id->listener = NULL;
	}
	if (qp) {
		/* Not id->id.qp: the program may have destroyed the QP with
		 * ibv_destroy_qp, which removed the watcher. */
		srnic_compat_set_qp_watcher(qp, NULL);
		/* As the kernel's iWARP CM when an established id goes. */
		if (id->connected && !id->closed)
			srnic_disconnect(srnic_compat_sqp(qp), 0);
	}
	if (id->req) {
		srnic_reject(id->req, NULL, 0);	/* as rdma-core: unanswered, refused */
		id->req = NULL;
	}
}

/* What rdma_destroy_id frees besides the id: the CQs, completion channels and
 * PD that rdma_create_qp made for it. */
static void cma_free_resources(struct cma_id *id)
{
	struct rdma_cm_id *rid = &id->id;

	if (id->own_send_cq && rid->send_cq) {
		ibv_destroy_cq(rid->send_cq);
		ibv_destroy_comp_channel(rid->send_cq_channel);
	}
	if (id->own_recv_cq && rid->recv_cq) {
		ibv_destroy_cq(rid->recv_cq);
		ibv_destroy_comp_channel(rid->recv_cq_channel);
	}
	id->own_send_cq = id->own_recv_cq = false;
	if (id->own_pd && rid->pd)
		ibv_dealloc_pd(rid->pd);
	id->own_pd = false;
	free(id->ep_qp_attr);
	id->ep_qp_attr = NULL;
}

static void cma_free_id(struct cma_id *id)
{
	cma_detach(id);
	if (id->sync && !id->orphan)
		rdma_destroy_event_channel(id->id.channel);
	pthread_mutex_destroy(&id->lock);
	pthread_cond_destroy(&id->cond);
	free(id);
}

void cma_free_unseen(struct cma_id *id)
{
	if (id->req)
		srnic_reject(id->req, NULL, 0);
	id->req = NULL;
	cma_free_id(id);
}

/*
 * As rdma-core's: the id stops getting events and its undelivered ones are
 * dropped (the kernel's DESTROY_ID), the event a synchronous id kept is
 * acknowledged, and then it waits until every event the id owns that was
 * handed out has been acknowledged: only the id's own events, the listener's
 * being its connection requests. An orphan (its channel was destroyed) fails
 * at once with EBADF, as rdma-core's write to the closed channel fd does, and
 * stays allocated as rdma-core's does; the stand-in still frees what it made
 * for the id.
 */
int rdma_destroy_id(struct rdma_cm_id *rid)
{
	struct cma_id *id = to_cma(rid);

	cma_release(id);
	if (id->orphan) {
		cma_free_resources(id);
		return cma_fail(EBADF);
	}
	cma_purge_events(id);
	if (rid->event) {
		rdma_ack_cm_event(rid->event);
		rid->event = NULL;
	}
	pthread_mutex_lock(&id->lock);
	while (id->events_acked != id->events_delivered)
		pthread_cond_wait(&id->cond, &id->lock);
	pthread_mutex_unlock(&id->lock);
	cma_free_resources(id);
	cma_free_id(id);
	return 0;
}

/*
 * As rdma-core's: a synchronous id acknowledges the event it kept, its
 * private channel goes, and the call then waits until the events the id owns
 * that were handed out on the old channel are acknowledged.
 */
int rdma_migrate_id(struct rdma_cm_id *rid, struct rdma_event_channel *channel)
{
	struct cma_id *id = to_cma(rid);
	struct rdma_event_channel *old = rid->channel;
	bool sync = false;

	if (cma_check(id))
		return -1;
	if (id->sync && !channel)
		return cma_fail(EINVAL);
	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
		sync = true;
	}
	cma_move_id(id, channel);
	if (id->sync) {
		if (rid->event) {
			rdma_ack_cm_event(rid->event);
			rid->event = NULL;
		}
		rdma_destroy_event_channel(old);
	}
	pthread_mutex_lock(&id->lock);
	id->sync = sync;
	while (id->events_acked != id->events_delivered)
		pthread_cond_wait(&id->cond, &id->lock);
	pthread_mutex_unlock(&id->lock);
	return 0;
}
