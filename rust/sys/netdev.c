// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: raw Ethernet ports for Sandia RMPP, and netdev queries.
 * Only what the Rust side cannot reach through kernel::bindings in 6.12;
 * each function is declared in glue.h and wrapped once in rust/sys/netdev.rs.
 */
#include <linux/capability.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/unaligned.h>
#include <net/net_namespace.h>

#include "glue.h"

/* Its Rust twin is sys::netdev::PortFilter. */
static_assert(sizeof(struct srnic_port_filter) == 16);

/*
 * One RMPP endpoint's attachment to a netdev: a packet_type handler for its
 * EtherType, a bounded queue of received frames, a timer, and a reference on
 * the netdev. The handler and the timer run in softirq context: they only
 * queue frames and call notify(owner), which queues the endpoint's work.
 */
struct srnic_port {
	struct packet_type pt;
	struct sk_buff_head rxq;
	struct timer_list timer;
	struct net_device *dev;
	netdevice_tracker tracker;
	srnic_port_notify_fn notify;
	void *owner;
	u32 nid;
	u32 qmax;
	struct srnic_port_filter filter;
	/* Set when the netdev went down or away: the owner must close the port. */
	bool down;
	/* On srnic_ports from open to close. */
	struct list_head node;
	atomic_long_t cnt[SRNIC_PORT_NR_COUNTERS];
};

/*
 * Every open port, for the netdevice notifier. The mutex nests inside RTNL;
 * nothing takes RTNL under it.
 */
static LIST_HEAD(srnic_ports);
static DEFINE_MUTEX(srnic_ports_lock);

static int srnic_port_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
			  struct net_device *orig_dev)
{
	struct srnic_port *p = container_of(pt, struct srnic_port, pt);
	u8 buf[12];
	const u8 *h;
	u32 src, dst, mine;
	int c = -1;

	if (skb->pkt_type == PACKET_OTHERHOST || skb->pkt_type == PACKET_OUTGOING)
		goto drop_quiet;
	/* Queueing links the skb: work on a private clone if it is shared. */
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	h = skb_header_pointer(skb, 0, sizeof(buf), buf);
	if (!h || skb->len < p->filter.hdr_len) {
		c = SRNIC_PORT_RX_SHORT;
		goto drop;
	}
	if (h[0] != p->filter.version) {
		c = SRNIC_PORT_RX_BAD_VERSION;
		goto drop;
	}
	if (h[1] >= 32 || !(p->filter.types & BIT(h[1]))) {
		c = SRNIC_PORT_RX_BAD_TYPE;
		goto drop;
	}
	src = get_unaligned_be32(h + 4);
	dst = get_unaligned_be32(h + 8);
	/* Replies (CTS, MSGEND, ...) travel to the message's sender. */
	mine = (p->filter.replies & BIT(h[1])) ? src : dst;
	if (mine != p->nid) {
		c = SRNIC_PORT_RX_OTHER_NID;
		goto drop;
	}
	if (skb_queue_len_lockless(&p->rxq) >= p->qmax) {
		c = SRNIC_PORT_RX_QUEUE_FULL;
		goto drop;
	}
	skb_queue_tail(&p->rxq, skb);
	p->notify(p->owner);
	return NET_RX_SUCCESS;
drop:
	atomic_long_inc(&p->cnt[c]);
	/* The work folds the counters into the module's statistics. */
	p->notify(p->owner);
drop_quiet:
	kfree_skb(skb);
	return NET_RX_DROP;
}

static void srnic_port_timer_fn(struct timer_list *t)
{
	struct srnic_port *p = from_timer(p, t, timer);

	p->notify(p->owner);
}

/*
 * The network namespace of the calling process: netdevs are looked up by name
 * there (only in the caller's context, the ioctls that create endpoints).
 */
static struct net *srnic_caller_net(void)
{
	return current->nsproxy->net_ns;
}

/*
 * Attaches to the netdev named ifname in the caller's network namespace for
 * frames of ethertype addressed to nid that pass filter (copied). Until
 * srnic_port_close(), notify(owner) may be called from softirq context at any
 * time.
 */
struct srnic_port *srnic_port_open(const char *ifname, u16 ethertype, u32 nid, u32 qmax,
				   const struct srnic_port_filter *filter,
				   srnic_port_notify_fn notify, void *owner, int *err)
{
	struct net_device *dev;
	struct srnic_port *p;

	p = kzalloc(sizeof(*p), SRNIC_GFP_USER);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	dev = netdev_get_by_name(srnic_caller_net(), ifname, &p->tracker, GFP_KERNEL);
	if (!dev) {
		kfree(p);
		*err = -ENODEV;
		return NULL;
	}
	if (dev->type != ARPHRD_ETHER || dev->addr_len != ETH_ALEN) {
		netdev_put(dev, &p->tracker);
		kfree(p);
		*err = -EOPNOTSUPP;
		return NULL;
	}
	p->dev = dev;
	p->nid = nid;
	p->qmax = qmax;
	p->filter = *filter;
	p->notify = notify;
	p->owner = owner;
	skb_queue_head_init(&p->rxq);
	timer_setup(&p->timer, srnic_port_timer_fn, 0);
	p->pt.type = htons(ethertype);
	p->pt.dev = dev;
	p->pt.func = srnic_port_rcv;
	mutex_lock(&srnic_ports_lock);
	list_add_tail(&p->node, &srnic_ports);
	mutex_unlock(&srnic_ports_lock);
	dev_add_pack(&p->pt);
	return p;
}

/*
 * Detaches: when this returns neither the handler nor the timer runs or will
 * run, queued frames are freed and the netdev reference is dropped. Returns the
 * owner given to srnic_port_open().
 */
void *srnic_port_close(struct srnic_port *p)
{
	void *owner = p->owner;

	mutex_lock(&srnic_ports_lock);
	list_del(&p->node);
	mutex_unlock(&srnic_ports_lock);
	dev_remove_pack(&p->pt); /* waits for running handlers (synchronize_net) */
	timer_shutdown_sync(&p->timer);
	skb_queue_purge(&p->rxq);
	netdev_put(p->dev, &p->tracker);
	kfree(p);
	return owner;
}

/* Whether the netdev went down or away since the port was opened. */
bool srnic_port_down(struct srnic_port *p)
{
	return READ_ONCE(p->down);
}

/*
 * A netdev going down (NETDEV_DOWN, also sent first when it is unregistered)
 * or away (NETDEV_UNREGISTER: a netdev that was down already): srnic's
 * connections through it are aborted, and the owners of its ports are told
 * to close them, which drops their references so the unregistration
 * completes at once (netdev_wait_allrefs waits for them).
 */
static int srnic_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct srnic_port *p;

	if (event != NETDEV_DOWN && event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;
	srnic_socks_netdev_down(dev);
	mutex_lock(&srnic_ports_lock);
	list_for_each_entry(p, &srnic_ports, node) {
		if (p->dev == dev && !p->down) {
			WRITE_ONCE(p->down, true);
			p->notify(p->owner);
		}
	}
	mutex_unlock(&srnic_ports_lock);
	return NOTIFY_DONE;
}

static struct notifier_block srnic_netdev_nb = {
	.notifier_call = srnic_netdev_event,
};

int srnic_netdev_watch(void)
{
	return register_netdevice_notifier(&srnic_netdev_nb);
}

void srnic_netdev_unwatch(void)
{
	unregister_netdevice_notifier(&srnic_netdev_nb);
}

int srnic_port_ifindex(struct srnic_port *p)
{
	return p->dev->ifindex;
}

/*
 * At most what a port queueing qmax frames from a netdev of this MTU holds:
 * the port and full-sized frames as the stack sizes their skbs (an estimate:
 * a driver may give a frame a larger buffer).
 */
size_t srnic_port_footprint(unsigned int mtu, u32 qmax)
{
	return sizeof(struct srnic_port) +
	       (size_t)qmax * SKB_TRUESIZE(SKB_DATA_ALIGN(NET_SKB_PAD + ETH_HLEN + mtu));
}

void srnic_port_counters(struct srnic_port *p, u64 *out)
{
	int i;

	for (i = 0; i < SRNIC_PORT_NR_COUNTERS; i++)
		out[i] = atomic_long_read(&p->cnt[i]);
}

/* Next received frame (data at the RMPP header), or NULL. */
struct sk_buff *srnic_port_dequeue(struct srnic_port *p)
{
	return skb_dequeue(&p->rxq);
}

/* Runs notify(owner) from the timer in about delay_ns (0: cancel). */
void srnic_port_arm(struct srnic_port *p, u64 delay_ns)
{
	if (!delay_ns) {
		timer_delete(&p->timer);
		return;
	}
	mod_timer(&p->timer, jiffies + nsecs_to_jiffies(delay_ns) + 1);
}

/*
 * A frame of len bytes after the Ethernet header, to dst. Returns the skb and
 * in *data where its len bytes go (uninitialised), or NULL.
 */
struct sk_buff *srnic_port_tx_alloc(struct srnic_port *p, const u8 *dst, unsigned int len,
				    u8 **data)
{
	struct net_device *dev = p->dev;
	int hlen = LL_RESERVED_SPACE(dev), tlen = dev->needed_tailroom;
	struct sk_buff *skb;

	skb = alloc_skb(hlen + len + tlen, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, hlen);
	skb_reset_network_header(skb);
	*data = skb_put(skb, len);
	skb->dev = dev;
	skb->protocol = p->pt.type;
	skb->priority = 0;
	if (dev_hard_header(skb, dev, ntohs(p->pt.type), dst, NULL, len) < 0) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/* Sends (and consumes) an skb from srnic_port_tx_alloc(). 0 or a negative errno. */
int srnic_port_tx_send(struct sk_buff *skb)
{
	int r = dev_queue_xmit(skb);

	if (r == NET_XMIT_SUCCESS || r == NET_XMIT_CN)
		return 0;
	return r < 0 ? r : -ENOBUFS;
}

void srnic_skb_free(struct sk_buff *skb)
{
	consume_skb(skb);
}

unsigned int srnic_skb_len(struct sk_buff *skb)
{
	return skb->len;
}

int srnic_skb_copy(struct sk_buff *skb, unsigned int off, void *to, unsigned int len)
{
	return skb_copy_bits(skb, off, to, len);
}

/* Hands bytes [off, off + len) of skb to fn piece by piece (see srnic_skb_walk). */
long srnic_skb_read(struct sk_buff *skb, unsigned int off, size_t len, srnic_rx_fn fn, void *arg)
{
	struct srnic_rd rd = { .fn = fn, .arg = arg };

	if ((size_t)off + len > skb->len)
		return -EFAULT;
	return srnic_skb_walk(skb, off, len, &rd);
}

u64 srnic_now_ns(void)
{
	return ktime_get_ns();
}

/* The source MAC address of a received frame; zero if it has no Ethernet header. */
void srnic_skb_src_mac(struct sk_buff *skb, u8 *mac)
{
	if (skb_mac_header_was_set(skb) && skb_mac_header_len(skb) >= ETH_HLEN)
		memcpy(mac, eth_hdr(skb)->h_source, ETH_ALEN);
	else
		eth_zero_addr(mac);
}

bool srnic_net_admin(void)
{
	return capable(CAP_NET_ADMIN);
}

/*
 * Whether the calling task may send and receive raw frames on the netdev named
 * ifname (in its network namespace): CAP_NET_RAW in the user namespace that owns the
 * netdev's network namespace, as for an AF_PACKET socket there. 0, -EPERM or
 * -ENODEV.
 */
int srnic_netdev_net_raw(const char *ifname)
{
	struct net_device *dev = dev_get_by_name(srnic_caller_net(), ifname);
	int r;

	if (!dev)
		return -ENODEV;
	r = ns_capable(dev_net(dev)->user_ns, CAP_NET_RAW) ? 0 : -EPERM;
	dev_put(dev);
	return r;
}

/*
 * The interface index of the netdev named ifname (caller's namespace), or
 * -ENODEV; its MTU in *mtu.
 */
int srnic_netdev_info(const char *ifname, unsigned int *mtu)
{
	struct net_device *dev = dev_get_by_name(srnic_caller_net(), ifname);
	int i;

	if (!dev)
		return -ENODEV;
	i = dev->ifindex;
	*mtu = READ_ONCE(dev->mtu);
	dev_put(dev);
	return i;
}
