/* check.h: assertions for the C unit tests.
 *
 * A failed check prints file:line and the expression to stderr and counts; the test goes on,
 * so one run reports every failure. Each macro is an expression whose value is whether the
 * check held. A test ends with `return check_done();`, which prints "<n> checks, <m> failed"
 * and gives the exit status: 0 iff no check failed.
 *
 *   CHECK(cond)          cond is true
 *   CHECK_EQ_INT(a, b)   a == b as integers (both converted to intmax_t); prints both values
 *   CHECK_STR(a, b)      a and b are equal strings (NULL equals only NULL); prints both
 *   check_in_child(fn, err, size)  runs fn in a child process: its wait status, its stderr
 * Any thread may check; check_done belongs after the others have been joined.
 */
#ifndef RTSLAB_CHECK_H
#define RTSLAB_CHECK_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct check_counts { unsigned long checks, failed; };

static inline struct check_counts *check_counts_(void)
{
    static struct check_counts counts;
    return &counts;
}

/* Atomic: tests check from several threads. */
static inline bool check_count_(bool ok)
{
    struct check_counts *c = check_counts_();
    __atomic_fetch_add(&c->checks, 1, __ATOMIC_RELAXED);
    if (!ok)
        __atomic_fetch_add(&c->failed, 1, __ATOMIC_RELAXED);
    return ok;
}

static inline bool check_true_(bool ok, const char *file, int line, const char *expr)
{
    if (!ok)
        fprintf(stderr, "%s:%d: CHECK(%s) failed\n", file, line, expr);
    return check_count_(ok);
}

static inline bool check_eq_int_(intmax_t a, intmax_t b, const char *file, int line,
                                 const char *ea, const char *eb)
{
    bool ok = a == b;
    if (!ok)
        fprintf(stderr, "%s:%d: CHECK_EQ_INT(%s, %s) failed: %" PRIdMAX " != %" PRIdMAX "\n",
                file, line, ea, eb, a, b);
    return check_count_(ok);
}

static inline bool check_str_(const char *a, const char *b, const char *file, int line,
                              const char *ea, const char *eb)
{
    bool ok = (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
    if (!ok)
        fprintf(stderr, "%s:%d: CHECK_STR(%s, %s) failed: \"%s\" != \"%s\"\n", file, line,
                ea, eb, a ? a : "(null)", b ? b : "(null)");
    return check_count_(ok);
}

#define CHECK(cond)        check_true_((cond) ? true : false, __FILE__, __LINE__, #cond)
#define CHECK_EQ_INT(a, b) check_eq_int_((intmax_t)(a), (intmax_t)(b), __FILE__, __LINE__, #a, #b)
#define CHECK_STR(a, b)    check_str_((a), (b), __FILE__, __LINE__, #a, #b)

static inline int check_done(void)
{
    const struct check_counts *c = check_counts_();
    printf("%lu checks, %lu failed\n", c->checks, c->failed);
    fflush(stdout);
    return c->failed == 0 ? 0 : 1;
}

/* For a check that the code aborts (an RTS_ASSERT, base_fatal): runs fn in a child
 * process; its stderr into err (NUL-terminated), its wait status back. */
static inline int check_in_child(void (*fn)(void), char *err, size_t size)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fn();
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t k;
    while (n + 1 < size && (k = read(fds[0], err + n, size - 1 - n)) > 0)
        n += (size_t)k;
    err[n] = 0;
    close(fds[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    return status;
}

#endif
