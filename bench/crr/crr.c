/*
 * crr.c - a tight TCP connect/request/response/close reference loop (the TCP_CRR yardstick
 * for cnperf's built-in generator; see docs/performance.md).
 *
 *   crr server PORT [BIND_ADDR] [THREADS]
 *   crr client HOST PORT SECONDS [FLOWS] [rst]
 *
 * Client: FLOWS threads each loop { socket; connect; write 1 byte; read 1 byte; close } for
 * SECONDS and the program prints "connections=N seconds=S rate=R close=graceful|rst".
 * Graceful close: the client closes first (FIN) and keeps TIME_WAIT, like netperf TCP_CRR;
 * rst: SO_LINGER 0, close sends RST. Server: THREADS threads block in accept() on one
 * listening socket, read the request, write the response, wait for the client's close and
 * close. IPv4 only; blocking sockets; no timers in the loop except a stop flag.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop_flag;
static struct sockaddr_in target;
static int use_rst;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *client_flow(void *arg)
{
	long *count = arg;
	char b = 'x';
	struct linger lg = {1, 0};
	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			perror("socket");
			exit(1);
		}
		if (use_rst && setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) < 0) {
			perror("SO_LINGER");
			exit(1);
		}
		if (connect(fd, (struct sockaddr *)&target, sizeof target) < 0) {
			perror("connect");
			exit(1);
		}
		if (write(fd, &b, 1) != 1) {
			perror("write");
			exit(1);
		}
		if (read(fd, &b, 1) != 1) {
			perror("read");
			exit(1);
		}
		close(fd);
		(*count)++;
	}
	return NULL;
}

static int listen_fd;

static void *server_thread(void *arg)
{
	(void)arg;
	char b, tail[64];
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("accept");
			exit(1);
		}
		if (read(fd, &b, 1) == 1 && write(fd, &b, 1) == 1) {
			while (read(fd, tail, sizeof tail) > 0)
				;
		}
		close(fd);
	}
	return NULL;
}

static int server(int argc, char **argv)
{
	int port = atoi(argv[2]);
	const char *bind_addr = argc > 3 ? argv[3] : "0.0.0.0";
	int threads = argc > 4 ? atoi(argv[4]) : 16;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	int one = 1;
	if (inet_pton(AF_INET, bind_addr, &a.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", bind_addr);
		return 2;
	}
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(listen_fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(listen_fd, 4096) < 0) {
		perror("bind/listen");
		return 1;
	}
	fprintf(stderr, "crr server listening on %s:%d\n", bind_addr, port);
	pthread_t t;
	for (int i = 1; i < threads; i++)
		pthread_create(&t, NULL, server_thread, NULL);
	server_thread(NULL);
	return 0;
}

static int client(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: crr client HOST PORT SECONDS [FLOWS] [rst]\n");
		return 2;
	}
	target.sin_family = AF_INET;
	target.sin_port = htons(atoi(argv[3]));
	if (inet_pton(AF_INET, argv[2], &target.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", argv[2]);
		return 2;
	}
	double secs = atof(argv[4]);
	int flows = argc > 5 ? atoi(argv[5]) : 1;
	use_rst = argc > 6 && strcmp(argv[6], "rst") == 0;
	if (flows < 1 || flows > 1024 || secs <= 0) {
		fprintf(stderr, "bad flows or seconds\n");
		return 2;
	}
	pthread_t *t = calloc(flows, sizeof *t);
	long *counts = calloc(flows * 16, sizeof *counts); /* one cache line apart */
	double t0 = now();
	for (int i = 0; i < flows; i++)
		pthread_create(&t[i], NULL, client_flow, &counts[i * 16]);
	struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
	nanosleep(&ts, NULL);
	atomic_store(&stop_flag, 1);
	long total = 0;
	for (int i = 0; i < flows; i++) {
		pthread_join(t[i], NULL);
		total += counts[i * 16];
	}
	double el = now() - t0;
	printf("connections=%ld seconds=%.6f rate=%.1f close=%s\n", total, el, total / el, use_rst ? "rst" : "graceful");
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 3 && strcmp(argv[1], "server") == 0)
		return server(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "client") == 0)
		return client(argc, argv);
	fprintf(stderr, "usage: crr server PORT [BIND] [THREADS] | crr client HOST PORT SECONDS [FLOWS] [rst]\n");
	return 2;
}
