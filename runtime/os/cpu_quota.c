#include "rtslab_config.h"
#if RTS_PATCH_CPU_QUOTA
/* The cgroup CPU quota, v1 and v2: Note [CPU quota of the cgroup] in os/cpu_quota.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "os/cpu_quota.h"
#include "os/sysfs.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* A line of /proc/self/mountinfo or /proc/self/cgroup: a longer one (an overlay mount's
 * layers can run to kilobytes) is skipped whole, as it cannot be a cgroup mount we can use. */
#define LINE_LEN (3 * PATH_MAX)

/* One hierarchy (v1's cpu controller, or v2): where /proc/self/cgroup puts this process, and
 * the directory a mount gives it. */
typedef struct Hierarchy {
    bool have_path;        /* /proc/self/cgroup named it (path is set) */
    bool mapped;           /* a mount holds it (dir and base are set) */
    char path[PATH_MAX];   /* its cgroup path: no trailing or doubled '/', "" for "/" */
    char dir[PATH_MAX];    /* MOUNTPOINT + the path under the mount's root, under ROOT */
    size_t base;           /* strlen(MOUNTPOINT): dir is walked up to here, no further */
} Hierarchy;

typedef struct Scratch {
    Hierarchy v1, v2;
    char line[LINE_LEN];
    char file[2 * PATH_MAX + 64];   /* ROOT + dir + "/cpu.cfs_period_us" */
    char buf[128];                  /* a cgroup file's contents */
} Scratch;

static CpuQuota the_quota;
static pthread_once_t quota_once = PTHREAD_ONCE_INIT;

unsigned cpu_quota_cpus(const CpuQuota *q)
{
    if (q->period <= 0 || q->quota <= 0)
        return 0;
    long long n = q->quota / q->period + (q->quota % q->period != 0);
    return n < 1 ? 1 : (unsigned long long)n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

/* a/b < c/d for positive a, b, c, d, exactly: the cross products of two long longs fit in
 * 128 bits. */
static bool ratio_less(long long a, long long b, long long c, long long d)
{
    return (__int128)a * d < (__int128)c * b;
}

/* A decimal number, then only blanks and newlines; false on anything else or overflow. */
static bool parse_ll(const char *s, const char **rest, long long *v)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return false;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno != 0)
        return false;
    *v = x;
    *rest = end;
    return true;
}

static bool only_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    return *s == '\0';
}

/* v2's cpu.max: "QUOTA PERIOD" with both positive; "max PERIOD" (no limit) and anything
 * malformed give false. */
static bool parse_cpu_max(const char *s, long long *quota, long long *period)
{
    long long qv, pv;
    const char *end;
    if (*s == '-' || !parse_ll(s, &end, &qv) || *end != ' ')
        return false;
    if (end[1] == '-' || !parse_ll(end + 1, &end, &pv) || !only_blanks(end))
        return false;
    if (qv <= 0 || pv <= 0)
        return false;
    *quota = qv;
    *period = pv;
    return true;
}

/* v1's cpu.cfs_quota_us and cpu.cfs_period_us: one number (-1 for the quota: no limit). */
static bool parse_number(const char *s, long long *v)
{
    const char *end;
    return parse_ll(s, &end, v) && only_blanks(end);
}

/* The next whole line of f without its newline; a line too long for buf is skipped. */
static bool next_line(FILE *f, char *buf, size_t len)
{
    for (;;) {
        if (fgets(buf, (int)len, f) == NULL)
            return false;
        size_t n = strlen(buf);
        if (n > 0 && buf[n - 1] == '\n') {
            buf[n - 1] = '\0';
            return true;
        }
        if (n + 1 < len || feof(f))    /* the last line, without a newline */
            return true;
        int c;
        while ((c = getc(f)) != EOF && c != '\n')
            ;
        if (c == EOF)
            return false;
    }
}

/* Whether the comma-separated list holds word exactly ("cpu" is not "cpuacct"). */
static bool has_word(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        if (n == wl && memcmp(p, word, wl) == 0)
            return true;
        if (p[n] == '\0')
            return false;
        p += n + 1;
    }
}

/* A cgroup path or a mount's root as compared and joined here: absolute, no doubled or
 * trailing '/' ("/" becomes ""), no ".." component (that would leave the mount). */
static bool normalise_path(const char *s, char *out, size_t len)
{
    if (*s != '/')
        return false;
    size_t w = 0;
    while (*s != '\0') {
        while (*s == '/')
            s++;
        if (*s == '\0')
            break;
        size_t n = strcspn(s, "/");
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return false;
        if (w + 1 + n >= len)
            return false;
        out[w++] = '/';
        memcpy(out + w, s, n);
        w += n;
        s += n;
    }
    out[w] = '\0';
    return true;
}

/* mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash), in place. */
static void unescape(char *s)
{
    char *w = s;
    for (const char *r = s; *r != '\0';) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7'
            && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* The next space-separated field of *s, NUL-terminated; NULL at the end of the line. */
static char *next_field(char **s)
{
    char *p = *s;
    while (*p == ' ')
        p++;
    if (*p == '\0')
        return NULL;
    char *start = p;
    while (*p != '\0' && *p != ' ')
        p++;
    if (*p == ' ')
        *p++ = '\0';
    *s = p;
    return start;
}

/* Puts h in the mount MOUNTROOT at MOUNTPOINT (both unescaped) if the mount holds its path:
 * the root "/" holds every path; another root, itself and the paths below it. */
static void map_hierarchy(Hierarchy *h, const char *mount_root, const char *mount_point)
{
    char mroot[PATH_MAX], mpoint[PATH_MAX];
    if (h->mapped || !h->have_path || !normalise_path(mount_root, mroot, sizeof mroot))
        return;
    if (strcmp(mount_point, "/") == 0)
        mpoint[0] = '\0';
    else if (!normalise_path(mount_point, mpoint, sizeof mpoint))
        return;
    const char *rest;
    size_t rl = strlen(mroot);
    if (rl == 0)                                        /* root "/": MOUNTPOINT + PATH */
        rest = h->path;
    else if (strcmp(h->path, mroot) == 0)               /* the mount's own root */
        rest = "";
    else if (strncmp(h->path, mroot, rl) == 0 && h->path[rl] == '/')
        rest = h->path + rl;                            /* below it */
    else
        return;
    int n = snprintf(h->dir, sizeof h->dir, "%s%s", mpoint, rest);
    if (n < 0 || (size_t)n >= sizeof h->dir)
        return;
    h->base = strlen(mpoint);
    h->mapped = true;
}

static void set_path(Hierarchy *h, const char *path)
{
    if (!h->have_path && normalise_path(path, h->path, sizeof h->path))
        h->have_path = true;
}

/* ROOT/proc/self/cgroup: "0::PATH" (v2) and "N:CONTROLLERS:PATH" with "cpu" among the
 * controllers (v1). */
static void read_proc_cgroup(const char *root, Scratch *s)
{
    int n = snprintf(s->file, sizeof s->file, "%s/proc/self/cgroup", root);
    if (n < 0 || (size_t)n >= sizeof s->file)
        return;
    FILE *f = fopen(s->file, "re");
    if (f == NULL)
        return;
    while (next_line(f, s->line, sizeof s->line)) {
        char *c1 = strchr(s->line, ':');
        char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL)
            continue;
        *c1 = *c2 = '\0';
        const char *id = s->line, *controllers = c1 + 1, *path = c2 + 1;
        if (strcmp(id, "0") == 0 && *controllers == '\0')
            set_path(&s->v2, path);
        else if (has_word(controllers, "cpu"))
            set_path(&s->v1, path);
    }
    fclose(f);
}

/* ROOT/proc/self/mountinfo: the first cgroup2 mount, and the first cgroup (v1) mount with the
 * cpu controller, that hold this process's cgroup. False if there is no line to read. */
static bool read_mountinfo(const char *root, Scratch *s)
{
    int n = snprintf(s->file, sizeof s->file, "%s/proc/self/mountinfo", root);
    if (n < 0 || (size_t)n >= sizeof s->file)
        return false;
    FILE *f = fopen(s->file, "re");
    if (f == NULL)
        return false;
    bool any = false;
    while (next_line(f, s->line, sizeof s->line)) {
        any = true;
        char *p = s->line, *field[6];
        int i;
        for (i = 0; i < 6; i++)       /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS */
            if ((field[i] = next_field(&p)) == NULL)
                break;
        if (i < 6)
            continue;
        char *sep;                    /* optional fields, up to "-" */
        while ((sep = next_field(&p)) != NULL && strcmp(sep, "-") != 0)
            ;
        char *fstype = sep != NULL ? next_field(&p) : NULL;
        char *source = fstype != NULL ? next_field(&p) : NULL;
        char *superopts = source != NULL ? next_field(&p) : NULL;
        if (fstype == NULL)
            continue;
        bool v2 = strcmp(fstype, "cgroup2") == 0;
        bool v1 = strcmp(fstype, "cgroup") == 0 && superopts != NULL
                  && has_word(superopts, "cpu");
        if (!v1 && !v2)
            continue;
        unescape(field[3]);
        unescape(field[4]);
        map_hierarchy(v2 ? &s->v2 : &s->v1, field[3], field[4]);
    }
    fclose(f);
    return any;
}

/* h's limit at one level, dir's first len bytes; false for none (or unreadable, malformed). */
static bool read_level(const char *root, const Hierarchy *h, size_t len, int version,
                       Scratch *s, long long *quota, long long *period)
{
    int dl = (int)len, n;
    if (version == 2) {
        n = snprintf(s->file, sizeof s->file, "%s%.*s/cpu.max", root, dl, h->dir);
        return n >= 0 && (size_t)n < sizeof s->file
               && sysfs_read_small(s->file, s->buf, sizeof s->buf)
               && parse_cpu_max(s->buf, quota, period);
    }
    n = snprintf(s->file, sizeof s->file, "%s%.*s/cpu.cfs_quota_us", root, dl, h->dir);
    if (n < 0 || (size_t)n >= sizeof s->file || !sysfs_read_small(s->file, s->buf, sizeof s->buf)
        || !parse_number(s->buf, quota) || *quota <= 0)
        return false;
    n = snprintf(s->file, sizeof s->file, "%s%.*s/cpu.cfs_period_us", root, dl, h->dir);
    return n >= 0 && (size_t)n < sizeof s->file && sysfs_read_small(s->file, s->buf, sizeof s->buf)
           && parse_number(s->buf, period) && *period > 0;
}

/* h's directory and every parent up to its mount point: the lowest ratio so far holds. */
static void walk(const char *root, const Hierarchy *h, int version, Scratch *s, CpuQuota *q)
{
    size_t len = strlen(h->dir);
    for (;;) {
        long long qv, pv;
        if (read_level(root, h, len, version, s, &qv, &pv)
            && (q->period == 0 || ratio_less(qv, pv, q->quota, q->period))) {
            q->quota = qv;
            q->period = pv;
            q->version = version;
            /* the file, under the root; a path longer than q->file is cut short */
            (void)snprintf(q->file, sizeof q->file, "%.*s/%s", (int)len, h->dir,
                           version == 2 ? "cpu.max" : "cpu.cfs_quota_us");
        }
        if (len <= h->base)
            break;
        size_t p = len - 1;           /* the parent: up to the path's last '/' */
        while (p > h->base && h->dir[p] != '/')
            p--;
        len = p;
    }
}

void cpu_quota_read(const char *root, CpuQuota *q)
{
    memset(q, 0, sizeof *q);
    if (root == NULL)
        root = getenv("RTSLAB_SYSFS_ROOT");
    if (root == NULL)
        root = "";
    Scratch *s = malloc(sizeof *s);
    if (s == NULL)
        return;
    s->v1.have_path = s->v1.mapped = s->v2.have_path = s->v2.mapped = false;

    read_proc_cgroup(root, s);
    if (!read_mountinfo(root, s)) {
        /* No mountinfo: v2 at /sys/fs/cgroup, the "0::" path (absent: "/"). */
        s->v1.mapped = s->v2.mapped = false;
        if (!s->v2.have_path) {
            s->v2.path[0] = '\0';
            s->v2.have_path = true;
        }
        map_hierarchy(&s->v2, "/", "/sys/fs/cgroup");
    }
    if (s->v2.mapped)
        walk(root, &s->v2, 2, s, q);
    if (s->v1.mapped)
        walk(root, &s->v1, 1, s, q);
    free(s);
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

unsigned cpu_quota_lower(unsigned n)
{
    unsigned q = cpu_quota_cpus(cpu_quota());
    return q > 0 && q < n ? q : n;
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
