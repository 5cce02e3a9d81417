/* netprobe: what the link between 2 MPI ranks costs (bench/netns.sh check).
 *
 *   mpirun -np 2 netprobe [BYTES]        (default 100000000)
 *
 * Rank 0 prints, one "name value" per line:
 *   rtt_us       median round trip of a 1-byte ping-pong (100 of them)
 *   oneway_s     BYTES from rank 0 to rank 1 (MPI_Send, then a 1-byte ack),
 *                the faster of 2 tries
 *   allreduce_s  MPI_Allreduce of BYTES of floats, the faster of 2 tries
 *   started_us   median time of a started 1-float-per-rank reduce-scatter
 *                (MPI_Ireduce_scatter_block, then MPI_Wait; 100 of them)
 *   zeroc_flags  the cost model for `zeroc compile` (zero-bucket): alpha is
 *                started_us (one ring step at 2 ranks), the bandwidth is
 *                BYTES over oneway_s
 * The faster try: noise (a busy CPU) only slows a transfer, and the check
 * compares with the least time the link's rate allows.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, w;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &w);
  if (w != 2) {
    if (r == 0) fprintf(stderr, "netprobe: needs 2 ranks, got %d\n", w);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long n = argc > 1 ? atol(argv[1]) : 100000000L;
  n -= n % 4;
  if (n < 4) n = 4;
  char *a = malloc(n), *b = malloc(n);
  if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(a, 1, n);
  memset(b, 0, n);
  int o = 1 - r;
  char x = 0;
  enum { PINGS = 100 };
  double rtt[PINGS];
  for (int i = -10; i < PINGS; i++) {  /* 10 to warm up (connections) */
    double t = MPI_Wtime();
    if (r == 0) {
      MPI_Send(&x, 1, MPI_CHAR, o, 0, MPI_COMM_WORLD);
      MPI_Recv(&x, 1, MPI_CHAR, o, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&x, 1, MPI_CHAR, o, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&x, 1, MPI_CHAR, o, 0, MPI_COMM_WORLD);
    }
    if (i >= 0) rtt[i] = MPI_Wtime() - t;
  }
  qsort(rtt, PINGS, sizeof rtt[0], cmp);
  double oneway = 1e30, allreduce = 1e30;
  for (int k = 0; k < 2; k++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    if (r == 0) {
      MPI_Send(a, n, MPI_CHAR, o, 1, MPI_COMM_WORLD);
      MPI_Recv(&x, 1, MPI_CHAR, o, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(b, n, MPI_CHAR, o, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&x, 1, MPI_CHAR, o, 2, MPI_COMM_WORLD);
    }
    t = MPI_Wtime() - t;
    if (t < oneway) oneway = t;
  }
  for (int k = 0; k < 2; k++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    MPI_Allreduce(a, b, (int)(n / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    t = MPI_Wtime() - t;
    if (t < allreduce) allreduce = t;
  }
  double started[PINGS];
  float one[2] = {1.0f, 1.0f}, got = 0.0f;
  for (int i = -10; i < PINGS; i++) {
    MPI_Request req;
    double t = MPI_Wtime();
    MPI_Ireduce_scatter_block(one, &got, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (i >= 0) started[i] = MPI_Wtime() - t;
  }
  qsort(started, PINGS, sizeof started[0], cmp);
  if (r == 0) {
    double alpha = started[PINGS / 2] * 1e6, gbps = 8.0 * (double)n / oneway / 1e9;
    printf("rtt_us %.1f\noneway_s %.6f\nallreduce_s %.6f\nstarted_us %.1f\n",
           rtt[PINGS / 2] * 1e6, oneway, allreduce, alpha);
    printf("zeroc_flags --comm-alpha-us %.3g --comm-gbps %.3g\n",
           alpha > 0.001 ? alpha : 0.001, gbps);
  }
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
