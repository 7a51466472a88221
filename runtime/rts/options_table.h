/* The base's RTS options: one row each (Note [The option table] in rts/options.c). Included
 * once, by options.c, which defines the parsers the rows name. Each OPT(...) is the fields
 * of one RtsOption (rts/patch.h) as designated initializers; the order is -?'s. A patch's
 * options are rows of its own file (its RtsPatch's `options`). */
#ifndef RTS_OPTIONS_TABLE_H
#define RTS_OPTIONS_TABLE_H

#define F(x) .field = (int)offsetof(RtsOptions, x)
#define GIVEN(x) .given_field = (int)offsetof(RtsOptions, x)
#define ON(x) .on_field = (int)offsetof(RtsOptions, x)

#define RTS_BASE_OPTIONS(OPT)                                                                 \
    OPT(.name = "-?", .exact = true, .syntax = "-?", .kind = RTS_OPT_FLAG,                    \
        .type = RTS_T_BOOL, F(show_help), .what = "print the list of RTS options and exit",  \
        .help = "  -?            print this message and exit\n")                              \
    OPT(.name = "--info", .exact = true, .syntax = "--info", .kind = RTS_OPT_FLAG,            \
        .type = RTS_T_BOOL, F(show_info),                                                     \
        .what = "print what the runtime was built with and what it chose, and exit",         \
        .help = "  --info        print information about the RTS (version, patches) and "     \
                "exit\n\n")                                                                   \
    OPT(.name = "-N", .exact = true, .syntax = "-N", .kind = RTS_OPT_CUSTOM,                  \
        .type = RTS_T_BOOL, F(n_caps_auto), .parse = opt_caps_auto,                           \
        .dflt_text = "off (-N1)", .what = "as many capabilities as the machine has",      \
        .help = "  -N            use as many capabilities as the machine has\n")              \
    OPT(.name = "-N", .syntax = "-N<n>", .kind = RTS_OPT_CUSTOM, .type = RTS_T_UNSIGNED,      \
        F(n_caps), .min = 1, .max = RTS_OPT_MAX_CAPS, .dflt = 1, .parse = opt_caps,           \
        .noun = "the number of capabilities", .what = "the number of capabilities",           \
        .help = "  -N<n>         use <n> capabilities ({min}..{max}; default {default})\n")    \
    OPT(.name = "-qg", .syntax = "-qg[<gen>]", .kind = RTS_OPT_CUSTOM, .type = RTS_T_UNSIGNED, \
        F(par_gc_gen), ON(par_gc), .max = RTS_OPT_MAX_GEN, .dflt = RTS_DEFAULT_PAR_GC_GEN,    \
        .parse = opt_gen, .what = "-qg: sequential GC; -qg<gen>: parallel GC only for "       \
        "generations >= <gen>",                                                               \
        .help = "  -qg           use sequential GC\n"                                         \
                "  -qg<gen>      use parallel GC only for generations >= <gen> (default "     \
                "{default})\n")                                                               \
    OPT(.name = "-qb", .syntax = "-qb[<gen>]", .kind = RTS_OPT_CUSTOM, .type = RTS_T_UNSIGNED, \
        F(balance_gen), GIVEN(balance_gen_given), ON(balance), .min = 1,                      \
        .max = RTS_OPT_MAX_GEN, .dflt = RTS_DEFAULT_BALANCE_GEN, .parse = opt_gen,            \
        .what = "-qb: no load balancing in parallel GC; -qb<gen>: only for generations >= "   \
        "<gen>",                                                                              \
        .help = "  -qb           no load balancing in parallel GC\n"                          \
                "  -qb<gen>      load-balance in parallel GC only for generations >= <gen>\n" \
                "                (default {default})\n")                                      \
    OPT(.name = "-qn", .syntax = "-qn<n>", .kind = RTS_OPT_NUMBER, .type = RTS_T_UNSIGNED,     \
        F(gc_threads), .min = 1, .max = RTS_OPT_MAX_CAPS,                                     \
        .noun = "the number of GC threads", .dflt_text = "one per capability",               \
        .what = "GC threads (at most one per capability)",                                    \
        .help = "  -qn<n>        use <n> GC threads (default: one per capability; at most\n"  \
                "                one per capability)\n")                                      \
    OPT(.name = "-qa", .exact = true, .syntax = "-qa", .kind = RTS_OPT_FLAG,                  \
        .type = RTS_T_BOOL, F(pin_caps), .what = "pin each capability's OS thread to a CPU",  \
        .then = RTS_USAGE_AFTER(RTS_USAGE_QA) | RTS_USAGE_AFTER(RTS_USAGE_GC),               \
        .help = "  -qa           pin each capability's OS thread to a CPU\n")                 \
    OPT(.name = "-A", .syntax = "-A<size>", .kind = RTS_OPT_SIZE, .type = RTS_T_SIZE,          \
        F(alloc_area), .min = RTS_MIN_ALLOC_AREA, .dflt = RTS_DEFAULT_ALLOC_AREA,             \
        .grain = RTS_OPT_HEAP_GRAIN, .noun = "the allocation area",                           \
        .what = "nursery (allocation area) size per capability",                             \
        .help = "\n  -A<size>      nursery (allocation area) size per capability (default "   \
                "{default}, min {min})\n")                                                    \
    OPT(.name = "-M", .syntax = "-M<size>", .kind = RTS_OPT_CUSTOM, .type = RTS_T_SIZE,        \
        F(max_heap), .min = RTS_MIN_ALLOC_AREA, .grain = RTS_OPT_HEAP_GRAIN,                  \
        .parse = opt_max_heap, .dflt_text = "0 (unlimited)",                                  \
        .range_text = "0, or at least 4k", .what = "maximum heap size",                      \
        .help = "  -M<size>      maximum heap size; 0 = unlimited (default 0)\n")             \
    OPT(.name = "-F", .syntax = "-F<n>", .kind = RTS_OPT_CUSTOM, .type = RTS_T_DOUBLE,         \
        F(old_gen_factor), .dflt_f = RTS_DEFAULT_OLD_GEN_FACTOR, .parse = opt_factor,         \
        .range_text = "greater than 0", .noun = "the old generation factor",                  \
        .what = "collect the old generation when it exceeds <n> x its live data at the last " \
        "major GC",                                                                           \
        .help = "  -F<n>         collect the old generation when it exceeds <n> x its live "  \
                "data\n                at the last major GC (default {default})\n")           \
    OPT(.name = "-O", .syntax = "-O<size>", .kind = RTS_OPT_SIZE, .type = RTS_T_SIZE,          \
        F(min_old_gen), .min = RTS_OPT_HEAP_GRAIN, .dflt = RTS_MIN_OLD_GEN_LIMIT,             \
        .grain = RTS_OPT_HEAP_GRAIN, .noun = "the minimum old generation size",               \
        .what = "no major GC while the old generation is smaller than <size>",               \
        .help = "  -O<size>      no major GC while the old generation is smaller than "       \
                "<size>\n                (default {default})\n")                              \
    OPT(.name = "--aging=", .syntax = "--aging=<0|1>", .kind = RTS_OPT_CUSTOM,                \
        .type = RTS_T_BOOL, F(aging), .dflt = 1, .parse = opt_aging, .dflt_text = "1",       \
        .range_text = "0 or 1",                                                               \
        .what = "1: a minor GC keeps the nursery's survivors young for one more minor GC; "   \
        "0: it promotes them at once",                                                        \
        .help = "  --aging=<0|1> 1 (default): a minor GC keeps the nursery's survivors "      \
                "young for\n                one more minor GC before promoting them, as GHC " \
                "does; 0: it\n                promotes them at once\n")                       \
    OPT(.name = "--sync-defer=", .syntax = "--sync-defer=<size>", .kind = RTS_OPT_SIZE,       \
        .type = RTS_T_SIZE, F(sync_defer), .dflt = RTS_DEFAULT_SYNC_DEFER,                    \
        .grain = RTS_OPT_HEAP_GRAIN,                                                          \
        .what = "what a capability whose GC waits for the others may allocate meanwhile",     \
        .help = "  --sync-defer=<size>  while the GC a capability asked for waits for the "   \
                "others\n                to stop, it runs on in up to <size> more nursery "   \
                "(default {default};\n                0: it waits)\n")                        \
    OPT(.name = "-K", .syntax = "-K<size>", .kind = RTS_OPT_SIZE, .type = RTS_T_SIZE,          \
        F(max_stack), .min = RTS_OPT_MIN_STACK, .dflt = RTS_DEFAULT_MAX_STACK,                \
        .grain = sizeof(void *), .noun = "the maximum stack size",                            \
        .what = "maximum stack size of a thread",                                             \
        .help = "  -K<size>      maximum stack size of a thread (default {default})\n")       \
    OPT(.name = "-ki", .syntax = "-ki<size>", .kind = RTS_OPT_SIZE, .type = RTS_T_SIZE,        \
        F(initial_stack), .min = RTS_OPT_MIN_STACK, .dflt = RTS_DEFAULT_INITIAL_STACK,        \
        .grain = sizeof(void *), .noun = "the initial stack size",                            \
        .what = "initial stack size of a thread (at most -K)",                                \
        .then = RTS_USAGE_AFTER(RTS_USAGE_STACK),                                             \
        .help = "  -ki<size>     initial stack size of a thread (default {default}; at most " \
                "-K)\n")                                                                      \
    OPT(.name = "-s", .syntax = "-s[<file>]", .kind = RTS_OPT_CUSTOM, .parse = opt_stats,     \
        .dflt_text = "off", .range_text = "a file, or stderr",                                \
        .what = "print a GC summary at exit",                                                 \
        .help = "\n  -s[<file>]    print a GC summary at exit to <file> (default stderr; "    \
                "-sstderr\n                is stderr too)\n")                                 \
    OPT(.name = "-S", .syntax = "-S[<file>]", .kind = RTS_OPT_CUSTOM, .parse = opt_stats,     \
        .dflt_text = "off", .range_text = "a file, or stderr",                                \
        .what = "like -s, plus one line per GC",                                              \
        .help = "  -S[<file>]    like -s, plus one line per GC\n")                            \
    OPT(.name = "--machine-readable", .exact = true, .syntax = "--machine-readable",          \
        .kind = RTS_OPT_FLAG, .type = RTS_T_BOOL, F(machine_readable),                        \
        .what = "print -s statistics as key/value pairs for tools",                          \
        .help = "  --machine-readable  print -s statistics as key/value pairs for tools\n")   \
    OPT(.name = "--numa", .exact = true, .syntax = "--numa", .kind = RTS_OPT_CUSTOM,          \
        .type = RTS_T_BOOL, F(numa), .parse = opt_numa,                                       \
        .what = "each capability's nursery and GC to-space on its NUMA node",                \
        .help = "  --numa        each capability's nursery and GC to-space on its NUMA node " \
                "(with\n                -qa, the node of its CPU; else nodes round-robin, "   \
                "the thread bound\n                to its node); nothing to do on one node. " \
                "Needs libnuma\n")                                                            \
    OPT(.name = "--numa=", .syntax = "--numa=<mask>", .kind = RTS_OPT_CUSTOM,                 \
        .parse = opt_numa, .dflt_text = "off", .range_text = "a node mask, decimal or 0x hex", \
        .what = "--numa on the nodes of <mask> only",                                         \
        .help = "  --numa=<mask> the same, on the nodes of <mask> only (bit i: node i; "      \
                "decimal or 0x)\n")                                                           \
    OPT(.name = "--io-manager=", .syntax = "--io-manager=<m>", .kind = RTS_OPT_CUSTOM,        \
        .type = RTS_T_INT, F(io_manager), .dflt = IO_CHOOSE_AUTO, .parse = opt_io_manager,    \
        .dflt_text = "auto", .range_text = "uring, epoll or auto",                            \
        .what = "the IO manager's back end",                                                  \
        .help = "  --io-manager=<m>  the IO manager's back end: uring (io_uring, liburing), " \
                "epoll,\n                or auto (default: io_uring when the kernel allows "  \
                "it, else epoll)\n")                                                          \
    OPT(.name = "-l", .syntax = "-l[<file>]", .kind = RTS_OPT_CUSTOM, .parse = opt_eventlog,  \
        .dflt_text = "off", .range_text = "a file", .what = "write an eventlog",              \
        .help = "  -l[<file>]    write an eventlog to <file> (default <prog>.eventlog, "      \
                "<prog> the\n                script run or else the executable), in GHC's "   \
                "binary format:\n                ThreadScope and ghc-events read it\n")       \
    OPT(.name = "--eventlog-format=", .syntax = "--eventlog-format=<f>",                      \
        .kind = RTS_OPT_CUSTOM, .type = RTS_T_INT, F(eventlog_format),                        \
        .parse = opt_eventlog_format, .dflt_text = "ghc", .range_text = "ghc or chrome",      \
        .what = "the eventlog's format",                                                      \
        .help = "  --eventlog-format=<f>  the eventlog's format: ghc (the default) or "       \
                "chrome\n                (Chrome trace JSON, which Perfetto opens; default "  \
                "file\n                <prog>.eventlog.json)\n")                              \
    OPT(.name = "-p", .exact = true, .syntax = "-p", .kind = RTS_OPT_FLAG,                    \
        .type = RTS_T_BOOL, F(profile), .what = "write a time profile by procedure",         \
        .help = "  -p            write a time profile by procedure to <prog>.prof, from "     \
                "samples\n                of the running threads every 1 ms\n")               \
    OPT(.name = "-po", .syntax = "-po<stem>", .kind = RTS_OPT_CUSTOM, .parse = opt_profile,   \
        .dflt_text = "off", .range_text = "a file name stem",                                 \
        .what = "-p, to <stem>.prof",                                                         \
        .help = "  -po<stem>     the same, to <stem>.prof\n")                                 \
    OPT(.name = "-DS", .exact = true, .syntax = "-DS", .kind = RTS_OPT_FLAG,                  \
        .type = RTS_T_BOOL, F(sanity),                                                        \
        .what = "sanity-check the heap before and after every GC (slow)",                    \
        .help = "  -DS           sanity-check the heap before and after every GC (slow)\n")  \
    OPT(.name = "-DG", .syntax = "-DG<n>", .kind = RTS_OPT_CUSTOM, .type = RTS_T_UNSIGNED,     \
        F(gc_stress), .min = 1, .max = RTS_OPT_MAX_GC_STRESS, .parse = opt_gc_stress,         \
        .dflt_text = "off", .what = "collector stress: a minor GC every n allocations (slow)", \
        .help = "  -DG<n>        collector stress: a minor GC every n allocations (slow)\n")  \
    OPT(.name = "--stats-keys", .exact = true, .syntax = "--stats-keys",                      \
        .kind = RTS_OPT_FLAG, .type = RTS_T_BOOL, F(show_stats_keys),                         \
        .what = "print the patches' --machine-readable keys and exit (tests)")               \
    OPT(.name = "--print-option-table", .exact = true, .syntax = "--print-option-table",      \
        .kind = RTS_OPT_FLAG, .type = RTS_T_BOOL, F(show_option_table),                       \
        .what = "print this table and exit (tests)")

#endif
