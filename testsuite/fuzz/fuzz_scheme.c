/* Fuzzing the Scheme reader, expander and compiler (issue 4, "Bad input").
 *
 * One input is a program text (any bytes). The harness reads it with the reader
 * (sch_port_open_utf8_in + sch_read until the end or a syntax error) and, when all of it
 * reads, compiles it (sch_compile_toplevel). Either step must end in a result or an error
 * message "fuzz.scm:LINE:COL: ..." -- never a crash, a hang, or a sanitizer report -- and
 * the bytecode made must pass check_proto (what the VM trusts of it). The compiled code is
 * not run (it could loop forever).
 *
 * The runtime: the compiler builds its constants in the heap (through the calling OS thread's capability), so it runs
 * on a runtime thread. Every input is one rts_run_main with a C frame (fuzz_frame) that
 * reads and compiles it and returns; the first call boots the Scheme layer (sch_boot:
 * symbols, record types, primitives; the prelude thunk it returns is not run -- compiling
 * needs none of it). rts_run_main may be called again after the main thread finished.
 * `include` is turned off (sch_include_enabled): an input must not make the compiler read
 * files (/dev/zero, or whatever else a path names); it is a syntax error here.
 *
 * Two builds of this file:
 *   libFuzzer (clang -fsanitize=fuzzer,...; `make fuzz`): LLVMFuzzerInitialize starts the
 *     runtime once, LLVMFuzzerTestOneInput runs each input. Run it with -detect_leaks=0:
 *     compiled prototypes and the names the expander interns live forever by design, so
 *     each input leaves more allocated than it found, and libFuzzer's per-input leak check
 *     would run LeakSanitizer after nearly every input (it finds nothing unreachable).
 *   -DFUZZ_STANDALONE (any C compiler; tests/fuzz/fuzz_scheme_replay, run by `make check`):
 *       fuzz_scheme_replay [--no-fork] [--timeout SECONDS] FILE|DIR...
 *     runs every FILE, and every file in each DIR (names starting with '.' left out), through
 *     the same function, each in a child process of its own (so a crash is counted and
 *     named, and the next input still runs) unless --no-fork; a child that runs longer than
 *     the timeout (default 60 s) is killed and counted. It prints "N inputs, K crashes" and
 *     exits 1 when K > 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scheme/vm.h"

static const uint8_t *input;
static size_t input_size;
static bool booted;

/* Frees what a compiled prototype owns, keeping the Proto itself: prototypes live forever
 * by design (vm_register_proto keeps every one, and one with constants registered
 * &p->consts as a GC root), so the struct stays, emptied; the constants become garbage once
 * consts is #f. Without this the fuzzer's memory would grow by every program it compiles. */
static void release_proto(Proto *p)
{
    for (int i = 0; i < p->nchildren; i++)
        release_proto(p->children[i]);
    free(p->children);
    free(p->code);
    free(p->pos);
    free(p->files);
    memset(p, 0, sizeof *p);
    p->consts = RTS_FALSE;
}

static void __attribute__((noreturn)) bad(const char *what, const char *msg)
{
    fflush(stdout);
    fprintf(stderr, "fuzz_scheme: %s: \"%s\"\n", what, msg);
    abort();
}

/* --- a bytecode check: what the compiler makes, the VM trusts ------------------------------- */

static void __attribute__((noreturn)) bad_code(const Proto *p, size_t at, const char *what)
{
    fflush(stdout);
    fprintf(stderr, "fuzz_scheme: bad bytecode in %s (%s:%d:%d) at %zu: %s\n",
            p->name ? p->name : "anonymous", p->file ? p->file : "?", p->line, p->col, at, what);
    vm_disassemble(p, 0);
    abort();
}

/* Operand kinds, per instruction (vm.h): a frame slot read or written, a constant naming
 * a global, a jump offset; others (immediates, counts, indices) are checked apart. */
enum { K_SLOT = 1, K_SYMK, K_ANYK, K_OFF, K_OTHER };

static void operand_kinds(int op, int kinds[3])
{
    kinds[0] = kinds[1] = kinds[2] = K_OTHER;
    switch (op) {
    case OP_MOV: case OP_UNBOX: case OP_SETBOX: case OP_CAR: case OP_CDR: case OP_NOT:
    case OP_NULLP: case OP_PAIRP: case OP_ZEROP: case OP_SETCAR: case OP_SETCDR:
        kinds[0] = kinds[1] = K_SLOT; break;
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
    case OP_NUMEQ: case OP_EQ: case OP_CONS: case OP_VREF: case OP_VSET:
        kinds[0] = kinds[1] = kinds[2] = K_SLOT; break;
    case OP_CONST:     kinds[0] = K_SLOT; kinds[1] = K_ANYK; break;
    case OP_IMM:       kinds[0] = K_SLOT; break;
    case OP_GLOBAL:    kinds[0] = K_SLOT; kinds[1] = K_SYMK; break;
    case OP_SETGLOBAL: case OP_DEFGLOBAL: kinds[0] = K_SYMK; kinds[1] = K_SLOT; break;
    case OP_FREE:      kinds[0] = K_SLOT; break;
    case OP_BOX:       kinds[0] = K_SLOT; break;
    case OP_CHECKDEF:  kinds[0] = K_SLOT; kinds[1] = K_SYMK; break;
    case OP_CLOSURE:   kinds[0] = K_SLOT; break;
    case OP_SETFREE:   kinds[0] = K_SLOT; kinds[2] = K_SLOT; break;
    case OP_JMP:       kinds[0] = K_OFF; break;
    case OP_JF:        kinds[0] = K_SLOT; kinds[1] = K_OFF; break;
    case OP_RET:       kinds[0] = K_SLOT; break;
    case OP_ADDI:      kinds[0] = kinds[1] = K_SLOT; break;
    case OP_JNLT: case OP_JNLE: case OP_JNGT: case OP_JNGE: case OP_JNNUMEQ:
        kinds[0] = kinds[1] = K_SLOT; kinds[2] = K_OFF; break;
    case OP_JNLTI: case OP_JNLEI: case OP_JNGTI: case OP_JNGEI: case OP_JNNUMEQI:
        kinds[0] = K_SLOT; kinds[2] = K_OFF; break;
    default:           break;      /* CALL, TAILCALL: below; a new instruction: unchecked */
    }
}

/* Every instruction is whole, names slots of the frame (not its two header slots),
 * constants that exist, children that exist with as many free variables as it gives them,
 * and jumps to instruction starts; the code ends with HALT. */
static void check_proto(const Proto *p)
{
    size_t nk = p->consts == RTS_FALSE ? 0 : rts_vector_length(p->consts);
    int fs = p->frame_size;
    if (fs < 2 + p->nparams + (p->rest ? 1 : 0)) bad_code(p, 0, "frame smaller than the parameters");
    bool *start = calloc(p->ncode + 1, 1);
    size_t *jumps = malloc((p->ncode + 1) * sizeof *jumps), njumps = 0;
    if (!start || !jumps) abort();
    size_t i = 0, last = 0;
    while (i < p->ncode) {
        int op = p->code[i];
        if (op < 0 || op >= OP_COUNT) bad_code(p, i, "no such instruction");
        start[i] = true;
        last = i;
        size_t n = (size_t)vm_op_operands[op];
        if (op == OP_CLOSURE) {
            if (i + 3 >= p->ncode) bad_code(p, i, "truncated CLOSURE");
            n += (size_t)p->code[i + 3];
        }
        if (i + n >= p->ncode) bad_code(p, i, "truncated instruction");
        const int32_t *a = &p->code[i + 1];
        int kinds[3];
        operand_kinds(op, kinds);
        for (size_t k = 0; k < 3 && k < (size_t)vm_op_operands[op]; k++) {
            if (kinds[k] == K_SLOT && (a[k] < 2 || a[k] >= fs)) bad_code(p, i, "slot out of the frame");
            if ((kinds[k] == K_SYMK || kinds[k] == K_ANYK) && (a[k] < 0 || (size_t)a[k] >= nk))
                bad_code(p, i, "no such constant");
            if (kinds[k] == K_SYMK && !sch_is_symbol(rts_field(p->consts, (size_t)a[k])))
                bad_code(p, i, "a global named by a non-symbol");
            if (kinds[k] == K_OFF) {
                int64_t to = (int64_t)(i + 1 + n) + a[k];
                if (to < 0 || to >= (int64_t)p->ncode) bad_code(p, i, "jump out of the code");
                jumps[njumps++] = (size_t)to;
            }
        }
        if (op == OP_FREE && (a[1] < 0 || a[1] >= p->nfree)) bad_code(p, i, "no such free variable");
        if (op == OP_CALL || op == OP_TAILCALL) {
            if (a[0] < 2 || a[1] < 0 || (int64_t)a[0] + a[1] >= fs) bad_code(p, i, "call outside the frame");
            if (op == OP_CALL && (a[2] < 2 || a[2] >= fs)) bad_code(p, i, "call result outside the frame");
            /* a tail-called primitive's result lands in a[2], and RET a[2] returns it */
            if (op == OP_TAILCALL && (a[2] < 2 || a[2] >= fs)) bad_code(p, i, "tail call result outside the frame");
            if (op == OP_TAILCALL && (i + 5 >= p->ncode || p->code[i + 4] != OP_RET || p->code[i + 5] != a[2]))
                bad_code(p, i, "a tail call not followed by RET of its result slot");
        }
        if (op == OP_CLOSURE) {
            if (a[1] < 0 || a[1] >= p->nchildren) bad_code(p, i, "no such child");
            if (a[2] != p->children[a[1]]->nfree) bad_code(p, i, "closure of the wrong size");
            for (int k = 0; k < a[2]; k++)
                if (a[3 + k] < 2 || a[3 + k] >= fs) bad_code(p, i, "closure slot out of the frame");
        }
        i += 1 + n;
    }
    if (p->ncode == 0 || p->code[last] != OP_HALT) bad_code(p, last, "code does not end with HALT");
    for (size_t k = 0; k < njumps; k++)
        if (!start[jumps[k]]) bad_code(p, jumps[k], "jump into an instruction");
    /* the position table (Note [Source positions] in vm.h): sorted, at instruction starts,
     * naming files that exist */
    for (uint32_t k = 0; k < p->npos; k++) {
        if (p->pos[k].pc >= p->ncode || !start[p->pos[k].pc]) bad_code(p, p->pos[k].pc, "a position entry inside an instruction");
        if (k && p->pos[k].pc <= p->pos[k - 1].pc) bad_code(p, p->pos[k].pc, "position entries out of order");
        if (p->pos[k].file > p->nfiles) bad_code(p, p->pos[k].pc, "a position entry naming no file");
        if (p->pos[k].line == 0) bad_code(p, p->pos[k].pc, "a position entry without a line");
    }
    free(start);
    free(jumps);
    for (int c = 0; c < p->nchildren; c++)
        check_proto(p->children[c]);
}

/* "fuzz.scm:LINE:COL: message", as the driver prints syntax errors. */
static bool well_formed(const char *msg)
{
    static const char prefix[] = "fuzz.scm:";
    if (strncmp(msg, prefix, sizeof prefix - 1) != 0) return false;
    const char *p = msg + sizeof prefix - 1;
    for (int field = 0; field < 2; field++) {
        if (*p < '0' || *p > '9') return false;
        while (*p >= '0' && *p <= '9') p++;
        if (*p++ != ':') return false;
    }
    return *p == ' ' && p[1];
}

static void run_input(RtsCap *cap)
{
    (void)cap;
    DArena *a = datum_arena_new();
    SchPort *in = sch_port_open_utf8_in((const char *)input, input_size, "fuzz.scm");
    Datum *forms = DNIL, **tail = &forms;
    SchReadError rerr;
    for (;;) {
        Datum *d = sch_read(a, in, &rerr);
        if (!d) break;
        if (rerr.msg[0]) bad("sch_read returned a datum and an error", rerr.msg);
        *tail = datum_cons(a, d, DNIL);
        tail = &(*tail)->u.pair.cdr;
    }
    sch_port_close(in);
    if (rerr.msg[0]) {
        if (rerr.line < 1 || rerr.col < 1) bad("a read error without a position", rerr.msg);
    } else {
        SchCompileError cerr;
        memset(&cerr, 0, sizeof cerr);
        Proto *p = sch_compile_toplevel(forms, "fuzz.scm", false, &cerr);
        if (p) {
            check_proto(p);
            release_proto(p);
        } else if (!cerr.msg[0]) {
            bad("sch_compile_toplevel returned NULL without a message", "");
        } else if (!well_formed(cerr.msg)) {
            bad("a compile error not of the form fuzz.scm:LINE:COL: message", cerr.msg);
        }
    }
    datum_arena_free(a);
}

static RtsStep fuzz_frame(RtsCap *cap)
{
    if (!booted) {
        (void)sch_boot(cap);          /* the prelude thunk: not run */
        booted = true;
    }
    if (input)
        run_input(cap);
    rts_pop_frame(cap);
    return RTS_NEXT;
}

static void start_runtime(void)
{
    /* One capability, whatever RTSLAB_RTS says about the rest (-A, -DS, ...). */
    static char arg0[] = "fuzz_scheme", rts_on[] = "+RTS", n1[] = "-N1", rts_off[] = "-RTS";
    static char *args[] = { arg0, rts_on, n1, rts_off, NULL };
    int argc = 4;
    char **argv = args;
    rts_init(&argc, &argv);
    sch_include_enabled = false;
    input = NULL;
    rts_run_main(fuzz_frame, 1);      /* boots */
}

static void fuzz_one(const uint8_t *data, size_t size)
{
    input = data;
    input_size = size;
    rts_run_main(fuzz_frame, 1);
    input = NULL;
}

#ifndef FUZZ_STANDALONE

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    start_runtime();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(data, size);
    return 0;
}

#else  /* FUZZ_STANDALONE: replays files */

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct { char **v; size_t n, cap; } Names;

static void add_name(Names *ns, char *s)
{
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? 2 * ns->cap : 64;
        ns->v = realloc(ns->v, ns->cap * sizeof *ns->v);
        if (!ns->v) { perror("fuzz_scheme_replay"); exit(2); }
    }
    ns->v[ns->n++] = s;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* FILE itself, or the regular files in the directory FILE, sorted. */
static void collect(Names *ns, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz_scheme_replay: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    if (!S_ISDIR(st.st_mode)) {
        add_name(ns, strdup(path));
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "fuzz_scheme_replay: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    size_t first = ns->n;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *full = malloc(len);
        if (!full) { perror("fuzz_scheme_replay"); exit(2); }
        snprintf(full, len, "%s/%s", path, e->d_name);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) add_name(ns, full);
        else free(full);
    }
    closedir(d);
    qsort(ns->v + first, ns->n - first, sizeof *ns->v, cmp_names);
}

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_scheme_replay: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    if (!buf) { perror("fuzz_scheme_replay"); exit(2); }
    fclose(f);
    *size = n;
    return buf;
}

static void run_file(const char *path)
{
    size_t size;
    uint8_t *data = slurp(path, &size);
    fuzz_one(data, size);
    free(data);
}

int main(int argc, char **argv)
{
    bool fork_each = true;
    unsigned timeout = 60;
    Names names = { 0 };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-fork") == 0) {
            fork_each = false;
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            timeout = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: fuzz_scheme_replay [--no-fork] [--timeout SECONDS] FILE|DIR...\n");
            return 2;
        } else {
            collect(&names, argv[i]);
        }
    }
    size_t crashes = 0;
    if (!fork_each) {
        start_runtime();
        for (size_t i = 0; i < names.n; i++)
            run_file(names.v[i]);
    } else {
        for (size_t i = 0; i < names.n; i++) {
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                perror("fuzz_scheme_replay: fork");
                return 2;
            }
            if (pid == 0) {
                alarm(timeout);
                start_runtime();
                run_file(names.v[i]);
                exit(0);                      /* (LeakSanitizer checks the child here) */
            }
            int status;
            while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) { perror("fuzz_scheme_replay: waitpid"); return 2; }
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
            crashes++;
            if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
                printf("CRASH %s: timed out after %u s\n", names.v[i], timeout);
            else if (WIFSIGNALED(status))
                printf("CRASH %s: killed by signal %d (%s)\n", names.v[i], WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
            else
                printf("CRASH %s: exit status %d\n", names.v[i], WEXITSTATUS(status));
        }
    }
    printf("%zu inputs, %zu crashes\n", names.n, crashes);
    for (size_t i = 0; i < names.n; i++)
        free(names.v[i]);
    free(names.v);
    return crashes ? 1 : 0;
}

#endif
