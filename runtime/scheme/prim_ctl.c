/* Primitives for control, threads, MVars, errors, time and the process; and the Scheme
 * layer's start-up (sch_boot), at the top of Note [Scheme layers]. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rts/vm_api.h"
#include "scheme/vm.h"

static Value protect_list(RtsCap *cap, Value *items, int n)
{
    size_t mark = sch_mark(cap);
    Value *acc = sch_protect(cap, RTS_NIL);
    for (int i = n; i-- > 0;)
        *acc = rts_cons(cap, items[i], *acc);
    Value r = *acc;
    sch_release(cap, mark);
    return r;
}

/* --- values ------------------------------------------------------------------------------- */

static Value p_values(RtsCap *cap, Value *argv, int argc)
{
    if (argc == 1) return argv[0];
    size_t mark = sch_mark(cap);
    Value *l = sch_protect(cap, protect_list(cap, argv, argc));
    Value r = sch_make_record(cap, sch_rtd_values, 1, l);
    sch_release(cap, mark);
    return r;
}
static Value p_values_p(RtsCap *cap, Value *argv, int argc)
{ (void)cap; (void)argc; return rts_bool(sch_is_record_of(argv[0], sch_rtd_values)); }
static Value p_values_list(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    if (!sch_is_record_of(argv[0], sch_rtd_values)) sch_type_error(cap, "%values->list", "values", argv[0]);
    return sch_record_ref(argv[0], 0);
}

/* --- records ---------------------------------------------------------------------------------- */

/* (%record rtd field ...): the constructor define-record-type expands to. */
static Value p_record(RtsCap *cap, Value *argv, int argc)
{
    if (!sch_is_rtd(argv[0])) sch_type_error(cap, "%record", "record type", argv[0]);
    return sch_make_record(cap, argv[0], (size_t)argc - 1, argv + 1);
}

/* --- errors and the dynamic state ------------------------------------------------------------ */

static Value p_make_error(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return sch_make_record(cap, sch_rtd_error, 2, argv);
}
static Value p_error_object_p(RtsCap *cap, Value *argv, int argc)
{ (void)cap; (void)argc; return rts_bool(sch_is_record_of(argv[0], sch_rtd_error)); }
static Value error_field(RtsCap *cap, Value e, int f, const char *who)
{
    if (!sch_is_record_of(e, sch_rtd_error)) sch_type_error(cap, who, "error object", e);
    return sch_record_ref(e, (size_t)f);
}
static Value p_error_message(RtsCap *cap, Value *argv, int argc)
{ (void)argc; return error_field(cap, argv[0], ERR_MESSAGE, "error-object-message"); }
static Value p_error_irritants(RtsCap *cap, Value *argv, int argc)
{ (void)argc; return error_field(cap, argv[0], ERR_IRRITANTS, "error-object-irritants"); }
static Value p_false1(RtsCap *cap, Value *argv, int argc)
{ (void)cap; (void)argv; (void)argc; return RTS_FALSE; }

/* --- SIGINT and SIGTERM (Note [Interrupting the main thread] in sched/schedule.c) ------------- */

/* The error objects raised in the main thread by SIGINT and SIGTERM (made on first use; GC
 * roots), so that %uncaught knows them, and by a deadlock (RTS_DEADLOCK; its uncaught report
 * is the ordinary one, with the backtrace of where the main thread waited). */
static Value interrupt_objs[3];
static const char *const interrupt_msgs[3] = {
    "interrupted (SIGINT)", "terminated (SIGTERM)", "thread blocked indefinitely in an MVar operation"
};

static int interrupt_index(int sig) { return sig == RTS_DEADLOCK ? 2 : sig == SIGTERM; }

static void on_interrupt(RtsCap *cap, int sig)
{
    size_t mark = sch_mark(cap);
    /* a local root: making the error object below allocates, and a GC moves the closure */
    Value *raise = sch_protect(cap, sch_symbol_value(sch_intern(cap, "%sys:raise", 10)));
    if (!sch_is_procedure(*raise)) {     /* before the prelude has run */
        sch_flush_all();
        if (sig == RTS_DEADLOCK)
            rts_thread_error(cap, "%s", interrupt_msgs[2]);
        rts_exit(128 + sig);
    }
    int i = interrupt_index(sig);
    if (!interrupt_objs[i]) {
        const char *msg = interrupt_msgs[i];
        /* the fields in two adjacent local roots, which the GC updates */
        Value *f = sch_protect(cap, sch_string_from_utf8(cap, msg, strlen(msg)));
        sch_protect(cap, RTS_NIL);
        interrupt_objs[i] = sch_make_record(cap, sch_rtd_error, 2, f);
        rts_add_root(&interrupt_objs[i]);
    }
    vm_push_call1(cap, *raise, interrupt_objs[i]);
    sch_release(cap, mark);
}

/* An uncaught interrupt ends the program as an uncaught error does, with exit status 128 +
 * the signal (130, 143), as a shell reports a process killed by it. */
static Value p_uncaught(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    for (int i = 0; i < 2; i++)
        if (interrupt_objs[i] && argv[0] == interrupt_objs[i]) {
            sch_flush_all();
            fprintf(stderr, "rtslab: %s\n", interrupt_msgs[i]);
            rts_exit(128 + (i ? SIGTERM : SIGINT));
        }
    vm_uncaught(cap, argv[0]);
}

/* A stack overflow (Note [Stack overflow] in sched/stack.h) is an ordinary error object
 * raised in the thread, within the headroom the runtime grants above -K, so `guard`
 * catches it and the REPL goes on; uncaught, it is reported with its backtrace. Outside
 * the VM (a C frame pushed with no Scheme frame to raise into) it cannot be raised. */
static bool on_stack_overflow(RtsCap *cap)
{
    if (!sch_catch)
        return false;
    size_t k = base_cfg->max_stack;
    char msg[160];
    snprintf(msg, sizeof msg, "stack overflow: the limit is %zu bytes (+RTS -K%zu; -K<size> raises it)", k, k);
    sch_error(cap, NULL, msg, 0);
}

/* The REPL reports an error, with the backtrace of its program's frames, and carries on. */
static Value p_report_error(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    SchPort *err = sch_port_stderr();
    sch_flush_all();
    vm_print_error(err, argv[0]);
    vm_backtrace(cap, err, true);       /* the handler runs above the frames that raised */
    sch_port_putc(err, '\n');
    sch_port_flush(err);
    return RTS_UNSPEC;
}

static Value dyn_get(RtsCap *cap, RtvDynamic which)
{
    Value v = rtv_dynamic(cap, which);
    return v == RTS_FALSE ? RTS_NIL : v;
}
static Value p_handlers(RtsCap *cap, Value *argv, int argc)
{ (void)argv; (void)argc; return dyn_get(cap, RTV_HANDLERS); }
static Value p_set_handlers(RtsCap *cap, Value *argv, int argc)
{ (void)argc; rtv_set_dynamic(cap, RTV_HANDLERS, argv[0]); return RTS_UNSPEC; }
static Value p_continuation_live(RtsCap *cap, Value *argv, int argc)
{ (void)argc; return rts_bool(vm_continuation_live(cap, argv[0])); }
static Value p_winders(RtsCap *cap, Value *argv, int argc)
{ (void)argv; (void)argc; return dyn_get(cap, RTV_WINDERS); }
static Value p_set_winders(RtsCap *cap, Value *argv, int argc)
{ (void)argc; rtv_set_dynamic(cap, RTV_WINDERS, argv[0]); return RTS_UNSPEC; }

/* --- threads and MVars -------------------------------------------------------------------------- */

static Value p_fork(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    if (!sch_is_procedure(argv[0])) sch_type_error(cap, "fork", "procedure", argv[0]);
    size_t mark = sch_mark(cap);
    Value *t = sch_protect(cap, vm_new_thread(cap, argv[0]));
    rts_thread_start(cap, *t);
    Value r = *t;
    sch_release(cap, mark);
    return r;
}

static Value p_fork_on(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    if (!rts_is_fixnum(argv[0]) || rts_fixnum_val(argv[0]) < 0)
        sch_type_error(cap, "fork-on", "non-negative fixnum", argv[0]);
    if (!sch_is_procedure(argv[1])) sch_type_error(cap, "fork-on", "procedure", argv[1]);
    size_t mark = sch_mark(cap);
    Value *t = sch_protect(cap, vm_new_thread(cap, argv[1]));
    rts_thread_start_on(cap, *t, (unsigned)rts_fixnum_val(argv[0]));
    Value r = *t;
    sch_release(cap, mark);
    return r;
}

/* A thread's header also holds its lock bit, which other capabilities set: read it atomically. */
static bool is_thread(Value t)
{
    return rts_is_ptr(t) && hdr_type(__atomic_load_n(obj_ptr(t), __ATOMIC_RELAXED)) == T_THREAD;
}
static void need_thread(RtsCap *cap, Value t, const char *who)
{
    if (!is_thread(t)) sch_type_error(cap, who, "thread", t);
}

static Value p_thread_join(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    need_thread(cap, argv[0], "thread-join");
    if (argv[0] == rtv_current_thread(cap))
        sch_error(cap, "thread-join", "a thread cannot join itself", 0);
    return rts_thread_join(cap, argv[0]) ? rts_result(cap) : SCH_BLOCK;
}

static Value p_thread_p(RtsCap *cap, Value *argv, int argc)
{ (void)cap; (void)argc; return rts_bool(is_thread(argv[0])); }
static Value p_current_thread(RtsCap *cap, Value *argv, int argc)
{ (void)argv; (void)argc; return rts_current_thread(cap); }
static Value p_thread_id(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    need_thread(cap, argv[0], "thread-id");
    return rts_fixnum(rts_thread_id(argv[0]));
}

static Value p_yield(RtsCap *cap, Value *argv, int argc)
{
    (void)argv; (void)argc;
    rts_set_result(cap, RTS_UNSPEC);
    return SCH_YIELD;
}

/* The longest sleep (about 95 years): with the monotonic clock's reading added, its wake-up
 * time in nanoseconds still fits a fixnum (2^62 ns). */
#define SLEEP_FOREVER_S 3.0e9

static Value p_sleep(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    double secs;
    if (rts_is_fixnum(argv[0])) secs = (double)rts_fixnum_val(argv[0]);
    else if (sch_is_flonum(argv[0])) secs = rts_flonum_val(argv[0]);
    else sch_type_error(cap, "sleep", "real number", argv[0]);
    if (secs != secs) sch_error(cap, "sleep", "the duration is not a number:", 1, argv[0]);
    if (secs < 0) sch_error(cap, "sleep", "negative duration:", 1, argv[0]);
    /* Saturate: a wake-up time past the fixnum range of nanoseconds (146 years) wrapped
     * round to the past, so (sleep +inf.0) returned at once; anything longer than
     * SLEEP_FOREVER_S sleeps until the program ends. */
    if (secs > SLEEP_FOREVER_S) secs = SLEEP_FOREVER_S;
    rts_set_result(cap, RTS_UNSPEC);
    rts_sleep(cap, secs);
    return SCH_BLOCK;
}

static Value p_make_mvar(RtsCap *cap, Value *argv, int argc)
{
    Value m = rts_new_mvar(cap);
    if (argc == 1 && !rts_mvar_try_put(cap, m, argv[0]))
        rtv_fatal("a new MVar is full");
    return m;
}

static bool is_mvar(Value m)          /* likewise for an MVar's lock bit */
{
    return rts_is_ptr(m) && hdr_type(__atomic_load_n(obj_ptr(m), __ATOMIC_RELAXED)) == T_MVAR;
}
static void need_mvar(RtsCap *cap, Value m, const char *who)
{
    if (!is_mvar(m)) sch_type_error(cap, who, "MVar", m);
}

static Value p_mvar_take(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    need_mvar(cap, argv[0], "mvar-take!");
    Value out;
    return rts_mvar_take(cap, argv[0], &out) ? out : SCH_BLOCK;
}
static Value p_mvar_read(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    need_mvar(cap, argv[0], "mvar-read");
    Value out;
    return rts_mvar_read(cap, argv[0], &out) ? out : SCH_BLOCK;
}
static Value p_mvar_put(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    need_mvar(cap, argv[0], "mvar-put!");
    rts_set_result(cap, RTS_UNSPEC);
    return rts_mvar_put(cap, argv[0], argv[1]) ? RTS_UNSPEC : SCH_BLOCK;
}
static Value p_mvar_try_take(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    need_mvar(cap, argv[0], "mvar-try-take!");
    Value out;
    return rts_mvar_try_take(cap, argv[0], &out) ? out : RTS_FALSE;
}
static Value p_mvar_try_put(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    need_mvar(cap, argv[0], "mvar-try-put!");
    return rts_bool(rts_mvar_try_put(cap, argv[0], argv[1]));
}
static Value p_mvar_p(RtsCap *cap, Value *argv, int argc)
{ (void)cap; (void)argc; return rts_bool(is_mvar(argv[0])); }

static Value p_num_caps(RtsCap *cap, Value *argv, int argc)
{ (void)cap; (void)argv; (void)argc; return rts_fixnum(rts_n_caps()); }
static Value p_current_cap(RtsCap *cap, Value *argv, int argc)
{ (void)argv; (void)argc; return rts_fixnum(rts_cap_no(cap)); }

/* --- time and the process ------------------------------------------------------------------------ */

static Value p_current_jiffy(RtsCap *cap, Value *argv, int argc)
{ (void)cap; (void)argv; (void)argc; return rts_fixnum((intptr_t)rtv_now_ns()); }
static Value p_jiffies_per_second(RtsCap *cap, Value *argv, int argc)
{ (void)cap; (void)argv; (void)argc; return rts_fixnum(1000000000); }
static Value p_current_second(RtsCap *cap, Value *argv, int argc)
{
    (void)argv; (void)argc;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return rts_make_flonum(cap, (double)ts.tv_sec + ts.tv_nsec * 1e-9);
}

static int cl_argc;
static char **cl_argv;
void sch_set_command_line(int argc, char **argv) { cl_argc = argc; cl_argv = argv; }

static Value p_command_line(RtsCap *cap, Value *argv, int argc)
{
    (void)argv; (void)argc;
    size_t mark = sch_mark(cap);
    Value *acc = sch_protect(cap, RTS_NIL);
    for (int i = cl_argc; i-- > 0;) {
        Value s = sch_string_from_utf8(cap, cl_argv[i], strlen(cl_argv[i]));
        *acc = rts_cons(cap, s, *acc);
    }
    Value r = *acc;
    sch_release(cap, mark);
    return r;
}

/* #t or no argument: 0; #f: 1; an integer: itself, which must be 0..255, what a POSIX exit
 * status holds (300 would exit 44); anything else is an error, as an integer out of range
 * is (R7RS leaves it to the implementation; before: exit 1, saying nothing). */
static int exit_status(RtsCap *cap, const char *who, Value v)
{
    if (v == RTS_TRUE || v == RTS_UNSPEC) return 0;
    if (v == RTS_FALSE) return 1;
    if (rts_is_fixnum(v)) {
        intptr_t n = rts_fixnum_val(v);
        if (n < 0 || n > 255) sch_error(cap, who, "exit status out of range 0 to 255:", 1, v);
        return (int)n;
    }
    sch_error(cap, who, "expected #t, #f or an exact integer 0 to 255 as the exit status, got", 1, v);
}
static Value p_exit(RtsCap *cap, Value *argv, int argc)
{
    int status = exit_status(cap, "exit", argc ? argv[0] : RTS_UNSPEC);
    if (!sch_flush_all() && status == 0)
        status = 1;
    rts_exit(status);
}
/* R7RS: exits "without running any outstanding dynamic-wind after procedures" (exit, in the
 * prelude, runs them first, then %exit). Those are the program's clean-up; the runtime's
 * reports are not, so -s, the eventlog and the profile are written as after exit, as GHC's
 * hs_exit writes +RTS -s (before: _Exit, which left the -s file empty and wrote no eventlog
 * or profile; docs/rts-options.md, "The output files"). */
static Value p_emergency_exit(RtsCap *cap, Value *argv, int argc)
{
    int status = exit_status(cap, "emergency-exit", argc ? argv[0] : RTS_UNSPEC);
    if (!sch_flush_all() && status == 0)
        status = 1;
    rts_exit(status);
}

static Value p_getenv(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    char *name = sch_string_to_cstr(cap, argv[0], "get-environment-variable", "variable name");
    const char *v = getenv(name);
    free(name);
    return v ? sch_string_from_utf8(cap, v, strlen(v)) : RTS_FALSE;
}

static Value p_gc(RtsCap *cap, Value *argv, int argc)
{
    rts_gc(cap, argc == 0 || argv[0] != RTS_FALSE);
    return RTS_UNSPEC;
}

static const SchPrimDef prims_ctl[] = {
    { "values", p_values, 0, -1 },
    { "%values", p_values, 0, -1 },
    { "%values?", p_values_p, 1, 1 },
    { "%values->list", p_values_list, 1, 1 },
    { "%record", p_record, 1, -1 },
    { "%make-error", p_make_error, 2, 2 },
    { "error-object?", p_error_object_p, 1, 1 },
    { "error-object-message", p_error_message, 1, 1 },
    { "error-object-irritants", p_error_irritants, 1, 1 },
    { "file-error?", p_false1, 1, 1 },
    { "read-error?", p_false1, 1, 1 },
    { "%uncaught", p_uncaught, 1, 1 },
    { "%report-error", p_report_error, 1, 1 },
    { "%handlers", p_handlers, 0, 0 },
    { "%set-handlers!", p_set_handlers, 1, 1 },
    { "%continuation-live?", p_continuation_live, 1, 1 },
    { "%winders", p_winders, 0, 0 },
    { "%set-winders!", p_set_winders, 1, 1 },
    { "fork", p_fork, 1, 1 },
    { "fork-on", p_fork_on, 2, 2 },
    { "thread-join", p_thread_join, 1, 1 },
    { "thread?", p_thread_p, 1, 1 },
    { "current-thread", p_current_thread, 0, 0 },
    { "thread-id", p_thread_id, 1, 1 },
    { "yield", p_yield, 0, 0 },
    { "sleep", p_sleep, 1, 1 },
    { "make-mvar", p_make_mvar, 0, 1 },
    { "mvar?", p_mvar_p, 1, 1 },
    { "mvar-take!", p_mvar_take, 1, 1 },
    { "mvar-read", p_mvar_read, 1, 1 },
    { "mvar-put!", p_mvar_put, 2, 2 },
    { "mvar-try-take!", p_mvar_try_take, 1, 1 },
    { "mvar-try-put!", p_mvar_try_put, 2, 2 },
    { "num-capabilities", p_num_caps, 0, 0 },
    { "current-capability", p_current_cap, 0, 0 },
    { "current-jiffy", p_current_jiffy, 0, 0 },
    { "jiffies-per-second", p_jiffies_per_second, 0, 0 },
    { "current-second", p_current_second, 0, 0 },
    { "command-line", p_command_line, 0, 0 },
    { "exit", p_exit, 0, 1 },
    { "%exit", p_exit, 0, 1 },
    { "emergency-exit", p_emergency_exit, 0, 1 },
    { "get-environment-variable", p_getenv, 1, 1 },
    { "gc", p_gc, 0, 1 },
    { NULL, NULL, 0, 0 }
};

/* --- start-up -------------------------------------------------------------------------------------- */

/* The port primitives, registered as %NAME, that wait for the IO manager and answer
 * %io-again to be called again: NAME is the primitive too, which the VM calls again (Note
 * [IO primitives called again] in vm.c). (read-bytevector and tcp-connect do more than
 * call again: the prelude's, through %io-retry.) */
static const char *const io_retried[] = {
    "read-char", "peek-char", "read-line", "read", "read-string",
    "flush-output-port", "close-port", "close-output-port", "tcp-accept",
};

static void define_prim(RtsCap *cap, const SchPrimDef *d, const char *name, bool io_retry)
{
    Proto *p = calloc(1, sizeof *p);
    if (!p) rtv_fatal("out of memory");
    p->name = name;
    p->prim = d->fn;
    p->min_args = d->min_args;
    p->max_args = d->max_args;
    p->consts = RTS_FALSE;
    p->system = true;
    p->io_retry = io_retry;
    vm_register_proto(p);
    sch_define_global(cap, name, vm_make_closure0(cap, p));
}

/* Defines every primitive as a global. */
static void prims_init(RtsCap *cap)
{
    const SchPrimDef *tables[] = { sch_prims_num, sch_prims_data, sch_prims_port, prims_ctl };
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const SchPrimDef *d = tables[t]; d->name; d++) {
            define_prim(cap, d, d->name, false);
            if (d->name[0] == '%')
                for (size_t i = 0; i < sizeof io_retried / sizeof io_retried[0]; i++)
                    if (strcmp(d->name + 1, io_retried[i]) == 0)
                        define_prim(cap, d, d->name + 1, true);
        }
}

static const char prelude_text[] = {
#include "scheme_prelude.inc"
};

Value sch_boot(RtsCap *cap)
{
    sch_objects_init(cap);
    vm_init(cap);
    prims_init(cap);
    rts_set_interrupt_handler(on_interrupt);
    rts_set_stack_overflow_handler(on_stack_overflow);
    DArena *a = datum_arena_new();
    SchPort *in = sch_port_open_utf8_in(prelude_text, sizeof prelude_text - 1, "prelude.scm");
    Datum *forms = DNIL, **tail = &forms;
    SchReadError rerr;
    for (;;) {
        Datum *d = sch_read(a, in, &rerr);
        if (!d) break;
        *tail = datum_cons(a, d, DNIL);
        tail = &(*tail)->u.pair.cdr;
    }
    sch_port_free(in);
    if (rerr.msg[0])
        rtv_fatal("prelude.scm:%d:%d: %s", rerr.line, rerr.col, rerr.msg);
    SchCompileError cerr;
    Proto *p = sch_compile_toplevel(forms, "prelude.scm", true, &cerr);
    datum_arena_free(a);
    if (!p)
        rtv_fatal("%s", cerr.msg);
    return vm_make_closure0(cap, p);
}
