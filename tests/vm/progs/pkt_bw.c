// SPDX-License-Identifier: GPL-2.0
/*
 * pkt_bw: raw Ethernet bandwidth and frame rate through AF_PACKET sockets
 * with memory-mapped rings (TPACKET_V2), the baseline of make bench's
 * rmpp_bw and rmpp_rate rows: what a program that moves bytes in frames,
 * with no protocol and no reliability, gets across the same link as srnic's
 * RMPP.
 *
 *   pkt_bw recv IFACE BYTES IDLE_MS      receives frames of EtherType 0x88B6
 *                                        until BYTES of payload arrived, or
 *                                        IDLE_MS passed without a frame once
 *                                        the first came (the link lost some);
 *                                        gives up when none came in 60 s
 *   pkt_bw send IFACE DSTMAC BYTES [FRAME]
 *                                        sends BYTES of payload in frames of
 *                                        FRAME payload bytes (8 to IFACE's
 *                                        MTU; default the MTU) through a TX
 *                                        ring
 *
 * The receiver prints one line, its figure timed from the first frame to the
 * last:
 *   pkt_bw: recv bytes B frames F lost_bytes L time_s T mib_s R
 * and the sender:
 *   pkt_bw: send bytes B frames F time_s T mib_s R
 * Each frame's payload starts with its sequence number (the receiver counts
 * frames out of order or twice as nothing new). Exit status 0, or 1 with a
 * message: nothing arrived, or a system call failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* IEEE 802 local experimental EtherType 2 (RMPP uses experimental 1, 0x88B5). */
#define PKT_BW_ETHERTYPE 0x88B6
/* How long the receiver waits for the first frame. */
#define FIRST_FRAME_MS 60000
/* Ring geometry: frames of 2 KiB (an Ethernet frame of MTU 1500 and the
 * TPACKET_V2 header), 1024 of them in blocks of 16 pages. */
#define FRAME_SIZE 2048
#define BLOCK_SIZE (16 * 4096)
#define FRAME_NR 1024

static void die(const char *what)
{
	fprintf(stderr, "pkt_bw: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A socket of PKT_BW_ETHERTYPE bound to ifname with a TPACKET_V2 ring of
 * kind (PACKET_RX_RING or PACKET_TX_RING) mapped at *ring. */
static int open_ring(const char *ifname, int kind, uint8_t **ring, int *ifindex, int *mtu)
{
	struct tpacket_req req = {
		.tp_block_size = BLOCK_SIZE,
		.tp_block_nr = FRAME_NR * FRAME_SIZE / BLOCK_SIZE,
		.tp_frame_size = FRAME_SIZE,
		.tp_frame_nr = FRAME_NR,
	};
	struct sockaddr_ll sa = { 0 };
	struct ifreq ifr = { 0 };
	int v = TPACKET_V2, fd;

	fd = socket(AF_PACKET, SOCK_RAW, htons(PKT_BW_ETHERTYPE));
	if (fd < 0)
		die("socket(AF_PACKET)");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0)
		die(ifname);
	*ifindex = ifr.ifr_ifindex;
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		die("SIOCGIFMTU");
	*mtu = ifr.ifr_mtu;
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0)
		die("PACKET_VERSION");
	if (setsockopt(fd, SOL_PACKET, kind, &req, sizeof(req)) < 0)
		die(kind == PACKET_RX_RING ? "PACKET_RX_RING" : "PACKET_TX_RING");
	*ring = mmap(NULL, (size_t)FRAME_NR * FRAME_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*ring == MAP_FAILED)
		die("mmap");
	sa.sll_family = AF_PACKET;
	sa.sll_protocol = htons(PKT_BW_ETHERTYPE);
	sa.sll_ifindex = *ifindex;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind");
	return fd;
}

static struct tpacket2_hdr *slot(uint8_t *ring, unsigned int i)
{
	return (struct tpacket2_hdr *)(ring + (size_t)(i % FRAME_NR) * FRAME_SIZE);
}

static int do_recv(const char *ifname, unsigned long long want, int idle_ms)
{
	unsigned long long bytes = 0, frames = 0, dup = 0, next_seq = 0;
	double first = 0, last = 0;
	int ifindex, mtu, fd;
	unsigned int i = 0;
	uint8_t *ring;

	fd = open_ring(ifname, PACKET_RX_RING, &ring, &ifindex, &mtu);
	printf("pkt_bw: recv ready\n");
	fflush(stdout);
	while (bytes < want) {
		struct tpacket2_hdr *h = slot(ring, i);

		if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			int r = poll(&p, 1, frames ? idle_ms : FIRST_FRAME_MS);

			if (r < 0 && errno != EINTR)
				die("poll");
			if (r == 0)
				break;	/* the rest was lost */
			continue;
		}
		if (h->tp_snaplen > ETH_HLEN + 8) {
			const uint8_t *payload = (const uint8_t *)h + h->tp_mac + ETH_HLEN;
			uint64_t seq;

			memcpy(&seq, payload, sizeof(seq));
			last = now_s();
			if (!frames)
				first = last;
			frames++;
			if (seq >= next_seq) {
				bytes += h->tp_len - ETH_HLEN;
				next_seq = seq + 1;
			} else {
				dup++;
			}
		}
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		i++;
	}
	if (!frames) {
		fprintf(stderr, "pkt_bw: nothing arrived\n");
		return 1;
	}
	printf("pkt_bw: recv bytes %llu frames %llu lost_bytes %llu time_s %.6f mib_s %.3f\n", bytes,
	       frames - dup, want > bytes ? want - bytes : 0, last - first,
	       last > first ? bytes / (last - first) / 1048576.0 : 0.0);
	return 0;
}

static int do_send(const char *ifname, const char *mac_s, unsigned long long want,
		   unsigned long frame)
{
	unsigned long long sent = 0, frames = 0;
	struct ether_header eh;
	int ifindex, mtu, fd;
	unsigned int i = 0, queued = 0;
	uint8_t *ring, mac[6];
	double t0, t1;

	if (sscanf(mac_s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
		   &mac[5]) != 6) {
		fprintf(stderr, "pkt_bw: bad MAC address '%s'\n", mac_s);
		return 2;
	}
	fd = open_ring(ifname, PACKET_TX_RING, &ring, &ifindex, &mtu);
	if ((size_t)mtu + ETH_HLEN > FRAME_SIZE - TPACKET2_HDRLEN)
		mtu = (int)(FRAME_SIZE - TPACKET2_HDRLEN - ETH_HLEN);
	if (frame) {
		if (frame < 8 || frame > (unsigned long)mtu) {
			fprintf(stderr, "pkt_bw: frame payload %lu is not within 8 to %d\n", frame, mtu);
			return 2;
		}
		mtu = (int)frame;
	}
	memcpy(eh.ether_dhost, mac, 6);
	{
		struct ifreq ifr = { 0 };

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
		if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
			die("SIOCGIFHWADDR");
		memcpy(eh.ether_shost, ifr.ifr_hwaddr.sa_data, 6);
	}
	eh.ether_type = htons(PKT_BW_ETHERTYPE);
	t0 = now_s();
	while (sent < want) {
		struct tpacket2_hdr *h = slot(ring, i);
		unsigned int len = want - sent < (unsigned long long)mtu ? want - sent : (unsigned int)mtu;
		uint8_t *f;

		if (len < 8)
			len = 8;	/* room for the sequence number */
		if (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE) {
			/* The ring is full: hand it over and wait for room. */
			if (send(fd, NULL, 0, 0) < 0 && errno != ENOBUFS && errno != EAGAIN)
				die("send");
			queued = 0;
			continue;
		}
		f = (uint8_t *)h + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll);
		memcpy(f, &eh, ETH_HLEN);
		memcpy(f + ETH_HLEN, &frames, sizeof(frames));
		memset(f + ETH_HLEN + 8, (int)(frames & 0xff), len - 8);
		h->tp_len = ETH_HLEN + len;
		__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
		sent += len;
		frames++;
		i++;
		if (++queued == 64) {
			if (send(fd, NULL, 0, MSG_DONTWAIT) < 0 && errno != ENOBUFS && errno != EAGAIN)
				die("send");
			queued = 0;
		}
	}
	/* The last frames, and wait until the ring has sent all. */
	if (send(fd, NULL, 0, 0) < 0 && errno != ENOBUFS)
		die("send");
	t1 = now_s();
	printf("pkt_bw: send bytes %llu frames %llu time_s %.6f mib_s %.3f\n", sent, frames, t1 - t0,
	       t1 > t0 ? sent / (t1 - t0) / 1048576.0 : 0.0);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "recv"))
		return do_recv(argv[2], strtoull(argv[3], NULL, 0), atoi(argv[4]));
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "send"))
		return do_send(argv[2], argv[3], strtoull(argv[4], NULL, 0),
			       argc == 6 ? strtoul(argv[5], NULL, 0) : 0);
	fprintf(stderr,
		"usage: pkt_bw recv IFACE BYTES IDLE_MS | pkt_bw send IFACE DSTMAC BYTES [FRAME]\n");
	return 2;
}
