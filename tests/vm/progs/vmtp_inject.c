// SPDX-License-Identifier: GPL-2.0
/*
 * vmtp_inject: sends malformed VMTP packets (IP protocol 81) to a host
 * through a raw IPv4 socket, for the vmtp_bad_packets test.
 *
 *   vmtp_inject DST_IPV4 SERVER_DISCRIMINATOR KIND COUNT
 *
 * Every packet is a Request from client 0x12345678 on this host to the
 * server entity SERVER_DISCRIMINATOR on DST_IPV4 (RFC 1045, Appendix IV),
 * sent without a checksum (four zero bytes) unless KIND says otherwise. KIND:
 * short (20 bytes), badver (version 3), badlen (Length odd), checksum (a wrong
 * checksum), domain (entity domain 2), group (the GRP and EPG bits: multicast,
 * not implemented), malformed (PacketDelivery names a block past the
 * segment), unknown (a valid Request to discriminator + 1, which nobody has),
 * garbage (pseudo-random bytes of 200).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HDR 64

static void be32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

/* A Request of `len` data bytes (all of one block) to `server`. */
static int request(uint8_t *p, uint32_t client_addr, uint32_t disc, uint32_t server_addr,
		   uint32_t transaction, uint32_t len)
{
	uint32_t padded = (len + 7) / 8 * 8;

	memset(p, 0, HDR + padded + 4);
	be32(p, 0x12345678);			/* client: discriminator */
	memcpy(p + 4, &client_addr, 4);		/* client: address */
	be32(p + 8, 1u << 16 | padded / 4);	/* version 0, domain 1, Length */
	be32(p + 12, 0);			/* control: a Request */
	be32(p + 16, transaction);
	be32(p + 20, len ? 1 : 0);		/* PacketDelivery: block 0 */
	be32(p + 24, disc);			/* server: discriminator */
	memcpy(p + 28, &server_addr, 4);	/* server: address */
	be32(p + 32, (len ? 1u << 28 : 0) | 0x800001);	/* SDA, an application code */
	be32(p + 60, len);			/* SegmentSize */
	memset(p + HDR, 0x5a, len);
	return HDR + padded + 4;
}

int main(int argc, char **argv)
{
	uint8_t pkt[2048];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	uint32_t seed = 12345, me = htonl(INADDR_LOOPBACK);
	int fd, i, count, len;
	uint32_t disc;

	if (argc != 5 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: vmtp_inject DST_IPV4 SERVER_DISCRIMINATOR KIND COUNT\n");
		return 2;
	}
	disc = strtoul(argv[2], NULL, 0);
	count = atoi(argv[4]);
	fd = socket(AF_INET, SOCK_RAW, 81);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	for (i = 0; i < count; i++) {
		const char *k = argv[3];
		uint32_t t = 1000 + i;

		len = request(pkt, me, disc, sa.sin_addr.s_addr, t, 100);
		if (!strcmp(k, "short")) {
			len = 20;
		} else if (!strcmp(k, "badver")) {
			pkt[8] |= 3 << 5;
		} else if (!strcmp(k, "badlen")) {
			pkt[11] |= 1;
		} else if (!strcmp(k, "checksum")) {
			be32(pkt + len - 4, 0x12345678);
		} else if (!strcmp(k, "domain")) {
			pkt[9] = 2;
		} else if (!strcmp(k, "group")) {
			pkt[24] |= 0x40;		/* GRP */
			pkt[10] |= 0x40;		/* EPG */
		} else if (!strcmp(k, "malformed")) {
			be32(pkt + 20, 1u << 5);	/* block 5 of a 100-byte segment */
		} else if (!strcmp(k, "unknown")) {
			be32(pkt + 24, disc + 1);
		} else if (!strcmp(k, "garbage")) {
			int j;

			for (j = 0; j < 200; j++) {
				seed = seed * 1103515245 + 12345;
				pkt[j] = seed >> 16;
			}
			len = 200;
		} else {
			fprintf(stderr, "vmtp_inject: unknown kind %s\n", k);
			return 2;
		}
		if (sendto(fd, pkt, len, 0, (struct sockaddr *)&sa, sizeof(sa)) != len) {
			perror("sendto");
			return 1;
		}
	}
	printf("vmtp_inject: sent %d %s packets\n", count, argv[3]);
	return 0;
}
