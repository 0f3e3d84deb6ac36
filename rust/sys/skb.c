// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: walking a socket buffer's bytes, for socket.c (TCP receive)
 * and netdev.c (RMPP frames), which are wrapped in rust/sys/socket.rs and
 * rust/sys/netdev.rs.
 */
#include <linux/highmem.h>
#include <linux/skbuff.h>

#include "glue.h"

/*
 * Hands bytes [off, off + len) of skb to rd->fn in contiguous pieces: the
 * linear part, then each fragment page mapped with kmap_local_page() (which,
 * unlike skb_seq_read()'s kmap_atomic(), leaves fn free to sleep), then the
 * frag list. Returns the bytes fn took, or its error.
 */
long srnic_skb_walk(struct sk_buff *skb, unsigned int off, size_t len, struct srnic_rd *rd)
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
