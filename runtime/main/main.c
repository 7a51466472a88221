/* The `rtslab` driver: runs a Scheme program, an expression, or a REPL.
 *
 *   rtslab [--disassemble] prog.scm [args...] [+RTS ... -RTS]
 *   rtslab -e EXPR            evaluates EXPR (any number of forms) and writes the value of
 *                             the last one unless it is unspecified
 *   rtslab                    a REPL on standard input (prompts when it is a terminal)
 *
 * The driver is a C frame on the main thread (rtslab.h): it boots the Scheme layer, pushes
 * a call of the prelude, then of the program (each a thunk compiled from all its forms, so a
 * syntax error anywhere is reported before anything runs), and finishes when it returns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scheme/vm.h"

enum { SLOT_STATE, SLOT_NSLOTS };
enum { ST_BOOT, ST_PROGRAM, ST_RESULT, ST_REPL_READ, ST_REPL_PRINT, ST_DONE };

static const char *prog_file;       /* NULL: -e or the REPL */
static const char *expr_text;       /* -e */
static bool disassemble;
static bool flush_failed;          /* a file port could not be written at the program's end */
static SchPort *repl_in;

static void usage(void)
{
    fprintf(stderr,
            "usage: rtslab [--disassemble] PROGRAM.scm [ARGS...] [+RTS OPTIONS -RTS]\n"
            "       rtslab -e EXPRESSION\n"
            "       rtslab              (a REPL)\n"
            "RTS options: rtslab +RTS -? -RTS\n");
    exit(1);
}

/* Reads every datum of `in`; on a syntax error prints it and returns NULL. */
static Datum *read_all(DArena *a, SchPort *in, const char *name)
{
    Datum *forms = DNIL, **tail = &forms;
    SchReadError err;
    for (;;) {
        Datum *d = sch_read(a, in, &err);
        if (!d) break;
        *tail = datum_cons(a, d, DNIL);
        tail = &(*tail)->u.pair.cdr;
    }
    if (err.msg[0]) {
        sch_flush_all();
        fprintf(stderr, "%s:%d:%d: %s\n", name, err.line, err.col, err.msg);
        return NULL;
    }
    return forms;
}

/* Compiles forms into a thunk; on an error prints it and returns RTS_FALSE. */
static Value compile_forms(RtsCap *cap, Datum *forms, const char *name)
{
    SchCompileError err;
    Proto *p = sch_compile_toplevel(forms, name, false, &err);
    if (!p) {
        sch_flush_all();
        fprintf(stderr, "%s\n", err.msg);
        return RTS_FALSE;
    }
    if (disassemble)
        vm_disassemble(p, 0);
    return vm_make_closure0(cap, p);
}

static void set_state(RtsCap *cap, int st) { rts_set_slot(cap, SLOT_STATE, rts_fixnum(st)); }

static void print_result(Value v)
{
    if (v == RTS_UNSPEC) return;
    SchPort *out = sch_port_stdout();
    sch_print(out, v, true);
    sch_port_putc(out, '\n');
    sch_port_flush(out);
}

/* The REPL: reads one datum and runs it inside %repl-run, which reports errors. */
static RtsStep repl_read(RtsCap *cap)
{
    bool tty = isatty(0);
    for (;;) {
        if (tty) {
            fputs("> ", stdout);
            fflush(stdout);
        }
        DArena *a = datum_arena_new();
        SchReadError err;
        Datum *d = sch_read(a, repl_in, &err);
        if (!d) {
            datum_arena_free(a);
            if (!err.msg[0]) {                   /* end of input */
                if (tty) putchar('\n');
                set_state(cap, ST_DONE);
                return RTS_NEXT;
            }
            fprintf(stderr, "<stdin>:%d:%d: %s\n", err.line, err.col, err.msg);
            /* skip the rest of the line: the reader may have stopped mid-datum */
            for (int32_t ch = sch_port_getc(repl_in); ch >= 0 && ch != '\n'; ch = sch_port_getc(repl_in)) {}
            continue;
        }
        Value thunk = compile_forms(cap, datum_cons(a, d, DNIL), "<stdin>");
        datum_arena_free(a);
        if (thunk == RTS_FALSE)
            continue;
        size_t mark = sch_mark(cap);
        Value *t = sch_protect(cap, thunk);
        Value run = sch_symbol_value(sch_intern(cap, "%sys:%repl-run", 14));
        set_state(cap, ST_REPL_PRINT);
        vm_push_call1(cap, run, *t);
        sch_release(cap, mark);
        return RTS_NEXT;
    }
}

static RtsStep driver(RtsCap *cap)
{
    Value st = rts_slot(cap, SLOT_STATE);       /* #f in the new frame */
    switch (rts_is_fixnum(st) ? (int)rts_fixnum_val(st) : ST_BOOT) {
    case ST_BOOT: {
            Value prelude = sch_boot(cap);
            set_state(cap, ST_PROGRAM);
        vm_push_call0(cap, prelude);
        return RTS_NEXT;
    }
    case ST_PROGRAM: {
        if (!prog_file && !expr_text) {
            repl_in = sch_port_stdin();
            set_state(cap, ST_REPL_READ);
            return RTS_NEXT;
        }
        DArena *a = datum_arena_new();
        SchPort *in = prog_file ? sch_port_open_file_in(prog_file)
                                : sch_port_open_utf8_in(expr_text, strlen(expr_text), "<expression>");
        if (!in) {
            fprintf(stderr, "rtslab: cannot open %s: %s\n", prog_file, strerror(errno));
            rts_exit(1);
        }
        const char *name = prog_file ? prog_file : "<expression>";
        Datum *forms = read_all(a, in, name);
        sch_port_free(in);
        Value thunk = forms ? compile_forms(cap, forms, name) : RTS_FALSE;
        datum_arena_free(a);
        if (thunk == RTS_FALSE)
            rts_exit(1);
        set_state(cap, ST_RESULT);
        vm_push_call0(cap, thunk);
        return RTS_NEXT;
    }
    case ST_RESULT:
        if (expr_text)
            print_result(rts_result(cap));
        set_state(cap, ST_DONE);
        return RTS_NEXT;
    case ST_REPL_READ:
        return repl_read(cap);
    case ST_REPL_PRINT:
        print_result(rts_result(cap));
        set_state(cap, ST_REPL_READ);
        return RTS_NEXT;
    case ST_DONE:
        break;
    }
    if (!sch_flush_all())
        flush_failed = true;
    rts_pop_frame(cap);
    return RTS_NEXT;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (strcmp(argv[i], "--disassemble") == 0) {
            disassemble = true;
        } else if (strcmp(argv[i], "-e") == 0) {
            if (i + 1 >= argc) usage();
            expr_text = argv[++i];
            i++;
            break;
        } else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
        } else {
            fprintf(stderr, "rtslab: unknown option %s\n", argv[i]);
            usage();
        }
    }
    if (!expr_text && i < argc)
        prog_file = argv[i];
    /* (command-line): the program and its arguments; argv[0] for -e and the REPL. */
    if (prog_file)
        rts_set_program_name(prog_file);
    if (prog_file)
        sch_set_command_line(argc - i, argv + i);
    else
        sch_set_command_line(1, argv);
    rts_run_main(driver, SLOT_NSLOTS);
    bool flushed = sch_flush_all();
    rts_exit(flushed && !flush_failed ? 0 : 1);
}
