/* The machine's own answer for experiments/external-load: N threads (default 2) of
 * independent CPU work, each ITERS iterations of an arithmetic loop on a local, joined by
 * main. No memory is shared and nothing waits, so beside a busy process it runs as fast as
 * the OS scheduler lets two threads run.
 *
 *   control ITERS [THREADS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long iters;

static void *work(void *arg)
{
    volatile unsigned long x = 0;
    for (long i = 0; i < iters; i++)
        x += (unsigned long)i * 7;
    return arg;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: control ITERS [THREADS]\n");
        return 2;
    }
    iters = atol(argv[1]);
    int n = argc > 2 ? atoi(argv[2]) : 2;
    if (iters <= 0 || n < 1 || n > 64) {
        fprintf(stderr, "control: bad arguments\n");
        return 2;
    }
    pthread_t th[64];
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, work, NULL) != 0) {
            perror("pthread_create");
            return 1;
        }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    return 0;
}
