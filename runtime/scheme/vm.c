/* The bytecode VM (Note [VM frames], Note [VM safe points] in vm.h). */
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include "rts/vm_api.h"
#include "scheme/vm.h"

const int vm_op_operands[OP_COUNT] = {
#define VM_N(name, n) n,
    VM_OPS(VM_N)
#undef VM_N
};
const char *const vm_op_names[OP_COUNT] = {
#define VM_S(name, n) #name,
    VM_OPS(VM_S)
#undef VM_S
};

static Value sym_raise = RTS_FALSE;       /* the global `raise` (prelude) */
static Value sym_io_again = RTS_FALSE;    /* %io-again (Note [IO primitives called again]) */
static Value tramp_closure = RTS_FALSE;   /* calls slot 2 with no arguments */
static Value tramp1_closure = RTS_FALSE;  /* calls slot 2 with slot 3 */
static Value cc_closure = RTS_FALSE;      /* the call/cc marker frame's procedure */

/* The trampoline: frame [tramp, pc, thunk]; tail-calls the thunk. */
static int32_t tramp_code[] = { OP_TAILCALL, 2, 0, 2, OP_RET, 2, OP_HALT };
static Proto tramp_proto = { .code = tramp_code, .ncode = 7, .consts = RTS_FALSE,
    .frame_size = 3, .nparams = 1, .name = "thread", .system = true };

/* The same for one argument: frame [tramp1, pc, f, x]. */
static int32_t tramp1_code[] = { OP_TAILCALL, 2, 1, 2, OP_RET, 2, OP_HALT };
static Proto tramp1_proto = { .code = tramp1_code, .ncode = 7, .consts = RTS_FALSE,
    .frame_size = 4, .nparams = 2, .name = "call", .system = true };

/* The call/cc marker frame [cc, pc, k, f, f', k']: calls f with k, returns its result.
 * %throw to k returns into this frame at CC_RET with the value in slot CC_VAL. */
enum { CC_FS = 6, CC_VAL = 4, CC_RET = 10 };
static int32_t cc_code[] = { OP_MOV, 4, 3, OP_MOV, 5, 2, OP_CALL, 4, 1, CC_VAL,
                             OP_RET, CC_VAL, OP_HALT };
static Proto cc_proto = { .code = cc_code, .ncode = 13, .consts = RTS_FALSE,
    .frame_size = CC_FS, .nparams = 2, .name = "call/cc", .system = true };

/* A frame that resumes here after `raise` returns: that never happens (the prelude's raise
 * does not return), and HALT says so if it does. Delivers into slot 1, then halts. The
 * frame's own pc, where the error was raised, is kept in its last slot (Note [The raise
 * trap]). */
static const int32_t raise_trap[] = { 1, OP_HALT };

/* Note [Tail calls of primitives]
 * A primitive runs on its caller's frame, which resumes with the result (SCH_BLOCK: when
 * the thread is woken). In a tail call that frame only returns the result, and the place
 * it resumes at is in its own code, right after the TAILCALL: the instruction's third
 * operand r names the slot that receives the result, and the compiler follows every
 * TAILCALL with RET r. So the frame of a primitive tail-called still says where it is in
 * its code: a deadlock in `(define (waiter) (mvar-take! m))` is reported at the
 * `(mvar-take! m)` (Note [Source positions] in vm.h). The fast path of TAILCALL, to a VM
 * procedure, never looks at r. */

/* Note [IO primitives called again]
 * A port primitive that waits for the IO manager (prim_port.c: Note [Ports through the IO
 * manager] in port.c) cannot be resumed half-way: it blocks the thread with the symbol
 * %io-again as its result, and is called again, with the same arguments, once the op is
 * done, to take the op's result. The prelude's wrappers did that in Scheme, `(define
 * (read-line . a) (%io-retry %read-line a))`, so `read-line` was a prelude procedure: called
 * in tail position it replaced its caller's frame, and a backtrace lost the caller (where
 * a primitive tail-called keeps it: Note [Tail calls of primitives]). Now the procedures
 * the program calls (read-line, read-char, peek-char, read, read-string, close-port, ...)
 * are those primitives themselves, marked io_retry (prim_ctl.c's prims_init), and the VM
 * calls them again: when one blocks with %io-again as its result, its caller's frame is
 * set to resume by executing the CALL or TAILCALL that called it (an odd pc, Note [VM
 * frames]), whose procedure and arguments are still in the frame's slots (also when the
 * call was `apply`'s, which spreads its list again). A result other than %io-again (a
 * write that goes on in the background answers unspecified) is delivered as usual. */

static pthread_mutex_t protos_mu = PTHREAD_MUTEX_INITIALIZER;
static Proto **protos;
static size_t nprotos, protos_cap;

void vm_register_proto(Proto *p)
{
    pthread_mutex_lock(&protos_mu);
    if (nprotos == protos_cap) {
        protos_cap = protos_cap ? 2 * protos_cap : 1024;
        protos = realloc(protos, protos_cap * sizeof *protos);
        if (!protos) rtv_fatal("out of memory");
    }
    protos[nprotos++] = p;
    pthread_mutex_unlock(&protos_mu);
}

static inline Value pc_value(const int32_t *pc, bool exec)
{ return rts_fixnum((intptr_t)(uintptr_t)pc | (exec ? 1 : 0)); }

static inline Value *consts_of(const Proto *p)
{ return p->consts == RTS_FALSE ? NULL : obj_payload(p->consts); }

Value vm_make_closure0(RtsCap *cap, const Proto *p)
{
    Value *o = rtv_alloc(cap, 2);
    o[0] = obj_make_header(T_CLOSURE, 1);
    o[1] = rts_fixnum((intptr_t)(uintptr_t)p);
    return (Value)o;
}

/* --- errors the VM raises itself ------------------------------------------------------------ */

static void __attribute__((noreturn)) err_not_procedure(RtsCap *cap, Value f)
{
    sch_error(cap, NULL, "attempt to call a non-procedure:", 1, f);
}

/* Local roots that apply leaves free when it spreads a list into them: room for raising an
 * error (sch_error and make_error protect a few values) and for the callee's first steps. */
#define APPLY_ROOTS_SPARE 4096

static void __attribute__((noreturn)) err_arity(RtsCap *cap, Value f, int n)
{
    const Proto *p = closure_proto(f);
    char msg[160];
    int max = p->prim ? p->max_args : p->rest ? -1 : p->nparams;
    int min = p->prim ? p->min_args : p->nparams;
    if (max < 0)
        snprintf(msg, sizeof msg, "wrong number of arguments: expected at least %d, got %d", min, n);
    else if (min == max)
        snprintf(msg, sizeof msg, "wrong number of arguments: expected %d, got %d", min, n);
    else
        snprintf(msg, sizeof msg, "wrong number of arguments: expected %d to %d, got %d", min, max, n);
    sch_error(cap, p->name ? p->name : "anonymous procedure", msg, 0);
}

/* --- source positions (Note [Source positions] in vm.h) ------------------------------------------ */

bool vm_code_position(const Proto *p, size_t off, const char **file, int *line, int *col)
{
    if (!p->npos || off < p->pos[0].pc)
        return false;
    size_t lo = 0, hi = p->npos;              /* the last entry whose pc <= off */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->pos[mid].pc <= off) lo = mid;
        else hi = mid;
    }
    const VmPos *e = &p->pos[lo];
    *file = e->file ? p->files[e->file - 1] : p->file;
    *line = (int)e->line;
    *col = e->col;
    return true;
}

static bool is_raise_trap(Value pcv) { return pcv == pc_value(raise_trap, false); }

bool vm_frame_position(const Proto *p, const Value *slots, size_t nslots,
                       const char **file, int *line, int *col)
{
    Value pcv = slots[1];
    if (is_raise_trap(pcv) && nslots > 2)      /* Note [The raise trap] */
        pcv = slots[nslots - 1];
    if (!rts_is_fixnum(pcv) || !p->code)
        return false;
    intptr_t a = rts_fixnum_val(pcv);
    const int32_t *pc = (const int32_t *)(uintptr_t)(a & ~(intptr_t)1);
    if (pc < p->code || pc > p->code + p->ncode)
        return false;                          /* the VM's own code (Note [VM frames]) */
    size_t off = (size_t)(pc - p->code);
    if (!(a & 1)) {                            /* saved inside the instruction */
        if (off == 0) return false;
        off--;
    }
    return vm_code_position(p, off, file, line, col);
}

/* --- the uncaught-exception report ------------------------------------------------------------ */

/* Note [Backtraces]
 * A backtrace lists the Scheme frames of the thread from the top, one line each, with the
 * position the frame is at (Note [Source positions] in vm.h) and where its procedure was
 * defined:
 *     in waiter at dl.scm:3:3 (defined at 2:1)
 * For the top frame shown the position is the operation that failed or blocked; for each
 * frame below, the call it is waiting in. "defined at" names the file too when it is not
 * the file of the position (an included procedure's caller), and is left out for a unit's
 * top level. The VM's own frames (trampolines, the call/cc marker) are never shown, nor
 * the system frames (the prelude's, e.g. raise and its handlers) above the first frame of
 * the program, so the top line is where the program failed; system frames below it stay
 * (a map calling the program's procedure). A tail call replaced its caller's frame, so the
 * frame below a tail-called one is its caller's caller, at the call that led there. The
 * first 20 frames are shown, then a count of the others. */
static bool vm_own_proto(const Proto *p)
{
    return p == &cc_proto || p == &tramp_proto || p == &tramp1_proto;
}

/* A frame's backtrace line, into line[600]. */
static void frame_line(char *line, const Proto *p, const Value *slots, size_t nslots)
{
    enum { size = 600 };
    const char *name = p->name ? p->name : "anonymous procedure";
    const char *file;
    int l, c;
    bool top_level = p->name && strcmp(p->name, "<top level>") == 0;
    if (vm_frame_position(p, slots, nslots, &file, &l, &c)) {
        int n = snprintf(line, size, "\n  in %s at %s:%d:%d", name, file, l, c);
        if (!top_level && p->file && n > 0 && (size_t)n < size) {
            if (strcmp(file, p->file) == 0)
                snprintf(line + n, size - (size_t)n, " (defined at %d:%d)", p->line, p->col);
            else
                snprintf(line + n, size - (size_t)n, " (defined at %s:%d:%d)", p->file, p->line, p->col);
        }
    } else if (p->file) {
        snprintf(line, size, "\n  in %s (defined at %s:%d:%d)", name, p->file, p->line, p->col);
    } else {
        snprintf(line, size, "\n  in %s", name);
    }
}

/* A run of frames whose lines are the one shown above it (a deep recursion, a stack
 * overflow's thousands of frames): one line says how many. */
static void flush_repeats(SchPort *out, unsigned long *repeats)
{
    if (*repeats) {
        char line[64];
        snprintf(line, sizeof line, "\n  ... the same %lu more time%s", *repeats, *repeats == 1 ? "" : "s");
        sch_port_puts(out, line);
        *repeats = 0;
    }
}

/* The next frame a backtrace shows: a Scheme procedure's, not the VM's own, and not the
 * prelude's above the program's first frame (*top says whether none was shown yet). */
static const Proto *next_shown_frame(RtvFrames *it, RtvFrame *fr, bool *top)
{
    while (rtv_frames_next(it, fr)) {
        Value *b = fr->slots;
        if (fr->code != vm_run || !sch_is_procedure(b[0])) continue;
        const Proto *p = closure_proto(b[0]);
        if ((*top && p->system) || vm_own_proto(p)) continue;
        *top = false;
        return p;
    }
    return NULL;
}

void vm_backtrace(RtsCap *cap, SchPort *out, bool repl)
{
    RtvFrames it;
    RtvFrame fr;
    const Proto *p;
    bool top = true;
    /* The REPL's: how many frames to show, up to the last of the program's. */
    size_t limit = (size_t)-1;
    if (repl) {
        size_t k = 0;
        limit = 0;
        rtv_frames_init(cap, &it);
        while ((p = next_shown_frame(&it, &fr, &top))) {
            k++;
            if (!p->system) limit = k;
        }
        top = true;
    }
    size_t k = 0;
    int shown = 0, more = 0;
    unsigned long repeats = 0;
    char line[600], prev[600];
    rtv_frames_init(cap, &it);
    while (k < limit && (p = next_shown_frame(&it, &fr, &top))) {
        k++;
        frame_line(line, p, fr.slots, fr.n);
        if (shown && !more && strcmp(line, prev) == 0) {
            repeats++;
        } else if (shown < 20) {
            flush_repeats(out, &repeats);
            sch_port_puts(out, line);
            memcpy(prev, line, sizeof prev);
            shown++;
        } else {
            more++;
        }
    }
    flush_repeats(out, &repeats);
    if (more) {
        char line[64];
        snprintf(line, sizeof line, "\n  ... and %d more", more);
        sch_port_puts(out, line);
    }
}

void vm_print_error(SchPort *out, Value obj)
{
    sch_port_puts(out, "error: ");
    if (sch_is_record_of(obj, sch_rtd_error)) {
        sch_print(out, sch_record_ref(obj, ERR_MESSAGE), false);
        for (Value i = sch_record_ref(obj, ERR_IRRITANTS); sch_is_pair(i); i = rts_cdr(i)) {
            sch_port_putc(out, ' ');
            sch_print(out, rts_car(i), true);
        }
    } else {
        sch_port_puts(out, "uncaught exception: ");
        sch_print(out, obj, true);
    }
}

void vm_uncaught(RtsCap *cap, Value obj)
{
    SchPort *out = sch_port_open_string_out();
    vm_print_error(out, obj);
    /* The backtrace: the Scheme frames from the top, after the raising machinery. */
    vm_backtrace(cap, out, false);
    char *text = sch_port_out_utf8(out, NULL);
    sch_port_free(out);
    char report[8192];
    snprintf(report, sizeof report, "%s", text);
    free(text);
    sch_flush_all();
    rts_thread_error(cap, "%s", report);
}

/* --- frames made from C ----------------------------------------------------------------------- */

void vm_push_call0(RtsCap *cap, Value f)
{
    size_t mark = sch_mark(cap);
    Value *fp = sch_protect(cap, f);
    rts_push_frame(cap, vm_run, (size_t)tramp_proto.frame_size);
    rts_set_slot(cap, 0, tramp_closure);
    rts_set_slot(cap, 1, pc_value(tramp_code, true));
    rts_set_slot(cap, 2, *fp);
    sch_release(cap, mark);
}

void vm_push_call1(RtsCap *cap, Value f, Value x)
{
    size_t mark = sch_mark(cap);
    Value *fp = sch_protect(cap, f), *xp = sch_protect(cap, x);
    rts_push_frame(cap, vm_run, (size_t)tramp1_proto.frame_size);
    rts_set_slot(cap, 0, tramp1_closure);
    rts_set_slot(cap, 1, pc_value(tramp1_code, true));
    rts_set_slot(cap, 2, *fp);
    rts_set_slot(cap, 3, *xp);
    sch_release(cap, mark);
}

Value vm_new_thread(RtsCap *cap, Value thunk)
{
    size_t mark = sch_mark(cap);
    Value *fp = sch_protect(cap, thunk);
    Value *t = sch_protect(cap, rts_thread_new(cap, vm_run, (size_t)tramp_proto.frame_size));
    rts_thread_set_slot(cap, *t, 0, tramp_closure);
    rts_thread_set_slot(cap, *t, 1, pc_value(tramp_code, true));
    rts_thread_set_slot(cap, *t, 2, *fp);
    Value r = *t;
    sch_release(cap, mark);
    return r;
}

/* --- escape-only continuations -------------------------------------------------------------------- */

/* The call/cc marker frame of the continuation k (a sch_rtd_cont record: [stack, offset,
 * thread], made by SP_CALLCC) on the running thread's stack, and its place in *at; NULL
 * when k is outside its extent: its call/cc has returned (the frame there is another, or
 * gone), or k is another thread's. */
static Value *cont_frame(RtsCap *cap, Value k, RtvPlace *at)
{
    if (sch_record_ref(k, 2) != rtv_current_thread(cap))
        return NULL;
    Value *kb = rtv_stack_find(cap, sch_record_ref(k, 0),
                               (size_t)rts_fixnum_val(sch_record_ref(k, 1)), CC_FS, at);
    if (!kb || kb[0] != cc_closure || kb[2] != k || kb[CC_FS] != rtv_code_word(vm_run))
        return NULL;
    return kb;
}

bool vm_continuation_live(RtsCap *cap, Value k)
{
    RtvPlace at;
    return sch_is_record_of(k, sch_rtd_cont) && cont_frame(cap, k, &at) != NULL;
}

/* --- the interpreter ----------------------------------------------------------------------------- */

enum { ENTER_RESUME, ENTER_RAISE };

static RtsStep vm_loop(RtsCap *cap, int mode);

RtsStep vm_run(RtsCap *cap)
{
    /* vm_run never nests (primitives do not call back into Scheme), so one jmp_buf per OS
     * thread suffices; a thread killed by rts_thread_error leaves it stale, but it is only
     * used from inside the next vm_run, which sets it first. */
    jmp_buf jb;
    size_t mark = sch_mark(cap);
    sch_catch = &jb;
    int mode = setjmp(jb) ? ENTER_RAISE : ENTER_RESUME;
    if (mode == ENTER_RAISE)
        sch_release(cap, mark);
    RtsStep r = vm_loop(cap, mode);
    sch_catch = NULL;
    return r;
}

#define VM_DISPATCH() goto *labels[*pc++]
/* The slots of the current stack (after anything that may GC). */
/* After a call that may GC: the same top stack, maybe moved, with the same room (only a
 * reserve or a cut, each followed by RELOAD_TOP, changes the room: Note [Stack overflow]). */
#define RELOAD() do {                                                   \
        size_t off_ = (size_t)(b - slots), room_ = (size_t)(send - slots); \
        slots = rtv_stack_slots(cap);                                   \
        send = slots + room_;                                           \
        b = slots + off_;                                               \
        K = consts_of(P);                                               \
    } while (0)
/* After rtv_stack_reserve: the current frame (of fs slots) is the top frame of the top stack. */
#define RELOAD_TOP() do {                                               \
        slots = rtv_stack_slots(cap);                                   \
        send = slots + rtv_stack_capacity(cap);                         \
        b = slots + rtv_stack_sp(cap) - 2 - fs;                         \
        K = consts_of(P);                                               \
    } while (0)
#define SAVE_PC() (b[1] = pc_value(pc, false))
#define SET_SP(n) rtv_stack_set_sp(slots, (size_t)(n))
#define CAPACITY() ((size_t)(send - slots))

static RtsStep vm_loop(RtsCap *cap, int mode)
{
    static void *const labels[OP_COUNT] = {
#define VM_L(name, n) &&L_##name,
        VM_OPS(VM_L)
#undef VM_L
    };
    Value *slots = rtv_stack_slots(cap);
    Value *send = slots + rtv_stack_capacity(cap);   /* end of the stack */
    size_t sp0 = rtv_stack_sp(cap);
    int fs = (int)rts_fixnum_val(slots[sp0 - 1]);
    Value *b = slots + sp0 - 2 - fs;
    const Proto *P = closure_proto(b[0]);
    Value *K = consts_of(P);
    const int32_t *pc;
    /* A generic call: the procedure and its arguments are in local roots argv[-1..argc);
     * tail says whether it replaces the current frame; retpc is where the caller resumes. */
    Value *argv;
    size_t gmark;              /* the local roots' mark before argv[-1] */
    int argc;
    bool tail;
    const int32_t *retpc;

    if (mode == ENTER_RAISE)
        goto raise;
    {
        intptr_t a = rts_fixnum_val(b[1]);
        pc = (const int32_t *)(uintptr_t)(a & ~(intptr_t)1);
        if (!(a & 1))
            b[*pc++] = rts_result(cap);
    }
    VM_DISPATCH();

L_MOV:   b[pc[0]] = b[pc[1]]; pc += 2; VM_DISPATCH();
L_CONST: b[pc[0]] = K[pc[1]]; pc += 2; VM_DISPATCH();
L_IMM:   b[pc[0]] = (Value)(intptr_t)pc[1]; pc += 2; VM_DISPATCH();
L_GLOBAL: {
    Value v = obj_payload(K[pc[1]])[SYM_VALUE];
    if (__builtin_expect(v == RTS_UNDEF, 0)) {
        SAVE_PC();
        sch_error(cap, NULL, "unbound variable:", 1, K[pc[1]]);
    }
    b[pc[0]] = v;
    pc += 2;
    VM_DISPATCH();
}
L_SETGLOBAL: {
    Value sym = K[pc[0]];
    SAVE_PC();
    if (obj_payload(sym)[SYM_VALUE] == RTS_UNDEF)
        sch_error(cap, NULL, "set! of an unbound variable:", 1, sym);
    sm_set_field(cap, sym, SYM_VALUE, b[pc[1]]);
    pc += 2;
    VM_DISPATCH();
}
L_DEFGLOBAL:
    sm_set_field(cap, K[pc[0]], SYM_VALUE, b[pc[1]]);
    pc += 2;
    VM_DISPATCH();
L_FREE: b[pc[0]] = obj_payload(b[0])[1 + pc[1]]; pc += 2; VM_DISPATCH();
L_BOX: {
    Value *o;
    if (!rtv_try_alloc(cap, 2, &o)) {
        SAVE_PC();
        o = rtv_alloc_slow(cap, 2);
        RELOAD();
    }
    o[0] = obj_make_header(T_BOX, 1);
    o[1] = b[pc[0]];
    b[pc[0]] = (Value)o;
    pc += 1;
    VM_DISPATCH();
}
L_UNBOX: b[pc[0]] = obj_payload(b[pc[1]])[0]; pc += 2; VM_DISPATCH();
L_SETBOX: sm_set_field(cap, b[pc[0]], 0, b[pc[1]]); pc += 2; VM_DISPATCH();
L_CHECKDEF:
    if (__builtin_expect(b[pc[0]] == RTS_UNDEF, 0)) {
        SAVE_PC();
        sch_error(cap, NULL, "variable used before its definition:", 1, K[pc[1]]);
    }
    pc += 2;
    VM_DISPATCH();
L_CLOSURE: {
    const Proto *child = P->children[pc[1]];
    int n = pc[2];
    Value *o;
    if (!rtv_try_alloc(cap, (size_t)(2 + n), &o)) {
        SAVE_PC();
        o = rtv_alloc_slow(cap, (size_t)(2 + n));
        RELOAD();
    }
    o[0] = obj_make_header(T_CLOSURE, (size_t)(1 + n));
    o[1] = rts_fixnum((intptr_t)(uintptr_t)child);
    for (int i = 0; i < n; i++)
        o[2 + i] = b[pc[3 + i]];
    b[pc[0]] = (Value)o;
    pc += 3 + n;
    VM_DISPATCH();
}
L_SETFREE: sm_set_field(cap, b[pc[0]], (size_t)(1 + pc[1]), b[pc[2]]); pc += 3; VM_DISPATCH();
L_JMP: pc += 1 + pc[0]; VM_DISPATCH();
L_JF:
    if (b[pc[0]] == RTS_FALSE) pc += 2 + pc[1];
    else pc += 2;
    VM_DISPATCH();

L_CALL: {
    Value f = b[pc[0]];
    int n = pc[1];
    if (__builtin_expect(rtv_safe_point_due(cap), 0))
        goto suspend;
    if (__builtin_expect(!sch_is_procedure(f), 0)) { SAVE_PC(); err_not_procedure(cap, f); }
    const Proto *q = closure_proto(f);
    if (__builtin_expect(q->fast_nargs1 == n + 1, 1)) {
        Value *nb = b + fs + 2;
        int nfs = q->frame_size;
        if (__builtin_expect(nb + nfs + 2 > send, 0)) {
            SAVE_PC();
            rtv_stack_reserve(cap, (size_t)nfs + 2);
            RELOAD_TOP();
            nb = b + fs + 2;
            f = b[pc[0]];
        }
        nb[0] = f;
        nb[1] = RTS_FALSE;
        const Value *args = b + pc[0] + 1;
        for (int i = 0; i < n; i++)
            nb[2 + i] = args[i];
        for (int i = 2 + n; i < nfs; i++)
            nb[i] = RTS_UNSPEC;
        nb[nfs] = rtv_code_word(vm_run);
        nb[nfs + 1] = rts_fixnum(nfs);
        b[1] = pc_value(pc + 2, false);
        SET_SP((size_t)(nb - slots) + (size_t)nfs + 2);
        b = nb;
        fs = nfs;
        P = q;
        K = consts_of(P);
        pc = P->code;
        VM_DISPATCH();
    }
    SAVE_PC();
    gmark = sch_mark(cap);
    argv = rtv_lroots_next(cap) + 1;
    for (int i = 0; i <= n; i++)
        sch_protect(cap, b[pc[0] + i]);
    argc = n;
    tail = false;
    retpc = pc + 2;
    goto call_generic;
}
L_TAILCALL: {
    Value f = b[pc[0]];
    int n = pc[1];
    if (__builtin_expect(rtv_safe_point_due(cap), 0))
        goto suspend;
    if (__builtin_expect(!sch_is_procedure(f), 0)) { SAVE_PC(); err_not_procedure(cap, f); }
    const Proto *q = closure_proto(f);
    if (__builtin_expect(q->fast_nargs1 == n + 1, 1)) {
        int nfs = q->frame_size;
        if (__builtin_expect(b + nfs + 2 > send, 0)) {
            SAVE_PC();
            rtv_stack_reserve(cap, (size_t)(nfs - fs));
            RELOAD_TOP();
            f = b[pc[0]];
        }
        const Value *args = b + pc[0] + 1;    /* above slot 2: a forward copy is safe */
        b[0] = f;
        for (int i = 0; i < n; i++)
            b[2 + i] = args[i];
        for (int i = 2 + n; i < nfs; i++)
            b[i] = RTS_UNSPEC;
        b[nfs] = rtv_code_word(vm_run);
        b[nfs + 1] = rts_fixnum(nfs);
        SET_SP((size_t)(b - slots) + (size_t)nfs + 2);
        fs = nfs;
        P = q;
        K = consts_of(P);
        pc = P->code;
        VM_DISPATCH();
    }
    SAVE_PC();
    gmark = sch_mark(cap);
    argv = rtv_lroots_next(cap) + 1;
    for (int i = 0; i <= n; i++)
        sch_protect(cap, b[pc[0] + i]);
    argc = n;
    tail = true;
    retpc = pc + 2;            /* Note [Tail calls of primitives] */
    goto call_generic;
}
L_RET: {
    Value v = b[pc[0]];
    size_t base = (size_t)(b - slots);
    SET_SP(base);
    if (base == 0 || slots[base - 2] != rtv_code_word(vm_run)) {
        rts_set_result(cap, v);                 /* to a C frame, or the thread's end */
        return RTS_NEXT;
    }
    fs = (int)rts_fixnum_val(slots[base - 1]);
    b = slots + base - 2 - fs;
    P = closure_proto(b[0]);
    K = consts_of(P);
    pc = (const int32_t *)(uintptr_t)rts_fixnum_val(b[1]);
    b[*pc++] = v;
    VM_DISPATCH();
}

#define ARITH(NAME, EXPR, SLOW)                                         \
L_##NAME: {                                                             \
    Value x = b[pc[1]], y = b[pc[2]];                                   \
    intptr_t r;                                                         \
    if (__builtin_expect((x & y & 1) && !(EXPR), 1)) {                  \
        b[pc[0]] = (Value)r;                                            \
    } else {                                                            \
        SAVE_PC();                                                      \
        Value v = SLOW(cap, x, y);                                      \
        RELOAD();                                                       \
        b[pc[0]] = v;                                                   \
    }                                                                   \
    pc += 3;                                                            \
    VM_DISPATCH();                                                      \
}
    ARITH(ADD, __builtin_add_overflow((intptr_t)x, (intptr_t)(y - 1), &r), sch_add)
    ARITH(SUB, __builtin_sub_overflow((intptr_t)x, (intptr_t)(y - 1), &r), sch_sub)
    ARITH(MUL, (__builtin_mul_overflow(rts_fixnum_val(x), (intptr_t)(y - 1), &r) || ((r |= 1), 0)), sch_mul)
#undef ARITH
L_ADDI: {
    Value x = b[pc[1]];
    intptr_t r;
    if (__builtin_expect(rts_is_fixnum(x) && !__builtin_add_overflow((intptr_t)x, (intptr_t)pc[2] * 2, &r), 1)) {
        b[pc[0]] = (Value)r;
    } else {
        SAVE_PC();
        /* (- x k) compiles to x + -k: name the procedure the program called */
        Value v = pc[2] < 0 ? sch_sub(cap, x, rts_fixnum(-(intptr_t)pc[2]))
                            : sch_add(cap, x, rts_fixnum(pc[2]));
        RELOAD();
        b[pc[0]] = v;
    }
    pc += 3;
    VM_DISPATCH();
}

#define CMP(NAME, OPC, CH)                                              \
L_##NAME: {                                                             \
    Value x = b[pc[1]], y = b[pc[2]];                                   \
    bool t;                                                             \
    if (__builtin_expect(x & y & 1, 1)) t = (intptr_t)x OPC (intptr_t)y;\
    else { SAVE_PC(); t = sch_num_cmp(cap, CH, x, y, vm_cmp_name(CH)); RELOAD(); } \
    b[pc[0]] = rts_bool(t);                                             \
    pc += 3;                                                            \
    VM_DISPATCH();                                                      \
}                                                                       \
L_JN##NAME##I: {                                                        \
    Value x = b[pc[0]], y = rts_fixnum(pc[1]);                          \
    bool t;                                                             \
    if (__builtin_expect(x & 1, 1)) t = (intptr_t)x OPC (intptr_t)y;    \
    else { SAVE_PC(); t = sch_num_cmp(cap, CH, x, y, vm_cmp_name(CH)); RELOAD(); } \
    pc += t ? 3 : 3 + pc[2];                                            \
    VM_DISPATCH();                                                      \
}                                                                       \
L_JN##NAME: {                                                           \
    Value x = b[pc[0]], y = b[pc[1]];                                   \
    bool t;                                                             \
    if (__builtin_expect(x & y & 1, 1)) t = (intptr_t)x OPC (intptr_t)y;\
    else { SAVE_PC(); t = sch_num_cmp(cap, CH, x, y, vm_cmp_name(CH)); RELOAD(); } \
    pc += t ? 3 : 3 + pc[2];                                            \
    VM_DISPATCH();                                                      \
}
#define vm_cmp_name(ch) ((ch) == '<' ? "<" : (ch) == 'l' ? "<=" : (ch) == '>' ? ">" : (ch) == 'g' ? ">=" : "=")
    CMP(LT, <, '<')
    CMP(LE, <=, 'l')
    CMP(GT, >, '>')
    CMP(GE, >=, 'g')
    CMP(NUMEQ, ==, '=')
#undef CMP

L_EQ: b[pc[0]] = rts_bool(b[pc[1]] == b[pc[2]]); pc += 3; VM_DISPATCH();
L_CONS: {
    Value *o;
    if (!rtv_try_alloc(cap, 3, &o)) {
        SAVE_PC();
        o = rtv_alloc_slow(cap, 3);
        RELOAD();
    }
    o[0] = obj_make_header(T_PAIR, 2);
    o[1] = b[pc[1]];
    o[2] = b[pc[2]];
    b[pc[0]] = (Value)o;
    pc += 3;
    VM_DISPATCH();
}
L_CAR: {
    Value x = b[pc[1]];
    if (__builtin_expect(!sch_is_pair(x), 0)) { SAVE_PC(); sch_type_error(cap, "car", "pair", x); }
    b[pc[0]] = rts_car(x);
    pc += 2;
    VM_DISPATCH();
}
L_CDR: {
    Value x = b[pc[1]];
    if (__builtin_expect(!sch_is_pair(x), 0)) { SAVE_PC(); sch_type_error(cap, "cdr", "pair", x); }
    b[pc[0]] = rts_cdr(x);
    pc += 2;
    VM_DISPATCH();
}
L_NOT:   b[pc[0]] = rts_bool(b[pc[1]] == RTS_FALSE); pc += 2; VM_DISPATCH();
L_NULLP: b[pc[0]] = rts_bool(b[pc[1]] == RTS_NIL); pc += 2; VM_DISPATCH();
L_PAIRP: b[pc[0]] = rts_bool(sch_is_pair(b[pc[1]])); pc += 2; VM_DISPATCH();
L_ZEROP: {
    Value x = b[pc[1]];
    bool t;
    if (rts_is_fixnum(x)) t = x == rts_fixnum(0);
    else { SAVE_PC(); t = sch_num_cmp(cap, '=', x, rts_fixnum(0), "zero?"); RELOAD(); }
    b[pc[0]] = rts_bool(t);
    pc += 2;
    VM_DISPATCH();
}
L_VREF: {
    Value v = b[pc[1]], i = b[pc[2]];
    if (__builtin_expect(!sch_is_vector(v), 0)) { SAVE_PC(); sch_type_error(cap, "vector-ref", "vector", v); }
    if (__builtin_expect(!rts_is_fixnum(i), 0)) { SAVE_PC(); sch_type_error(cap, "vector-ref", "exact integer", i); }
    if (__builtin_expect((uintptr_t)rts_fixnum_val(i) >= rts_vector_length(v), 0)) { SAVE_PC(); sch_range_error(cap, "vector-ref", i, v); }
    b[pc[0]] = rts_field(v, (size_t)rts_fixnum_val(i));
    pc += 3;
    VM_DISPATCH();
}
L_VSET: {
    Value v = b[pc[0]], i = b[pc[1]];
    if (__builtin_expect(!sch_is_vector(v), 0)) { SAVE_PC(); sch_type_error(cap, "vector-set!", "vector", v); }
    if (__builtin_expect(!rts_is_fixnum(i), 0)) { SAVE_PC(); sch_type_error(cap, "vector-set!", "exact integer", i); }
    if (__builtin_expect((uintptr_t)rts_fixnum_val(i) >= rts_vector_length(v), 0)) { SAVE_PC(); sch_range_error(cap, "vector-set!", i, v); }
    sm_set_field(cap, v, (size_t)rts_fixnum_val(i), b[pc[2]]);
    pc += 3;
    VM_DISPATCH();
}
L_SETCAR: {
    Value p = b[pc[0]];
    if (__builtin_expect(!sch_is_pair(p), 0)) { SAVE_PC(); sch_type_error(cap, "set-car!", "pair", p); }
    sm_set_car(cap, p, b[pc[1]]);
    pc += 2;
    VM_DISPATCH();
}
L_SETCDR: {
    Value p = b[pc[0]];
    if (__builtin_expect(!sch_is_pair(p), 0)) { SAVE_PC(); sch_type_error(cap, "set-cdr!", "pair", p); }
    sm_set_cdr(cap, p, b[pc[1]]);
    pc += 2;
    VM_DISPATCH();
}
L_HALT:
    rts_thread_error(cap, "internal error: a Scheme frame resumed after raise");

suspend:
    /* Note [VM safe points]: resume at this call; the scheduler joins a GC or switches. */
    b[1] = pc_value(pc - 1, true);
    rtv_safe_point_taken(cap);
    return RTS_NEXT;

raise: {
    /* An error was raised (its object is in the result register): call `raise` with it
     * in a new frame above the current one. */
    Value handler = obj_payload(sym_raise)[SYM_VALUE];
    if (!sch_is_procedure(handler))
        vm_uncaught(cap, rts_result(cap));
    /* Note [The raise trap]
     * The frame that raised never resumes: `raise` does not return. Its saved pc becomes
     * raise_trap, so that a return into it would halt with an internal error rather than
     * run on from the failed instruction; and the pc it had, which says where the error
     * was (Note [Source positions] in vm.h), moves to its last slot, which nothing reads
     * any more (a fixnum: the GC is content), for the backtrace. A frame raising again from
     * the trap (a `raise` that is not a procedure of one argument) keeps the first pc. */
    if (fs > 2 && !is_raise_trap(b[1]))       /* every frame has a slot 2 (frame_size >= 3) */
        b[fs - 1] = b[1];
    b[1] = pc_value(raise_trap, false);
    gmark = sch_mark(cap);
    argv = rtv_lroots_next(cap) + 1;
    sch_protect(cap, handler);
    sch_protect(cap, rts_result(cap));
    argc = 1;
    tail = false;
    retpc = raise_trap;
    goto call_generic;
}

call_generic: {
    /* argv[-1] is the procedure, argv[0..argc) its arguments, all local roots; b[1] holds
     * the caller's pc (saved). */
    Value f = argv[-1];
    if (!sch_is_procedure(f))
        err_not_procedure(cap, f);
    const Proto *q = closure_proto(f);
    if (q->prim) {
        if (argc < q->min_args || (q->max_args >= 0 && argc > q->max_args))
            err_arity(cap, f, argc);
        b[1] = pc_value(retpc, false);
        Value r = q->prim(cap, argv, argc);
        RELOAD();
        sch_release(cap, gmark);
        if (r == SCH_BLOCK) {
            if (q->io_retry && rts_result(cap) == sym_io_again) {
                /* Note [IO primitives called again]: every retpc but the raise trap's
                 * follows the opcode and two operands of a CALL or a TAILCALL */
                const int32_t *call = retpc - 3;
                if (retpc == raise_trap || (*call != OP_CALL && *call != OP_TAILCALL))
                    rts_thread_error(cap, "internal error: an IO primitive blocked outside a call");
                b[1] = pc_value(call, true);
            }
            return RTS_BLOCK;
        }
        if (r == SCH_YIELD)
            return RTS_YIELD;
        pc = retpc;
        b[*pc++] = r;
        VM_DISPATCH();
    }
    if (q->special == SP_APPLY) {
        if (argc < 2) err_arity(cap, f, argc);
        /* (apply g a ... lst): spread into a new argument vector above this one. The list
         * is measured first (Floyd's cycle check): an improper or circular list is a type
         * error, and one longer than the local roots have room for is an error the program
         * can catch (before: spreading it ran out of roots, a fatal error no handler saw). */
        size_t len = 0;
        for (Value slow = argv[argc - 1], fast = slow; sch_is_pair(fast); ) {
            fast = rts_cdr(fast), len++;
            if (!sch_is_pair(fast))
                break;
            fast = rts_cdr(fast), len++;
            slow = rts_cdr(slow);
            if (fast == slow)
                sch_error(cap, "apply", "expected a proper list, got a circular list", 0);
        }
        if (len + (size_t)argc + APPLY_ROOTS_SPARE > rtv_lroots_room(cap))
            sch_error(cap, "apply", "too many arguments for the local roots:", 1,
                      rts_fixnum((intptr_t)len));
        Value *nargv = rtv_lroots_next(cap) + 1;
        for (int i = 0; i < argc - 1; i++)
            sch_protect(cap, argv[i]);
        size_t nargc = (size_t)argc - 2;
        Value l = argv[argc - 1];
        for (; sch_is_pair(l); l = rts_cdr(l), nargc++)
            sch_protect(cap, rts_car(l));
        if (l != RTS_NIL)
            sch_type_error(cap, "apply", "proper list", argv[argc - 1]);
        if (nargc > INT_MAX)
            sch_error(cap, "apply", "too many arguments:", 1, rts_fixnum((intptr_t)nargc));
        argv = nargv;
        argc = (int)nargc;
        goto call_generic;
    }
    if (q->special == SP_CALLCC) {
        if (argc != 1) err_arity(cap, f, argc);
        /* Room for the marker frame first, so that its place is where it will be. */
        if ((size_t)(b - slots) + (tail ? 0 : (size_t)fs + 2) + CC_FS + 2 > CAPACITY()) {
            rtv_stack_reserve(cap, tail ? (size_t)(CC_FS > fs ? CC_FS - fs : 0) : CC_FS + 2);
            RELOAD_TOP();
        }
        /* k = [the marker frame's place (stack, offset), the thread]: valid while that frame
         * holds k. */
        Value k = sch_make_record(cap, sch_rtd_cont, 3, NULL);
        RELOAD();
        size_t base = (size_t)(b - slots) + (tail ? 0 : (size_t)fs + 2);
        sm_set_field(cap, k, 1, rtv_stack_here(cap));
        sm_set_field(cap, k, 2, rts_fixnum((intptr_t)base));
        sm_set_field(cap, k, 3, rtv_current_thread(cap));
        Value g = argv[0];
        argv = rtv_lroots_next(cap) + 1;
        sch_protect(cap, cc_closure);
        sch_protect(cap, k);
        sch_protect(cap, g);
        argc = 2;
        goto call_generic;
    }
    if (q->special == SP_THROW) {
        if (argc != 2) err_arity(cap, f, argc);
        Value k = argv[0];
        if (!sch_is_record_of(k, sch_rtd_cont))
            sch_type_error(cap, "%throw", "continuation", k);
        RtvPlace at;
        /* the prelude's escape procedure checked first (vm_continuation_live), before it
         * unwound anything; this is the VM's own guard */
        if (!cont_frame(cap, k, &at))
            sch_error(cap, NULL, "a continuation was invoked outside its extent (call/cc is escape-only)", 0);
        Value v = argv[1];
        sch_release(cap, gmark);
        rtv_stack_cut(cap, at, CC_FS);
        fs = CC_FS;
        P = &cc_proto;
        RELOAD_TOP();
        b[CC_VAL] = v;
        pc = cc_code + CC_RET;
        VM_DISPATCH();
    }
    /* A VM procedure. */
    if (argc < q->nparams || (!q->rest && argc > q->nparams))
        err_arity(cap, f, argc);
    int nfs = q->frame_size;
    size_t base = (size_t)(b - slots) + (tail ? 0 : (size_t)fs + 2);
    if (base + (size_t)nfs + 2 > CAPACITY()) {
        rtv_stack_reserve(cap, tail ? (size_t)(nfs - fs) : (size_t)nfs + 2);
        RELOAD_TOP();
        base = (size_t)(b - slots) + (tail ? 0 : (size_t)fs + 2);
    }
    if (!tail)
        b[1] = pc_value(retpc, false);
    Value *nb = slots + base;
    nb[0] = argv[-1];
    nb[1] = RTS_FALSE;
    for (int i = 0; i < q->nparams; i++)
        nb[2 + i] = argv[i];
    for (int i = 2 + q->nparams; i < nfs; i++)
        nb[i] = RTS_UNSPEC;
    nb[nfs] = rtv_code_word(vm_run);
    nb[nfs + 1] = rts_fixnum(nfs);
    SET_SP(base + (size_t)nfs + 2);
    b = nb;
    fs = nfs;
    P = q;
    if (q->rest) {
        /* The rest list, built back to front; the new frame is complete, so a GC here
         * sees well-formed slots. */
        Value *acc = sch_protect(cap, RTS_NIL);
        for (int i = argc; i-- > q->nparams;)
            *acc = rts_cons(cap, argv[i], *acc);
        RELOAD();
        b[2 + q->nparams] = *acc;
    }
    sch_release(cap, gmark);
    K = consts_of(P);
    pc = P->code;
    VM_DISPATCH();
}
}

/* --- start-up ------------------------------------------------------------------------------------- */

/* nparams and rest are their arities, for err_arity's message (the VM calls them apart). */
static const Proto special_apply  = { .name = "apply", .special = SP_APPLY, .consts = RTS_FALSE,
                                      .nparams = 2, .rest = true };
static const Proto special_callcc = { .name = "%call/cc", .special = SP_CALLCC, .consts = RTS_FALSE,
                                      .nparams = 1 };
static const Proto special_throw  = { .name = "%throw", .special = SP_THROW, .consts = RTS_FALSE,
                                      .nparams = 2 };

/* +RTS -p (Note [Time profile] in sched/profile.h): the procedure of the thread's top frame,
 * a VM frame suspended at a safe point (Note [VM frames]); its Proto is the key (Protos are
 * never freed). A C frame on top (a primitive's continuation, the trampolines) is no
 * procedure of the program's. */
static const void *vm_profile_where(RtsCap *cap)
{
    Value *slots = rtv_stack_slots(cap);
    size_t sp = rtv_stack_sp(cap);
    if (sp < 2 || slots[sp - 2] != rtv_code_word(vm_run))
        return NULL;
    int fs = (int)rts_fixnum_val(slots[sp - 1]);
    return closure_proto(slots[sp - 2 - (size_t)fs]);
}

static void vm_profile_describe(const void *key, char *name, size_t name_len, char *src,
                                size_t src_len)
{
    const Proto *P = key;
    snprintf(name, name_len, "%s", P->name ? P->name : "(lambda)");
    if (P->file)
        snprintf(src, src_len, "%s:%d:%d", P->file, P->line, P->col);
    else
        snprintf(src, src_len, "-");
}

void vm_init(RtsCap *cap)
{
    rts_set_profiler(&(RtsProfiler){ vm_profile_where, vm_profile_describe });
    tramp_closure = vm_make_closure0(cap, &tramp_proto);
    rts_add_root(&tramp_closure);
    tramp1_closure = vm_make_closure0(cap, &tramp1_proto);
    rts_add_root(&tramp1_closure);
    cc_closure = vm_make_closure0(cap, &cc_proto);
    rts_add_root(&cc_closure);
    sym_raise = sch_intern(cap, "%sys:raise", 10);
    rts_add_root(&sym_raise);
    sym_io_again = sch_intern(cap, "%io-again", 9);
    rts_add_root(&sym_io_again);
    sch_define_global(cap, "apply", vm_make_closure0(cap, &special_apply));
    sch_define_global(cap, "%call/cc", vm_make_closure0(cap, &special_callcc));
    sch_define_global(cap, "%throw", vm_make_closure0(cap, &special_throw));
}

/* --- the disassembler --------------------------------------------------------------------------------- */

void vm_disassemble(const Proto *p, int depth)
{
    fprintf(stderr, "%*s%s: %d params%s, frame %d, %d free\n", depth * 2, "",
            p->name ? p->name : "anonymous", p->nparams, p->rest ? " + rest" : "",
            p->frame_size, p->nfree);
    uint32_t e = 0;                      /* the next position entry */
    for (size_t i = 0; i < p->ncode;) {
        int op = p->code[i];
        fprintf(stderr, "%*s  %4zu %-9s", depth * 2, "", i, vm_op_names[op]);
        int n = vm_op_operands[op];
        if (op == OP_CLOSURE)
            n += p->code[i + 3];
        for (int k = 1; k <= n; k++)
            fprintf(stderr, " %d", p->code[i + k]);
        for (; e < p->npos && p->pos[e].pc <= i; e++)     /* Note [Source positions] */
            if (p->pos[e].pc == i)
                fprintf(stderr, "    ; %s:%u:%u", p->pos[e].file ? p->files[p->pos[e].file - 1] : p->file,
                        (unsigned)p->pos[e].line, (unsigned)p->pos[e].col);
        fputc('\n', stderr);
        i += 1 + (size_t)n;
    }
    for (int c = 0; c < p->nchildren; c++)
        vm_disassemble(p->children[c], depth + 1);
}
