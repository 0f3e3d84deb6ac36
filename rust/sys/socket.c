// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: kernel TCP sockets, their callbacks, and tcp_read_sock().
 * Only what the Rust side cannot reach through kernel::bindings in 6.12;
 * each function is declared in glue.h and wrapped once in rust/sys/socket.rs.
 */
#include <linux/bvec.h>
#include <linux/in.h>
#include <linux/inetdevice.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/uio.h>
#include <linux/net.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "glue.h"
#include "../../uapi/srnic.h"

/*
 * An ABI address as the struct sockaddr_in or sockaddr_in6 the socket calls
 * take, in *ss; returns its length, or -EAFNOSUPPORT for another family. The
 * ABI's port is in host byte order; IPv6 flow information is not carried.
 */
static int srnic_sockaddr_to(struct sockaddr_storage *ss, const struct srnic_sockaddr *a)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(a->port);
		memcpy(&sin->sin_addr, a->addr, sizeof(sin->sin_addr));
		return sizeof(*sin);
	}
	if (IS_ENABLED(CONFIG_IPV6) && a->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(a->port);
		sin6->sin6_scope_id = a->scope_id;
		memcpy(&sin6->sin6_addr, a->addr, sizeof(sin6->sin6_addr));
		return sizeof(*sin6);
	}
	return -EAFNOSUPPORT;
}

/*
 * The ABI address of a struct sockaddr_in or sockaddr_in6. An IPv4 peer of an
 * IPv6 socket (accepted by a listener on [::], which takes both) shows as the
 * IPv4 address it is, not as ::ffff:a.b.c.d: a connection's addresses do not
 * depend on how its listener was bound.
 */
static void srnic_sockaddr_from(struct srnic_sockaddr *a, const struct sockaddr_storage *ss)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		a->family = AF_INET;
		a->port = ntohs(sin->sin_port);
		memcpy(a->addr, &sin->sin_addr, sizeof(sin->sin_addr));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		a->port = ntohs(sin6->sin6_port);
		if (ipv6_addr_v4mapped(&sin6->sin6_addr)) {
			a->family = AF_INET;
			memcpy(a->addr, &sin6->sin6_addr.s6_addr32[3], 4);
		} else {
			a->family = AF_INET6;
			a->scope_id = sin6->sin6_scope_id;
			memcpy(a->addr, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
		}
	}
}

/*
 * The one creation prologue: a TCP socket for the calling process, made in
 * its context (the LISTEN and CONNECT ioctls): in its network namespace,
 * which the socket holds as a user socket would (sk_net_refcnt_upgrade), and
 * owned by its uid (sock_alloc takes the caller's fsuid for sk_uid); its
 * cgroup (BPF bind and connect programs, netfilter's owner match) and memory
 * cgroup are the caller's. It stays a kernel socket: its locks keep lockdep
 * classes of their own, apart from the user sockets of other kernel users
 * such as siw, whose callbacks lock in another order. Accepted sockets
 * inherit all of this from their listener.
 */
static int srnic_sock_new(int family, struct socket **out)
{
	int err = sock_create_kern(current->nsproxy->net_ns, family, SOCK_STREAM, IPPROTO_TCP, out);

	if (err)
		return err;
	sk_net_refcnt_upgrade((*out)->sk);
	return 0;
}

/*
 * Listens on a: an IPv6 listener on the unspecified address [::] takes IPv4
 * connections too unless the namespace's net.ipv6.bindv6only says otherwise,
 * as a user socket's does.
 */
int srnic_sock_listen(const struct srnic_sockaddr *a, int backlog, struct socket **out)
{
	struct sockaddr_storage ss;
	struct socket *s;
	int len = srnic_sockaddr_to(&ss, a);
	int err;

	if (len < 0)
		return len;
	err = srnic_sock_new(ss.ss_family, &s);
	if (err)
		return err;
	sock_set_reuseaddr(s->sk);
	err = kernel_bind(s, (struct sockaddr *)&ss, len);
	if (!err)
		err = kernel_listen(s, backlog);
	if (err) {
		sock_release(s);
		return err;
	}
	*out = s;
	return 0;
}

/*
 * Starts connecting without waiting: on success *out is a socket whose
 * connection is established or under way (see srnic_sock_connect_result).
 */
int srnic_sock_connect(const struct srnic_sockaddr *a, struct socket **out)
{
	struct sockaddr_storage ss;
	struct socket *s;
	int len = srnic_sockaddr_to(&ss, a);
	int err;

	if (len < 0)
		return len;
	err = srnic_sock_new(ss.ss_family, &s);
	if (err)
		return err;
	err = kernel_connect(s, (struct sockaddr *)&ss, len, O_NONBLOCK);
	if (err && err != -EINPROGRESS) {
		sock_release(s);
		return err;
	}
	*out = s;
	return 0;
}

/* 0: connected; -EINPROGRESS: still connecting; else why it failed. */
int srnic_sock_connect_result(struct socket *sock)
{
	struct sock *sk = sock->sk;
	int err = sock_error(sk);

	if (err)
		return err;
	switch (READ_ONCE(sk->sk_state)) {
	case TCP_ESTABLISHED:
		return 0;
	case TCP_SYN_SENT:
	case TCP_SYN_RECV:
		return -EINPROGRESS;
	default:
		return -ECONNREFUSED;
	}
}

/* Sends buf without waiting; returns the bytes TCP took or the error. */
int srnic_sock_send_now(struct socket *sock, const void *buf, size_t len)
{
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL | MSG_DONTWAIT };
	struct kvec vec = { .iov_base = (void *)buf, .iov_len = len };

	return kernel_sendmsg(sock, &msg, &vec, 1, len);
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

void srnic_sock_nodelay(struct socket *sock)
{
	tcp_sock_set_nodelay(sock->sk);
}

/* The local and remote addresses; the remote one is zero (family 0) when
 * the socket is not connected. */
int srnic_sock_addrs(struct socket *sock, struct srnic_sockaddr *local, struct srnic_sockaddr *remote)
{
	struct sockaddr_storage ss;
	int err;

	err = kernel_getsockname(sock, (struct sockaddr *)&ss);
	if (err < 0)
		return err;
	srnic_sockaddr_from(local, &ss);
	err = kernel_getpeername(sock, (struct sockaddr *)&ss);
	if (err < 0)
		memset(remote, 0, sizeof(*remote));
	else
		srnic_sockaddr_from(remote, &ss);
	return 0;
}

/* The current send MSS (payload bytes per segment, TCP options deducted). */
int srnic_sock_mss(struct socket *sock)
{
	return READ_ONCE(tcp_sk(sock->sk)->mss_cache);
}

/*
 * The MSS of the connection as the peer's MSS option and the path MTU allow
 * it, before TCP options (timestamps) take their bytes of each segment: what
 * an MSS limit compares against (a peer announcing 536 has an MSS of 536, of
 * which timestamps use 12).
 */
int srnic_sock_path_mss(struct socket *sock)
{
	const struct tcp_sock *tp = tcp_sk(sock->sk);

	return READ_ONCE(tp->mss_cache) + tp->tcp_header_len - sizeof(struct tcphdr);
}

/*
 * Sends the bytes the bio_vecs describe without waiting; returns how many TCP
 * took (fewer than len when its send buffer filled; -EAGAIN when it took
 * none: the write-space callback tells when to go on) or the error. MSG_EOR
 * applies only when all of len goes out: TCP appends nothing more to the
 * buffer holding the last byte, so what follows starts a new segment.
 *
 * With a zero-copy notice (zc, see zcopy.c) TCP takes references to the pages
 * instead of copying them and links its buffers to the notice, unless a page
 * cannot be referenced (slab memory: sendpage_ok(), as NVMe/TCP checks; or
 * the device cannot gather): then this call copies, and the notice is not
 * linked to what it sent.
 */
int srnic_sock_send_bvec(struct socket *sock, const struct bio_vec *bv, size_t nr, size_t len,
			 bool more, bool eor, struct srnic_zc *zc)
{
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL | MSG_DONTWAIT | (more ? MSG_MORE : 0) |
					   (eor ? MSG_EOR : 0) };
	size_t i;

	for (i = 0; zc && i < nr; i++)
		if (!sendpage_ok(bv[i].bv_page))
			zc = NULL;
	if (zc) {
		msg.msg_flags |= MSG_ZEROCOPY;
		msg.msg_ubuf = srnic_zc_ubuf(zc);
	}
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, nr, len);
	return sock_sendmsg(sock, &msg);
}

/*
 * A bio_vec over len bytes of kernel memory at addr: only memory of the
 * kernel's direct map (kmalloc, pages) has a struct page behind it, which
 * virt_addr_valid() checks; anything else (stack, vmalloc) is refused.
 */
int srnic_bvec_virt(const void *addr, size_t len, struct bio_vec *bv)
{
	if (!len || len > UINT_MAX || !virt_addr_valid(addr) || !virt_addr_valid(addr + len - 1))
		return -EFAULT;
	bvec_set_virt(bv, (void *)addr, len);
	return 0;
}

/*
 * TCP_USER_TIMEOUT: the connection fails with ETIMEDOUT when sent data stays
 * unacknowledged, or the peer's receive window stays closed, for ms.
 */
void srnic_sock_set_user_timeout(struct socket *sock, unsigned int ms)
{
	tcp_sock_set_user_timeout(sock->sk, min_t(unsigned int, ms, INT_MAX));
}


/* Receives what has arrived without waiting (-EAGAIN when nothing has). */
int srnic_sock_recv(struct socket *sock, void *buf, size_t len)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
	struct kvec vec = { .iov_base = buf, .iov_len = len };

	return kernel_recvmsg(sock, &msg, &vec, 1, len, msg.msg_flags);
}

/* The callbacks a socket gets; sk_user_data points at this. */
struct srnic_sock_cb {
	srnic_sock_cb_fn fn;
	void *user;
	/* On srnic_socks while the callbacks are installed. */
	struct list_head node;
	struct sock *sk;
	/*
	 * Why srnic aborted the connection (ENETDOWN, set before tcp_abort), or
	 * 0: kept here because sk_err is read-and-cleared by whichever recvmsg
	 * or sendmsg meets it first, on any CPU.
	 */
	int abort_err;
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
static struct srnic_sock_cb *srnic_cb(struct sock *sk)
{
	return (struct srnic_sock_cb *)((uintptr_t)sk->sk_user_data & SK_USER_DATA_PTRMASK);
}

/*
 * The socket's error, 0 for none: why srnic aborted it (kept: see abort_err),
 * else its pending sk_err (read, not cleared).
 */
int srnic_sock_error(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct srnic_sock_cb *cb;
	int err = 0;

	read_lock_bh(&sk->sk_callback_lock);
	cb = srnic_cb(sk);
	if (cb)
		err = READ_ONCE(cb->abort_err);
	read_unlock_bh(&sk->sk_callback_lock);
	return err ?: READ_ONCE(sk->sk_err);
}

/*
 * Every socket with srnic's callbacks (listeners, connections starting up,
 * QPs' connections), for srnic_socks_netdev_down(). The mutex nests inside
 * RTNL (the netdevice notifier) and outside the socket's lock.
 */
static LIST_HEAD(srnic_socks);
static DEFINE_MUTEX(srnic_socks_lock);

#define SRNIC_SOCK_CALLBACK(name, field, event)					\
static void name(struct sock *sk)							\
{											\
	struct srnic_sock_cb *cb;							\
											\
	read_lock_bh(&sk->sk_callback_lock);						\
	cb = srnic_cb(sk);								\
	if (cb) {									\
		cb->field(sk);								\
		cb->fn(cb->user, event, sk);						\
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
	if (srnic_cb(sk)) {
		/* One owner of a socket's callbacks at a time. */
		write_unlock_bh(&sk->sk_callback_lock);
		kfree(cb);
		return -EBUSY;
	}
	cb->sk_data_ready = sk->sk_data_ready;
	cb->sk_write_space = sk->sk_write_space;
	cb->sk_state_change = sk->sk_state_change;
	/*
	 * Connections a listener accepts are cloned from it: NOCOPY keeps them
	 * from inheriting cb (srnic_sock_accept restores their callbacks).
	 */
	if (sk->sk_state == TCP_LISTEN)
		__rcu_assign_sk_user_data_with_flags(sk, cb, SK_USER_DATA_NOCOPY);
	else
		sk->sk_user_data = cb;
	sk->sk_data_ready = srnic_sk_data_ready;
	sk->sk_write_space = srnic_sk_write_space;
	sk->sk_state_change = srnic_sk_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	cb->sk = sk;
	mutex_lock(&srnic_socks_lock);
	list_add_tail(&cb->node, &srnic_socks);
	mutex_unlock(&srnic_socks_lock);
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
	cb = srnic_cb(sk);
	if (cb) {
		sk->sk_data_ready = cb->sk_data_ready;
		sk->sk_write_space = cb->sk_write_space;
		sk->sk_state_change = cb->sk_state_change;
		sk->sk_user_data = NULL;
		user = cb->user;
	}
	write_unlock_bh(&sk->sk_callback_lock);
	if (cb) {
		mutex_lock(&srnic_socks_lock);
		list_del(&cb->node);
		mutex_unlock(&srnic_socks_lock);
	}
	kfree(cb);
	return user;
}

/*
 * Whether sk's connection is IPv4: an IPv4 socket's, or an IPv6 socket's
 * with an IPv4-mapped address (a listener on [::] accepted it), whose
 * inet_saddr holds the IPv4 address as an IPv4 socket's does.
 */
static bool srnic_sk_ipv4(const struct sock *sk)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6)
		return ipv6_addr_v4mapped(&sk->sk_v6_rcv_saddr);
#endif
	return sk->sk_family == AF_INET;
}

/*
 * Whether the connection of sk goes through dev: it is bound to dev, or its
 * cached route leaves through dev, or (no route cached, or the cached one is
 * dead) its source address (IPv4 or IPv6) is one of dev's. A connection to
 * an address of this host goes through the loopback device, not through the
 * device holding the address.
 *
 * A dead route: when dev goes down, the FIB notifier (which runs before
 * srnic's) flushes dev's routes, and once an RCU grace period has passed the
 * routes cached in them are moved to blackhole_netdev (dst_dev_put), so the
 * cached route of a socket through dev may name blackhole_netdev by the time
 * srnic looks, depending on how fast the other CPUs pass the grace period.
 */
static bool srnic_sock_on_dev(struct sock *sk, struct net_device *dev)
{
	struct dst_entry *dst;
	struct net_device *via;
	struct in_device *in;
	const struct in_ifaddr *ifa;
	bool on = false;

	if (!net_eq(sock_net(sk), dev_net(dev)))
		return false;
	if (READ_ONCE(sk->sk_bound_dev_if))
		return READ_ONCE(sk->sk_bound_dev_if) == dev->ifindex;
	rcu_read_lock();
	dst = __sk_dst_get(sk);
	via = dst ? READ_ONCE(dst->dev) : NULL;
	if (via && via != blackhole_netdev) {
		on = via == dev;
	} else if (srnic_sk_ipv4(sk)) {
		in = __in_dev_get_rcu(dev);
		if (in) {
			in_dev_for_each_ifa_rcu(ifa, in) {
				if (ifa->ifa_local == READ_ONCE(inet_sk(sk)->inet_saddr))
					on = true;
			}
		}
#if IS_ENABLED(CONFIG_IPV6)
	} else if (sk->sk_family == AF_INET6) {
		on = ipv6_chk_addr(sock_net(sk), &sk->sk_v6_rcv_saddr, dev, 1);
#endif
	}
	rcu_read_unlock();
	return on;
}

/*
 * dev went down or away: every srnic connection through it is aborted with
 * ENETDOWN (a reset goes out if the device still can send it), as `ss -K`
 * would abort it. The owners learn it from their state-change callback and
 * the socket's error. Listeners stay: they are not tied to one device. Called
 * from the netdevice notifier (process context, RTNL held).
 */
void srnic_socks_netdev_down(struct net_device *dev)
{
	struct srnic_sock_cb *cb;
	int state;

	mutex_lock(&srnic_socks_lock);
	list_for_each_entry(cb, &srnic_socks, node) {
		state = inet_sk_state_load(cb->sk);
		if (state == TCP_LISTEN || state == TCP_CLOSE)
			continue;
		if (srnic_sock_on_dev(cb->sk, dev)) {
			WRITE_ONCE(cb->abort_err, ENETDOWN);
			tcp_abort(cb->sk, ENETDOWN);
		}
	}
	mutex_unlock(&srnic_socks_lock);
}

/*
 * Accepts one connection without waiting (-EAGAIN when none is queued). A
 * connection accepted from a listener with srnic's callbacks was cloned with
 * them (but without sk_user_data, see srnic_sock_set_callbacks): it gets the
 * listener's own callbacks back, so it starts as a plain TCP socket.
 */
int srnic_sock_accept(struct socket *lsock, struct socket **out)
{
	struct sock *lsk = lsock->sk, *sk;
	struct srnic_sock_cb *lcb, own;
	int err = kernel_accept(lsock, out, O_NONBLOCK);

	if (err)
		return err;
	sk = (*out)->sk;
	/* The listener's own callbacks; one callback lock at a time. */
	read_lock_bh(&lsk->sk_callback_lock);
	lcb = srnic_cb(lsk);
	if (lcb)
		own = *lcb;
	read_unlock_bh(&lsk->sk_callback_lock);
	if (!lcb)
		return 0;
	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_data_ready == srnic_sk_data_ready)
		sk->sk_data_ready = own.sk_data_ready;
	if (sk->sk_write_space == srnic_sk_write_space)
		sk->sk_write_space = own.sk_write_space;
	if (sk->sk_state_change == srnic_sk_state_change)
		sk->sk_state_change = own.sk_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	return 0;
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
 * Feeds everything queued on sk to fn, which returns how much it took (less
 * stops the read) or a negative error. Returns bytes consumed or the error.
 * The caller holds the socket's lock: it owns the socket (srnic_sock_lock),
 * or it is the socket's data-ready callback, which TCP calls with the lock
 * held (bh_lock_sock in softirq, owned while it processes the backlog).
 */
long srnic_sk_read(struct sock *sk, srnic_rx_fn fn, void *arg)
{
	struct srnic_rd rd = { .fn = fn, .arg = arg };
	read_descriptor_t desc = { .arg.data = &rd, .count = 1 };
	long n = tcp_read_sock(sk, &desc, srnic_rx_actor);

	return rd.err ? rd.err : n;
}

void srnic_sock_lock(struct socket *sock)
{
	lock_sock(sock->sk);
}

void srnic_sock_unlock(struct socket *sock)
{
	release_sock(sock->sk);
}

struct sock *srnic_sock_sk(struct socket *sock)
{
	return sock->sk;
}

/*
 * Whether no more data will come and none is left to read: the peer's FIN,
 * a reset or an error, with the receive queue drained. Data that arrived in
 * front of the end after the caller's last read (the peer's TERMINATE, say)
 * is still queued, and a reset does not discard it: the connection is not
 * over for the reader until that has been read. TCP queues a segment's data
 * before it marks the FIN, both under the socket lock, which the caller holds
 * (see srnic_sk_read), so it sees either the end with all data before it, or
 * no end.
 */
bool srnic_sk_closed(struct sock *sk)
{
	return (sk->sk_err || sk->sk_shutdown & RCV_SHUTDOWN || sk->sk_state != TCP_ESTABLISHED) &&
	       skb_queue_empty(&sk->sk_receive_queue);
}
