// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: raw IPv4 sockets of one IP protocol (VMTP, protocol 81, which
 * no in-kernel protocol handler claims), made in the calling process's
 * network namespace; wrapped once in rust/sys/rawip.rs.
 *
 * The kernel adds the IP header on send (no IP_HDRINCL) with the route's
 * source address; on receive, a raw socket gets each datagram of its protocol
 * addressed to the host (reassembled), IP header included. Its receive queue
 * is bounded by sk_rcvbuf like any socket's: a flood costs the sender its
 * datagrams, not the host its memory.
 */
#include <linux/in.h>
#include <linux/inetdevice.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <net/sock.h>

#include "glue.h"

struct srnic_rawip {
	struct socket *sock;
	srnic_rawip_fn fn;
	void *user;
	/* The socket's own data-ready callback, restored on detach. */
	void (*sk_data_ready)(struct sock *sk);
};

/* Softirq (or the process that releases the socket's lock): only tells. */
static void srnic_rawip_data_ready(struct sock *sk)
{
	struct srnic_rawip *r;

	read_lock_bh(&sk->sk_callback_lock);
	r = sk->sk_user_data;
	if (r && r->fn)
		r->fn(r->user);
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * A raw IPv4 socket of protocol in the caller's network namespace, which it
 * holds as a user socket would, owned by the caller's uid (see
 * srnic_sock_new in socket.c). No callback yet.
 */
int srnic_rawip_open(int protocol, struct srnic_rawip **out)
{
	struct srnic_rawip *r = kzalloc(sizeof(*r), SRNIC_GFP_USER);
	int err;

	if (!r)
		return -ENOMEM;
	err = sock_create_kern(current->nsproxy->net_ns, AF_INET, SOCK_RAW, protocol, &r->sock);
	if (err) {
		kfree(r);
		return err;
	}
	sk_net_refcnt_upgrade(r->sock->sk);
	*out = r;
	return 0;
}

/* Calls fn(user) whenever a datagram is queued; -EBUSY if already attached. */
int srnic_rawip_attach(struct srnic_rawip *r, srnic_rawip_fn fn, void *user)
{
	struct sock *sk = r->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data) {
		write_unlock_bh(&sk->sk_callback_lock);
		return -EBUSY;
	}
	r->fn = fn;
	r->user = user;
	r->sk_data_ready = sk->sk_data_ready;
	sk->sk_user_data = r;
	sk->sk_data_ready = srnic_rawip_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	return 0;
}

/*
 * Removes the callback; when this returns it does not run and will not.
 * Returns the user pointer that was attached, or NULL.
 */
void *srnic_rawip_detach(struct srnic_rawip *r)
{
	struct sock *sk = r->sock->sk;
	void *user = NULL;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data == r) {
		sk->sk_data_ready = r->sk_data_ready;
		sk->sk_user_data = NULL;
		user = r->user;
		r->fn = NULL;
		r->user = NULL;
	}
	write_unlock_bh(&sk->sk_callback_lock);
	return user;
}

void srnic_rawip_release(struct srnic_rawip *r)
{
	srnic_rawip_detach(r);
	sock_release(r->sock);
	kfree(r);
}

/*
 * Takes one queued datagram without waiting: copies up to len bytes of it (IP
 * header first) to buf and its source address to src. Returns the
 * datagram's whole length (more than len: it was cut), or -EAGAIN when none
 * is queued.
 */
int srnic_rawip_recv(struct srnic_rawip *r, void *buf, size_t len, u8 src[4])
{
	struct sockaddr_in sin = {};
	struct msghdr msg = { .msg_name = &sin, .msg_namelen = sizeof(sin) };
	struct kvec vec = { .iov_base = buf, .iov_len = len };
	int n = kernel_recvmsg(r->sock, &msg, &vec, 1, len, MSG_DONTWAIT | MSG_TRUNC);

	if (n >= 0)
		memcpy(src, &sin.sin_addr, 4);
	return n;
}

/*
 * Sends len bytes at buf as one datagram to dst without waiting (-EAGAIN
 * when the socket's send buffer is full). Returns the bytes sent or -errno.
 */
int srnic_rawip_send(struct srnic_rawip *r, const u8 dst[4], const void *buf, size_t len)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct msghdr msg = {
		.msg_name = &sin,
		.msg_namelen = sizeof(sin),
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL,
	};
	struct kvec vec = { .iov_base = (void *)buf, .iov_len = len };

	memcpy(&sin.sin_addr, dst, 4);
	return kernel_sendmsg(r->sock, &msg, &vec, 1, len);
}

/* Whether the socket lives in the caller's network namespace. */
bool srnic_rawip_in_current_net(struct srnic_rawip *r)
{
	return net_eq(sock_net(r->sock->sk), current->nsproxy->net_ns);
}

/*
 * The MTU of the local interface that owns addr in the caller's network
 * namespace; -EADDRNOTAVAIL when no interface there has it.
 */
int srnic_ipv4_local_mtu(const u8 addr[4])
{
	struct net_device *dev;
	__be32 a;
	int mtu;

	memcpy(&a, addr, 4);
	dev = ip_dev_find(current->nsproxy->net_ns, a);
	if (!dev)
		return -EADDRNOTAVAIL;
	mtu = READ_ONCE(dev->mtu);
	dev_put(dev);
	return mtu;
}
