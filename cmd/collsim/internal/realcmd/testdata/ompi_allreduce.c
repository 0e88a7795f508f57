/* The Open MPI side of collsim's real-run comparison: MPI_Allreduce of
 * uint64 sums, timed as the OSU micro-benchmarks time it (warm-up calls,
 * then timed calls with a barrier before each; the average over ranks of
 * each rank's average). Usage: ompi_allreduce BYTES ITERATIONS WARMUP.
 * Prints "BYTES AVG_SECONDS MIN_SECONDS MAX_SECONDS". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: %s BYTES ITERATIONS WARMUP\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long bytes = atol(argv[1]);
    int iters = atoi(argv[2]), warmup = atoi(argv[3]);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = bytes / 8;
    uint64_t *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    for (long i = 0; i < n; i++) in[i] = (uint64_t)rank * 1000003u + i;
    double sum = 0;
    for (int it = 0; it < warmup + iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Allreduce(in, out, n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        double t = MPI_Wtime() - t0;
        if (it >= warmup) sum += t;
    }
    /* check one element so the call is known to have reduced */
    uint64_t want = 0;
    for (int r = 0; r < size; r++) want += (uint64_t)r * 1000003u + (n - 1);
    if (n > 0 && out[n - 1] != want) {
        fprintf(stderr, "rank %d: wrong result\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    double avg = sum / iters, mn, mx, total;
    MPI_Reduce(&avg, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&avg, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&avg, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%ld %.9f %.9f %.9f\n", bytes, total / size, mn, mx);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
