/* rtslab: the C embedding API.
 *
 * A program runs as lightweight threads. A thread's state is a heap object whose stack is a
 * heap object too; C code runs on a thread as *frames*: a frame holds `nslots` Values and the
 * C function (RtsCode) that runs it. The scheduler calls the code of the thread's top frame;
 * the code reads and writes its slots, may push a frame (a call) or pop its own (a return), and
 * says what happens next by its result:
 *   RTS_NEXT   run the thread's (new) top frame; a safe point: the thread may be preempted
 *   RTS_YIELD  put the thread at the back of the run queue
 *   RTS_BLOCK  the thread blocked in an MVar, join or sleep call that returned false
 *   RTS_FINISH the thread is done; its result is the last value given to rts_set_result
 * A frame's code is called again each time its frame becomes the top (after a callee returns,
 * after a block ends), so it keeps its own program counter in a slot.
 *
 * Note [GC safety in C code]
 * Any call that allocates may run a GC, which moves objects. A Value held in a C local is
 * stale after such a call; keep Values that must live across an allocation in frame slots
 * (rts_slot/rts_set_slot) or global roots (rts_add_root). Arguments passed to the allocating
 * calls below are protected by the call itself.
 */
#ifndef RTSLAB_H
#define RTSLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rtslab_object.h"
#include "rtslab_options.h"

typedef struct Capability RtsCap;

typedef enum { RTS_NEXT, RTS_YIELD, RTS_BLOCK, RTS_FINISH } RtsStep;
typedef RtsStep (*RtsCode)(RtsCap *cap);

/* --- life cycle --------------------------------------------------------------------- */

/* Parses RTS options out of argv (and RTSLAB_RTS), starts the runtime. On a bad option it
 * prints the message and exits 1; -? and --info print and exit 0. From then on SIGPIPE is
 * ignored (a write to a closed pipe fails with EPIPE) and SIGINT and SIGTERM are taken by a
 * thread of the runtime (rts_set_interrupt_handler): threads the program starts later
 * inherit a mask that blocks them. */
void rts_init(int *argc, char ***argv);
/* Runs `code` as the main thread with an nslots frame; returns when it finishes (0), or exits
 * the process on a deadlock of the main thread (1) or a fatal error in it (1). May be called
 * again after it has returned, to run another main thread. */
int  rts_run_main(RtsCode code, size_t nslots);
/* Prints statistics, releases the runtime and exits with `status`; with 1 instead of 0 when
 * stdout, the -s file or the eventlog could not be written in full (each said on stderr). */
void rts_exit(int status) __attribute__((noreturn));
/* Names the program that runs (a script the executable runs, say) for the default eventlog
 * and profile files, <name>.eventlog and <name>.prof (its base name, less a ".scm" ending);
 * else the executable's. */
void rts_set_program_name(const char *name);
/* Tells rts_exit that a write to stdout failed with errno e (stdio may have dropped what it
 * could not write, so at exit only its error flag would be left, without the reason). */
void rts_note_stdout_error(int e);
/* The first SIGINT or SIGTERM interrupts the main thread: `handler` is called on it, at a
 * safe point, with the signal, to raise an exception there (the Scheme layer's does). A
 * second signal before the main thread took the first kills the process at once. Without
 * a handler the runtime exits 128 + the signal, with -s and the eventlog written. */
void rts_set_interrupt_handler(void (*handler)(RtsCap *cap, int sig));
/* The time profile (+RTS -p, Note [Time profile] in sched/profile.h): at a sample, `where`
 * names the procedure the capability's running thread is in by a key that stays valid and
 * means the same procedure until exit (NULL: not in one of the language's procedures), and
 * at exit `describe` writes a key's name and its source position into buf. */
typedef struct RtsProfiler {
    const void *(*where)(RtsCap *cap);
    void (*describe)(const void *key, char *name, size_t name_len, char *src, size_t src_len);
} RtsProfiler;
void rts_set_profiler(const RtsProfiler *profiler);
/* The handler's `sig` when the main thread is blocked for ever (every thread waits on an
 * MVar or a join, none sleeps): with a handler that is an exception too; without one the
 * runtime says "thread blocked indefinitely in an MVar operation" and exits 1. */
#define RTS_DEADLOCK (-1)
/* A thread whose stack would pass -K: `handler` is called on it (at the frame push that did
 * not fit, with RTS_STACK_HEADROOM bytes of room granted above -K) to raise an exception
 * there, and does not return; if it cannot (it returns false), or without a handler, or when
 * the thread passes -K again while it handles the first, the thread is killed with "stack
 * overflow" (Note [Stack overflow] in sched/stack.h). */
void rts_set_stack_overflow_handler(bool (*handler)(RtsCap *cap));
const RtsOptions *rts_options(void);

/* --- allocation (may GC) ------------------------------------------------------------ */

Value rts_cons(RtsCap *cap, Value car, Value cdr);
Value rts_make_vector(RtsCap *cap, size_t n, Value fill);
Value rts_make_box(RtsCap *cap, Value v);
Value rts_make_raw(RtsCap *cap, ObjType type, size_t nbytes);   /* zeroed bytes */
Value rts_make_flonum(RtsCap *cap, double d);
/* A PTRS object of `type` with `n` fields set to `fill`. */
Value rts_make_object(RtsCap *cap, ObjType type, size_t n, Value fill);

/* --- access and mutation (writes go through the write barrier) ----------------------- */

static inline Value rts_car(Value p)              { return obj_payload(p)[0]; }
static inline Value rts_cdr(Value p)              { return obj_payload(p)[1]; }
static inline Value rts_field(Value o, size_t i)  { return obj_payload(o)[i]; }
static inline size_t rts_vector_length(Value v)   { return obj_size(v); }
static inline double rts_flonum_val(Value v)      { double d; __builtin_memcpy(&d, raw_bytes(v), sizeof d); return d; }

/* Stores v in field i (car: 0, cdr: 1) of a mutable object, through the write barrier. A
 * call, as OCaml's caml_modify is: the runtime's own code inlines the barrier's fast path
 * (sm_set_field, Note [Write barrier] in sm/storage.h), so this header calls nothing. */
void rts_set_field(RtsCap *cap, Value obj, size_t i, Value v);
void rts_set_car(RtsCap *cap, Value p, Value v);
void rts_set_cdr(RtsCap *cap, Value p, Value v);

/* --- frames on the current thread's stack -------------------------------------------- */

/* Pushes a frame of nslots slots (all #f) run by `code`; may grow the stack (and GC). Beyond
 * -K it kills the thread with "stack overflow". */
void   rts_push_frame(RtsCap *cap, RtsCode code, size_t nslots);
void   rts_pop_frame(RtsCap *cap);
Value  rts_slot(RtsCap *cap, size_t i);
void   rts_set_slot(RtsCap *cap, size_t i, Value v);
size_t rts_stack_depth(RtsCap *cap);              /* frames on the current thread's stack */
/* The current thread's result register: what a returning frame leaves for its caller, what a
 * blocked take/read/join delivers, and the thread's result when it finishes. */
Value  rts_result(RtsCap *cap);
void   rts_set_result(RtsCap *cap, Value v);

/* Kills the current thread with a message ("rtslab: <thread N>: <msg>" on stderr); when it is
 * the main thread the process exits 1. Does not return. */
void   rts_thread_error(RtsCap *cap, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));

/* --- threads ------------------------------------------------------------------------- */

unsigned rts_cap_no(RtsCap *cap);                /* 0 .. rts_n_caps()-1 */
unsigned rts_n_caps(void);

/* A new thread with one frame (slots #f) run by code; not runnable until rts_thread_start. */
Value rts_thread_new(RtsCap *cap, RtsCode code, size_t nslots);
void  rts_thread_set_slot(RtsCap *cap, Value thread, size_t i, Value v);
void  rts_thread_start(RtsCap *cap, Value thread);
/* Starts it on capability `no` (mod the number of capabilities), like GHC's forkOn. */
void  rts_thread_start_on(RtsCap *cap, Value thread, unsigned no);
/* True when `thread` has finished: its result is now in the result register. False: the
 * current thread is blocked until then; return RTS_BLOCK (the result comes on resumption). */
bool  rts_thread_join(RtsCap *cap, Value thread);
/* True when `thread` was killed by an error (its result is then #f). */
bool  rts_thread_killed(Value thread);
intptr_t rts_thread_id(Value thread);
Value rts_current_thread(RtsCap *cap);
/* Blocks the current thread for `secs` seconds; the step must return RTS_BLOCK. */
void  rts_sleep(RtsCap *cap, double secs);

/* --- MVars (FIFO) ---------------------------------------------------------------------- */

Value rts_new_mvar(RtsCap *cap);                 /* empty */
/* Each returns true when done at once (take/read: the value is in *out and in the result
 * register). False: the current thread is queued on the MVar, blocked; return RTS_BLOCK. On
 * resumption the operation has completed (take/read: the value is in the result register). */
bool  rts_mvar_take(RtsCap *cap, Value mvar, Value *out);
bool  rts_mvar_read(RtsCap *cap, Value mvar, Value *out);
bool  rts_mvar_put(RtsCap *cap, Value mvar, Value v);
bool  rts_mvar_try_take(RtsCap *cap, Value mvar, Value *out);
bool  rts_mvar_try_put(RtsCap *cap, Value mvar, Value v);

/* --- GC ---------------------------------------------------------------------------------- */

void rts_add_root(Value *root);                  /* a C global the GC updates */
/* Calls fn(data) once after the GC that finds obj unreachable, on that GC's leading OS
 * thread, the world running; fn must not touch the heap (Note [Finalizers], sm/finalize.h). */
void rts_add_finalizer(Value obj, void (*fn)(void *data), void *data);
/* The same, for a finalizer that frees `bytes` of C memory and `fds` file descriptors: they
 * count toward the next GC as heap allocation would (Note [External resources]). */
void rts_add_finalizer_held(RtsCap *cap, Value obj, void (*fn)(void *data), void *data,
                            size_t bytes, unsigned fds);
void rts_gc(RtsCap *cap, bool major);            /* collect now */

typedef struct RtsStats {
    uint64_t bytes_allocated;
    uint64_t bytes_copied;
    uint64_t minor_gcs, major_gcs;
    uint64_t max_live_bytes;
    uint64_t gc_ns, minor_gc_ns, major_gc_ns, max_pause_ns;
    uint64_t heap_blocks;                      /* blocks in use now */
} RtsStats;
void rts_get_stats(RtsStats *out);

#endif
