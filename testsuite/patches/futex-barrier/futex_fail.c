/* An LD_PRELOAD shim for the tests of Note [When futex fails] (runtime/sync/
 * wait_futex_barrier.c): every futex call made through syscall(3) fails, as under a seccomp
 * filter that refuses it, with errno FUTEX_FAIL_ERRNO (a number; default ENOSYS). The
 * runtime's futex calls are its own syscall(SYS_futex, ...) calls; glibc's (pthread mutexes
 * and condition variables) are system calls inlined in glibc, which this does not see, so
 * threads still work. (A seccomp filter cannot tell the two apart: both use
 * FUTEX_WAIT_PRIVATE and FUTEX_WAKE_PRIVATE on private words, and glibc aborts when its
 * condition variables' futex calls fail.) Other system calls are passed on. At exit it
 * writes to stderr
 *     futex_fail: <n> futex calls refused (<w> FUTEX_WAIT, <k> FUTEX_WAKE)
 * Built by Makefile.am as tests/patches/futex-barrier/futex_fail.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long n_wait, n_wake, n_other;     /* atomic */
static int fail_errno = ENOSYS;

__attribute__((constructor)) static void init(void)
{
    const char *e = getenv("FUTEX_FAIL_ERRNO");
    if (e && *e)
        fail_errno = atoi(e);
}

__attribute__((destructor)) static void report(void)
{
    char buf[160];
    unsigned long w = __atomic_load_n(&n_wait, __ATOMIC_RELAXED),
                  k = __atomic_load_n(&n_wake, __ATOMIC_RELAXED),
                  o = __atomic_load_n(&n_other, __ATOMIC_RELAXED);
    int n = snprintf(buf, sizeof buf, "futex_fail: %lu futex calls refused (%lu FUTEX_WAIT, "
                     "%lu FUTEX_WAKE)\n", w + k + o, w, k);
    if (n > 0 && write(2, buf, (size_t)n) < 0)
        return;
}

long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);       /* as glibc's own wrapper, six whatever was passed */
    va_end(ap);
    if (nr == SYS_futex) {
        int op = (int)a[1] & FUTEX_CMD_MASK;
        __atomic_fetch_add(op == FUTEX_WAIT ? &n_wait : op == FUTEX_WAKE ? &n_wake : &n_other,
                           1, __ATOMIC_RELAXED);
        errno = fail_errno;
        return -1;
    }
    static long (*real)(long, ...);
    long (*f)(long, ...) = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    return f(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
