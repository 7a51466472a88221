/* Unit test: Values and the object layout (runtime/include/rtslab_object.h), on their own --
 * the runtime is never started; "objects" are words in static arrays. */
#include "rtslab.h"
#include "unit/check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const Value immediates[] = { RTS_FALSE, RTS_TRUE, RTS_NIL, RTS_UNSPEC, RTS_EOF, RTS_UNDEF };
#define N_IMM (sizeof immediates / sizeof *immediates)

static const intptr_t fixnums[] = {
    0, 1, -1, 2, -2, 42, -42, 255, 256, -256, 65535, 1 << 20, -(1 << 20),
    (intptr_t)1 << 31, -((intptr_t)1 << 31), (intptr_t)1 << 32, ((intptr_t)1 << 32) + 7,
    -((intptr_t)1 << 40) - 3, (intptr_t)1 << 61, -((intptr_t)1 << 61),
    RTS_FIXNUM_MAX, RTS_FIXNUM_MAX - 1, RTS_FIXNUM_MIN, RTS_FIXNUM_MIN + 1,
};
#define N_FIX (sizeof fixnums / sizeof *fixnums)

static const uint32_t chars[] = {
    0, 1, 'a', 'Z', ' ', 0x7f, 0x80, 0xff, 0x100, 0x3bb /* λ */, 0x7ff, 0x800, 0xd7ff,
    0xe000, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10fffe, 0x10ffff,
};
#define N_CHAR (sizeof chars / sizeof *chars)

static void test_fixnums(void)
{
    for (size_t i = 0; i < N_FIX; i++) {
        Value v = rts_fixnum(fixnums[i]);
        if (!CHECK_EQ_INT(rts_fixnum_val(v), fixnums[i]))
            fprintf(stderr, "  fixnum %" PRIdMAX "\n", (intmax_t)fixnums[i]);
        CHECK(rts_is_fixnum(v));
        CHECK(!rts_is_ptr(v));
        CHECK(!rts_is_char(v));
        CHECK((v & RTS_TAG_MASK) != RTS_TAG_IMM);
        for (size_t k = 0; k < N_IMM; k++)
            CHECK(v != immediates[k]);
    }
    CHECK_EQ_INT(RTS_FIXNUM_MAX, INTPTR_MAX / 2);
    CHECK_EQ_INT(RTS_FIXNUM_MIN, -RTS_FIXNUM_MAX - 1);
    /* 63 bits of signed integer on a 64-bit machine. */
    CHECK_EQ_INT(sizeof(Value) * 8 - 1, 63);
    CHECK_EQ_INT(rts_fixnum_val(rts_fixnum(RTS_FIXNUM_MAX)), RTS_FIXNUM_MAX);
    CHECK_EQ_INT(rts_fixnum_val(rts_fixnum(RTS_FIXNUM_MIN)), RTS_FIXNUM_MIN);
    /* Distinct integers, distinct Values; the order of the words follows the numbers. */
    for (size_t i = 0; i < N_FIX; i++)
        for (size_t j = 0; j < N_FIX; j++) {
            Value a = rts_fixnum(fixnums[i]), b = rts_fixnum(fixnums[j]);
            CHECK((a == b) == (fixnums[i] == fixnums[j]));
            CHECK(((intptr_t)a < (intptr_t)b) == (fixnums[i] < fixnums[j]));
        }
    /* The encoding itself: n << 1 | 1. */
    CHECK_EQ_INT(rts_fixnum(0), 1);
    CHECK_EQ_INT(rts_fixnum(1), 3);
    CHECK(rts_fixnum(-1) == ~(Value)0);
    /* Code addresses are stored as fixnums (Note [Value tagging]): a function pointer
     * survives the round trip. */
    uintptr_t code = (uintptr_t)(void (*)(void))test_fixnums;
    CHECK((uintptr_t)rts_fixnum_val(rts_fixnum((intptr_t)code)) == code);
}

static void test_chars(void)
{
    for (size_t i = 0; i < N_CHAR; i++) {
        Value v = rts_char(chars[i]);
        if (!CHECK_EQ_INT(rts_char_val(v), chars[i]))
            fprintf(stderr, "  char U+%04" PRIX32 "\n", chars[i]);
        CHECK(rts_is_char(v));
        CHECK(!rts_is_fixnum(v));
        CHECK(!rts_is_ptr(v));
        CHECK((v & RTS_TAG_MASK) == RTS_TAG_CHAR);
        for (size_t k = 0; k < N_IMM; k++)
            CHECK(v != immediates[k]);
        for (size_t j = 0; j < N_CHAR; j++)
            CHECK((v == rts_char(chars[j])) == (i == j));
    }
    CHECK_EQ_INT(rts_char_val(rts_char(0x10ffff)), 0x10ffff);
    CHECK(rts_char('a') != rts_fixnum('a'));
}

static void test_immediates(void)
{
    for (size_t i = 0; i < N_IMM; i++) {
        Value v = immediates[i];
        CHECK((v & RTS_TAG_MASK) == RTS_TAG_IMM);
        CHECK(!rts_is_fixnum(v));
        CHECK(!rts_is_ptr(v));
        CHECK(!rts_is_char(v));
        CHECK(v != 0);
        for (size_t j = 0; j < N_IMM; j++)
            CHECK((v == immediates[j]) == (i == j));
        for (size_t j = 0; j < N_FIX; j++)
            CHECK(v != rts_fixnum(fixnums[j]));
    }
    CHECK(rts_bool(true) == RTS_TRUE);
    CHECK(rts_bool(false) == RTS_FALSE);
    CHECK(rts_bool(7 > 3) == RTS_TRUE);
    /* #f is not 0: a zeroed word is not #f (nor a valid Value in a live slot). */
    CHECK(RTS_FALSE != 0);
    /* An immediate is never taken for a char, whatever its payload. */
    for (unsigned n = 0; n < 4096; n++) {
        Value v = RTS_IMM(n);
        if (!CHECK(!rts_is_char(v) && !rts_is_fixnum(v) && !rts_is_ptr(v)))
            fprintf(stderr, "  RTS_IMM(%u)\n", n);
    }
    /* Pointers: an aligned address has tag 000 and is nothing else. */
    static Value word[2];
    Value p = (Value)&word[0];
    CHECK(rts_is_ptr(p));
    CHECK(!rts_is_fixnum(p) && !rts_is_char(p));
    CHECK((p & RTS_TAG_MASK) == RTS_TAG_PTR);
    CHECK(!rts_has_type(rts_fixnum(T_PAIR), T_PAIR));   /* short-circuits: no dereference */
    CHECK(!rts_has_type(RTS_NIL, T_PAIR));
    CHECK(!rts_has_type(rts_char('x'), T_PAIR));
}

static void test_headers(void)
{
    static const size_t sizes[] = { 0, 1, 2, 3, 7, 255, 256, 700, 65535, 65536, 1u << 20,
                                    (size_t)1 << 32, ((size_t)1 << 48) - 1 };
    for (int t = T_PAIR; t < T_NTYPES; t++) {
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            Value h = obj_make_header((ObjType)t, sizes[i]);
            bool ok = true;
            ok &= CHECK(hdr_is_header(h));
            ok &= CHECK_EQ_INT(hdr_type(h), t);
            ok &= CHECK((uint64_t)hdr_size(h) == (uint64_t)sizes[i]);
            ok &= CHECK(!rts_is_ptr(h));                 /* a header never looks like a pointer */
            ok &= CHECK((h & OBJ_FLAGS) == 0);           /* fresh: no flags */
            /* The dirty flag changes neither type nor size. */
            Value d = h | OBJ_DIRTY;
            ok &= CHECK(hdr_is_header(d));
            ok &= CHECK_EQ_INT(hdr_type(d), t);
            ok &= CHECK((uint64_t)hdr_size(d) == (uint64_t)sizes[i]);
            ok &= CHECK((d & ~OBJ_DIRTY) == h);
            if (!ok)
                fprintf(stderr, "  type %d size %zu\n", t, sizes[i]);
        }
    }
    CHECK(T_NTYPES <= 256);                              /* the type fits in 8 bits */
    CHECK((OBJ_DIRTY & OBJ_FLAGS) == OBJ_DIRTY);
    CHECK((OBJ_FLAGS & OBJ_HDR_TAG) == 0);
    /* Exact bit layout (Note [Object header]). */
    CHECK(obj_make_header(T_PAIR, 2) == (((Value)2 << 16) | ((Value)T_PAIR << 8) | 7));

    /* During a GC a header may be a forwarding pointer (an object address, tag 000) or
     * OBJ_BUSY; neither is a header. */
    static Value to_space[8];
    for (int i = 0; i < 8; i++) {
        Value fwd = (Value)&to_space[i];
        CHECK(!hdr_is_header(fwd));
        CHECK(rts_is_ptr(fwd));
    }
    CHECK(!hdr_is_header(OBJ_BUSY));
    CHECK(!rts_is_ptr(OBJ_BUSY));
    for (int t = T_PAIR; t < T_NTYPES; t++)
        CHECK(obj_make_header((ObjType)t, 0) != OBJ_BUSY);
    /* Immediates and chars are never headers (a fixnum may be: headers are not Values). */
    CHECK(!hdr_is_header(RTS_FALSE) && !hdr_is_header(RTS_NIL) && !hdr_is_header(rts_char('a')));
}

static void test_layouts(void)
{
    static const ObjType ptrs[] = { T_PAIR, T_VECTOR, T_BOX, T_RECORD, T_CLOSURE, T_SYMBOL,
                                    T_MVAR, T_THREAD };
    static const ObjType raws[] = { T_STRING, T_BYTEVECTOR, T_FLONUM, T_CODE };
    for (size_t i = 0; i < sizeof ptrs / sizeof *ptrs; i++)
        CHECK_EQ_INT(obj_type_layout(ptrs[i]), LAYOUT_PTRS);
    for (size_t i = 0; i < sizeof raws / sizeof *raws; i++) {
        CHECK_EQ_INT(obj_type_layout(raws[i]), LAYOUT_RAW);
        CHECK(!obj_type_mutable(raws[i]));
    }
    CHECK_EQ_INT(obj_type_layout(T_STACK), LAYOUT_STACK);
    /* Every type has exactly one of the three layouts; count them. */
    int n_ptrs = 0, n_raw = 0, n_stack = 0;
    for (int t = T_PAIR; t < T_NTYPES; t++) {
        switch (obj_type_layout((ObjType)t)) {
        case LAYOUT_PTRS:  n_ptrs++; break;
        case LAYOUT_RAW:   n_raw++; break;
        case LAYOUT_STACK: n_stack++; break;
        }
    }
    CHECK_EQ_INT(n_ptrs, 8);
    CHECK_EQ_INT(n_raw, 4);
    CHECK_EQ_INT(n_stack, 1);
    /* Mutable: every PTRS type and the stack. */
    for (size_t i = 0; i < sizeof ptrs / sizeof *ptrs; i++)
        CHECK(obj_type_mutable(ptrs[i]));
    CHECK(obj_type_mutable(T_STACK));
    CHECK(T_PAIR != 0);                                  /* type 0 is no type */
}

static void test_raw_words(void)
{
    const size_t W = sizeof(Value);
    CHECK_EQ_INT(raw_words(0), 1);
    CHECK_EQ_INT(raw_words(1), 2);
    CHECK_EQ_INT(raw_words(W - 1), 2);
    CHECK_EQ_INT(raw_words(W), 2);
    CHECK_EQ_INT(raw_words(W + 1), 3);
    CHECK_EQ_INT(raw_words(2 * W), 3);
    CHECK_EQ_INT(raw_words(2 * W + 1), 4);
    CHECK_EQ_INT(raw_words(sizeof(double)), 2);          /* a flonum */
    CHECK_EQ_INT(raw_words(64 << 10), 1 + (64 << 10) / W);
    for (size_t n = 0; n < 200; n++) {
        size_t w = raw_words(n);
        bool ok = (w - 1) * W >= n && (w == 1 || (w - 2) * W < n);
        if (!CHECK(ok))
            fprintf(stderr, "  raw_words(%zu) = %zu\n", n, w);
    }
}

/* Objects built by hand in static memory, read through the accessors. */
static void test_objects(void)
{
    static Value pair[3], vec[6], raw[4], flo[3], box[2];

    pair[0] = obj_make_header(T_PAIR, 2);
    pair[1] = rts_fixnum(1);
    pair[2] = RTS_NIL;
    Value p = (Value)pair;
    CHECK(rts_is_ptr(p));
    CHECK(rts_has_type(p, T_PAIR));
    CHECK(!rts_has_type(p, T_VECTOR));
    CHECK_EQ_INT(obj_type(p), T_PAIR);
    CHECK_EQ_INT(obj_size(p), 2);
    CHECK(obj_ptr(p) == pair);
    CHECK(obj_payload(p) == &pair[1]);
    CHECK(obj_header(p) == pair[0]);
    CHECK(rts_car(p) == rts_fixnum(1));
    CHECK(rts_cdr(p) == RTS_NIL);

    vec[0] = obj_make_header(T_VECTOR, 5);
    for (int i = 0; i < 5; i++) vec[1 + i] = rts_fixnum(i * 10);
    Value v = (Value)vec;
    CHECK_EQ_INT(rts_vector_length(v), 5);
    for (size_t i = 0; i < 5; i++)
        CHECK(rts_field(v, i) == rts_fixnum((intptr_t)i * 10));

    box[0] = obj_make_header(T_BOX, 1) | OBJ_DIRTY;      /* a remembered old box */
    box[1] = p;
    Value b = (Value)box;
    CHECK(rts_has_type(b, T_BOX));
    CHECK_EQ_INT(obj_size(b), 1);
    CHECK(rts_field(b, 0) == p);

    /* RAW: payload[0] is the byte length, the bytes follow. */
    raw[0] = obj_make_header(T_BYTEVECTOR, raw_words(13));
    raw[1] = 13;
    Value r = (Value)raw;
    CHECK_EQ_INT(obj_size(r), 3);
    CHECK_EQ_INT(raw_len(r), 13);
    CHECK(raw_bytes(r) == (uint8_t *)&raw[2]);
    memcpy(raw_bytes(r), "hello, world!", 13);
    CHECK(memcmp(&raw[2], "hello, w", 8) == 0);
    CHECK(raw[0] == obj_make_header(T_BYTEVECTOR, 3));    /* the bytes did not touch it */

    double d = -2.5e-300;
    flo[0] = obj_make_header(T_FLONUM, raw_words(sizeof d));
    flo[1] = sizeof d;
    memcpy(&flo[2], &d, sizeof d);
    Value f = (Value)flo;
    CHECK(rts_has_type(f, T_FLONUM));
    CHECK(rts_flonum_val(f) == d);
    CHECK_EQ_INT(obj_type_layout(obj_type(f)), LAYOUT_RAW);

    /* A forwarded object: its header word now holds the copy's address. */
    pair[0] = (Value)vec;
    CHECK(!hdr_is_header(obj_header(p)));
    CHECK(obj_header(p) == v);
    pair[0] = OBJ_BUSY;
    CHECK(!hdr_is_header(obj_header(p)));
}

int main(void)
{
    CHECK_EQ_INT(sizeof(Value), sizeof(void *));
    test_fixnums();
    test_chars();
    test_immediates();
    test_headers();
    test_layouts();
    test_raw_words();
    test_objects();
    return check_done();
}
