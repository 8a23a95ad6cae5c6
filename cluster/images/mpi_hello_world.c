/* The MPI hello world of Volcano's example image: every rank says who and where it is. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    char processor[MPI_MAX_PROCESSOR_NAME];
    int size, rank, length;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Get_processor_name(processor, &length);
    printf("Hello world from processor %s, rank %d out of %d processors\n", processor, rank, size);
    MPI_Finalize();
    return 0;
}
