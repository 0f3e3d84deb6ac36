// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connections over srnic's connection manager (uapi/srnic.h: LISTEN, CONNECT,
 * ACCEPT, REJECT, DISCONNECT and their events): rdma_listen, rdma_connect,
 * rdma_accept, rdma_reject, rdma_disconnect, rdma_get_request.
 *
 * In iWARP the connection is the QP's (RFC 5040, RFC 5044: MPA runs on the
 * QP's TCP stream), so rdma_connect and rdma_accept need a QP made with
 * rdma_create_qp; srnic connects it and moves it to RTS itself.
 *
 * srnic's events arrive on the device fd; the libibverbs stand-in's event
 * thread asks the watchers here (a listener's, a connecting QP's) about them
 * and they queue the matching rdma_cm events.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cma.h"

/*
 * The MPA options the program's connections ask for: SRNIC_MPA, a
 * comma-separated list of "crc" and "markers" (set by `srnic exec --crc
 * --markers`); rdma_cm has no way to say them. Unknown words are ignored.
 */
static uint32_t cma_mpa_flags(void)
{
	const char *v = getenv("SRNIC_MPA");
	uint32_t flags = 0;
	char buf[64], *save = NULL, *w;

	if (!v || strlen(v) >= sizeof(buf))
		return 0;
	strcpy(buf, v);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "crc"))
			flags |= SRNIC_MPA_CRC;
		else if (!strcmp(w, "markers"))
			flags |= SRNIC_MPA_MARKERS;
	}
	return flags;
}

/*
 * With SRNIC_COMPAT_TRACE naming a file, each established connection appends
 * "established mpa=0x..." (srnic's SRNIC_MPA_* flags as negotiated) to it:
 * rdma_cm programs cannot show the MPA options, tests read them here.
 */
static void cma_trace_established(const struct srnic_conn_info *info)
{
	const char *path = getenv("SRNIC_COMPAT_TRACE");
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "established mpa=%#x\n", info->mpa_flags);
	fclose(f);
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

	if (cma_check(id))
		return -1;
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
			   backlog > 0 ? backlog : SOMAXCONN, cma_mpa_flags(), &id->listener);
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
	struct srnic_qp *sqp = srnic_compat_sqp(w->qp);
	struct srnic_conn_info info;
	int32_t status;
	int t;

	memset(&info, 0, sizeof(info));
	while ((t = srnic_wait_qp_event_info(sqp, 0, &info, &status)) >= 0) {
		switch (t) {
		case SRNIC_EVENT_ESTABLISHED:
			id->connected = true;
			cma_trace_established(&info);
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
	s->mpa_flags = cma_mpa_flags();
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
		cma_trace_established(info);
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

	if (cma_check(id))
		return -1;
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

	if (cma_check(id))
		return -1;
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

	if (cma_check(id))
		return -1;
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

	if (cma_check(to_cma(rid)))
		return -1;
	if (!rid->qp)
		return cma_fail(EINVAL);
	/* A graceful close; DISCONNECTED follows on the channel. */
	ret = srnic_disconnect(srnic_compat_sqp(rid->qp), 0);
	return ret ? cma_fail(-ret) : 0;
}

/*
 * As rdma-core's: the request's event is the new id's id->event until
 * rdma_accept (or rdma_destroy_id) acknowledges it; it is the listener's
 * event, so until then destroying the listener waits.
 */
int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **out)
{
	struct cma_id *l = to_cma(listen);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *rid;

	if (cma_check(l))
		return -1;
	if (!l->sync)
		return cma_fail(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	for (;;) {
		if (rdma_get_cm_event(listen->channel, &ev))
			return -1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		rdma_ack_cm_event(ev);
	}
	rid = ev->id;
	/* The new id is synchronous too, on a channel of its own. */
	if (rdma_migrate_id(rid, NULL))
		goto err;
	if (l->ep_qp_attr) {
		struct ibv_qp_init_attr attr = *l->ep_qp_attr;

		if (rdma_create_qp(rid, listen->pd, &attr))
			goto err;
	}
	rid->event = ev;
	*out = rid;
	return 0;
err:
	{
		int err = errno;

		rdma_ack_cm_event(ev);
		rdma_reject(rid, NULL, 0);
		rdma_destroy_id(rid);
		errno = err;
	}
	return -1;
}
