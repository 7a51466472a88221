/* Values and heap objects.
 *
 * Note [Value tagging]
 * A Value is one machine word. Its low three bits say what it is:
 *   xx1  fixnum: a 63-bit signed integer in the upper bits
 *   000  pointer to a heap object (its header word); never NULL in a live slot
 *   010  immediate constant: #f #t () unspecified eof undefined (payload in bits 3..)
 *   110  character: Unicode code point in bits 8..
 * Every word the GC may see (object fields, stack slots, roots) is a Value, so the collector
 * is precise without layout maps: code addresses on stacks are stored as fixnums.
 *
 * Note [Object header]
 * A heap object is a header word followed by `size` payload words. Header bits:
 *   0..2   0b111 (a header never looks like a pointer)
 *   3..7   flags (OBJ_DIRTY: an old mutable object already in a remembered set;
 *          OBJ_LOCKED: an MVar or thread locked by a capability, between safe points)
 *   8..15  type (ObjType)
 *   16..63 payload size in words
 * During a GC the header of an evacuated object is replaced by the address of its copy
 * (low bits 000), or by OBJ_BUSY while a GC thread is copying it.
 * Each type has one layout: PTRS (every payload word is a Value), RAW (no Values; the first
 * payload word is the byte length), or STACK (see sched/thread.h).
 */
#ifndef RTSLAB_OBJECT_H
#define RTSLAB_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uintptr_t Value;

#define RTS_TAG_MASK  ((Value)7)
#define RTS_TAG_PTR   ((Value)0)
#define RTS_TAG_IMM   ((Value)2)
#define RTS_TAG_CHAR  ((Value)6)

#define RTS_IMM(n)    ((Value)(((Value)(n) << 3) | RTS_TAG_IMM))
#define RTS_FALSE     RTS_IMM(0)
#define RTS_TRUE      RTS_IMM(1)
#define RTS_NIL       RTS_IMM(2)
#define RTS_UNSPEC    RTS_IMM(3)
#define RTS_EOF       RTS_IMM(4)
#define RTS_UNDEF     RTS_IMM(5)   /* unbound / not yet initialised */

#define RTS_FIXNUM_MAX ((intptr_t)(INTPTR_MAX >> 1))
#define RTS_FIXNUM_MIN ((intptr_t)(INTPTR_MIN >> 1))

static inline bool     rts_is_fixnum(Value v) { return (v & 1) != 0; }
static inline Value    rts_fixnum(intptr_t n) { return ((Value)n << 1) | 1; }
static inline intptr_t rts_fixnum_val(Value v) { return (intptr_t)v >> 1; }
static inline bool     rts_is_ptr(Value v)    { return (v & RTS_TAG_MASK) == RTS_TAG_PTR; }
static inline bool     rts_is_char(Value v)   { return (v & 0xff) == RTS_TAG_CHAR; }
static inline Value    rts_char(uint32_t c)   { return ((Value)c << 8) | RTS_TAG_CHAR; }
static inline uint32_t rts_char_val(Value v)  { return (uint32_t)(v >> 8); }
static inline Value    rts_bool(bool b)       { return b ? RTS_TRUE : RTS_FALSE; }

typedef enum ObjType {
    T_PAIR = 1, T_VECTOR, T_BOX, T_RECORD, T_CLOSURE, T_SYMBOL, T_MVAR, T_THREAD,  /* PTRS */
    T_STRING, T_BYTEVECTOR, T_FLONUM, T_CODE,                                  /* RAW  */
    T_STACK,                                                                   /* STACK */
    T_NTYPES
} ObjType;

typedef enum { LAYOUT_PTRS, LAYOUT_RAW, LAYOUT_STACK } ObjLayout;

#define OBJ_HDR_TAG   ((Value)7)
#define OBJ_DIRTY     ((Value)1 << 3)
#define OBJ_LOCKED    ((Value)1 << 4)
#define OBJ_FLAGS     ((Value)0xf8)
#define OBJ_BUSY      ((Value)1)      /* a GC thread is copying this object */

static inline Value    obj_make_header(ObjType t, size_t size)
{ return ((Value)size << 16) | ((Value)t << 8) | OBJ_HDR_TAG; }
static inline Value   *obj_ptr(Value v)          { return (Value *)v; }
static inline Value    obj_header(Value v)       { return ((Value *)v)[0]; }
static inline ObjType  hdr_type(Value h)         { return (ObjType)((h >> 8) & 0xff); }
static inline size_t   hdr_size(Value h)         { return (size_t)(h >> 16); }
static inline bool     hdr_is_header(Value h)    { return (h & OBJ_HDR_TAG) == OBJ_HDR_TAG; }
static inline ObjType  obj_type(Value v)         { return hdr_type(obj_header(v)); }
static inline size_t   obj_size(Value v)         { return hdr_size(obj_header(v)); }
static inline Value   *obj_payload(Value v)      { return (Value *)v + 1; }
static inline bool     rts_has_type(Value v, ObjType t) { return rts_is_ptr(v) && obj_type(v) == t; }

static inline ObjLayout obj_type_layout(ObjType t)
{
    return t == T_STACK ? LAYOUT_STACK : t >= T_STRING ? LAYOUT_RAW : LAYOUT_PTRS;
}

/* Types whose fields may change after allocation: writes go through the write barrier. */
static inline bool obj_type_mutable(ObjType t)
{
    return t == T_PAIR || t == T_VECTOR || t == T_BOX || t == T_RECORD || t == T_SYMBOL
        || t == T_MVAR || t == T_THREAD || t == T_STACK || t == T_CLOSURE;
}

/* RAW objects: payload[0] is the byte length, the bytes follow. */
static inline size_t   raw_len(Value v)   { return (size_t)obj_payload(v)[0]; }
static inline uint8_t *raw_bytes(Value v) { return (uint8_t *)(obj_payload(v) + 1); }
static inline size_t   raw_words(size_t nbytes) { return 1 + (nbytes + sizeof(Value) - 1) / sizeof(Value); }

/* Note [Stack layout]
 * A T_STACK's payload is [sp, slot 0, slot 1, ...]: sp is a fixnum, the number of slots in
 * use; slots [0, sp) are Values (so the GC scans them precisely), slots above sp are dead.
 * The stack grows upward as frames: a frame of n slots is
 *     slot[base .. base+n)  the frame's Values
 *     slot[base+n]          its code: the RtsCode address as a fixnum
 *     slot[base+n+1]        n, as a fixnum
 * so the top frame is found from sp alone and frames are walked downward.
 *
 * The collector scans slots [0, sp) of a T_STACK (LAYOUT_STACK); the scheduler
 * (sched/stack.h) owns what the frames mean. stack_frame_base walks one stack object's frames
 * (the sanity checker checks with it that they tile [0, sp)).
 */
#define STACK_SP 0           /* payload index of sp */
#define STACK_SLOTS 1        /* payload index of slot 0 */
static inline Value  *stack_slots(Value s)      { return obj_payload(s) + STACK_SLOTS; }
static inline size_t  stack_sp(Value s)         { return (size_t)rts_fixnum_val(obj_payload(s)[STACK_SP]); }
static inline size_t  stack_capacity(Value s)   { return obj_size(s) - STACK_SLOTS; }
static inline void    stack_set_sp(Value s, size_t sp) { obj_payload(s)[STACK_SP] = rts_fixnum((intptr_t)sp); }
/* The base of the frame whose last slot is slot sp-1 of stack s, or (size_t)-1 when the words
 * below sp do not end a frame. Frames from the top: sp = stack_frame_base(s, sp) until 0. */
static inline size_t  stack_frame_base(Value s, size_t sp)
{
    if (sp < 2) return (size_t)-1;
    Value nv = stack_slots(s)[sp - 1], code = stack_slots(s)[sp - 2];
    if (!rts_is_fixnum(nv) || !rts_is_fixnum(code) || rts_fixnum_val(nv) < 0
        || (size_t)rts_fixnum_val(nv) > sp - 2)
        return (size_t)-1;
    return sp - 2 - (size_t)rts_fixnum_val(nv);
}

#endif
