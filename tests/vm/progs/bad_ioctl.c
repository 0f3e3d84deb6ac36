// SPDX-License-Identifier: GPL-2.0
/*
 * bad_ioctl: checks that /dev/srnic answers every malformed call with the right
 * errno (ENOTTY, EFAULT, EINVAL, E2BIG, EAGAIN; EPERM and EACCES for an
 * executable mapping of a CQ's ring) and a well-formed one with success, in
 * each size a structure has had.
 * Prints one "ok"/"not ok" line per check; exits 1 if any check failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "srnic.h"

/* The last word of srnic_query_device.reserved, whatever its length. */
#define LAST_RESERVED (sizeof(((struct srnic_query_device *)0)->reserved) / sizeof(__u64) - 1)

static int failures, n;

static void expect(const char *what, long ret, int want_errno)
{
	int got = ret < 0 ? errno : 0;

	n++;
	if (got == want_errno) {
		printf("ok %d %s -> %s\n", n, what, want_errno ? strerror(want_errno) : "success");
	} else {
		printf("not ok %d %s -> got %s (%d), want %s\n", n, what,
		       got ? strerror(got) : "success", got,
		       want_errno ? strerror(want_errno) : "success");
		failures++;
	}
}

static void check(const char *what, int cond)
{
	n++;
	printf("%s %d %s\n", cond ? "ok" : "not ok", n, what);
	if (!cond)
		failures++;
}

static struct srnic_query_device fresh(void)
{
	struct srnic_query_device q;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	return q;
}

int main(void)
{
	struct srnic_query_device q;
	struct srnic_event ev;
	/* Never mapped (the zero page); volatile so the compiler does not object. */
	void *volatile nowhere = (void *)16;
	struct pollfd pfd;
	char buf[64];
	void *ro, *gone;
	int fd;

	fd = open("/dev/srnic", O_RDWR | O_NONBLOCK);
	if (fd < 0) {
		perror("open /dev/srnic");
		return 1;
	}

	q = fresh();
	expect("QUERY_DEVICE well-formed", ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, &q), 0);
	n++;
	if (q.abi_version == SRNIC_ABI_VERSION && q.size == sizeof(q) && !q.reserved[0] &&
	    !q.reserved[LAST_RESERVED] && q.page_size >= 4096 && !(q.capabilities & ~SRNIC_CAP_ALL)) {
		printf("ok %d QUERY_DEVICE output sane (abi %u, page %u)\n", n, q.abi_version,
		       q.page_size);
	} else {
		printf("not ok %d QUERY_DEVICE output (abi %u, size %u)\n", n, q.abi_version, q.size);
		failures++;
	}

	/* ENOTTY: unknown numbers under our magic, and foreign commands. */
	q = fresh();
	expect("unknown nr 0x7f", ioctl(fd, _IOWR(SRNIC_IOCTL_MAGIC, 0x7f, struct srnic_query_device), &q), ENOTTY);
	expect("unknown nr 0xff", ioctl(fd, _IOWR(SRNIC_IOCTL_MAGIC, 0xff, struct srnic_query_device), &q), ENOTTY);
	expect("foreign magic", ioctl(fd, _IOWR('x', 0x00, struct srnic_query_device), &q), ENOTTY);
	expect("TCGETS", ioctl(fd, 0x5401, buf), ENOTTY);

	/* EINVAL: a known number with the wrong size or direction encoded. */
	expect("size 96 encoded", ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, SRNIC_IOCTL_MAGIC, 0, 96), &q), EINVAL);
	expect("size 112 encoded", ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, SRNIC_IOCTL_MAGIC, 0, 112), &q), EINVAL);
	expect("_IOR direction", ioctl(fd, _IOR(SRNIC_IOCTL_MAGIC, 0, struct srnic_query_device), &q), EINVAL);
	expect("_IO no argument", ioctl(fd, _IO(SRNIC_IOCTL_MAGIC, 0), 0), EINVAL);

	/* EINVAL: wrong size field, non-zero reserved fields. */
	q = fresh();
	q.size = 8;
	expect("size field 8", ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, &q), EINVAL);
	q.size = sizeof(q) + 8;
	expect("size field too big", ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, &q), EINVAL);
	q = fresh();
	q.reserved[0] = 1;
	expect("reserved[0] set", ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, &q), EINVAL);
	q = fresh();
	q.reserved[LAST_RESERVED] = 1ULL << 63;
	expect("last reserved word set", ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, &q), EINVAL);

	/*
	 * Structures grow by size (uapi.rst, "Structures grow"): srnic_stats'
	 * first version (SRNIC_STATS_SIZE_V1 bytes) is answered in its size, the
	 * bytes after it untouched; a larger one whose extra bytes are zero is
	 * answered too, E2BIG when they are not; less than the first version and
	 * a size field that is not the encoded size are EINVAL.
	 */
	{
		unsigned char st[sizeof(struct srnic_stats) + 16];
		__u32 sz;
		size_t i;
		int untouched = 1;

		memset(st, 0, sizeof(st));
		memset(st + SRNIC_STATS_SIZE_V1, 0xa5, sizeof(st) - SRNIC_STATS_SIZE_V1);
		sz = SRNIC_STATS_SIZE_V1;
		memcpy(st, &sz, sizeof(sz));
		expect("QUERY_STATS, the first version's size",
		       ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, SRNIC_IOCTL_MAGIC, 0x12, SRNIC_STATS_SIZE_V1), st), 0);
		for (i = SRNIC_STATS_SIZE_V1; i < sizeof(st); i++)
			untouched &= st[i] == 0xa5;
		check("QUERY_STATS, the first version's size: nothing written beyond it", untouched);
		memset(st, 0, sizeof(st));
		sz = sizeof(struct srnic_stats) + 16;
		memcpy(st, &sz, sizeof(sz));
		expect("QUERY_STATS, a newer (larger) structure, its extra bytes zero",
		       ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, SRNIC_IOCTL_MAGIC, 0x12, sizeof(st)), st), 0);
		st[sizeof(st) - 1] = 1;
		expect("QUERY_STATS, a newer structure asking for more (an extra byte set)",
		       ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, SRNIC_IOCTL_MAGIC, 0x12, sizeof(st)), st), E2BIG);
		memset(st, 0, sizeof(st));
		sz = SRNIC_STATS_SIZE_V1 - 8;
		memcpy(st, &sz, sizeof(sz));
		expect("QUERY_STATS, smaller than the first version",
		       ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, SRNIC_IOCTL_MAGIC, 0x12, SRNIC_STATS_SIZE_V1 - 8), st), EINVAL);
		sz = sizeof(struct srnic_stats);
		memcpy(st, &sz, sizeof(sz));
		expect("QUERY_STATS, size field other than the encoded size",
		       ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, SRNIC_IOCTL_MAGIC, 0x12, SRNIC_STATS_SIZE_V1), st), EINVAL);
	}

	/* EFAULT: NULL, unmapped, kernel and read-only argument pointers. */
	expect("NULL argument", ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, NULL), EFAULT);
	gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);
	expect("unmapped argument", ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, gone), EFAULT);
	expect("kernel address", ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, (void *)0xffffffff81000000UL), EFAULT);
	expect("argument straddling the end of memory", ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, (void *)(UINTPTR_MAX - 16)), EFAULT);
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = fresh();
	memcpy(ro, &q, sizeof(q));
	mprotect(ro, 4096, PROT_READ);
	expect("read-only argument (output fails)", ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, ro), EFAULT);

	/*
	 * A CQ's ring (struct srnic_cq_ring): what mmap() refuses, a poller's
	 * impossible consumer index (its own loss, nothing else), and a ring
	 * that outlives its CQ until munmap(), still counted in the file's
	 * kernel memory (QUERY_DEVICE kernel_mem) until then.
	 */
	{
		long pg = sysconf(_SC_PAGESIZE);
		__u64 mem0, mem1;
		struct srnic_create_cq cc;
		struct srnic_handle_arg h;
		struct srnic_poll_cq pc;
		struct srnic_wc wc[4];
		volatile struct srnic_cq_ring *r;
		void *m;

		q = fresh();
		ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, &q);
		mem0 = q.kernel_mem;
		memset(&cc, 0, sizeof(cc));
		cc.size = sizeof(cc);
		cc.cqe = 64;
		expect("CREATE_CQ (64 entries)", ioctl(fd, SRNIC_IOCTL_CREATE_CQ, &cc), 0);
		check("CREATE_CQ: a ring of whole pages for the header and 64 entries (two pages)",
		      cc.ring_bytes >= sizeof(struct srnic_cq_ring) + 64 * sizeof(struct srnic_wc) &&
		      cc.ring_bytes % pg == 0 && cc.ring_bytes >= 2 * pg);
#define MAP(len, prot, flags, off) mmap(NULL, len, prot, flags, fd, off)
#define EXPECT_MAP_FAILS(what, m, err) do { \
		void *mm_ = (m); \
		expect(what, mm_ == MAP_FAILED ? -1 : 0, err); \
		if (mm_ != MAP_FAILED) \
			munmap(mm_, cc.ring_bytes); \
	} while (0)
		EXPECT_MAP_FAILS("mmap the ring executable",
				 MAP(cc.ring_bytes, PROT_READ | PROT_EXEC, MAP_SHARED, cc.ring_offset), EPERM);
		EXPECT_MAP_FAILS("mmap the ring private",
				 MAP(cc.ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, cc.ring_offset), EINVAL);
		EXPECT_MAP_FAILS("mmap more than the ring",
				 MAP(cc.ring_bytes + pg, PROT_READ | PROT_WRITE, MAP_SHARED, cc.ring_offset), EINVAL);
		EXPECT_MAP_FAILS("mmap at the offset of no CQ",
				 MAP(cc.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, cc.ring_offset + 4096 * pg), EINVAL);
		m = MAP(cc.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, cc.ring_offset);
		expect("mmap the ring", m == MAP_FAILED ? -1 : 0, 0);
		if (m != MAP_FAILED) {
			r = m;
			check("the ring's header: 64 entries, empty", r->cqe == 64 && r->prod == 0 && r->cons == 0);
			expect("mprotect the ring executable", mprotect(m, cc.ring_bytes, PROT_READ | PROT_EXEC), EACCES);
			memset(&pc, 0, sizeof(pc));
			pc.size = sizeof(pc);
			pc.cq_handle = cc.cq_handle;
			pc.num_entries = 4;
			pc.wc_ptr = (__u64)(uintptr_t)wc;
			r->cons = 0xffffffff;
			expect("POLL_CQ with an impossible cons", ioctl(fd, SRNIC_IOCTL_POLL_CQ, &pc), 0);
			check("POLL_CQ with an impossible cons: nothing taken", pc.num_entries == 0);
			r->cons = 0;
			memset(&h, 0, sizeof(h));
			h.size = sizeof(h);
			h.handle = cc.cq_handle;
			/* A forked child's copy of the mapping (vm_ops->open). */
			{
				pid_t child = fork();
				int st = -1;

				if (child == 0)
					_exit(r->cqe == 64 ? 0 : 1);
				waitpid(child, &st, 0);
				check("a forked child reads the ring", child > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
			}
			expect("DESTROY_CQ while its ring is mapped", ioctl(fd, SRNIC_IOCTL_DESTROY_CQ, &h), 0);
			check("the ring is still readable after DESTROY_CQ", r->cqe == 64);
			q = fresh();
			ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, &q);
			mem1 = q.kernel_mem;
			check("the mapped ring still counts in kernel_mem after DESTROY_CQ",
			      mem1 >= mem0 + cc.ring_bytes);
			/* Split: the second page goes, the first (the header) stays. */
			expect("munmap the ring's second page", munmap((char *)m + pg, pg), 0);
			check("the header page is still readable", r->cqe == 64);
			q = fresh();
			ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, &q);
			check("the ring still counts in kernel_mem while a part is mapped", q.kernel_mem == mem1);
			expect("munmap the rest of the ring", munmap(m, pg), 0);
			q = fresh();
			ioctl(fd, SRNIC_IOCTL_QUERY_DEVICE, &q);
			n++;
			if (q.kernel_mem == mem0) {
				printf("ok %d munmap gives the ring's charge back (kernel_mem %llu)\n", n,
				       (unsigned long long)q.kernel_mem);
			} else {
				printf("not ok %d kernel_mem after munmap: %llu, before CREATE_CQ %llu (%llu while mapped)\n",
				       n, (unsigned long long)q.kernel_mem, (unsigned long long)mem0,
				       (unsigned long long)mem1);
				failures++;
			}
			EXPECT_MAP_FAILS("mmap the destroyed CQ's ring",
					 MAP(cc.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, cc.ring_offset), EINVAL);
		}
#undef EXPECT_MAP_FAILS
#undef MAP
	}

	/* The event path with nothing pending. */
	expect("read, O_NONBLOCK, nothing pending", read(fd, &ev, sizeof(ev)), EAGAIN);
	expect("read into less than one event record", read(fd, buf, sizeof(buf)), EINVAL);
	expect("read into an unmapped buffer", read(fd, nowhere, sizeof(ev)), EAGAIN);
	memset(buf, 0, sizeof(buf));
	expect("write of a record naming no QP", write(fd, buf, sizeof(struct srnic_post_wr)), EINVAL);
	expect("write of a truncated record", write(fd, buf, sizeof(struct srnic_post_wr) - 1), EINVAL);
	expect("write from an unmapped buffer", write(fd, nowhere, sizeof(struct srnic_post_wr)), EFAULT);
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	n++;
	if (poll(&pfd, 1, 0) == 0) {
		printf("ok %d poll: nothing readable\n", n);
	} else {
		printf("not ok %d poll: revents %#x\n", n, pfd.revents);
		failures++;
	}

	close(fd);
	printf("%d checks, %d failed\n", n, failures);
	return failures ? 1 : 0;
}
