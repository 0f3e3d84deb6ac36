/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic C glue: what kernel::bindings cannot reach in 6.12. Every function is
 * declared here, defined in the C file beside the Rust abstraction in
 * rust/sys/ that wraps it once (socket.c for socket.rs, and so on; skb.c is
 * shared by socket.c and netdev.c).
 */
#ifndef SRNIC_GLUE_H
#define SRNIC_GLUE_H

#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/poll.h>
#include <linux/types.h>

struct kvec;

/*
 * Allocations on a user's behalf: charged to the caller's memory cgroup, and
 * refused (ENOMEM) rather than OOM-killing anyone beyond it (the same flags as
 * rust/sys/gfp.rs's ACCOUNTED).
 */
#define SRNIC_GFP_USER (GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

struct miscdevice;

/* rust/sys/miscdev.rs */
struct miscdevice *srnic_misc_register(const char *name, umode_t mode,
				       const struct file_operations *fops);
void srnic_misc_deregister(struct miscdevice *misc);

/* rust/sys/shared.rs: pages shared with a process that maps them */
struct page;
struct vm_area_struct;
void *srnic_shared_alloc(struct page **pages, unsigned int n);
void srnic_shared_free(void *addr, struct page **pages, unsigned int n);
struct vm_operations_struct;
int srnic_shared_mmap(struct vm_area_struct *vma, struct page **pages, unsigned int n,
		      const struct vm_operations_struct *ops, void *owner);

/* rust/sys/waitqueue.rs */
void srnic_poll_wait(struct file *file, wait_queue_head_t *wq, poll_table *pt);

/* rust/sys/socket.rs: TCP sockets (IPv4 and IPv6, the caller's network namespace) */
struct socket;
struct sock;
struct srnic_sockaddr;
int srnic_sock_listen(const struct srnic_sockaddr *a, int backlog, struct socket **out);
int srnic_sock_connect(const struct srnic_sockaddr *a, struct socket **out);
int srnic_sock_accept(struct socket *lsock, struct socket **out);
int srnic_sock_connect_result(struct socket *sock);
int srnic_sock_send_now(struct socket *sock, const void *buf, size_t len);
void srnic_sock_release(struct socket *sock);
void srnic_sock_shutdown(struct socket *sock, bool abort);
void srnic_sock_nodelay(struct socket *sock);
int srnic_sock_addrs(struct socket *sock, struct srnic_sockaddr *local, struct srnic_sockaddr *remote);
struct bio_vec;
struct srnic_zc;
int srnic_sock_send_bvec(struct socket *sock, const struct bio_vec *bv, size_t nr, size_t len,
			 bool more, bool eor, struct srnic_zc *zc);
int srnic_bvec_virt(const void *addr, size_t len, struct bio_vec *bv);
void srnic_sock_set_user_timeout(struct socket *sock, unsigned int ms);
int srnic_sock_error(struct socket *sock);
int srnic_sock_mss(struct socket *sock);
int srnic_sock_path_mss(struct socket *sock);
int srnic_sock_recv(struct socket *sock, void *buf, size_t len);

enum srnic_sock_event { SRNIC_SOCK_READABLE = 1, SRNIC_SOCK_WRITABLE = 2, SRNIC_SOCK_STATE = 3 };
/* sk is the socket the callback runs for; its lock is held (see srnic_sk_read). */
typedef void (*srnic_sock_cb_fn)(void *user, int event, struct sock *sk);
int srnic_sock_set_callbacks(struct socket *sock, srnic_sock_cb_fn fn, void *user);
void *srnic_sock_clear_callbacks(struct socket *sock);
typedef long (*srnic_rx_fn)(void *arg, const u8 *data, size_t len);
void srnic_sock_lock(struct socket *sock);
void srnic_sock_unlock(struct socket *sock);
struct sock *srnic_sock_sk(struct socket *sock);
long srnic_sk_read(struct sock *sk, srnic_rx_fn fn, void *arg);
bool srnic_sk_closed(struct sock *sk);

/* rust/sys/pages.rs: pinning user pages, charged to RLIMIT_MEMLOCK */
struct mm_struct;
struct page;
struct mm_struct *srnic_mm_get_current(void);
void srnic_mm_put(struct mm_struct *mm);
int srnic_mm_charge(struct mm_struct *mm, unsigned long npages);
void srnic_mm_uncharge(struct mm_struct *mm, unsigned long npages);
long srnic_pin_user_pages(unsigned long start, unsigned long npages, bool write, struct page **pages);
void srnic_unpin_user_pages(struct page **pages, unsigned long npages, bool dirty);
void srnic_get_page(struct page *page);
void srnic_put_page(struct page *page);
struct page *srnic_nth_page(struct page *page, unsigned long n);

/* rust/sys/module_ref.rs: references on srnic.ko */
void srnic_module_get(void);
void srnic_module_put(void);
int srnic_module_watch(void);
void srnic_module_unwatch(void);
/* Rust (rust/sys/module_ref.rs): a module is going away. */
void srnic_module_going(struct module *mod);

/* rust/sys/param.rs: module parameters */
unsigned int srnic_param_file_mem_mib(void);
unsigned int srnic_param_mpa_request_timeout_ms(void);
unsigned int srnic_param_tx_stall_timeout_ms(void);
unsigned int srnic_param_min_mss(void);
unsigned int srnic_param_zcopy_min(void);

/* rust/sys/crc.rs */
u32 srnic_crc32c(u32 crc, const void *data, unsigned int len);

/* rust/sys/gfp.rs */
unsigned int srnic_noio_save(void);
void srnic_noio_restore(unsigned int flags);

/* rust/sys/wq.rs */
struct workqueue_struct *srnic_alloc_wq(const char *name, bool data_path);

/* rust/sys/netdev.rs: raw Ethernet ports (Sandia RMPP), the caller's namespace */
struct srnic_port;
struct sk_buff;
struct net_device;
enum srnic_port_counter {
	SRNIC_PORT_RX_SHORT,
	SRNIC_PORT_RX_BAD_VERSION,
	SRNIC_PORT_RX_BAD_TYPE,
	SRNIC_PORT_RX_OTHER_NID,
	SRNIC_PORT_RX_QUEUE_FULL,
	SRNIC_PORT_NR_COUNTERS,
};
typedef void (*srnic_port_notify_fn)(void *owner);
/*
 * The frames a port's softirq handler lets through, from the protocol core
 * (rust/proto/src/rmpp/wire.rs, filled in by rust/rmpp/endpoint.rs): at least
 * hdr_len bytes, byte 0 equal to version, a type code t (byte 1) with bit t
 * set in types. Types with bit t set in replies travel to the message's
 * sender and name the endpoint's NID at offset 4, all others at offset 8.
 */
struct srnic_port_filter {
	u32 hdr_len;
	u32 version;
	u32 types;
	u32 replies;
};
struct srnic_port *srnic_port_open(const char *ifname, u16 ethertype, u32 nid, u32 qmax,
				   const struct srnic_port_filter *filter,
				   srnic_port_notify_fn notify, void *owner, int *err);
void *srnic_port_close(struct srnic_port *p);
int srnic_port_ifindex(struct srnic_port *p);
bool srnic_port_down(struct srnic_port *p);
int srnic_netdev_watch(void);
void srnic_netdev_unwatch(void);
void srnic_socks_netdev_down(struct net_device *dev);
size_t srnic_port_footprint(unsigned int mtu, u32 qmax);
void srnic_port_counters(struct srnic_port *p, u64 *out);
struct sk_buff *srnic_port_dequeue(struct srnic_port *p);
void srnic_port_arm(struct srnic_port *p, u64 delay_ns);
struct sk_buff *srnic_port_tx_alloc(struct srnic_port *p, const u8 *dst, unsigned int len,
				    u8 **data);
int srnic_port_tx_send(struct sk_buff *skb);
void srnic_skb_free(struct sk_buff *skb);
unsigned int srnic_skb_len(struct sk_buff *skb);
int srnic_skb_copy(struct sk_buff *skb, unsigned int off, void *to, unsigned int len);
long srnic_skb_read(struct sk_buff *skb, unsigned int off, size_t len, srnic_rx_fn fn, void *arg);
u64 srnic_now_ns(void);
void srnic_skb_src_mac(struct sk_buff *skb, u8 *mac);
bool srnic_net_admin(void);
int srnic_netdev_net_raw(const char *ifname);
int srnic_netdev_info(const char *ifname, unsigned int *mtu);

/* Zero-copy transmit notices (zcopy.c, wrapped by rust/sys/zcopy.rs). */
struct ubuf_info;
typedef void (*srnic_zc_fn)(void *owner, u64 cookie);
void srnic_zc_setup(struct workqueue_struct *wq);
struct srnic_zc *srnic_zc_new(srnic_zc_fn done, void *owner, u64 cookie);
void srnic_zc_put(struct srnic_zc *zc);
struct ubuf_info *srnic_zc_ubuf(struct srnic_zc *zc);
void srnic_zc_drain(void);
void *srnic_frag_alloc(unsigned int len);
void srnic_frag_free(void *addr);

/* Timers in process context (timer.c, wrapped by rust/sys/timer.rs). */
struct srnic_timer;
struct workqueue_struct;
typedef void (*srnic_timer_fn)(void *user);
struct srnic_timer *srnic_timer_new(srnic_timer_fn fn);
bool srnic_timer_arm(struct srnic_timer *t, struct workqueue_struct *wq, void *user,
		     unsigned int delay_ms);
bool srnic_timer_cancel(struct srnic_timer *t);
void srnic_timer_free(struct srnic_timer *t);

/* rust/sys/trace.rs: the tracepoints of srnic_trace.h */
struct srnic_sockaddr;
#define SRNIC_CM_TRACE_DECL(name)							\
void srnic_trace_##name(int pid, u32 id, const struct srnic_sockaddr *local,		\
			const struct srnic_sockaddr *remote, int status)
SRNIC_CM_TRACE_DECL(connect);
SRNIC_CM_TRACE_DECL(request);
SRNIC_CM_TRACE_DECL(accept);
SRNIC_CM_TRACE_DECL(reject);
SRNIC_CM_TRACE_DECL(rejected);
SRNIC_CM_TRACE_DECL(connect_error);
SRNIC_CM_TRACE_DECL(established);
SRNIC_CM_TRACE_DECL(qp_error);
SRNIC_CM_TRACE_DECL(disconnect);
void srnic_trace_terminate(bool received, int pid, u32 id, const struct srnic_sockaddr *local,
			   const struct srnic_sockaddr *remote, u8 layer, u8 etype, u8 ecode);
void srnic_trace_crc_error(int pid, u32 id, const struct srnic_sockaddr *local,
			   const struct srnic_sockaddr *remote, u32 received, u32 computed);
void srnic_trace_rmpp_retransmit(int pid, u32 id, int ifindex, u32 nid, u32 peer,
				 const u8 *peer_mac, u64 wr_id, u32 attempt);
void srnic_trace_rmpp_drop(int pid, u32 id, int ifindex, u32 nid, u32 peer, const char *reason);

/* rust/sys/sync.rs: the bottom-half-safe spinlock, whether the caller may sleep */
void srnic_spin_lock_bh(spinlock_t *lock);
void srnic_spin_unlock_bh(spinlock_t *lock);
bool srnic_may_sleep(void);

/* rust/sys/task.rs: who the caller is */
int srnic_current_tgid(void);
u32 srnic_current_euid(void);
bool srnic_sys_admin(void);

/* What srnic_skb_walk() hands the bytes to (skb.c). */
struct srnic_rd {
	srnic_rx_fn fn;
	void *arg;
	long err;
};

long srnic_skb_walk(struct sk_buff *skb, unsigned int off, size_t len, struct srnic_rd *rd);

/* rust/sys/rawip.rs: raw IPv4 sockets of one protocol (VMTP) */
struct srnic_rawip;
typedef void (*srnic_rawip_fn)(void *user);
int srnic_rawip_open(int protocol, struct srnic_rawip **out);
int srnic_rawip_attach(struct srnic_rawip *r, srnic_rawip_fn fn, void *user);
void *srnic_rawip_detach(struct srnic_rawip *r);
void srnic_rawip_release(struct srnic_rawip *r);
int srnic_rawip_recv(struct srnic_rawip *r, void *buf, size_t len, u8 src[4]);
int srnic_rawip_send(struct srnic_rawip *r, const u8 dst[4], const void *buf, size_t len);
bool srnic_rawip_in_current_net(struct srnic_rawip *r);
int srnic_ipv4_local_mtu(const u8 addr[4]);

#endif /* SRNIC_GLUE_H */
