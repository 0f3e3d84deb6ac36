// SPDX-License-Identifier: GPL-2.0
/*
 * Communication identifiers over srnic's connection manager (uapi/srnic.h:
 * LISTEN, CONNECT, ACCEPT, REJECT, DISCONNECT and their events).
 *
 * In iWARP the connection is the QP's (RFC 5040, RFC 5044: MPA runs on the
 * QP's TCP stream), so rdma_connect and rdma_accept need a QP made with
 * rdma_create_qp; srnic connects it and moves it to RTS itself. Address and
 * route resolution are local (TCP/IP routes the connection): both complete at
 * once with an ADDR_RESOLVED / ROUTE_RESOLVED event.
 *
 * srnic's events arrive on the device fd; the libibverbs stand-in's event
 * thread asks the watchers here (a listener's, a connecting QP's) about them
 * and they queue the matching rdma_cm events.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

static int cma_alloc_id(struct rdma_event_channel *channel, struct cma_id **out, void *context,
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

static socklen_t cma_addr_len(const struct sockaddr *a)
{
	switch (a->sa_family) {
	case AF_INET: return sizeof(struct sockaddr_in);
	case AF_INET6: return sizeof(struct sockaddr_in6);
	default: return 0;
	}
}

static bool cma_any_addr(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

int rdma_bind_addr(struct rdma_cm_id *rid, struct sockaddr *addr)
{
	socklen_t len;

	if (!addr || !(len = cma_addr_len(addr)))
		return cma_fail(EAFNOSUPPORT);
	memset(&rid->route.addr.src_storage, 0, sizeof(rid->route.addr.src_storage));
	memcpy(&rid->route.addr.src_storage, addr, len);
	/* A specific address binds the id to the device, as in rdma-core. */
	if (!cma_any_addr(addr)) {
		rid->verbs = cma_verbs();
		if (!rid->verbs)
			return -1;
		rid->port_num = 1;
	}
	return 0;
}

/* The source address the kernel's routing picks for dst (a UDP socket's
 * connect() sends nothing). */
static int cma_route_src(const struct sockaddr *dst, struct sockaddr_storage *src)
{
	socklen_t len = sizeof(*src);
	int fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -1;
	ret = connect(fd, dst, cma_addr_len(dst));
	if (!ret)
		ret = getsockname(fd, (struct sockaddr *)src, &len);
	close(fd);
	if (!ret) {
		/* Any port: srnic's TCP connection picks its own. */
		if (src->ss_family == AF_INET)
			((struct sockaddr_in *)src)->sin_port = 0;
		else
			((struct sockaddr_in6 *)src)->sin6_port = 0;
	}
	return ret;
}

int rdma_resolve_addr(struct rdma_cm_id *rid, struct sockaddr *src, struct sockaddr *dst,
		      int timeout_ms)
{
	struct cma_id *id = to_cma(rid);
	socklen_t len;

	(void)timeout_ms;	/* resolution is local and immediate */
	if (!dst || !(len = cma_addr_len(dst)))
		return cma_fail(EAFNOSUPPORT);
	if (src && src->sa_family && rdma_bind_addr(rid, src))
		return -1;
	memset(&rid->route.addr.dst_storage, 0, sizeof(rid->route.addr.dst_storage));
	memcpy(&rid->route.addr.dst_storage, dst, len);
	if ((!src || !src->sa_family) && cma_route_src(dst, &rid->route.addr.src_storage))
		return cma_fail(ENETUNREACH);
	rid->verbs = cma_verbs();
	if (!rid->verbs)
		return -1;
	rid->port_num = 1;
	cma_queue_event(id, NULL, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, 0, 0, 0);
	return cma_wait_sync(id, RDMA_CM_EVENT_ADDR_RESOLVED);
}

int rdma_resolve_route(struct rdma_cm_id *rid, int timeout_ms)
{
	struct cma_id *id = to_cma(rid);

	(void)timeout_ms;
	if (!rid->verbs || !rid->route.addr.dst_addr.sa_family)
		return cma_fail(EINVAL);
	cma_queue_event(id, NULL, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0, 0, 0);
	return cma_wait_sync(id, RDMA_CM_EVENT_ROUTE_RESOLVED);
}

static uint8_t cma_u8(uint32_t v)
{
	return v > UINT8_MAX ? UINT8_MAX : (uint8_t)v;
}

/* Listener watcher: each connection request becomes a new id and a
 * CONNECT_REQUEST event on the listener's channel. */
static void cma_listen_watch(struct srnic_compat_watcher *w)
{
	struct cma_id *l = (struct cma_id *)((char *)w - offsetof(struct cma_id, listen_watch));
	struct srnic_conn_request *req;
	struct srnic_conn_info info;
	struct cma_id *id;

	while (srnic_get_connect_request(l->listener, 0, &req) == 0) {
		memset(&info, 0, sizeof(info));
		if (srnic_conn_request_info(req, &info) ||
		    cma_alloc_id(l->id.channel, &id, l->id.context, l->id.ps)) {
			srnic_reject(req, NULL, 0);
			continue;
		}
		id->id.verbs = l->id.verbs;
		id->id.port_num = 1;
		memcpy(&id->id.route.addr.src_storage, &info.local, sizeof(info.local));
		memcpy(&id->id.route.addr.dst_storage, &info.remote, sizeof(info.remote));
		id->req = req;
		id->req_ird = cma_u8(info.ird);
		id->req_ord = cma_u8(info.ord);
		/* The kernel's iWARP CM reports the peer's ORD as the responder
		 * resources asked of us and its IRD as our initiator depth. */
		cma_queue_event(id, l, RDMA_CM_EVENT_CONNECT_REQUEST, 0, info.private_data,
				info.private_data_len, id->req_ord, id->req_ird);
	}
}

int rdma_listen(struct rdma_cm_id *rid, int backlog)
{
	struct cma_id *id = to_cma(rid);
	int ret, port;

	if (id->listener)
		return cma_fail(EINVAL);
	if (!rid->route.addr.src_addr.sa_family)
		return cma_fail(EINVAL);	/* rdma_bind_addr first */
	if (!rid->verbs) {
		rid->verbs = cma_verbs();
		if (!rid->verbs)
			return -1;
	}
	ret = srnic_listen(srnic_compat_sctx(rid->verbs), &rid->route.addr.src_addr,
			   backlog > 0 ? backlog : SOMAXCONN, 0, &id->listener);
	if (ret)
		return cma_fail(-ret);
	port = srnic_listener_port(id->listener);
	if (port > 0) {
		if (rid->route.addr.src_addr.sa_family == AF_INET)
			rid->route.addr.src_sin.sin_port = htons((uint16_t)port);
		else
			rid->route.addr.src_sin6.sin6_port = htons((uint16_t)port);
	}
	id->listen_watch.poll = cma_listen_watch;
	srnic_compat_add_watcher(rid->verbs, &id->listen_watch);
	return 0;
}

/* The rdma_cm event of a failed connection attempt, as the kernel's iWARP CM
 * reports srnic's status: refused or reset is REJECTED, a timeout UNREACHABLE. */
static enum rdma_cm_event_type cma_connect_failure(int status)
{
	switch (status) {
	case -ECONNREFUSED:
	case -ECONNRESET: return RDMA_CM_EVENT_REJECTED;
	case -ETIMEDOUT: return RDMA_CM_EVENT_UNREACHABLE;
	default: return RDMA_CM_EVENT_CONNECT_ERROR;
	}
}

/* QP watcher: srnic's connection events of the id's QP as rdma_cm events. */
static void cma_qp_watch(struct srnic_compat_watcher *w)
{
	struct cma_id *id = (struct cma_id *)((char *)w - offsetof(struct cma_id, qp_watch));
	struct srnic_qp *sqp = srnic_compat_sqp(id->id.qp);
	struct srnic_conn_info info;
	int32_t status;
	int t;

	memset(&info, 0, sizeof(info));
	while ((t = srnic_wait_qp_event_info(sqp, 0, &info, &status)) >= 0) {
		switch (t) {
		case SRNIC_EVENT_ESTABLISHED:
			id->connected = true;
			/* The active side gets the acceptor's private data. */
			cma_queue_event(id, NULL, RDMA_CM_EVENT_ESTABLISHED, 0, info.private_data,
					id->active ? info.private_data_len : 0, cma_u8(info.ird),
					cma_u8(info.ord));
			break;
		case SRNIC_EVENT_REJECTED:
			id->closed = true;
			cma_queue_event(id, NULL, RDMA_CM_EVENT_REJECTED, -ECONNREFUSED,
					info.private_data, info.private_data_len, 0, 0);
			break;
		case SRNIC_EVENT_CONNECT_ERROR:
			id->closed = true;
			if (status >= 0)
				status = -ECONNABORTED;
			cma_queue_event(id, NULL, cma_connect_failure(status), status, NULL, 0, 0,
					0);
			break;
		case SRNIC_EVENT_DISCONNECTED:
		case SRNIC_EVENT_QP_ERROR:
			/* A QP error ends the connection, too: report its end once. */
			if (id->closed)
				break;
			id->closed = true;
			cma_queue_event(id, NULL,
					id->connected ? RDMA_CM_EVENT_DISCONNECTED :
							RDMA_CM_EVENT_CONNECT_ERROR,
					id->connected ? 0 : -ECONNABORTED, NULL, 0, 0, 0);
			break;
		default:
			break;
		}
	}
}

static int cma_conn_param(const struct rdma_conn_param *p, struct srnic_conn_param *s,
			  uint8_t def_ird, uint8_t def_ord)
{
	memset(s, 0, sizeof(*s));
	if (!p) {
		s->ird = def_ird;
		s->ord = def_ord;
		return 0;
	}
	if (p->private_data_len > SRNIC_MAX_PRIVATE_DATA)
		return EINVAL;
	s->private_data = p->private_data;
	s->private_data_len = p->private_data_len;
	s->ird = p->responder_resources;
	s->ord = p->initiator_depth;
	return 0;
}

/* What connect/accept do with srnic's answer: 0 established at once,
 * -ETIMEDOUT under way (the watcher reports), else a failure. Only the active
 * side's ESTABLISHED carries private data: the acceptor's. */
static int cma_started(struct cma_id *id, int ret, const struct srnic_conn_info *info,
		       bool active)
{
	id->active = active;
	if (ret == 0) {
		id->connected = true;
		cma_queue_event(id, NULL, RDMA_CM_EVENT_ESTABLISHED, 0, info->private_data,
				active ? info->private_data_len : 0, cma_u8(info->ird),
				cma_u8(info->ord));
	} else if (ret == -ECONNREFUSED) {
		/* The peer's reject was read at once (its private data with it:
		 * srnic_connect does not hand that out). */
		id->closed = true;
		cma_queue_event(id, NULL, RDMA_CM_EVENT_REJECTED, -ECONNREFUSED, NULL, 0, 0, 0);
	} else if (ret != -ETIMEDOUT) {
		/* libsrnic may have read other objects' events into its queues
		 * while it waited: let the event thread look at them. */
		srnic_compat_kick(id->id.verbs);
		return cma_fail(-ret);
	}
	/* Installing the watcher wakes the event thread, which also finds what
	 * libsrnic queued meanwhile. */
	id->qp_watch.poll = cma_qp_watch;
	srnic_compat_set_qp_watcher(id->id.qp, &id->qp_watch);
	return cma_wait_sync(id, RDMA_CM_EVENT_ESTABLISHED);
}

int rdma_connect(struct rdma_cm_id *rid, struct rdma_conn_param *param)
{
	struct cma_id *id = to_cma(rid);
	struct srnic_conn_param sp;
	struct srnic_conn_info info;
	const struct srnic_query_device *dev;
	int ret;

	/* Connections without an rdma_cm QP (param->qp_num, rdma_establish) would
	 * need the QP's TCP stream outside the QP: not in srnic. */
	if (!rid->qp)
		return cma_fail(ENOSYS);
	if (!rid->route.addr.dst_addr.sa_family)
		return cma_fail(EINVAL);
	dev = &to_cctx(rid->verbs)->attr;
	ret = cma_conn_param(param, &sp, cma_u8(dev->max_ird), cma_u8(dev->max_ord));
	if (ret)
		return cma_fail(ret);
	memset(&info, 0, sizeof(info));
	ret = srnic_connect(srnic_compat_sqp(rid->qp), &rid->route.addr.dst_addr, &sp, 0, &info);
	return cma_started(id, ret, &info, true);
}

int rdma_accept(struct rdma_cm_id *rid, struct rdma_conn_param *param)
{
	struct cma_id *id = to_cma(rid);
	struct srnic_conn_param sp;
	struct srnic_conn_info info;
	struct srnic_conn_request *req = id->req;
	int ret;

	if (!req)
		return cma_fail(EINVAL);
	if (!rid->qp)
		return cma_fail(ENOSYS);
	/* Without parameters: answer as many READs as the peer wants to issue,
	 * issue as many as it answers (srnic clamps both to its limits). */
	ret = cma_conn_param(param, &sp, id->req_ord, id->req_ird);
	if (ret)
		return cma_fail(ret);
	id->req = NULL;		/* srnic_accept consumes it in every case */
	memset(&info, 0, sizeof(info));
	ret = srnic_accept(req, srnic_compat_sqp(rid->qp), &sp, 0, &info);
	return cma_started(id, ret, &info, false);
}

int rdma_reject(struct rdma_cm_id *rid, const void *private_data, uint8_t len)
{
	struct cma_id *id = to_cma(rid);
	struct srnic_conn_request *req = id->req;
	int ret;

	if (!req)
		return cma_fail(EINVAL);
	if (len > SRNIC_MAX_PRIVATE_DATA)
		return cma_fail(EINVAL);
	id->req = NULL;
	ret = srnic_reject(req, private_data, len);
	return ret ? cma_fail(-ret) : 0;
}

int rdma_reject_ece(struct rdma_cm_id *rid, const void *private_data, uint8_t len)
{
	return rdma_reject(rid, private_data, len);
}

int rdma_disconnect(struct rdma_cm_id *rid)
{
	int ret;

	if (!rid->qp)
		return cma_fail(EINVAL);
	/* A graceful close; DISCONNECTED follows on the channel. */
	ret = srnic_disconnect(srnic_compat_sqp(rid->qp), 0);
	return ret ? cma_fail(-ret) : 0;
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **out)
{
	struct cma_id *l = to_cma(listen);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *rid;
	struct cma_id *id;

	if (!l->sync)
		return cma_fail(EINVAL);
	for (;;) {
		if (rdma_get_cm_event(listen->channel, &ev))
			return -1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		rdma_ack_cm_event(ev);
	}
	rid = ev->id;
	id = to_cma(rid);
	rdma_ack_cm_event(ev);
	/* The new id is synchronous too, on a channel of its own. */
	if (rdma_migrate_id(rid, NULL))
		goto err;
	if (l->ep_qp_attr) {
		struct ibv_qp_init_attr attr = *l->ep_qp_attr;

		if (rdma_create_qp(rid, listen->pd, &attr))
			goto err;
	}
	*out = rid;
	return 0;
err:
	rdma_reject(rid, NULL, 0);
	rdma_destroy_id(rid);
	(void)id;
	return -1;
}

__be16 rdma_get_src_port(struct rdma_cm_id *rid)
{
	return rid->route.addr.src_addr.sa_family == AF_INET6 ? rid->route.addr.src_sin6.sin6_port :
								rid->route.addr.src_sin.sin_port;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *rid)
{
	return rid->route.addr.dst_addr.sa_family == AF_INET6 ? rid->route.addr.dst_sin6.sin6_port :
								rid->route.addr.dst_sin.sin_port;
}
