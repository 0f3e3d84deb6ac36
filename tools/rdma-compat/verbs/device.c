// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The device list and what describes the device: ibv_get_device_list,
 * ibv_open_device/ibv_close_device, ibv_query_device, ibv_query_port,
 * ibv_query_gid, ibv_query_pkey.
 *
 * srnic has no uverbs device and no sysfs class: the stand-in reports one
 * device, SRNIC_COMPAT_DEV_NAME, whenever /dev/srnic exists. It is an iWARP
 * RNIC (IBV_NODE_RNIC, IBV_TRANSPORT_IWARP) on an Ethernet port whose GID is
 * the interface's MAC followed by zeros and whose GUIDs are the MAC's EUI-64,
 * as Linux's own iWARP drivers report them.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "compat.h"

/* The device node libsrnic opens by default; $SRNIC_DEVICE (set by `srnic exec
 * -d PATH`) names another. */
#define SRNIC_DEV_PATH "/dev/srnic"
#define SRNIC_DEVICE_ENV "SRNIC_DEVICE"
/* One port, numbered from 1 as in rdma-core. */
#define COMPAT_PORT 1
/* One GID (the MAC) and one P_Key (the default) per port. */
#define COMPAT_GID_TBL_LEN 1
#define COMPAT_PKEY_TBL_LEN 1
#define COMPAT_DEFAULT_PKEY 0xffff
/* IBTA port capability bits a siw-like iWARP device reports: CM, device management. */
#define COMPAT_PORT_CAP_CM_SUP (1u << 16)
#define COMPAT_PORT_CAP_DEV_MGMT_SUP (1u << 19)
/* IBTA port physical state: LinkUp (5), Disabled (3). */
#define COMPAT_PHYS_STATE_LINK_UP 5
#define COMPAT_PHYS_STATE_DISABLED 3
/* Width 1x (1), speed SDR (1): srnic does not know the link's rate. */
#define COMPAT_ACTIVE_WIDTH_1X 1
#define COMPAT_ACTIVE_SPEED_SDR 1
/* The largest message srnic carries: one MR's worth, capped to 32 bits. */
#define COMPAT_MAX_MSG_SZ UINT32_MAX

static struct ibv_device compat_device = {
	.node_type = IBV_NODE_RNIC,
	.transport_type = IBV_TRANSPORT_IWARP,
	.name = SRNIC_COMPAT_DEV_NAME,
	.dev_name = "srnic",
	.dev_path = SRNIC_DEV_PATH,
	.ibdev_path = SRNIC_DEV_PATH,
};

/*
 * The interface whose MAC names the device: $SRNIC_IFNAME, else the first
 * non-loopback interface with a MAC that is up (else the first one at all).
 * srnic itself is not bound to one interface (it speaks TCP on all of them).
 */
void compat_pick_interface(uint8_t mac[6], uint32_t *mtu, bool *up)
{
	const char *want = getenv(SRNIC_COMPAT_IFNAME_ENV);
	struct ifaddrs *ifa, *i, *best = NULL;

	memset(mac, 0, 6);
	*mtu = 0;
	*up = false;
	if (getifaddrs(&ifa))
		return;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (want && *want) {
			if (!strcmp(i->ifa_name, want)) {
				best = i;
				break;
			}
			continue;
		}
		if (!best || (!(best->ifa_flags & IFF_UP) && (i->ifa_flags & IFF_UP)))
			best = i;
	}
	if (best) {
		const struct sockaddr_ll *ll = (const struct sockaddr_ll *)best->ifa_addr;
		char path[PATH_MAX];
		FILE *f;

		if (ll->sll_halen == 6)
			memcpy(mac, ll->sll_addr, 6);
		*up = (best->ifa_flags & IFF_UP) && (best->ifa_flags & IFF_RUNNING);
		snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", best->ifa_name);
		f = fopen(path, "re");
		if (f) {
			if (fscanf(f, "%u", mtu) != 1)
				*mtu = 0;
			fclose(f);
		}
	}
	freeifaddrs(ifa);
}

/* The modified EUI-64 of a MAC (RFC 4291, appendix A), in network byte order. */
__be64 compat_mac_to_guid(const uint8_t mac[6])
{
	uint8_t g[8] = { mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5] };
	__be64 guid;

	memcpy(&guid, g, sizeof(guid));
	return guid;
}

static const char *compat_dev_path(void)
{
	const char *p = getenv(SRNIC_DEVICE_ENV);

	return p && *p ? p : SRNIC_DEV_PATH;
}

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list = calloc(2, sizeof(*list));
	int n = 0;

	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	/* rdma-core lists devices the caller may not be able to open, too. */
	if (access(compat_dev_path(), F_OK) == 0)
		list[n++] = &compat_device;
	if (num_devices)
		*num_devices = n;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device ? device->name : NULL;
}

int ibv_get_device_index(struct ibv_device *device)
{
	return device == &compat_device ? 0 : -1;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	uint8_t mac[6];
	uint32_t mtu;
	bool up;

	(void)device;
	compat_pick_interface(mac, &mtu, &up);
	return compat_mac_to_guid(mac);
}

static int compat_query_port_op(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
				size_t attr_len);

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct compat_context *c;
	struct ibv_context *ctx;
	int ret;

	if (device != &compat_device) {
		errno = ENODEV;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	ret = srnic_open(compat_dev_path(), &c->sctx);
	if (ret)
		goto err_free;
	c->attr.size = sizeof(c->attr);
	ret = srnic_query_device(c->sctx, &c->attr);
	if (ret)
		goto err_close;
	c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->wake_fd < 0) {
		ret = -errno;
		goto err_close;
	}
	compat_pick_interface(c->mac, &c->mtu, &c->link_up);
	pthread_mutex_init(&c->watch_lock, NULL);

	/* The inline helpers of verbs.h see an extended context of full size. */
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = compat_query_port_op;
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->cmd_fd = srnic_get_fd(c->sctx);
	/* srnic has no asynchronous events: an fd that never polls readable. */
	ctx->async_fd = eventfd(0, EFD_CLOEXEC);
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	compat_set_ops(&ctx->ops);
	return ctx;

err_close:
	srnic_close(c->sctx);
err_free:
	free(c);
	errno = -ret;
	return NULL;
}

int ibv_close_device(struct ibv_context *ctx)
{
	struct compat_context *c = to_cctx(ctx);
	int ret;

	/* The event thread uses the libsrnic context: it stops first. */
	compat_stop_thread(c);
	ret = srnic_close(c->sctx);
	if (ret) {
		/* Objects are left (EBUSY): rdma-core closes anyway, srnic cannot. */
		compat_restart_thread(c);
		return -ret;
	}
	close(c->wake_fd);
	if (ctx->async_fd >= 0)
		close(ctx->async_fd);
	pthread_mutex_destroy(&c->watch_lock);
	pthread_mutex_destroy(&ctx->mutex);
	free(c);
	return 0;
}

int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	struct compat_context *c = to_cctx(ctx);
	const struct srnic_query_device *s = &c->attr;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "srnic ABI %u", s->abi_version);
	a->node_guid = compat_mac_to_guid(c->mac);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = s->max_mr_size;
	a->page_size_cap = s->page_size;
	a->max_qp = (int)s->max_qp;
	a->max_qp_wr = (int)s->max_qp_wr;
	/* No SRQ, no atomics, no memory windows, no UD: no such capability bits. */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN;
	a->max_sge = (int)s->max_sge;
	a->max_sge_rd = (int)s->max_sge;
	a->max_cq = (int)s->max_cq;
	a->max_cqe = (int)s->max_cqe;
	a->max_mr = (int)s->max_mr;
	a->max_pd = (int)s->max_pd;
	/* IRD: READs this side answers; ORD: READs it issues. */
	a->max_qp_rd_atom = (int)s->max_ird;
	a->max_res_rd_atom = (int)(s->max_ird * s->max_qp);
	a->max_qp_init_rd_atom = (int)s->max_ord;
	a->atomic_cap = IBV_ATOMIC_NONE;
	a->max_pkeys = COMPAT_PKEY_TBL_LEN;
	a->phys_port_cnt = 1;
	return 0;
}

static enum ibv_mtu compat_ibv_mtu(uint32_t mtu)
{
	/* The largest IB MTU that fits the interface's, as Linux's iWARP drivers do. */
	if (mtu >= 4096)
		return IBV_MTU_4096;
	if (mtu >= 2048)
		return IBV_MTU_2048;
	if (mtu >= 1024)
		return IBV_MTU_1024;
	if (mtu >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

static void compat_fill_port(struct compat_context *c, struct ibv_port_attr *p)
{
	memset(p, 0, sizeof(*p));
	p->state = c->link_up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	p->max_mtu = IBV_MTU_4096;
	p->active_mtu = compat_ibv_mtu(c->mtu ? c->mtu : 1500);
	p->gid_tbl_len = COMPAT_GID_TBL_LEN;
	p->port_cap_flags = COMPAT_PORT_CAP_CM_SUP | COMPAT_PORT_CAP_DEV_MGMT_SUP;
	p->max_msg_sz = COMPAT_MAX_MSG_SZ;
	p->pkey_tbl_len = COMPAT_PKEY_TBL_LEN;
	p->active_width = COMPAT_ACTIVE_WIDTH_1X;
	p->active_speed = COMPAT_ACTIVE_SPEED_SDR;
	p->phys_state = c->link_up ? COMPAT_PHYS_STATE_LINK_UP : COMPAT_PHYS_STATE_DISABLED;
	p->link_layer = IBV_LINK_LAYER_ETHERNET;
}

/* verbs_context.query_port: what the inline ibv_query_port() calls. */
static int compat_query_port_op(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
				size_t attr_len)
{
	struct ibv_port_attr p;

	if (port != COMPAT_PORT)
		return EINVAL;
	compat_fill_port(to_cctx(ctx), &p);
	memcpy(attr, &p, attr_len < sizeof(p) ? attr_len : sizeof(p));
	return 0;
}

/*
 * The exported ibv_query_port() takes the old, shorter structure (everything
 * before `flags`): programs built against current headers call the inline
 * version, which uses the verbs_context operation above.
 */
#undef ibv_query_port
int ibv_query_port(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	return compat_query_port_op(ctx, port, (struct ibv_port_attr *)attr,
				    offsetof(struct ibv_port_attr, flags));
}

int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	if (port != COMPAT_PORT || index < 0 || index >= COMPAT_GID_TBL_LEN) {
		errno = EINVAL;
		return -1;
	}
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, to_cctx(ctx)->mac, 6);
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	if (flags)
		return EINVAL;
	if (port != COMPAT_PORT || index >= COMPAT_GID_TBL_LEN)
		return ENODATA;
	if (entry_size < sizeof(*entry))
		return EINVAL;
	memset(entry, 0, sizeof(*entry));
	memcpy(entry->gid.raw, to_cctx(ctx)->mac, 6);
	entry->gid_index = index;
	entry->port_num = port;
	/* iWARP GIDs are of no RoCE type; rdma-core reports IB for them. */
	entry->gid_type = IBV_GID_TYPE_IB;
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	int ret;

	if (max_entries < COMPAT_GID_TBL_LEN)
		return -EINVAL;
	ret = _ibv_query_gid_ex(ctx, COMPAT_PORT, 0, entries, flags, entry_size);
	return ret ? -ret : COMPAT_GID_TBL_LEN;
}

/*
 * Exported by rdma-core as IBVERBS_PRIVATE_34 for its providers; perftest calls
 * it too. Its enum ibv_gid_type_sysfs lives in rdma-core's driver.h, which
 * Debian does not ship: the one value used here is its first, 0, "IB/RoCE v1",
 * what rdma-core answers for a GID without a RoCE type (IB and iWARP).
 */
#define COMPAT_GID_TYPE_SYSFS_IB_ROCE_V1 0
int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index, int *type);
int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index, int *type)
{
	(void)ctx;
	if (port != COMPAT_PORT || index >= COMPAT_GID_TBL_LEN) {
		errno = EINVAL;
		return -1;
	}
	*type = COMPAT_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

int ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
	(void)ctx;
	if (port != COMPAT_PORT || index < 0 || index >= COMPAT_PKEY_TBL_LEN) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(COMPAT_DEFAULT_PKEY);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port, __be16 pkey)
{
	(void)ctx;
	if (port != COMPAT_PORT || be16toh(pkey) != COMPAT_DEFAULT_PKEY) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

/* rdma-core reads sysfs attributes of real devices; srnic has none, but the
 * function also serves any path a program passes. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t len;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len > 0) {
		if ((size_t)len == size)
			len--;
		if (buf[len - 1] == '\n')
			len--;
		buf[len] = '\0';
	}
	return (int)len;
}

const char *ibv_get_sysfs_path(void)
{
	return "/sys";
}
