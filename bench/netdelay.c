/* netdelay: a fixed one-way delay for the packets of one NFQUEUE queue,
 * for kernels without sch_netem (bench/netns.sh uses it only then).
 *
 *   netdelay --queue N --delay-us D --stats FILE
 *
 * An iptables rule (`-A INPUT -i zcv -j NFQUEUE --queue-num N`, no
 * --queue-bypass) hands every packet arriving on the namespace's veth to
 * this process; it does not copy the packet (NFQNL_COPY_META, GSO packets
 * whole: NFQA_CFG_F_GSO), notes the time it learned of it, and accepts it
 * D microseconds later. The kernel keeps the packet meanwhile and delivers
 * it when accepted (the rate shaping was the sender's tbf). With a constant
 * delay the packets leave in the order they came, so one batch verdict
 * (NFQNL_MSG_VERDICT_BATCH: every id up to N) releases all that are due.
 *
 * Accuracy: a packet leaves at least D after this process read it; it reads
 * it some microseconds after the kernel queued it (a wake-up), and releases
 * it some microseconds after it is due (a timer and a wake-up). The process
 * runs SCHED_FIFO with 1 ns timer slack, so busy ranks do not delay it by a
 * scheduler slice. FILE (rewritten every 0.5 s and at exit) states how late
 * the releases were (mean and max microseconds past due); the read-side lag
 * is not seen here (bench/netns.sh check measures the whole round trip). If this
 * process dies the rule drops every packet (fail closed), so a dead daemon
 * shows up as a hung job, never as an undelayed link.
 *
 * SIGUSR1: write FILE now. SIGTERM / SIGINT / SIGHUP: accept everything
 * still held, write FILE, exit 0.
 * Raw netlink, no library: linux-libc-dev's headers only.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RING (1u << 18) /* packets held at most (also the kernel queue's maxlen) */

static volatile sig_atomic_t stop, dump;
static int fd;
static uint16_t qnum;
static const char *stats_path;

struct held { uint32_t id; uint64_t due; };
static struct held ring[RING];
static uint32_t head, count;

static struct {
  uint64_t packets, released, batches, lateness_sum_ns, lateness_max_ns;
  uint64_t enobufs, errors, ring_full;
} st;
static uint64_t delay_ns;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void die(const char *what) {
  fprintf(stderr, "netdelay: error: %s: %s\n", what, strerror(errno));
  exit(1);
}

/* One nfnetlink queue message: nlmsghdr + nfgenmsg + attributes. */
struct msg { char buf[256]; size_t len; };

static void msg_init(struct msg *m, uint8_t type, uint16_t flags) {
  memset(m, 0, sizeof *m);
  struct nlmsghdr *nh = (struct nlmsghdr *)m->buf;
  nh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
  nh->nlmsg_flags = NLM_F_REQUEST | flags;
  struct nfgenmsg *g = (struct nfgenmsg *)NLMSG_DATA(nh);
  g->nfgen_family = AF_UNSPEC;
  g->version = NFNETLINK_V0;
  g->res_id = htons(qnum);
  m->len = NLMSG_LENGTH(sizeof *g);
}

static void msg_attr(struct msg *m, uint16_t type, const void *data, size_t n) {
  struct nlattr *a = (struct nlattr *)(m->buf + NLMSG_ALIGN(m->len));
  a->nla_type = type;
  a->nla_len = NLA_HDRLEN + n;
  memcpy((char *)a + NLA_HDRLEN, data, n);
  m->len = NLMSG_ALIGN(m->len) + NLA_ALIGN(a->nla_len);
}

static void msg_send(struct msg *m) {
  struct nlmsghdr *nh = (struct nlmsghdr *)m->buf;
  nh->nlmsg_len = m->len;
  struct sockaddr_nl k = {.nl_family = AF_NETLINK};
  if (sendto(fd, m->buf, m->len, 0, (struct sockaddr *)&k, sizeof k) < 0) die("sendto");
}

/* Sends a config message and waits for its ack. */
static void config(struct msg *m) {
  msg_send(m);
  char buf[8192];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0) die("recv (config ack)");
    for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
      if (nh->nlmsg_type == NLMSG_ERROR) {
        struct nlmsgerr *e = (struct nlmsgerr *)NLMSG_DATA(nh);
        if (e->error == 0) return;
        errno = -e->error;
        die("NFQUEUE config (is the queue bound by another process?)");
      }
    }
  }
}

static void write_stats(const char *state) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", stats_path);
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  double mean = st.released ? st.lateness_sum_ns / 1e3 / st.released : 0.0;
  fprintf(f, "state %s\nqueue %u\ndelay_us %.1f\npackets %llu\nreleased %llu\nheld %u\n"
          "batches %llu\nlate_mean_us %.1f\nlate_max_us %.1f\nenobufs %llu\nerrors %llu\n"
          "ring_full %llu\n",
          state, qnum, delay_ns / 1e3, (unsigned long long)st.packets,
          (unsigned long long)st.released, count, (unsigned long long)st.batches, mean,
          st.lateness_max_ns / 1e3, (unsigned long long)st.enobufs,
          (unsigned long long)st.errors, (unsigned long long)st.ring_full);
  fclose(f);
  rename(tmp, stats_path);
}

/* Accepts every held packet due by `t` (all of them if t == UINT64_MAX). */
static void release(uint64_t t) {
  uint32_t n = 0;
  uint64_t now = now_ns();
  while (n < count && ring[(head + n) % RING].due <= t) {
    uint64_t due = ring[(head + n) % RING].due;
    uint64_t late = now > due ? now - due : 0;
    if (t != UINT64_MAX) {
      st.lateness_sum_ns += late;
      if (late > st.lateness_max_ns) st.lateness_max_ns = late;
    }
    n++;
  }
  if (!n) return;
  struct msg m;
  msg_init(&m, NFQNL_MSG_VERDICT_BATCH, 0);
  struct nfqnl_msg_verdict_hdr v = {.verdict = htonl(NF_ACCEPT),
                                    .id = htonl(ring[(head + n - 1) % RING].id)};
  msg_attr(&m, NFQA_VERDICT_HDR, &v, sizeof v);
  msg_send(&m);
  head = (head + n) % RING;
  count -= n;
  st.released += n;
  st.batches++;
}

/* Reads every message waiting on the socket; returns when none is left. */
static void drain(void) {
  static char buf[1 << 16];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      if (errno == ENOBUFS) { st.enobufs++; continue; } /* the kernel dropped some */
      die("recv");
    }
    uint64_t t = now_ns();
    for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
      if (nh->nlmsg_type == NLMSG_ERROR) {
        struct nlmsgerr *e = (struct nlmsgerr *)NLMSG_DATA(nh);
        if (e->error) st.errors++;
        continue;
      }
      if (nh->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET)) continue;
      int len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct nfgenmsg));
      struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(nh) + NLMSG_ALIGN(sizeof(struct nfgenmsg)));
      for (; len >= (int)sizeof *a && a->nla_len >= sizeof *a && a->nla_len <= len;
           len -= NLA_ALIGN(a->nla_len), a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
        if ((a->nla_type & NLA_TYPE_MASK) != NFQA_PACKET_HDR) continue;
        struct nfqnl_msg_packet_hdr *ph = (struct nfqnl_msg_packet_hdr *)((char *)a + NLA_HDRLEN);
        if (count == RING) { st.ring_full++; release(UINT64_MAX - 1); }
        ring[(head + count) % RING] = (struct held){ntohl(ph->packet_id), t + delay_ns};
        count++;
        st.packets++;
        break;
      }
    }
  }
}

static void on_signal(int sig) {
  if (sig == SIGUSR1) dump = 1;
  else stop = 1;
}

int main(int argc, char **argv) {
  long queue = -1;
  double delay_us = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--queue")) queue = strtol(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--delay-us")) delay_us = strtod(argv[i + 1], NULL);
    else if (!strcmp(argv[i], "--stats")) stats_path = argv[i + 1];
    else { queue = -1; break; }
  }
  if (queue < 0 || queue > 65535 || delay_us < 0 || !stats_path || argc != 7) {
    fprintf(stderr, "usage: netdelay --queue N --delay-us D --stats FILE\n");
    return 2;
  }
  qnum = (uint16_t)queue;
  delay_ns = (uint64_t)(delay_us * 1e3);

  struct sched_param sp = {.sched_priority = 10};
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
    fprintf(stderr, "netdelay: warning: no SCHED_FIFO (%s): releases may be late by a "
            "scheduler slice on busy CPUs\n", strerror(errno));
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
  if (fd < 0) die("socket(NETLINK_NETFILTER)");
  int rb = 8 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof rb) != 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof rb);
  struct sockaddr_nl me = {.nl_family = AF_NETLINK};
  if (bind(fd, (struct sockaddr *)&me, sizeof me) != 0) die("bind");

  struct msg m;
  msg_init(&m, NFQNL_MSG_CONFIG, NLM_F_ACK);
  struct nfqnl_msg_config_cmd cmd = {.command = NFQNL_CFG_CMD_BIND, .pf = htons(AF_INET)};
  msg_attr(&m, NFQA_CFG_CMD, &cmd, sizeof cmd);
  config(&m);
  msg_init(&m, NFQNL_MSG_CONFIG, NLM_F_ACK);
  struct nfqnl_msg_config_params par = {.copy_range = htonl(0), .copy_mode = NFQNL_COPY_META};
  msg_attr(&m, NFQA_CFG_PARAMS, &par, sizeof par);
  uint32_t maxlen = htonl(RING), gso = htonl(NFQA_CFG_F_GSO);
  msg_attr(&m, NFQA_CFG_QUEUE_MAXLEN, &maxlen, sizeof maxlen);
  msg_attr(&m, NFQA_CFG_MASK, &gso, sizeof gso);
  msg_attr(&m, NFQA_CFG_FLAGS, &gso, sizeof gso);
  config(&m);

  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  /* Signals only interrupt ppoll: no race between the check and the wait. */
  sigset_t block, during;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGHUP);
  sigaddset(&block, SIGUSR1);
  sigprocmask(SIG_BLOCK, &block, &during);
  sigdelset(&during, SIGTERM);
  sigdelset(&during, SIGINT);
  sigdelset(&during, SIGHUP);
  sigdelset(&during, SIGUSR1);

  write_stats("running");
  uint64_t next_stats = now_ns() + 500000000u;
  struct pollfd pfd = {.fd = fd, .events = POLLIN};
  while (!stop) {
    uint64_t t = now_ns();
    release(t);
    if (t >= next_stats || dump) {
      dump = 0;
      write_stats("running");
      next_stats = t + 500000000u;
    }
    uint64_t until = next_stats;
    if (count && ring[head].due < until) until = ring[head].due;
    uint64_t wait = until > t ? until - t : 0;
    struct timespec ts = {.tv_sec = wait / 1000000000u, .tv_nsec = wait % 1000000000u};
    int r = ppoll(&pfd, 1, &ts, &during);
    if (r < 0 && errno != EINTR) die("ppoll");
    if (r > 0) drain();
  }
  release(UINT64_MAX);
  write_stats("stopped");
  return 0;
}
