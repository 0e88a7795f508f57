/*
 * coll_bench.c - time one MPI collective call for the collsim/SMPI comparison.
 *
 * Usage: coll_bench <allreduce|allreduce_noop|alltoall|bcast> <count>
 *   allreduce: MPI_Allreduce(MPI_SUM) of <count> MPI_DOUBLE per rank
 *   allreduce_noop: the same call with a user-defined commutative op that does
 *              nothing, so the host CPU does no arithmetic (extra variant that
 *              isolates SMPI's simulation cost; not one of the four cases)
 *   alltoall : MPI_Alltoall with sendcount=recvcount=<count> MPI_BYTE per pair
 *   bcast    : MPI_Bcast of <count> MPI_BYTE from rank 0
 *
 * Each rank runs MPI_Barrier, then times exactly one call of the collective
 * with MPI_Wtime (simulated time under SMPI). Rank 0 prints the maximum
 * per-rank duration, plus max(end)-min(start) as a cross-check.
 *
 * Buffers come from SMPI_SHARED_MALLOC under SMPI: all ranks share one
 * physical buffer, so a 256 x 16 MiB allreduce does not need 8 GiB of RAM and
 * SMPI skips payload copies. Payload contents are therefore meaningless; only
 * timing is measured. The program has no global variables, so it runs with
 * privatization disabled.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SMPI_SHARED_MALLOC
#define BUF_ALLOC(n) SMPI_SHARED_MALLOC(n)
#define BUF_FREE(p) SMPI_SHARED_FREE(p)
#else
#define BUF_ALLOC(n) malloc(n)
#define BUF_FREE(p) free(p)
#endif

/* Commutative reduction that leaves inoutvec untouched: same messages, no arithmetic. */
static void noop_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
  (void)in;
  (void)inout;
  (void)len;
  (void)dt;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  if (argc != 3) {
    if (rank == 0)
      fprintf(stderr, "usage: %s <allreduce|allreduce_noop|alltoall|bcast> <count>\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *coll = argv[1];
  long count = atol(argv[2]);
  if (count <= 0 || count > 0x7fffffffL) {
    if (rank == 0)
      fprintf(stderr, "coll_bench: count %s must be a positive int\n", argv[2]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  size_t sbytes, rbytes;
  int noop = strcmp(coll, "allreduce_noop") == 0;
  if (strcmp(coll, "allreduce") == 0 || noop) {
    sbytes = rbytes = (size_t)count * sizeof(double);
  } else if (strcmp(coll, "alltoall") == 0) {
    sbytes = rbytes = (size_t)count * (size_t)size;
  } else if (strcmp(coll, "bcast") == 0) {
    sbytes = (size_t)count;
    rbytes = 1;
  } else {
    if (rank == 0)
      fprintf(stderr, "coll_bench: unknown collective '%s' (want allreduce, allreduce_noop, alltoall or bcast)\n", coll);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
  MPI_Op op = MPI_SUM;
  if (noop)
    MPI_Op_create(noop_op, 1, &op);
  char *sbuf = BUF_ALLOC(sbytes);
  char *rbuf = BUF_ALLOC(rbytes);

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (coll[0] == 'a' && coll[3] == 'r')
    MPI_Allreduce(sbuf, rbuf, (int)count, MPI_DOUBLE, op, MPI_COMM_WORLD);
  else if (coll[0] == 'a')
    MPI_Alltoall(sbuf, (int)count, MPI_BYTE, rbuf, (int)count, MPI_BYTE, MPI_COMM_WORLD);
  else
    MPI_Bcast(sbuf, (int)count, MPI_BYTE, 0, MPI_COMM_WORLD);
  double t1 = MPI_Wtime();

  double dur = t1 - t0, maxdur, minstart, maxend;
  MPI_Reduce(&dur, &maxdur, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&t0, &minstart, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&t1, &maxend, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("RESULT coll=%s count=%ld P=%d max_rank_duration_s=%.9e span_s=%.9e min_start_s=%.9e max_end_s=%.9e\n",
           coll, count, size, maxdur, maxend - minstart, minstart, maxend);

  if (noop)
    MPI_Op_free(&op);
  BUF_FREE(sbuf);
  BUF_FREE(rbuf);
  MPI_Finalize();
  return 0;
}
