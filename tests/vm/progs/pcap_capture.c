// SPDX-License-Identifier: GPL-2.0
/*
 * pcap_capture: a minimal packet capture for the test VMs (busybox has none,
 * and tcpdump or dumpcap would pull a dozen libraries into the initramfs).
 *
 *   pcap_capture IFACE OUT.pcap PORT_LO PORT_HI
 *
 * Captures, with an AF_PACKET socket, every IPv4 TCP frame on IFACE (both
 * directions) whose source or destination port is in [PORT_LO, PORT_HI], whole
 * (snap length 262144, enough for GRO-merged frames), into a classic pcap file
 * (link type Ethernet, microsecond timestamps). Runs until SIGINT or SIGTERM,
 * then prints "pcap_capture: N frames, D dropped" (the socket's drop counter) to
 * stderr and exits 0, or 1 if the kernel dropped frames.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define SNAPLEN 262144

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct pcap_hdr {
	uint32_t magic, ver, zone, sigfigs, snaplen, linktype;
} __attribute__((packed));

struct pcap_rec {
	uint32_t sec, usec, incl, orig;
} __attribute__((packed));

/* Whether the Ethernet frame is IPv4 TCP with a port in [lo, hi]. */
static int wanted(const unsigned char *f, size_t n, unsigned lo, unsigned hi)
{
	size_t ihl;
	unsigned sp, dp;

	if (n < 14 + 20 || f[12] != 0x08 || f[13] != 0x00)
		return 0;
	if ((f[14] >> 4) != 4 || f[14 + 9] != 6)
		return 0;
	ihl = (size_t)(f[14] & 15) * 4;
	if (ihl < 20 || n < 14 + ihl + 4)
		return 0;
	sp = (unsigned)f[14 + ihl] << 8 | f[14 + ihl + 1];
	dp = (unsigned)f[14 + ihl + 2] << 8 | f[14 + ihl + 3];
	return (sp >= lo && sp <= hi) || (dp >= lo && dp <= hi);
}

int main(int argc, char **argv)
{
	static unsigned char buf[SNAPLEN];
	struct pcap_hdr h = { 0xa1b2c3d4, 0x00040002, 0, 0, SNAPLEN, 1 };
	struct sockaddr_ll sll = { 0 };
	struct tpacket_stats st = { 0 };
	socklen_t stlen = sizeof(st);
	struct sigaction sa = { 0 };
	unsigned long frames = 0;
	unsigned lo, hi;
	int fd, rcvbuf = 8 << 20;
	FILE *out;

	if (argc != 5) {
		fprintf(stderr, "usage: %s IFACE OUT.pcap PORT_LO PORT_HI\n", argv[0]);
		return 2;
	}
	lo = (unsigned)atoi(argv[3]);
	hi = (unsigned)atoi(argv[4]);
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(argv[1]);
	if (!sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		perror(argv[1]);
		return 1;
	}
	out = fopen(argv[2], "wb");
	if (!out || fwrite(&h, sizeof(h), 1, out) != 1) {
		perror(argv[2]);
		return 1;
	}
	fflush(out);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Readiness for the caller: the socket is bound, nothing is missed now. */
	fprintf(stderr, "pcap_capture: capturing on %s\n", argv[1]);

	while (!stop) {
		struct pollfd p = { fd, POLLIN, 0 };
		struct pcap_rec r;
		struct timeval tv;
		ssize_t n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			perror("recv");
			return 1;
		}
		if (!wanted(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf), lo, hi))
			continue;
		gettimeofday(&tv, NULL);
		r.sec = (uint32_t)tv.tv_sec;
		r.usec = (uint32_t)tv.tv_usec;
		r.orig = (uint32_t)n;
		r.incl = (size_t)n < sizeof(buf) ? (uint32_t)n : (uint32_t)sizeof(buf);
		if (fwrite(&r, sizeof(r), 1, out) != 1 || fwrite(buf, r.incl, 1, out) != 1) {
			perror(argv[2]);
			return 1;
		}
		frames++;
	}
	if (fclose(out)) {
		perror(argv[2]);
		return 1;
	}
	getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &stlen);
	fprintf(stderr, "pcap_capture: %lu frames, %u dropped\n", frames, st.tp_drops);
	return st.tp_drops ? 1 : 0;
}
