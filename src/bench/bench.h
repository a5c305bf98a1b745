/* geli bench: the GELI studies (see bench.c). */
#ifndef GELI_BENCH_H
#define GELI_BENCH_H

/* argv[0] is "bench"; returns the exit status. */
int bench_main(int argc, char **argv);

#endif
