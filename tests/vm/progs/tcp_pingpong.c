// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_pingpong: the plain-TCP row of `make bench`'s latency table, measured
 * as perftest's ib_send_lat measures its own: a ping-pong of SIZE-byte
 * messages over one connection (TCP_NODELAY), each round trip timed with
 * CLOCK_MONOTONIC, and the typical (median) one-way latency reported as half
 * the median round trip, in microseconds.
 *
 *   tcp_pingpong -s [-p PORT] [-n ITERS] [-z SIZE]        the server (echoes)
 *   tcp_pingpong -c ADDR [-p PORT] [-n ITERS] [-z SIZE]   the client (reports)
 *
 * The client prints one line:
 *   tcp_pingpong: size SIZE iters ITERS typical_usec T min_usec M max_usec X
 * Both sides exit 0 after ITERS round trips, 1 on any error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE 65536

static int full(int fd, char *buf, size_t len, int wr)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = wr ? write(fd, buf + done, len - done) :
				 read(fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr, "usage: tcp_pingpong -s|-c ADDR [-p PORT] [-n ITERS] [-z SIZE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	int server = 0, port = 18600, iters = 1000, size = 4, opt, fd, one = 1;
	static char buf[MAX_SIZE];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	double *rtt;

	while ((opt = getopt(argc, argv, "sc:p:n:z:h")) != -1) {
		switch (opt) {
		case 's': server = 1; break;
		case 'c': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case 'z': size = atoi(optarg); break;
		default: usage();
		}
	}
	if (server == !!addr || iters <= 0 || size <= 0 || size > MAX_SIZE || port <= 0 || port > 65535)
		usage();
	sa.sin_port = htons((unsigned short)port);
	if (server) {
		int ls = socket(AF_INET, SOCK_STREAM, 0);

		sa.sin_addr.s_addr = htonl(INADDR_ANY);
		if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1)) {
			perror("tcp_pingpong: listen");
			return 1;
		}
		fd = accept(ls, NULL, NULL);
		close(ls);
	} else {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1 ||
		    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			perror("tcp_pingpong: connect");
			return 1;
		}
	}
	if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
		perror("tcp_pingpong: socket");
		return 1;
	}
	rtt = calloc((size_t)iters, sizeof(*rtt));
	if (!rtt)
		return 1;
	memset(buf, 0x5a, sizeof(buf));
	for (int i = 0; i < iters; i++) {
		double t0 = now_us();

		if (server ? full(fd, buf, (size_t)size, 0) || full(fd, buf, (size_t)size, 1) :
			     full(fd, buf, (size_t)size, 1) || full(fd, buf, (size_t)size, 0)) {
			fprintf(stderr, "tcp_pingpong: connection ended after %d round trips\n", i);
			return 1;
		}
		rtt[i] = now_us() - t0;
	}
	close(fd);
	if (!server) {
		qsort(rtt, (size_t)iters, sizeof(*rtt), cmp);
		printf("tcp_pingpong: size %d iters %d typical_usec %.2f min_usec %.2f max_usec %.2f\n",
		       size, iters, rtt[iters / 2] / 2, rtt[0] / 2, rtt[iters - 1] / 2);
	}
	free(rtt);
	return 0;
}
