/* fuzz_ops.c — a libFuzzer harness over the C ABI (tools/fuzz.sh builds and runs it).
 *
 * The input is a small program for a machine with R tensor registers: each instruction is an
 * opcode byte followed by the argument bytes it reads. One opcode in four makes a tensor from the
 * input's bytes (create); the others call one entry point of mt.h, through the cases that
 * tools/gen_fuzz.py generates from mt.h's prototypes (fuzz_calls.h: every op, a new one included).
 * Arguments are drawn by C type so that most calls are plausible (small sizes, dims in range) and
 * some are not (negative, out-of-range and huge values, unknown op, enum and dtype codes, aliasing
 * and overlapping views as outputs, in-place on views). Every call must return a status, a failed
 * one with a fresh error message and no tensor; the harness crashes only when the core does
 * (ASan/UBSan report it), when that rule breaks, or when tensors leak (checked after each input).
 * MT_FUZZ_TRACE=1 prints each call and the live tensors after it (to read a crashing input). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt.h"

#define R 8        /* tensor registers */
#define MAXN 4096  /* elements a fuzz-made tensor may hold (keeps executions fast) */
#define CAP 8      /* entries of an array argument */
#define WORK (1 << 22) /* elements an input's calls may produce before it stops: instrumented
                        * kernels take up to a microsecond per element (a repeat into 12 dims) */

typedef struct {
    const uint8_t *p;
    size_t n;
} bytes;

static uint8_t u8(bytes *b) {
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}

/* a dim, index or size: mostly small, sometimes negative or extreme */
static int64_t i64(bytes *b) {
    uint8_t v = u8(b);
    switch (v) {
    case 250: return -1;
    case 251: return INT64_MAX;
    case 252: return INT64_MIN;
    case 253: return (int64_t)1 << 40;
    case 254: return -((int64_t)1 << 31);
    case 255: return (int64_t)u8(b) << 24;
    }
    return (int64_t)(v % 12) - 3;
}

static int64_t size_arg(bytes *b) {
    uint8_t v = u8(b);
    if (v >= 252) return i64(b);  /* occasionally a bad size */
    return v % 6;
}

static double f64(bytes *b) {
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, 1e30, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0,
                                     3.0, 0.25, 1e-5, 0.9, 10.0};
    return special[u8(b) % (sizeof special / sizeof *special)];
}

static int dtype_arg(bytes *b) {
    uint8_t v = u8(b);
    return v == 255 ? (int)u8(b) - 128 : v % MT_NUM_DTYPES;  /* sometimes an unknown dtype */
}


/* an int: a flag or a small enum code mostly, sometimes negative or extreme */
static int int_arg(bytes *b) {
    uint8_t v = u8(b);
    if (v < 64) return 0;
    if (v < 128) return 1;
    switch (v) {
    case 250: return -1;
    case 251: return INT32_MAX;
    case 252: return INT32_MIN;
    case 253: return 1 << 20;
    }
    return (v - 128) % 20;
}

/* an elementwise op code of ops.tbl, or an unknown one */
static int op_arg(bytes *b) {
    uint8_t v = u8(b);
    return v == 255 ? -1 : v % (MT_NUM_OPS + 4);
}

/* how many entries of an array argument are used: 0..6, sometimes -1 where that means something */
static int count_arg(bytes *b, int negative) {
    uint8_t v = u8(b);
    return negative && v >= 240 ? -1 : v % 7;
}

static void equation_arg(bytes *b, char *eq, size_t cap) {
    size_t n = u8(b) % cap;
    for (size_t i = 0; i < n; i++) eq[i] = "ij,k->.ab "[u8(b) % 10];
    eq[n] = 0;
}

typedef struct {
    mt_tensor *r[R];
    int64_t work; /* elements produced so far */
} machine;

static mt_generator *own_gen;  /* the harness's generator beside the default one, both reseeded per input */

static mt_generator *gen_arg(bytes *b) { return u8(b) & 1 ? own_gen : NULL; }

static mt_tensor **reg(machine *m, bytes *b) { return &m->r[u8(b) % R]; }

/* a required tensor: the register named, or the next one holding a tensor (NULL: none holds one) */
static mt_tensor *need(machine *m, bytes *b) {
    int i = u8(b) % R;
    for (int k = 0; k < R; k++)
        if (m->r[(i + k) % R]) return m->r[(i + k) % R];
    return NULL;
}

/* an optional tensor: NULL half of the time */
static mt_tensor *opt(machine *m, bytes *b) {
    uint8_t v = u8(b);
    return v & 1 ? NULL : m->r[(v >> 1) % R];
}

/* out= / in place: a register a quarter of the time (maybe aliasing an input) */
static mt_tensor *out_arg(machine *m, bytes *b) {
    uint8_t v = u8(b);
    return v & 3 ? NULL : m->r[(v >> 2) % R];
}

/* n tensors (0 when n < 0); 0 when a required one is missing */
static int tensors_arg(machine *m, bytes *b, mt_tensor **ts, int n, int optional) {
    for (int k = 0; k < n && k < CAP; k++) {
        ts[k] = optional ? opt(m, b) : need(m, b);
        if (!ts[k] && !optional) return 0;
    }
    return 1;
}

/* the size of t at dim, 0 when dim is out of range (the call fails then) */
static int64_t dim_size(mt_tensor *t, int64_t dim) {
    int nd = mt_tensor_ndim(t);
    if (dim < 0) dim += nd;
    return dim >= 0 && dim < nd ? mt_tensor_sizes(t)[dim] : 0;
}

/* the results of a call go to registers (replacing what was there): a failed call must hand back
 * no tensor and leave a message of its own (the buffer is cleared before each call) */
static void finish(machine *m, bytes *b, mt_status st, int n, mt_tensor **ts) {
    if (st != MT_OK) {
        for (int i = 0; i < n; i++)
            if (ts[i]) {
                fprintf(stderr, "a failed call (status %d) handed back a tensor\n", st);
                abort();
            }
        if (!*mt_last_error()) {
            fprintf(stderr, "a failed call (status %d) left no error message\n", st);
            abort();
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        if (!ts[i]) continue;
        if (__builtin_add_overflow(m->work, mt_tensor_numel(ts[i]), &m->work)) m->work = INT64_MAX; /* huge views */
        if (mt_tensor_numel(ts[i]) > 16 * MAXN) { /* a huge expanded view: valid, but slow to compute with */
            mt_tensor_release(ts[i]);
            continue;
        }
        mt_tensor **d = reg(m, b);
        mt_tensor_release(*d);
        *d = ts[i];
    }
}

static int64_t numel_of(int ndim, const int64_t *s) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (s[i] < 0 || s[i] > MAXN) return -1;
        n *= s[i];
        if (n > MAXN) return -1;
    }
    return n;
}

/* Would t.grad = g close a cycle of references back to t: through grads, through a view's base, or through
 * a graph (a grad_fn holds the tensors it saved; not followed: any tensor with one counts)? PyTorch accepts
 * these and never frees them either (a.grad = b, b.grad = a; a.grad = a.view(...)), so they are the
 * program's leaks, which the leak check would count as the library's. */
static int grad_cycle(mt_tensor *t, mt_tensor *g) {
    mt_tensor *stack[64];
    int n = 0, found = 0;
    if (g) mt_tensor_retain(g), stack[n++] = g;
    while (n > 0) {
        mt_tensor *x = stack[--n];
        found |= x == t || mt_tensor_grad_fn_name(x) != NULL;
        mt_tensor *next[2] = {mt_tensor_grad(x), mt_tensor_base(x)};
        for (int k = 0; k < 2; k++) {
            if (next[k] && n < 64 && !found) stack[n++] = next[k];
            else mt_tensor_release(next[k]);
        }
        mt_tensor_release(x);
    }
    return found;
}

#include "fuzz_calls.h"

/* a tensor holding the input's bytes (bad shapes and dtypes: errors expected) */
static void create(machine *m, bytes *b) {
    int64_t s[5];
    int ndim = u8(b) % 5;
    for (int i = 0; i < ndim; i++) s[i] = size_arg(b);
    int dt = dtype_arg(b), src = u8(b) % MT_NUM_DTYPES;
    int64_t n = numel_of(ndim, s);
    mt_tensor *t = NULL;
    if (n < 0) return; /* bad shapes: mt_empty's case */
    size_t need = (size_t)n * (size_t)mt_dtype_itemsize(src);
    uint8_t *buf = calloc(need ? need : 1, 1);
    for (size_t i = 0; i < need && b->n; i++) buf[i] = u8(b);
    mt_status st = mt_from_data(buf, src, ndim, s, dt, &t);
    free(buf);
    finish(m, b, st, 1, &t);
}

/* mt_read into a buffer of a drawn capacity (elements; complex128: 16 bytes each) */
static void read_case(machine *m, bytes *b) {
    mt_tensor *x = need(m, b);
    double buf[2 * 257];
    int dt = dtype_arg(b);
    int64_t cap = u8(b) % 257;
    if (x) finish(m, b, mt_read(x, dt, buf, cap), 0, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int64_t baseline = -1;
    static int trace;
    if (baseline < 0) {
        mt_set_num_threads(1);
        if (mt_generator_create(0, &own_gen) != MT_OK) abort();
        trace = getenv("MT_FUZZ_TRACE") != NULL;
        baseline = mt_live_tensors();
    }
    mt_generator_manual_seed(NULL, 0); /* the same input draws the same numbers */
    mt_generator_manual_seed(own_gen, 0);
    bytes b = {data, size};
    machine m = {{0}, 0};
    for (int steps = 0; b.n && steps < 64 && m.work < WORK; steps++) {
        unsigned op = u8(&b);
        ((char *)mt_last_error())[0] = 0; /* the harness's own: a failure must write its message anew */
        if (op % 4 == 0) {
            if (trace) fprintf(stderr, "create\n");
            create(&m, &b);
        } else {
            unsigned k = u8(&b);
            if (NCALLS > 256) k = k << 8 | u8(&b);
            k %= NCALLS + 1;
            if (trace) fprintf(stderr, "%s\n", k < NCALLS ? call_names[k] : "mt_read");
            if (k < NCALLS) call(&m, &b, (int)k);
            else read_case(&m, &b);
        }
        if (trace) fprintf(stderr, "  -> %lld live tensors\n", (long long)mt_live_tensors());
    }
    for (int i = 0; i < R; i++) mt_tensor_release(m.r[i]);
    if (mt_live_tensors() != baseline) {
        fprintf(stderr, "leak: %lld live tensors after the program (baseline %lld)\n",
                (long long)mt_live_tensors(), (long long)baseline);
        abort();
    }
    return 0;
}
