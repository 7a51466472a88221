/* CPU topology from sysfs, with /proc/cpuinfo as fallback (see topology.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/sysfs.h"
#include "os/topology.h"

#define CPU_DIR  "/sys/devices/system/cpu"
#define NODE_DIR "/sys/devices/system/node"

/* What the sources say about one CPU (indexed by CPU id). */
typedef struct RawCpu {
    bool has_sysfs;            /* core_id and physical_package_id read */
    int core_id, package_id;
    int sib_min;               /* lowest CPU of its sibling list, -1 if none */
    bool ci_seen;              /* a "processor" block in /proc/cpuinfo */
    int ci_package, ci_core;   /* its "physical id" and "core id", -1 if absent */
    int node_id;               /* -1 until a nodeN/cpulist names it */
} RawCpu;

static void set_err(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t len, const char *fmt, ...)
{
    if (err == NULL || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

/* out = root followed by the formatted path; false if it does not fit. */
static bool mkpath(char *out, size_t len, const char *root, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool mkpath(char *out, size_t len, const char *root, const char *fmt, ...)
{
    int n = snprintf(out, len, "%s", root);
    if (n < 0 || (size_t)n >= len)
        return false;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(out + n, len - (size_t)n, fmt, ap);
    va_end(ap);
    return m >= 0 && (size_t)m < len - (size_t)n;
}

/* A decimal integer with optional surrounding whitespace and nothing else. */
static bool parse_int(const char *s, long *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!(isdigit((unsigned char)*s) || (*s == '-' && isdigit((unsigned char)s[1]))))
        return false;
    char *end;
    long v = strtol(s, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0' || v < INT_MIN || v > INT_MAX)
        return false;
    *out = v;
    return true;
}

static bool read_int(const char *path, int *out)
{
    char buf[64];
    long v;
    if (!sysfs_read_small(path, buf, sizeof buf) || !parse_int(buf, &v))
        return false;
    *out = (int)v;
    return true;
}

/* Read a cpulist file; returns the count (>= 0) or -1. */
static int read_cpulist(const char *path, cpu_set_t *set)
{
    char buf[8192];
    CPU_ZERO(set);
    if (!sysfs_read_small(path, buf, sizeof buf))
        return -1;
    return topo_parse_cpulist(buf, set);
}

static bool parse_num(const char **pp, long *out)
{
    const char *p = *pp;
    if (!isdigit((unsigned char)*p))
        return false;
    long v = 0;
    for (; isdigit((unsigned char)*p); p++)
        if (v <= TOPO_MAX_CPUS)          /* saturate: anything larger is rejected anyway */
            v = v * 10 + (*p - '0');
    *pp = p;
    *out = v;
    return true;
}

int topo_parse_cpulist(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    if (s == NULL)
        return -1;
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0')
        return 0;
    int count = 0;
    for (;;) {
        long a, b;
        if (!parse_num(&p, &a))
            return -1;
        b = a;
        if (*p == '-') {
            p++;
            if (!parse_num(&p, &b) || b < a)
                return -1;
        }
        if (b >= TOPO_MAX_CPUS)
            return -1;
        for (long i = a; i <= b; i++)
            if (!CPU_ISSET((int)i, set)) {
                CPU_SET((int)i, set);
                count++;
            }
        if (*p != ',')
            break;
        p++;
        const char *q = p;             /* one trailing comma is tolerated */
        while (isspace((unsigned char)*q))
            q++;
        if (*q == '\0') {
            p = q;
            break;
        }
    }
    while (isspace((unsigned char)*p))
        p++;
    return *p == '\0' ? count : -1;
}

char *topo_format_cpulist(char *buf, size_t len, const int *ids, int n)
{
    if (len == 0)
        return buf;
    buf[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < n; ) {
        int j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + used, len - used, "%s%d-%d", i ? "," : "", ids[i], ids[j])
                      : snprintf(buf + used, len - used, "%s%d", i ? "," : "", ids[i]);
        if (w < 0 || (size_t)w >= len - used) {
            if (len >= 4)
                strcpy(buf + len - 4, "...");
            else
                buf[0] = '\0';
            return buf;
        }
        used += (size_t)w;
        i = j + 1;
    }
    return buf;
}

/* /proc/cpuinfo: "processor", "physical id" and "core id" per processor block. Sets procs to
 * the processors listed; false if the file is unreadable. */
static bool parse_cpuinfo(const char *root, RawCpu *raw, cpu_set_t *procs)
{
    char path[PATH_MAX];
    CPU_ZERO(procs);
    if (!mkpath(path, sizeof path, root, "/proc/cpuinfo"))
        return false;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    char *line = NULL;
    size_t cap = 0;
    int cur = -1;
    while (getline(&line, &cap, f) != -1) {
        char *colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        size_t klen = (size_t)(colon - line);
        while (klen > 0 && isspace((unsigned char)line[klen - 1]))
            klen--;
        long v;
        bool num = parse_int(colon + 1, &v);
#define KEY_IS(k) (klen == sizeof(k) - 1 && memcmp(line, k, klen) == 0)
        if (KEY_IS("processor")) {
            cur = num && v >= 0 && v < TOPO_MAX_CPUS ? (int)v : -1;
            if (cur >= 0) {
                raw[cur].ci_seen = true;
                CPU_SET(cur, procs);
            }
        } else if (cur >= 0 && num && v >= 0 && KEY_IS("physical id")) {
            raw[cur].ci_package = (int)v;
        } else if (cur >= 0 && num && v >= 0 && KEY_IS("core id")) {
            raw[cur].ci_core = (int)v;
        }
#undef KEY_IS
    }
    free(line);
    fclose(f);
    return true;
}

/* The cpuN directories under CPU_DIR; false if none. */
static bool list_cpu_dirs(const char *root, cpu_set_t *set)
{
    char path[PATH_MAX];
    CPU_ZERO(set);
    if (!mkpath(path, sizeof path, root, CPU_DIR))
        return false;
    DIR *d = opendir(path);
    if (d == NULL)
        return false;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *s = e->d_name;
        if (strncmp(s, "cpu", 3) != 0 || !isdigit((unsigned char)s[3]))
            continue;
        const char *p = s + 3;
        long v;
        if (parse_num(&p, &v) && *p == '\0' && v < TOPO_MAX_CPUS) {
            CPU_SET((int)v, set);
            n++;
        }
    }
    closedir(d);
    return n > 0;
}

/* NUMA nodes: sets raw[].node_id for the CPUs nodeN/cpulist names; returns the lowest node id
 * found, or -1 if there is no node directory. */
static int read_nodes(const char *root, RawCpu *raw)
{
    char path[PATH_MAX];
    if (!mkpath(path, sizeof path, root, NODE_DIR))
        return -1;
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int lowest = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *p = e->d_name;
        long node;
        if (strncmp(p, "node", 4) != 0)
            continue;
        p += 4;
        if (!parse_num(&p, &node) || *p != '\0' || node > INT_MAX / 2)
            continue;
        cpu_set_t cpus;
        if (!mkpath(path, sizeof path, root, NODE_DIR "/node%ld/cpulist", node)
            || read_cpulist(path, &cpus) < 0)
            continue;
        if (lowest < 0 || node < lowest)
            lowest = (int)node;
        for (int c = 0; c < TOPO_MAX_CPUS; c++)
            if (CPU_ISSET(c, &cpus) && (raw[c].node_id < 0 || node < raw[c].node_id))
                raw[c].node_id = (int)node;
    }
    closedir(d);
    return lowest;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Distinct values of vals[0..n-1], sorted, into out; returns how many. */
static int distinct_sorted(const int *vals, int n, int *out)
{
    memcpy(out, vals, (size_t)n * sizeof *out);
    qsort(out, (size_t)n, sizeof *out, cmp_int);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != out[i])
            out[m++] = out[i];
    return m;
}

static int index_of(const int *sorted, int n, int v)
{
    const int *p = bsearch(&v, sorted, (size_t)n, sizeof *sorted, cmp_int);
    return p ? (int)(p - sorted) : -1;
}

static bool root_is_real(const char *root)
{
    for (; *root; root++)
        if (*root != '/')
            return false;
    return true;
}

void topo_free(Topology *t)
{
    if (t == NULL)
        return;
    free(t->cpus);
    free(t->logical_order);
    free(t->physical_order);
    memset(t, 0, sizeof *t);
}

/* Work arrays of topo_load, freed together, and what /proc/cpuinfo gave (read at most once,
 * by whichever step needs it first). */
typedef struct Scratch {
    RawCpu *raw;
    int *ids, *pkg_ids, *node_ids, *pkgs, *nodes;
    int *core_key_pkg, *core_key, *core_first, *core_size, *core_pkg, *core_node;
    int *pkg_used, *node_used;
    bool *taken;
    bool cpuinfo_read;
    cpu_set_t ci_procs;
} Scratch;

static void scratch_free(Scratch *s)
{
    free(s->raw);
    free(s->ids); free(s->pkg_ids); free(s->node_ids); free(s->pkgs); free(s->nodes);
    free(s->core_key_pkg); free(s->core_key); free(s->core_first); free(s->core_size);
    free(s->core_pkg); free(s->core_node);
    free(s->pkg_used); free(s->node_used);
    free(s->taken);
}

/* topo_load's CPU mask: the argument, else RTSLAB_CPU_MASK, else this process's affinity
 * (only on the real root: *have_affinity), else every CPU. -1 (with err) on a bad
 * RTSLAB_CPU_MASK. */
static int load_mask(Topology *t, const cpu_set_t *mask, bool real, cpu_set_t *allowed,
                     bool *have_affinity, char *err, size_t errlen)
{
    *have_affinity = false;
    if (mask != NULL) {
        *allowed = *mask;
        t->mask_source = "argument";
    } else if (getenv("RTSLAB_CPU_MASK") != NULL) {
        const char *m = getenv("RTSLAB_CPU_MASK");
        int n = topo_parse_cpulist(m, allowed);
        if (n < 0) {
            set_err(err, errlen, "RTSLAB_CPU_MASK is not a cpulist: \"%s\"", m);
            return -1;
        }
        if (n == 0) {
            set_err(err, errlen, "RTSLAB_CPU_MASK names no CPU");
            return -1;
        }
        t->mask_source = "RTSLAB_CPU_MASK";
    } else if (real && sched_getaffinity(0, sizeof *allowed, allowed) == 0) {
        *have_affinity = true;
        t->mask_source = "sched_getaffinity";
    } else {
        /* A fixture root (its CPU numbers are not this machine's), or more CPUs than a
         * cpu_set_t holds: every online CPU. */
        memset(allowed, 0xff, sizeof *allowed);
        t->mask_source = "all";
    }
    return 0;
}

/* The online CPUs under ROOT, into *online: sysfs's online list, else its present list, else
 * its cpuN directories, else /proc/cpuinfo's processors, else (the real root) the affinity
 * mask or sysconf; then without those whose cpuN/online says 0. Their number, or <= 0 when
 * none is found. */
static int load_online(const char *root, bool real, bool have_affinity,
                       const cpu_set_t *allowed, Scratch *s, cpu_set_t *online)
{
    char path[PATH_MAX];
    int n = -1;
    if (mkpath(path, sizeof path, root, CPU_DIR "/online"))
        n = read_cpulist(path, online);
    if (n <= 0 && mkpath(path, sizeof path, root, CPU_DIR "/present"))
        n = read_cpulist(path, online);
    if (n <= 0)
        n = list_cpu_dirs(root, online) ? CPU_COUNT(online) : -1;
    if (n <= 0) {
        s->cpuinfo_read = parse_cpuinfo(root, s->raw, &s->ci_procs);
        *online = s->ci_procs;
        n = CPU_COUNT(online);
    }
    if (n <= 0 && real) {
        if (have_affinity) {
            *online = *allowed;
        } else {
            long k = sysconf(_SC_NPROCESSORS_ONLN);
            CPU_ZERO(online);
            for (long c = 0; c < k && c < TOPO_MAX_CPUS; c++)
                CPU_SET((int)c, online);
        }
        n = CPU_COUNT(online);
    }
    if (n <= 0)
        return n;
    for (int c = 0; c < TOPO_MAX_CPUS; c++) {
        int on;
        if (CPU_ISSET(c, online)
            && mkpath(path, sizeof path, root, CPU_DIR "/cpu%d/online", c)
            && read_int(path, &on) && on == 0)
            CPU_CLR(c, online);
    }
    return n;
}

/* The arrays for NL allowed CPUs, in S and T; false when one cannot be allocated. */
static bool scratch_alloc(Scratch *s, Topology *t, int nl)
{
    s->ids = malloc((size_t)nl * sizeof *s->ids);
    s->pkg_ids = malloc((size_t)nl * sizeof *s->pkg_ids);
    s->node_ids = malloc((size_t)nl * sizeof *s->node_ids);
    s->pkgs = malloc((size_t)nl * sizeof *s->pkgs);
    s->nodes = malloc((size_t)nl * sizeof *s->nodes);
    s->core_key_pkg = malloc((size_t)nl * sizeof(int));
    s->core_key = malloc((size_t)nl * sizeof(int));
    s->core_first = malloc((size_t)nl * sizeof(int));
    s->core_size = calloc((size_t)nl, sizeof(int));
    s->core_pkg = malloc((size_t)nl * sizeof(int));
    s->core_node = malloc((size_t)nl * sizeof(int));
    s->pkg_used = calloc((size_t)nl, sizeof(int));
    s->node_used = calloc((size_t)nl, sizeof(int));
    s->taken = calloc((size_t)nl, sizeof(bool));
    t->cpus = calloc((size_t)nl, sizeof *t->cpus);
    t->logical_order = malloc((size_t)nl * sizeof(int));
    t->physical_order = malloc((size_t)nl * sizeof(int));
    return s->ids && s->pkg_ids && s->node_ids && s->pkgs && s->nodes && s->core_key_pkg
        && s->core_key && s->core_first && s->core_size && s->core_pkg && s->core_node
        && s->pkg_used && s->node_used && s->taken && t->cpus && t->logical_order
        && t->physical_order;
}

/* Cores and packages of the NL allowed CPUs (s->ids): sysfs, else /proc/cpuinfo, else flat
 * (t->source says which), into s->raw and s->pkg_ids. *all_sibs: sysfs gave every CPU's
 * lowest sibling. Returns whether sysfs gave them all. */
static bool load_cores(Topology *t, const char *root, Scratch *s, int nl, bool *all_sibs)
{
    char path[PATH_MAX];
    bool all_sysfs = true;
    *all_sibs = true;
    for (int k = 0; k < nl; k++) {
        int c = s->ids[k];
        RawCpu *r = &s->raw[c];
        r->has_sysfs =
            mkpath(path, sizeof path, root, CPU_DIR "/cpu%d/topology/core_id", c)
            && read_int(path, &r->core_id)
            && mkpath(path, sizeof path, root, CPU_DIR "/cpu%d/topology/physical_package_id", c)
            && read_int(path, &r->package_id);
        if (!r->has_sysfs) {
            all_sysfs = false;
            break;
        }
        cpu_set_t sibs;
        if ((mkpath(path, sizeof path, root, CPU_DIR "/cpu%d/topology/thread_siblings_list", c)
             && read_cpulist(path, &sibs) > 0)
            || (mkpath(path, sizeof path, root, CPU_DIR "/cpu%d/topology/core_cpus_list", c)
                && read_cpulist(path, &sibs) > 0)) {
            if (CPU_ISSET(c, &sibs))
                for (int b = 0; b <= c; b++)
                    if (CPU_ISSET(b, &sibs)) {
                        r->sib_min = b;
                        break;
                    }
        }
        if (r->sib_min < 0)
            *all_sibs = false;
    }
    bool all_cpuinfo = false;
    if (!all_sysfs) {
        if (!s->cpuinfo_read)
            s->cpuinfo_read = parse_cpuinfo(root, s->raw, &s->ci_procs);
        all_cpuinfo = s->cpuinfo_read;
        for (int k = 0; k < nl && all_cpuinfo; k++) {
            const RawCpu *r = &s->raw[s->ids[k]];
            all_cpuinfo = r->ci_seen && r->ci_package >= 0 && r->ci_core >= 0;
        }
    }
    t->source = all_sysfs ? "sysfs" : all_cpuinfo ? "cpuinfo" : "flat";
    for (int k = 0; k < nl; k++) {
        int c = s->ids[k];
        RawCpu *r = &s->raw[c];
        if (all_sysfs) {
            s->pkg_ids[k] = r->package_id;
        } else if (all_cpuinfo) {
            s->pkg_ids[k] = r->package_id = r->ci_package;
            r->core_id = r->ci_core;
        } else {
            s->pkg_ids[k] = r->package_id = 0;
            r->core_id = -1;
        }
    }
    return all_sysfs;
}

/* NUMA nodes of the NL allowed CPUs (a CPU sysfs puts in none is in the lowest node, or 0),
 * into s->raw and s->node_ids. */
static void load_nodes(Topology *t, const char *root, Scratch *s, int nl)
{
    int lowest_node = read_nodes(root, s->raw);
    t->numa_source = lowest_node >= 0 ? "sysfs" : "none";
    for (int k = 0; k < nl; k++) {
        RawCpu *r = &s->raw[s->ids[k]];
        if (r->node_id < 0)
            r->node_id = lowest_node >= 0 ? lowest_node : 0;
        s->node_ids[k] = r->node_id;
    }
}

/* t->cpus and t->logical_order: the NL allowed CPUs grouped into cores, in order of their
 * lowest allowed CPU (a core is its package and its key: the lowest sibling when BY_SIBLING,
 * else the core id, else the CPU itself), among NP packages and NN nodes. Sets t->max_smt;
 * returns the number of cores. */
static int group_cores(Topology *t, Scratch *s, int nl, int np, int nn, bool by_sibling)
{
    int ncores = 0, max_smt = 0;
    for (int k = 0; k < nl; k++) {
        int c = s->ids[k];
        const RawCpu *r = &s->raw[c];
        int key = by_sibling ? r->sib_min : r->core_id >= 0 ? r->core_id : c;
        int core = -1;
        for (int j = 0; j < ncores && core < 0; j++)
            if (s->core_key_pkg[j] == r->package_id && s->core_key[j] == key)
                core = j;
        if (core < 0) {
            core = ncores++;
            s->core_key_pkg[core] = r->package_id;
            s->core_key[core] = key;
            s->core_first[core] = c;
            s->core_pkg[core] = index_of(s->pkgs, np, r->package_id);
            s->core_node[core] = index_of(s->nodes, nn, r->node_id);
        }
        TopoCpu *tc = &t->cpus[k];
        tc->id = c;
        tc->core = core;
        tc->package = index_of(s->pkgs, np, r->package_id);
        tc->node = index_of(s->nodes, nn, r->node_id);
        tc->smt_rank = s->core_size[core]++;
        tc->core_id = r->core_id;
        tc->package_id = r->package_id;
        tc->node_id = r->node_id;
        if (s->core_size[core] > max_smt)
            max_smt = s->core_size[core];
        t->logical_order[k] = c;
    }
    t->max_smt = max_smt;
    return ncores;
}

/* t->physical_order: the first CPU of each of the NCORES cores, spread over packages, then
 * nodes, then by core index. */
static void physical_order(Topology *t, Scratch *s, int ncores)
{
    for (int i = 0; i < ncores; i++) {
        int best = -1;
        for (int j = 0; j < ncores; j++) {
            if (s->taken[j])
                continue;
            if (best < 0
                || s->pkg_used[s->core_pkg[j]] < s->pkg_used[s->core_pkg[best]]
                || (s->pkg_used[s->core_pkg[j]] == s->pkg_used[s->core_pkg[best]]
                    && s->node_used[s->core_node[j]] < s->node_used[s->core_node[best]]))
                best = j;
        }
        s->taken[best] = true;
        s->pkg_used[s->core_pkg[best]]++;
        s->node_used[s->core_node[best]]++;
        t->physical_order[i] = s->core_first[best];
    }
}

int topo_load(Topology *t, const char *sysfs_root, const cpu_set_t *mask, char *err,
              size_t errlen)
{
    memset(t, 0, sizeof *t);
    set_err(err, errlen, "%s", "");

    const char *root = sysfs_root;
    if (root == NULL)
        root = getenv("RTSLAB_SYSFS_ROOT");
    if (root == NULL)
        root = "";
    bool real = root_is_real(root);
    snprintf(t->root, sizeof t->root, "%s", root);

    cpu_set_t allowed;
    bool have_affinity;
    if (load_mask(t, mask, real, &allowed, &have_affinity, err, errlen) != 0)
        return -1;

    Scratch s = {0};
    s.raw = calloc(TOPO_MAX_CPUS, sizeof *s.raw);
    if (s.raw == NULL) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (int c = 0; c < TOPO_MAX_CPUS; c++) {
        s.raw[c].core_id = s.raw[c].package_id = s.raw[c].sib_min = -1;
        s.raw[c].ci_package = s.raw[c].ci_core = s.raw[c].node_id = -1;
    }
    CPU_ZERO(&s.ci_procs);
    int rc = -1;

    cpu_set_t online;
    if (load_online(root, real, have_affinity, &allowed, &s, &online) <= 0) {
        set_err(err, errlen, "no CPUs found under \"%s\" (sys/devices/system/cpu, proc/cpuinfo)",
                root);
        goto out;
    }
    t->n_online = CPU_COUNT(&online);
    CPU_AND(&allowed, &allowed, &online);
    int nl = CPU_COUNT(&allowed);
    if (nl == 0) {
        set_err(err, errlen, "none of the %d online CPUs is in the %s mask", t->n_online,
                t->mask_source);
        goto out;
    }
    if (!scratch_alloc(&s, t, nl)) {
        set_err(err, errlen, "out of memory");
        goto out;
    }
    for (int c = 0, k = 0; c < TOPO_MAX_CPUS; c++)
        if (CPU_ISSET(c, &allowed))
            s.ids[k++] = c;

    bool all_sibs;
    bool all_sysfs = load_cores(t, root, &s, nl, &all_sibs);
    load_nodes(t, root, &s, nl);
    int np = distinct_sorted(s.pkg_ids, nl, s.pkgs);
    int nn = distinct_sorted(s.node_ids, nl, s.nodes);
    int ncores = group_cores(t, &s, nl, np, nn, all_sysfs && all_sibs);
    physical_order(t, &s, ncores);

    t->n_logical = nl;
    t->n_physical = ncores;
    t->n_packages = np;
    t->n_nodes = nn;
    rc = 0;

out:
    scratch_free(&s);
    if (rc != 0) {
        char saved_root[sizeof t->root];
        memcpy(saved_root, t->root, sizeof saved_root);
        topo_free(t);
        memcpy(t->root, saved_root, sizeof saved_root);
    }
    return rc;
}

const TopoCpu *topo_cpu(const Topology *t, int id)
{
    int lo = 0, hi = t->n_logical - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (t->cpus[mid].id == id)
            return &t->cpus[mid];
        if (t->cpus[mid].id < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

int topo_numa_nodes(const Topology *t, unsigned long long mask, int *ids)
{
    int n = 0;
    for (int id = 0; id < TOPO_MAX_NODES; id++) {
        if (!(mask >> id & 1))
            continue;
        for (int k = 0; k < t->n_logical; k++)
            if (t->cpus[k].node_id == id) {
                ids[n++] = id;
                break;
            }
    }
    return n;
}

int topo_numa_node_for_cap(const Topology *t, const int *ids, int n, unsigned cap_no,
                           int pinned_cpu)
{
    const TopoCpu *c = pinned_cpu >= 0 ? topo_cpu(t, pinned_cpu) : NULL;
    if (c != NULL)
        for (int i = 0; i < n; i++)
            if (ids[i] == c->node_id)
                return i;
    return (int)(cap_no % (unsigned)n);
}

int topo_node_cpus(const Topology *t, int node_id, cpu_set_t *set)
{
    CPU_ZERO(set);
    int n = 0;
    for (int k = 0; k < t->n_logical; k++)
        if (t->cpus[k].node_id == node_id) {
            CPU_SET(t->cpus[k].id, set);
            n++;
        }
    return n;
}

static const char *plural(int n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

void topo_describe(const Topology *t, FILE *out)
{
    size_t len = 8 * (size_t)(t->n_logical > 0 ? t->n_logical : 1) + 32;
    char *buf = malloc(len);
    int *ids = malloc((size_t)(t->n_logical > 0 ? t->n_logical : 1) * sizeof *ids);
    if (buf == NULL || ids == NULL) {
        free(buf);
        free(ids);
        fprintf(out, "topology: %d logical CPUs, %d physical cores\n", t->n_logical,
                t->n_physical);
        return;
    }
    fprintf(out, "topology: %d logical %s (%d online), %d physical %s (up to %d %s/core), "
            "%d %s, %d NUMA %s\n",
            t->n_logical, plural(t->n_logical, "CPU", "CPUs"), t->n_online,
            t->n_physical, plural(t->n_physical, "core", "cores"),
            t->max_smt, plural(t->max_smt, "thread", "threads"),
            t->n_packages, plural(t->n_packages, "package", "packages"),
            t->n_nodes, plural(t->n_nodes, "node", "nodes"));
    fprintf(out, "  source: %s, NUMA: %s, mask: %s, root: %s\n",
            t->source ? t->source : "?", t->numa_source ? t->numa_source : "?",
            t->mask_source ? t->mask_source : "?", t->root[0] ? t->root : "/");
    fprintf(out, "  logical order:  %s\n",
            topo_format_cpulist(buf, len, t->logical_order, t->n_logical));
    fprintf(out, "  physical order: %s\n",
            topo_format_cpulist(buf, len, t->physical_order, t->n_physical));
    for (int pass = 0; pass < 2; pass++) {
        int groups = pass == 0 ? t->n_packages : t->n_nodes;
        for (int g = 0; g < groups; g++) {
            int n = 0, cores = 0, raw = -1;
            for (int k = 0; k < t->n_logical; k++) {
                const TopoCpu *c = &t->cpus[k];
                if ((pass == 0 ? c->package : c->node) != g)
                    continue;
                raw = pass == 0 ? c->package_id : c->node_id;
                ids[n++] = c->id;
                cores += c->smt_rank == 0;
            }
            fprintf(out, "  %s %d: %d %s, cpus %s\n", pass == 0 ? "package" : "node", raw,
                    cores, plural(cores, "core", "cores"), topo_format_cpulist(buf, len, ids, n));
        }
    }
    free(buf);
    free(ids);
}

/* --- the process's topology ------------------------------------------------------------- */

static Topology the_topo;
static pthread_once_t the_topo_once = PTHREAD_ONCE_INIT;
static TopoCpu fallback_cpu;
static int fallback_order[1];

static void load_the_topo(void)
{
    char err[256];
    if (topo_load(&the_topo, NULL, NULL, err, sizeof err) == 0)
        return;
    fprintf(stderr, "rtslab: warning: cannot read the CPU topology (%s); assuming one CPU\n",
            err);
    int cpu = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < TOPO_MAX_CPUS; c++)
            if (CPU_ISSET(c, &set)) {
                cpu = c;
                break;
            }
    fallback_cpu = (TopoCpu){ .id = cpu, .core_id = -1 };
    fallback_order[0] = cpu;
    the_topo.n_logical = the_topo.n_physical = the_topo.n_packages = 1;
    the_topo.n_nodes = the_topo.n_online = the_topo.max_smt = 1;
    the_topo.cpus = &fallback_cpu;
    the_topo.logical_order = the_topo.physical_order = fallback_order;
    the_topo.source = "fallback";
    the_topo.numa_source = "none";
    if (the_topo.mask_source == NULL)
        the_topo.mask_source = "none";
}

const Topology *topo_get(void)
{
    pthread_once(&the_topo_once, load_the_topo);
    return &the_topo;
}
