// SPDX-License-Identifier: GPL-2.0
/*
 * rmpp_inject: sends malformed Sandia RMPP frames (EtherType 0x88B5) on a
 * netdev through an AF_PACKET socket, for the rmpp_bad_frames test.
 *
 *   rmpp_inject IFACE DSTMAC KIND COUNT
 *
 * KIND: short (20 bytes), badver (version 9), badtype (type 77), garbage
 * (pseudo-random bytes with a bad version), unknown_nid (a valid RTS from NID
 * 500, not in the node table), far_nid (from NID 70000), other_nid (an RTS for
 * NID 900), truncated (plen says 1000, 10 bytes follow), malformed (a LAST RTS
 * whose plen differs from its message length), spoof (a valid 4-byte LAST RTS
 * from NID 3 to NID 1: sent from a host whose MAC is not NID 3's in the node
 * table).
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void be32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

/* An RMPP header: version 1, type, plen, src, dst, msgID, msgNum, len. */
static void header(uint8_t *h, uint8_t type, uint16_t plen, uint32_t src, uint32_t dst,
		   uint32_t msg_id, uint32_t len)
{
	memset(h, 0, 44);
	h[0] = 1;
	h[1] = type;
	h[2] = plen >> 8;
	h[3] = plen & 0xff;
	be32(h + 4, src);
	be32(h + 8, dst);
	be32(h + 12, msg_id);
	be32(h + 16, 0);
	be32(h + 20, len);
}

int main(int argc, char **argv)
{
	uint8_t frame[1514], mac[6];
	struct sockaddr_ll sa = { 0 };
	uint32_t seed = 12345;
	int fd, i, count, len;

	if (argc != 5 || sscanf(argv[2], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2],
				&mac[3], &mac[4], &mac[5]) != 6) {
		fprintf(stderr, "usage: rmpp_inject IFACE DSTMAC KIND COUNT\n");
		return 2;
	}
	count = atoi(argv[4]);
	fd = socket(AF_PACKET, SOCK_DGRAM, htons(0x88B5));
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	sa.sll_family = AF_PACKET;
	sa.sll_protocol = htons(0x88B5);
	sa.sll_ifindex = if_nametoindex(argv[1]);
	sa.sll_halen = 6;
	memcpy(sa.sll_addr, mac, 6);
	if (!sa.sll_ifindex) {
		perror("if_nametoindex");
		return 1;
	}
	for (i = 0; i < count; i++) {
		uint8_t *h = frame;
		const char *k = argv[3];

		memset(frame, 0, sizeof(frame));
		if (!strcmp(k, "short")) {
			header(h, 1, 0, 1, 2, 7, 0);
			len = 20;
		} else if (!strcmp(k, "badver")) {
			header(h, 2, 4, 1, 2, 7, 4);
			h[0] = 9;
			len = 48;
		} else if (!strcmp(k, "badtype")) {
			header(h, 77, 0, 1, 2, 7, 0);
			len = 44;
		} else if (!strcmp(k, "garbage")) {
			int j;

			for (j = 0; j < 200; j++) {
				seed = seed * 1103515245 + 12345;
				frame[j] = seed >> 16;
			}
			frame[0] = 0xAA;
			len = 200;
		} else if (!strcmp(k, "unknown_nid")) {
			header(h, 2, 4, 500, 2, 1000 + i, 4);
			len = 48;
		} else if (!strcmp(k, "far_nid")) {
			header(h, 2, 4, 70000, 2, 1000 + i, 4);
			len = 48;
		} else if (!strcmp(k, "other_nid")) {
			header(h, 2, 4, 1, 900, 1000 + i, 4);
			len = 48;
		} else if (!strcmp(k, "truncated")) {
			header(h, 1, 1000, 1, 2, 1000 + i, 5000);
			len = 54;
		} else if (!strcmp(k, "spoof")) {
			header(h, 2, 4, 3, 1, 2000 + i, 4);
			len = 48;
		} else if (!strcmp(k, "malformed")) {
			header(h, 2, 4, 1, 2, 1000 + i, 9);
			len = 48;
		} else {
			fprintf(stderr, "rmpp_inject: unknown kind %s\n", k);
			return 2;
		}
		if (sendto(fd, frame, len, 0, (struct sockaddr *)&sa, sizeof(sa)) != len) {
			perror("sendto");
			return 1;
		}
	}
	printf("rmpp_inject: sent %d %s frames\n", count, argv[3]);
	return 0;
}
