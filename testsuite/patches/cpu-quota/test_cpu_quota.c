/* The cgroup CPU quota reader on fixture trees (Note [CPU quota of the cgroup] in
 * runtime/os/cpu_quota.h); testsuite/patches/cpu-quota/TESTS runs it on each fixture tree,
 * which make_fixtures.py --run writes at test time.
 *
 *   test_cpu_quota ROOT
 *     cpu_quota_read(ROOT) and two lines: "none", or "v<version> <quota>/<period> cpus <N>
 *     file <file>" (N: cpu_quota_cpus, the file under ROOT); then cpu_quota_format's text.
 *     ROOT "" is this machine. */
#include "rtslab_config.h"

#include <stdio.h>

#if RTS_PATCH_CPU_QUOTA

#include "os/cpu_quota.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_cpu_quota ROOT\n");
        return 2;
    }
    CpuQuota q;
    cpu_quota_read(argv[1], &q);
    if (q.period > 0)
        printf("v%d %lld/%lld cpus %u file %s\n", q.version, q.quota, q.period,
               cpu_quota_cpus(&q), q.file);
    else
        printf("none\n");
    char buf[512];
    printf("%s\n", cpu_quota_format(&q, buf, sizeof buf));
    return 0;
}

#else

int main(void)
{
    fprintf(stderr, "test_cpu_quota: this build does not read the cgroup CPU quota "
            "(configure --enable-cpu-quota)\n");
    return 1;
}

#endif
