/* The bytecode VM: procedures' prototypes, the instruction set, and the VM's entry points;
 * and the modules above it (Note [Scheme layers] in scheme.h): the expander, the compiler
 * and start-up.
 *
 * Note [VM frames]
 * A Scheme procedure runs in a frame on its thread's runtime stack (Note [Stack layout] in
 * include/rtslab_object.h; rts/vm_api.h): a frame of fs slots, then the trailer [vm_run,
 * fs]. So the GC sees every Value the VM holds at a safe point, and the stack is always well
 * formed for the runtime:
 *     slot 0     the closure being run (its Proto gives the code and constants)
 *     slot 1     the saved pc (a fixnum address, below)
 *     slot 2..   the arguments (a rest list in one slot), then locals and temporaries
 * The compiler gives every procedure a fixed frame size, and every instruction names frame
 * slots (a register machine, like Lua's). A call pushes the callee's frame right above the
 * caller's trailer and fills its unused slots, so that no slot the GC scans is stale; a tail
 * call rebuilds the frame in place; a return pops it.
 *
 * The saved pc of a frame that is not running says how it resumes:
 *   an even address  a value is due: the word there names the slot that receives it (the
 *                    result of the call it made, found in the thread's result register
 *                    when the callee was not a VM frame), and the code continues after it
 *   address | 1      resume by executing the instruction there (a fresh frame; a frame
 *                    suspended at a safe point before a call)
 * Before calling anything that may raise an error or run a GC, the VM saves pc in slot 1,
 * so the backtrace and the error path know where each frame is; after anything that may
 * GC, it reloads its pointers into the stack (the stack object may have moved).
 *
 * Note [VM safe points]
 * Calls and tail calls check the capability's heap limit: when a GC leader or the timer has
 * cleared it (rtv_safe_point_due), the frame is suspended before the call and vm_run returns
 * RTS_NEXT, where the scheduler joins the GC or switches threads. Every loop in Scheme goes
 * through a call, so a running thread reaches a safe point within a bounded number of
 * instructions. Allocation (inline bump allocation, rtv_alloc_slow) is a safe point too.
 */
#ifndef RTS_SCHEME_VM_H
#define RTS_SCHEME_VM_H

#include "scheme/scheme.h"

/* The instruction set: name, operand words. Operands are slot numbers in the current frame
 * unless noted: k = constant index, imm = an immediate Value (fits int32), off = a jump
 * offset from the next instruction, p = index of a child prototype, n = a count. */
#define VM_OPS(X) \
    X(MOV, 2)       /* d s          b[d] = b[s] */ \
    X(CONST, 2)     /* d k          b[d] = K[k] */ \
    X(IMM, 2)       /* d imm        b[d] = imm */ \
    X(GLOBAL, 2)    /* d k          b[d] = value of the symbol K[k]; unbound: error */ \
    X(SETGLOBAL, 2) /* k s          set! of a global; unbound: error */ \
    X(DEFGLOBAL, 2) /* k s          define a global */ \
    X(FREE, 2)      /* d i          b[d] = free variable i of the closure */ \
    X(BOX, 1)       /* d            b[d] = a box holding b[d] */ \
    X(UNBOX, 2)     /* d s          b[d] = contents of the box b[s] */ \
    X(SETBOX, 2)    /* s v          contents of the box b[s] = b[v] */ \
    X(CHECKDEF, 2)  /* s k          error if b[s] is undefined (K[k] names it) */ \
    X(CLOSURE, 3)   /* d p n s...   b[d] = closure of child p over the n slots s... */ \
    X(SETFREE, 3)   /* c i s        free variable i of the closure b[c] = b[s] */ \
    X(JMP, 1)       /* off */ \
    X(JF, 2)        /* s off        jump if b[s] is #f */ \
    X(CALL, 3)      /* f n d        call b[f] with b[f+1..f+n]; the result goes to b[d] */ \
    X(TAILCALL, 3)  /* f n r        tail call b[f] with b[f+1..f+n]; a primitive's result
                                    lands in b[r], and the RET r that always follows returns
                                    it (Note [Tail calls of primitives]) */ \
    X(RET, 1)       /* s            return b[s] */ \
    X(ADD, 3)  X(SUB, 3)  X(MUL, 3)                 /* d a b: fixnum fast paths */ \
    X(ADDI, 3)      /* d a imm      b[d] = b[a] + imm (a fixnum) */ \
    X(LT, 3)   X(LE, 3)   X(GT, 3)  X(GE, 3)  X(NUMEQ, 3) \
    X(JNLT, 3)      /* a b off      jump unless b[a] < b[b] (likewise below) */ \
    X(JNLE, 3) X(JNGT, 3) X(JNGE, 3) X(JNNUMEQ, 3) \
    X(JNLTI, 3)     /* a imm off    jump unless b[a] < imm (likewise below) */ \
    X(JNLEI, 3) X(JNGTI, 3) X(JNGEI, 3) X(JNNUMEQI, 3) \
    X(EQ, 3)   X(CONS, 3) \
    X(CAR, 2)  X(CDR, 2)  X(NOT, 2)  X(NULLP, 2)  X(PAIRP, 2)  X(ZEROP, 2) \
    X(VREF, 3)      /* d v i */ \
    X(VSET, 3)      /* v i x        (the instruction's value is unspecified) */ \
    X(SETCAR, 2)  X(SETCDR, 2)      /* p x */ \
    X(HALT, 0)      /* never executed: ends a code block (the disassembler's guard) */

typedef enum {
#define VM_ENUM(name, n) OP_##name,
    VM_OPS(VM_ENUM)
#undef VM_ENUM
    OP_COUNT
} VmOp;

extern const int vm_op_operands[OP_COUNT];
extern const char *const vm_op_names[OP_COUNT];

/* VM-handled procedures (their Proto's `special`). */
enum { SP_NONE, SP_APPLY, SP_CALLCC, SP_THROW };

/* Note [Source positions]
 * A compiled procedure's Proto has a position table: VmPos entries sorted by code offset,
 * one where the source position changes, written by the compiler and read only when an
 * error report or a backtrace needs a position; the VM itself never looks at it, so it
 * costs nothing while code runs. An entry says that the instructions from its offset on
 * came from the form at (file, line, col) -- until the next entry. Only the instructions
 * that can raise an error, block or call (CALL, TAILCALL, GLOBAL, SETGLOBAL, CHECKDEF and
 * the inlined primitives that check their operands: car, +, vector-ref, <, ...) set the
 * position; the others (moves, constants, jumps, allocation) inherit it and never report.
 * A call carries the position of its form, `(mvar-take! m)`, and so does the global that
 * names its procedure (an unbound procedure is reported at the call); an inlined primitive
 * carries its form's; a reference to a letrec variable not yet defined, its own.
 *
 * A frame's saved pc (Note [VM frames]) finds its position: a frame that is not running
 * saved it inside the instruction it was executing (an even address, at an operand or
 * just past the instruction's opcode) or at its start (odd: resume there), so the entry
 * for `pc - 1` (even) or `pc` (odd) is the instruction's. Where a frame's pc is elsewhere
 * (the VM's own code: trampolines, the raise trap) vm_frame_position finds the real one
 * or says there is none.
 *
 * `file` is 0 for the Proto's own file and i for files[i - 1]: a unit's top-level thunk
 * holds the forms of the files it includes, and so can a body that includes a file.
 * Columns beyond 65535 are stored as 65535. */
typedef struct VmPos {
    uint32_t pc;               /* code offset (in int32 words) of the first instruction */
    uint32_t line;
    uint16_t col;
    uint16_t file;
} VmPos;

typedef struct Proto Proto;
struct Proto {
    const char *name;          /* "fib"; NULL: anonymous. First: sch_procedure_name */
    int32_t    *code;
    size_t      ncode;
    Value       consts;        /* a vector (a GC root), or RTS_FALSE */
    int         nparams;       /* required parameters */
    bool        rest;          /* a rest list after them */
    bool        system;        /* from the prelude: left out of the top of backtraces */
    int         fast_nargs1;   /* 1 + nparams for a VM procedure without rest, else 0:
                                  the calls that take the VM's fast path */
    int         frame_size;    /* slots, header slots included */
    int         nfree;
    Proto     **children;      /* the lambdas inside, for CLOSURE */
    int         nchildren;
    const char *file;
    int         line, col;     /* where the procedure is defined */
    VmPos      *pos;           /* Note [Source positions]: npos entries, or NULL */
    uint32_t    npos;
    uint16_t    nfiles;
    const char **files;        /* the other files that pos names */
    /* primitives */
    SchPrimFn   prim;
    int         min_args, max_args;
    int         special;
    bool        io_retry;      /* Note [IO primitives called again] in vm.c */
};

_Static_assert(offsetof(Proto, name) == 0, "sch_procedure_name reads a Proto's first field");

static inline const Proto *closure_proto(Value c)
{ return (const Proto *)(uintptr_t)rts_fixnum_val(obj_payload(c)[0]); }

/* The source position of a frame of p whose saved pc (slot 1) is pc, and nslots its slots
 * (Note [Source positions]); false when it has none. */
bool vm_frame_position(const Proto *p, const Value *slots, size_t nslots,
                       const char **file, int *line, int *col);
/* The position of the code offset `off` in p (the entry at or before it); false when p
 * has no table. */
bool vm_code_position(const Proto *p, size_t off, const char **file, int *line, int *col);

/* Prototypes live forever (closures in the heap point to them): every one made is
 * registered here, which also keeps them visible to leak checkers. */
void vm_register_proto(Proto *p);

/* The RtsCode of every VM frame. */
RtsStep vm_run(RtsCap *cap);
/* A closure of p over no free variables; a primitive procedure when p->prim is set. */
Value vm_make_closure0(RtsCap *cap, const Proto *p);
/* Pushes a frame calling f with no arguments on the current thread's stack; the frame
 * below resumes with the result (in the result register if it is not a VM frame). */
void vm_push_call0(RtsCap *cap, Value f);
/* The same with one argument. */
void vm_push_call1(RtsCap *cap, Value f, Value x);
/* A new thread (not started) whose body calls the procedure `thunk`. */
Value vm_new_thread(RtsCap *cap, Value thunk);
/* Kills the running thread after an uncaught exception: prints "error: <message>" for
 * obj and a backtrace of the Scheme frames on stderr (exit 1 if it is the main thread). */
void vm_uncaught(RtsCap *cap, Value obj) __attribute__((noreturn));
/* Writes the backtrace of the running thread's Scheme frames on out, a line "\n  in ..."
 * each (Note [Backtraces] in vm.c). `repl`: the system frames below the program's are left
 * out too (they are the REPL's own). Never allocates in the heap. */
void vm_backtrace(RtsCap *cap, SchPort *out, bool repl);
/* "error: " and the error object's message and irritants (or "uncaught exception: " and
 * the object), as the uncaught report and the REPL print it. */
void vm_print_error(SchPort *out, Value obj);
/* Whether the continuation k (what %call/cc passes its procedure) may still be thrown to:
 * its call/cc has not returned, and the running thread made it (call/cc is escape-only). */
bool vm_continuation_live(RtsCap *cap, Value k);
/* Makes the VM's own procedures: apply, %call/cc, %throw. */
void vm_init(RtsCap *cap);
/* Prints a prototype's code (and its children's) on stderr: `rtslab --disassemble`. */
void vm_disassemble(const Proto *p, int depth);

/* The compiler (compile.c): a program's top-level forms to a thunk's prototype. On a
 * syntax error it prints "file:line:col: message" into err and returns NULL. `system`
 * marks the prelude's code. */
typedef struct SchCompileError { char msg[300]; } SchCompileError;
Proto *sch_compile_toplevel(Datum *forms, const char *file, bool system, SchCompileError *err);
/* Starts the Scheme layer (symbols, built-in types, primitives) and returns the prelude
 * compiled to a thunk, which the caller runs (vm_push_call0) before any other code. Must be
 * called on a running thread of the runtime. */
Value sch_boot(RtsCap *cap);
/* The program's command line, for (command-line). */
void sch_set_command_line(int argc, char **argv);
/* Derived forms to core forms (expand.c); NULL with err set on bad syntax. `file` names
 * the unit, for the datums that have no position. */
Datum *sch_expand(DArena *a, Datum *form, SchCompileError *err, const char *file);
/* Whether (include "file" ...) may read files (true unless turned off): the fuzzing harness
 * turns it off, so that no input makes the compiler read a file (Note [Include]). */
extern bool sch_include_enabled;


#endif
