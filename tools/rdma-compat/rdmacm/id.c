// SPDX-License-Identifier: GPL-2.0
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
	id->id.channel = channel;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&id->lock, NULL);
	pthread_cond_init(&id->cond, NULL);
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

int rdma_destroy_id(struct rdma_cm_id *rid)
{
	struct cma_id *id = to_cma(rid);

	if (id->listener) {
		srnic_compat_remove_watcher(rid->verbs, &id->listen_watch);
		srnic_destroy_listener(id->listener);
	}
	if (rid->qp)
		srnic_compat_set_qp_watcher(rid->qp, NULL);
	if (id->req)
		srnic_reject(id->req, NULL, 0);	/* as rdma-core: an unanswered request is refused */
	cma_purge_events(id);
	/* As rdma-core: wait until every event handed out was acknowledged. */
	pthread_mutex_lock(&id->lock);
	while (id->events_acked != id->events_delivered)
		pthread_cond_wait(&id->cond, &id->lock);
	pthread_mutex_unlock(&id->lock);
	if (id->own_send_cq && rid->send_cq) {
		ibv_destroy_cq(rid->send_cq);
		ibv_destroy_comp_channel(rid->send_cq_channel);
	}
	if (id->own_recv_cq && rid->recv_cq) {
		ibv_destroy_cq(rid->recv_cq);
		ibv_destroy_comp_channel(rid->recv_cq_channel);
	}
	if (id->own_pd && rid->pd)
		ibv_dealloc_pd(rid->pd);
	if (id->sync)
		rdma_destroy_event_channel(rid->channel);
	free(id->ep_qp_attr);
	pthread_mutex_destroy(&id->lock);
	pthread_cond_destroy(&id->cond);
	free(id);
	return 0;
}

int rdma_migrate_id(struct rdma_cm_id *rid, struct rdma_event_channel *channel)
{
	struct cma_id *id = to_cma(rid);
	struct rdma_event_channel *old = rid->channel;
	bool sync = false;

	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
		sync = true;
	}
	cma_move_events(id, channel);
	rid->channel = channel;
	if (id->sync)
		rdma_destroy_event_channel(old);
	id->sync = sync;
	return 0;
}
