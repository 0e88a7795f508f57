/* The Open MPI side of collsim's real-run comparisons: one collective of
 * uint64 elements, timed as the OSU micro-benchmarks time it (warm-up
 * calls, then timed calls with a barrier before each; the average over
 * ranks of each rank's average; a barrier after each call too, as OSU's
 * osu_bcast has and collsim's real runs have), and its result checked.
 *
 * Usage: ompi_coll COLLECTIVE BYTES ITERATIONS WARMUP, where COLLECTIVE is
 * allreduce (sums), bcast (from rank 0), alltoall (BYTES in all per rank,
 * BYTES/P to each) or pingpong (ranks 0 and 1, 1,000 round trips a timed
 * iteration; the time printed is one way). Prints "BYTES AVG_SECONDS
 * MIN_SECONDS MAX_SECONDS". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t word(int rank, long i) { return (uint64_t)rank * 1000003u + (uint64_t)i; }

static void fail(int rank, const char *what) {
    fprintf(stderr, "rank %d: wrong result (%s)\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc != 5) {
        fprintf(stderr, "usage: %s allreduce|bcast|alltoall|pingpong BYTES ITERATIONS WARMUP\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *coll = argv[1];
    long bytes = atol(argv[2]);
    int iters = atoi(argv[3]), warmup = atoi(argv[4]);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = bytes / 8, per = n / size;
    uint64_t *in = malloc((n + 1) * sizeof *in), *out = malloc((n + 1) * sizeof *out);
    const int rounds = 1000;
    double sum = 0;
    for (int it = 0; it < warmup + iters; it++) {
        for (long i = 0; i < n; i++) in[i] = word(rank, i), out[i] = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (!strcmp(coll, "allreduce")) {
            MPI_Allreduce(in, out, n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        } else if (!strcmp(coll, "bcast")) {
            MPI_Bcast(rank == 0 ? in : out, n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        } else if (!strcmp(coll, "alltoall")) {
            MPI_Alltoall(in, per, MPI_UINT64_T, out, per, MPI_UINT64_T, MPI_COMM_WORLD);
        } else if (!strcmp(coll, "pingpong")) {
            for (int k = 0; k < rounds && rank < 2; k++) {
                if (rank == 0) {
                    MPI_Send(in, n, MPI_UINT64_T, 1, k, MPI_COMM_WORLD);
                    MPI_Recv(out, n, MPI_UINT64_T, 1, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(out, n, MPI_UINT64_T, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(out, n, MPI_UINT64_T, 0, k, MPI_COMM_WORLD);
                }
            }
        } else {
            if (rank == 0) fprintf(stderr, "unknown collective %s\n", coll);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        double t = MPI_Wtime() - t0;
        /* Every rank out of the call before any starts the next
         * iteration's work, as the OSU benchmarks and collsim's real runs
         * do. */
        MPI_Barrier(MPI_COMM_WORLD);
        if (!strcmp(coll, "pingpong")) t /= 2.0 * rounds;
        if (it >= warmup) sum += t;
    }
    /* Check every element against what the call must produce. */
    for (long i = 0; i < n; i++) {
        if (!strcmp(coll, "allreduce")) {
            uint64_t want = 0;
            for (int r = 0; r < size; r++) want += word(r, i);
            if (out[i] != want) fail(rank, coll);
        } else if (!strcmp(coll, "bcast")) {
            if (rank != 0 && out[i] != word(0, i)) fail(rank, coll);
        } else if (!strcmp(coll, "alltoall")) {
            if (i < per * size && out[i] != word((int)(i / per), rank * per + i % per)) fail(rank, coll);
        } else if (rank < 2 && out[i] != word(0, i)) {
            fail(rank, coll);
        }
    }
    double avg = sum / iters, mn, mx, total;
    if (!strcmp(coll, "pingpong")) {
        /* Only ranks 0 and 1 take part: report rank 0's time. */
        MPI_Bcast(&avg, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        mn = mx = avg, total = avg * size;
    } else {
        MPI_Reduce(&avg, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&avg, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&avg, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    if (rank == 0) printf("%ld %.9f %.9f %.9f\n", bytes, total / size, mn, mx);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
