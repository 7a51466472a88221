#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include "os/timer.h"
#include "base/util.h"

static pthread_t ticker;
static bool running;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cv = PTHREAD_COND_INITIALIZER;
static bool stopping;
static void (*tick_fn)(void);
static long tick_ns;
static long stall_ns, stall_next;   /* RTSLAB_TEST_TIMER_STALL (timer.h) */

static void *tick_loop(void *arg)
{
    (void)arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&lock);
    while (!stopping) {
        next.tv_nsec += tick_ns + stall_ns;
        stall_ns = 0;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000L;
        }
        int rc = pthread_cond_timedwait(&stop_cv, &lock, &next);
        if (rc == ETIMEDOUT && !stopping)
            tick_fn();
        if (stall_next) {                   /* after the first tick */
            stall_ns = stall_next;
            stall_next = 0;
        }
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

void timer_start(void (*tick)(void), long period_us)
{
    tick_fn = tick;
    tick_ns = period_us * 1000L;
    const char *stall = getenv("RTSLAB_TEST_TIMER_STALL");
    stall_next = stall ? strtol(stall, NULL, 10) * 1000000L : 0;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&stop_cv, &attr);
    pthread_condattr_destroy(&attr);
    stopping = false;
    if (pthread_create(&ticker, NULL, tick_loop, NULL) != 0)
        base_fatal("cannot start the timer thread");
    running = true;
}

void timer_stop(void)
{
    if (!running)
        return;
    pthread_mutex_lock(&lock);
    stopping = true;
    pthread_cond_signal(&stop_cv);
    pthread_mutex_unlock(&lock);
    pthread_join(ticker, NULL);
    running = false;
}
