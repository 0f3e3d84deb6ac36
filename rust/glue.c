// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: only what the Rust side cannot reach through kernel::bindings in
 * 6.12 (headers bindgen was not run on, and static inline functions). Each
 * function here is declared in glue.h and wrapped exactly once by a safe Rust
 * abstraction in rust/sys/.
 */
#include <linux/crc32c.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/unaligned.h>
#include <linux/in.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "glue.h"

/* A misc device together with its own copy of the file operations. */
struct srnic_misc {
	struct miscdevice misc;
	struct file_operations fops;
};

/*
 * Registers a misc device with a dynamic minor. The file operations are copied
 * and their owner set to this module, so an open file holds a reference on the
 * module and it cannot be unloaded under it. Wrapped by rust/sys/miscdev.rs.
 */
struct miscdevice *srnic_misc_register(const char *name, umode_t mode,
				       const struct file_operations *fops)
{
	struct srnic_misc *m;
	int err;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->fops = *fops;
	m->fops.owner = THIS_MODULE;
	m->misc.minor = MISC_DYNAMIC_MINOR;
	m->misc.name = name;
	m->misc.mode = mode;
	m->misc.fops = &m->fops;
	err = misc_register(&m->misc);
	if (err) {
		kfree(m);
		return ERR_PTR(err);
	}
	return &m->misc;
}

/* Undoes srnic_misc_register(). Wrapped by rust/sys/miscdev.rs. */
void srnic_misc_deregister(struct miscdevice *misc)
{
	misc_deregister(misc);
	kfree(container_of(misc, struct srnic_misc, misc));
}

/* poll_wait() is static inline. Wrapped by rust/sys/waitqueue.rs. */
void srnic_poll_wait(struct file *file, wait_queue_head_t *wq, poll_table *pt)
{
	poll_wait(file, wq, pt);
}

/* ---- TCP sockets (rust/sys/socket.rs) ---- */


static void srnic_sin(struct sockaddr_in *sin, __be32 addr, u16 port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = addr;
	sin->sin_port = htons(port);
}

int srnic_sock_listen(__be32 addr, u16 port, int backlog, struct socket **out)
{
	struct sockaddr_in sin;
	struct socket *s;
	int err;

	err = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP, &s);
	if (err)
		return err;
	sock_set_reuseaddr(s->sk);
	srnic_sin(&sin, addr, port);
	err = kernel_bind(s, (struct sockaddr *)&sin, sizeof(sin));
	if (!err)
		err = kernel_listen(s, backlog);
	if (err) {
		sock_release(s);
		return err;
	}
	*out = s;
	return 0;
}

int srnic_sock_connect(__be32 addr, u16 port, int timeout_ms, struct socket **out)
{
	struct sockaddr_in sin;
	struct socket *s;
	int err;

	err = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP, &s);
	if (err)
		return err;
	/* A blocking connect waits at most sk_sndtimeo. */
	s->sk->sk_sndtimeo = msecs_to_jiffies(timeout_ms);
	srnic_sin(&sin, addr, port);
	err = kernel_connect(s, (struct sockaddr *)&sin, sizeof(sin), 0);
	if (err) {
		sock_release(s);
		return err;
	}
	*out = s;
	return 0;
}

int srnic_sock_accept(struct socket *lsock, struct socket **out)
{
	return kernel_accept(lsock, out, 0);
}

void srnic_sock_release(struct socket *sock)
{
	sock_release(sock);
}

void srnic_sock_shutdown(struct socket *sock, bool abort)
{
	/* Linger 0 turns the close into a reset. */
	if (abort)
		sock_no_linger(sock->sk);
	kernel_sock_shutdown(sock, SHUT_RDWR);
}

void srnic_sock_set_timeouts(struct socket *sock, int rcv_ms, int snd_ms)
{
	lock_sock(sock->sk);
	sock->sk->sk_rcvtimeo = rcv_ms > 0 ? msecs_to_jiffies(rcv_ms) : MAX_SCHEDULE_TIMEOUT;
	sock->sk->sk_sndtimeo = snd_ms > 0 ? msecs_to_jiffies(snd_ms) : MAX_SCHEDULE_TIMEOUT;
	release_sock(sock->sk);
}

void srnic_sock_nodelay(struct socket *sock)
{
	tcp_sock_set_nodelay(sock->sk);
}

int srnic_sock_addrs(struct socket *sock, __be32 *laddr, u16 *lport, __be32 *raddr, u16 *rport)
{
	struct sockaddr_in sin;
	int err;

	err = kernel_getsockname(sock, (struct sockaddr *)&sin);
	if (err < 0)
		return err;
	*laddr = sin.sin_addr.s_addr;
	*lport = ntohs(sin.sin_port);
	err = kernel_getpeername(sock, (struct sockaddr *)&sin);
	if (err < 0) {
		*raddr = 0;
		*rport = 0;
		return 0;
	}
	*raddr = sin.sin_addr.s_addr;
	*rport = ntohs(sin.sin_port);
	return 0;
}

/* The current send MSS (payload bytes per segment, TCP options deducted). */
int srnic_sock_mss(struct socket *sock)
{
	return READ_ONCE(tcp_sk(sock->sk)->mss_cache);
}

int srnic_sock_port(struct socket *sock)
{
	struct sockaddr_in sin;
	int err = kernel_getsockname(sock, (struct sockaddr *)&sin);

	return err < 0 ? err : ntohs(sin.sin_port);
}

int srnic_sock_send(struct socket *sock, const struct kvec *vec, size_t nr, size_t len, bool more,
		    bool eor)
{
	/*
	 * MSG_EOR: TCP appends nothing more to the buffer holding the last byte,
	 * so what follows starts a new segment.
	 */
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL | (more ? MSG_MORE : 0) | (eor ? MSG_EOR : 0) };

	return kernel_sendmsg(sock, &msg, (struct kvec *)vec, nr, len);
}

int srnic_sock_recv(struct socket *sock, void *buf, size_t len, bool nonblock)
{
	/* Blocking reads wait for all of buf (MPA start-up reads exact frames). */
	struct msghdr msg = { .msg_flags = nonblock ? MSG_DONTWAIT : MSG_WAITALL };
	struct kvec vec = { .iov_base = buf, .iov_len = len };

	return kernel_recvmsg(sock, &msg, &vec, 1, len, msg.msg_flags);
}

bool srnic_sock_closed(struct socket *sock)
{
	struct sock *sk = sock->sk;

	return (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) || READ_ONCE(sk->sk_err) ||
	       READ_ONCE(sk->sk_state) != TCP_ESTABLISHED;
}

/* The callbacks a connected socket gets; sk_user_data points at this. */
struct srnic_sock_cb {
	srnic_sock_cb_fn fn;
	void *user;
	/* The socket's own callbacks, restored when srnic's are removed. */
	void (*sk_data_ready)(struct sock *sk);
	void (*sk_write_space)(struct sock *sk);
	void (*sk_state_change)(struct sock *sk);
};

/*
 * Each srnic callback first runs the socket's own one (which wakes, among
 * others, a sender blocked in sendmsg() waiting for buffer space), then tells
 * the owner. Without the owner (callbacks being removed) the socket's own
 * callback is all that runs.
 */
#define SRNIC_SOCK_CALLBACK(name, field, event)					\
static void name(struct sock *sk)							\
{											\
	struct srnic_sock_cb *cb;							\
											\
	read_lock_bh(&sk->sk_callback_lock);						\
	cb = sk->sk_user_data;								\
	if (cb) {									\
		cb->field(sk);								\
		cb->fn(cb->user, event);						\
	} else if (sk->field != name) {							\
		sk->field(sk);								\
	}										\
	read_unlock_bh(&sk->sk_callback_lock);						\
}

SRNIC_SOCK_CALLBACK(srnic_sk_data_ready, sk_data_ready, SRNIC_SOCK_READABLE)
SRNIC_SOCK_CALLBACK(srnic_sk_write_space, sk_write_space, SRNIC_SOCK_WRITABLE)
SRNIC_SOCK_CALLBACK(srnic_sk_state_change, sk_state_change, SRNIC_SOCK_STATE)

int srnic_sock_set_callbacks(struct socket *sock, srnic_sock_cb_fn fn, void *user)
{
	struct sock *sk = sock->sk;
	struct srnic_sock_cb *cb = kzalloc(sizeof(*cb), GFP_KERNEL);

	if (!cb)
		return -ENOMEM;
	cb->fn = fn;
	cb->user = user;
	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data) {
		/* One owner of a socket's callbacks at a time. */
		write_unlock_bh(&sk->sk_callback_lock);
		kfree(cb);
		return -EBUSY;
	}
	cb->sk_data_ready = sk->sk_data_ready;
	cb->sk_write_space = sk->sk_write_space;
	cb->sk_state_change = sk->sk_state_change;
	sk->sk_user_data = cb;
	sk->sk_data_ready = srnic_sk_data_ready;
	sk->sk_write_space = srnic_sk_write_space;
	sk->sk_state_change = srnic_sk_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	return 0;
}

/*
 * Restores the socket's own callbacks. When this returns no srnic callback runs
 * or will run for this socket; returns the `user` pointer that was installed.
 */
void *srnic_sock_clear_callbacks(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct srnic_sock_cb *cb;
	void *user = NULL;

	write_lock_bh(&sk->sk_callback_lock);
	cb = sk->sk_user_data;
	if (cb) {
		sk->sk_data_ready = cb->sk_data_ready;
		sk->sk_write_space = cb->sk_write_space;
		sk->sk_state_change = cb->sk_state_change;
		sk->sk_user_data = NULL;
		user = cb->user;
	}
	write_unlock_bh(&sk->sk_callback_lock);
	kfree(cb);
	return user;
}

struct srnic_rd {
	srnic_rx_fn fn;
	void *arg;
	long err;
};

/*
 * Hands bytes [off, off + len) of skb to rd->fn in contiguous pieces: the
 * linear part, then each fragment page mapped with kmap_local_page() (which,
 * unlike skb_seq_read()'s kmap_atomic(), leaves fn free to sleep), then the
 * frag list. Returns the bytes fn took, or its error.
 */
static long srnic_skb_walk(struct sk_buff *skb, unsigned int off, size_t len, struct srnic_rd *rd)
{
	unsigned int start = skb_headlen(skb), i;
	struct sk_buff *frag_iter;
	size_t done = 0, n;
	long r;

	if (off < start && len) {
		n = min_t(size_t, start - off, len);
		r = rd->fn(rd->arg, skb->data + off, n);
		if (r < 0)
			return r;
		done += r;
		if (r < n)
			return done;
		off += n;
		len -= n;
	}
	for (i = 0; i < skb_shinfo(skb)->nr_frags && len; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];
		unsigned int end = start + skb_frag_size(frag);
		u32 p_off, p_len, copied;
		struct page *p;

		if (off < end) {
			n = min_t(size_t, end - off, len);
			skb_frag_foreach_page(frag, skb_frag_off(frag) + off - start, n,
					      p, p_off, p_len, copied) {
				u8 *vaddr = kmap_local_page(p);

				r = rd->fn(rd->arg, vaddr + p_off, p_len);
				kunmap_local(vaddr);
				if (r < 0)
					return r;
				done += r;
				if (r < p_len)
					return done;
			}
			off += n;
			len -= n;
		}
		start = end;
	}
	skb_walk_frags(skb, frag_iter) {
		unsigned int end = start + frag_iter->len;

		if (len && off < end) {
			n = min_t(size_t, end - off, len);
			r = srnic_skb_walk(frag_iter, off - start, n, rd);
			if (r < 0)
				return r;
			done += r;
			if (r < n)
				return done;
			off += n;
			len -= n;
		}
		start = end;
	}
	return done;
}

/* tcp_read_sock() actor: hands the skb's data to rd->fn. */
static int srnic_rx_actor(read_descriptor_t *desc, struct sk_buff *skb, unsigned int off,
			  size_t len)
{
	struct srnic_rd *rd = desc->arg.data;
	long r = srnic_skb_walk(skb, off, len, rd);

	if (r < 0) {
		rd->err = r;
		desc->count = 0;
		return 0;
	}
	if (r < len)
		desc->count = 0;
	return r;
}

/*
 * Feeds everything queued on the socket to fn, which returns how much it took
 * (less stops the read) or a negative error. Returns bytes consumed or the error.
 */
long srnic_sock_read(struct socket *sock, srnic_rx_fn fn, void *arg)
{
	struct srnic_rd rd = { .fn = fn, .arg = arg };
	read_descriptor_t desc = { .arg.data = &rd, .count = 1 };
	long n;

	lock_sock(sock->sk);
	n = tcp_read_sock(sock->sk, &desc, srnic_rx_actor);
	release_sock(sock->sk);
	return rd.err ? rd.err : n;
}

/* ---- Pinned user memory (rust/sys/pages.rs) ---- */

struct mm_struct *srnic_mm_get_current(void)
{
	struct mm_struct *mm = current->mm;

	if (mm)
		mmgrab(mm);
	return mm;
}

void srnic_mm_put(struct mm_struct *mm)
{
	mmdrop(mm);
}

/* Charges npages to mm->pinned_vm against RLIMIT_MEMLOCK, as ib_umem_get() does. */
int srnic_mm_charge(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	u64 pinned = atomic64_add_return(npages, &mm->pinned_vm);

	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

void srnic_mm_uncharge(struct mm_struct *mm, unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
}

/* Pins npages pages of the current process from start; all or nothing. */
long srnic_pin_user_pages(unsigned long start, unsigned long npages, bool write, struct page **pages)
{
	unsigned int flags = FOLL_LONGTERM | (write ? FOLL_WRITE : 0);
	unsigned long done = 0;
	long r;

	while (done < npages) {
		r = pin_user_pages_fast(start + done * PAGE_SIZE,
					min_t(unsigned long, npages - done, INT_MAX / PAGE_SIZE),
					flags, pages + done);
		if (r <= 0) {
			if (done)
				unpin_user_pages(pages, done);
			return r ? r : -EFAULT;
		}
		done += r;
	}
	return done;
}

void srnic_unpin_user_pages(struct page **pages, unsigned long npages, bool dirty)
{
	unpin_user_pages_dirty_lock(pages, npages, dirty);
}

/* ---- CRC32c (rust/sys/crc.rs) ---- */

u32 srnic_crc32c(u32 crc, const void *data, unsigned int len)
{
	return crc32c(crc, data, len);
}

/* ---- Workqueue (rust/sys/wq.rs) ---- */

struct workqueue_struct *srnic_alloc_wq(const char *name)
{
	return alloc_workqueue("%s", WQ_UNBOUND, 0, name);
}

/* ---- Raw Ethernet ports for Sandia RMPP (rust/sys/netdev.rs) ---- */

/* Header fields the receive filter reads (see rust/proto/src/rmpp/wire.rs). */
#define SRNIC_RMPP_HDR_LEN	44
#define SRNIC_RMPP_VERSION	1

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
	atomic_long_t cnt[SRNIC_PORT_NR_COUNTERS];
};

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
	if (!h || skb->len < SRNIC_RMPP_HDR_LEN) {
		c = SRNIC_PORT_RX_SHORT;
		goto drop;
	}
	if (h[0] != SRNIC_RMPP_VERSION) {
		c = SRNIC_PORT_RX_BAD_VERSION;
		goto drop;
	}
	if (h[1] < 1 || h[1] > 10) {
		c = SRNIC_PORT_RX_BAD_TYPE;
		goto drop;
	}
	src = get_unaligned_be32(h + 4);
	dst = get_unaligned_be32(h + 8);
	/* CTS (3), MSGEND (7) and MSGDROP (8) travel to the message's sender. */
	mine = (h[1] == 3 || h[1] == 7 || h[1] == 8) ? src : dst;
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
 * Attaches to the netdev named ifname in the initial network namespace for
 * frames of ethertype addressed to nid. Until srnic_port_close(), notify(owner)
 * may be called from softirq context at any time.
 */
struct srnic_port *srnic_port_open(const char *ifname, u16 ethertype, u32 nid, u32 qmax,
				   srnic_port_notify_fn notify, void *owner, int *err)
{
	struct net_device *dev;
	struct srnic_port *p;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	dev = netdev_get_by_name(&init_net, ifname, &p->tracker, GFP_KERNEL);
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
	p->notify = notify;
	p->owner = owner;
	skb_queue_head_init(&p->rxq);
	timer_setup(&p->timer, srnic_port_timer_fn, 0);
	p->pt.type = htons(ethertype);
	p->pt.dev = dev;
	p->pt.func = srnic_port_rcv;
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

	dev_remove_pack(&p->pt); /* waits for running handlers (synchronize_net) */
	timer_shutdown_sync(&p->timer);
	skb_queue_purge(&p->rxq);
	netdev_put(p->dev, &p->tracker);
	kfree(p);
	return owner;
}

int srnic_port_ifindex(struct srnic_port *p)
{
	return p->dev->ifindex;
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

bool srnic_net_admin(void)
{
	return capable(CAP_NET_ADMIN);
}

/*
 * The interface index of the netdev named ifname (initial namespace), or
 * -ENODEV; its MTU in *mtu.
 */
int srnic_netdev_info(const char *ifname, unsigned int *mtu)
{
	struct net_device *dev = dev_get_by_name(&init_net, ifname);
	int i;

	if (!dev)
		return -ENODEV;
	i = dev->ifindex;
	*mtu = READ_ONCE(dev->mtu);
	dev_put(dev);
	return i;
}
