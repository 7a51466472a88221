#include "rtslab_config.h"
#if RTS_PATCH_PHYS_CAPS
/* The cgroup v2 CPU quota: Note [CPU quota of the cgroup] in os/cpu_quota.h. */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "os/cpu_quota.h"

static CpuQuota the_quota;
static pthread_once_t quota_once = PTHREAD_ONCE_INIT;

unsigned cpu_quota_cpus(const CpuQuota *q)
{
    if (q->period <= 0)
        return 0;
    long long n = (q->quota + q->period - 1) / q->period;
    return n < 1 ? 1 : n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

/* "QUOTA PERIOD" with QUOTA a positive number of microseconds; "max PERIOD" (no limit) and
 * anything malformed give false. */
static bool parse_cpu_max(const char *s, long long *quota, long long *period)
{
    char *end;
    if (*s < '0' || *s > '9')
        return false;
    long long qv = strtoll(s, &end, 10);
    if (*end != ' ' || end[1] < '0' || end[1] > '9')
        return false;
    long long pv = strtoll(end + 1, &end, 10);
    while (*end == '\n' || *end == ' ')
        end++;
    if (*end != '\0' || qv <= 0 || pv <= 0)
        return false;
    *quota = qv;
    *period = pv;
    return true;
}

static bool read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    return ok;
}

void cpu_quota_read(const char *root, CpuQuota *q)
{
    memset(q, 0, sizeof *q);
    if (root == NULL)
        root = getenv("RTSLAB_SYSFS_ROOT");
    if (root == NULL)
        root = "";

    /* This process's cgroup v2 path: the "0::PATH" line of /proc/self/cgroup. */
    char cg[PATH_MAX] = "/", line[PATH_MAX], path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        while (fgets(line, sizeof line, f) != NULL)
            if (strncmp(line, "0::/", 4) == 0) {
                line[strcspn(line, "\n")] = '\0';
                snprintf(cg, sizeof cg, "%s", line + 3);
                break;
            }
        fclose(f);
    }

    /* cpu.max at that directory and every parent up to the root of the hierarchy. */
    for (;;) {
        size_t n = strlen(cg);
        while (n > 1 && cg[n - 1] == '/')
            cg[--n] = '\0';
        char buf[128];
        long long qv, pv;
        if (snprintf(path, sizeof path, "%s/sys/fs/cgroup%s/cpu.max", root, n > 1 ? cg : "")
                < (int)sizeof path
            && read_line(path, buf, sizeof buf) && parse_cpu_max(buf, &qv, &pv)
            && (q->period == 0 || qv * q->period < q->quota * pv)) {
            q->quota = qv;
            q->period = pv;
            snprintf(q->file, sizeof q->file, "%s", path + strlen(root));
        }
        if (n <= 1)
            break;
        char *slash = strrchr(cg, '/');
        if (slash == cg)
            cg[1] = '\0';
        else
            *slash = '\0';
    }
}

static void quota_init(void)
{
    cpu_quota_read(NULL, &the_quota);
}

const CpuQuota *cpu_quota(void)
{
    pthread_once(&quota_once, quota_init);
    return &the_quota;
}

char *cpu_quota_format(const CpuQuota *q, char *buf, size_t len)
{
    if (q->period > 0)
        snprintf(buf, len, "%s: %lld/%lld = %.2f CPUs", q->file, q->quota, q->period,
                 (double)q->quota / (double)q->period);
    else
        snprintf(buf, len, "none");
    return buf;
}
#endif
