/* fuzz_ops.c — a libFuzzer harness over the C ABI (tools/fuzz.sh builds and runs it).
 *
 * The input is a small program for a machine with R tensor registers: each instruction
 * is an opcode byte followed by the argument bytes it reads. Arguments are drawn so that
 * most calls are plausible (small sizes, dims in range) and some are not (negative,
 * out-of-range and huge values, unknown op and dtype codes, aliasing and overlapping
 * views as outputs). Every call must return a status; the harness crashes only when the
 * core does (ASan/UBSan report it) or when tensors leak (live count checked at the end). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt.h"

#define R 8        /* tensor registers */
#define MAXN 4096  /* elements a fuzz-made tensor may hold (keeps executions fast) */

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
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, 1e30, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0, 3.0};
    return special[u8(b) % (sizeof special / sizeof *special)];
}

static int dtype_arg(bytes *b) {
    uint8_t v = u8(b);
    return v == 255 ? (int)u8(b) - 128 : v % MT_NUM_DTYPES;  /* sometimes an unknown dtype */
}

typedef struct {
    mt_tensor *r[R];
} machine;

static mt_tensor **reg(machine *m, bytes *b) { return &m->r[u8(b) % R]; }
static mt_tensor *get(machine *m, bytes *b) { return m->r[u8(b) % R]; }  /* may be NULL */

/* the result of a call goes to a register (replacing what was there); *tp is read here, after
 * the call ran (a plain argument could be evaluated before the call that sets it) */
static void put(machine *m, bytes *b, mt_status st, mt_tensor **tp) {
    mt_tensor *t = tp ? *tp : NULL, **d = reg(m, b);
    if (st != MT_OK) {
        if (t) abort(); /* a failed call must not hand back a tensor */
        if (!mt_last_error() || !*mt_last_error()) abort(); /* nor fail without a message */
        return;
    }
    if (!t) return;
    if (mt_tensor_numel(t) > 16 * MAXN) { /* a huge expanded view: valid, but slow to compute with */
        mt_tensor_release(t);
        return;
    }
    mt_tensor_release(*d);
    *d = t;
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

static int dims_arg(bytes *b, int64_t *d, int max) {
    int n = u8(b) % (max + 1);
    for (int i = 0; i < n; i++) d[i] = i64(b);
    return n;
}

static void create(machine *m, bytes *b) {
    int64_t s[5];
    int ndim = u8(b) % 5;
    for (int i = 0; i < ndim; i++) s[i] = size_arg(b);
    int dt = dtype_arg(b), src = u8(b) % MT_NUM_DTYPES;
    int64_t n = numel_of(ndim, s);
    mt_tensor *t = NULL;
    if (n < 0 || dt < 0 || dt >= MT_NUM_DTYPES) { /* bad shapes and dtypes: errors expected */
        put(m, b, mt_empty(ndim, s, dt, MT_CPU, &t), &t);
        return;
    }
    size_t need = (size_t)n * (size_t)mt_dtype_itemsize(src);
    uint8_t *buf = calloc(need ? need : 1, 1);
    for (size_t i = 0; i < need && b->n; i++) buf[i] = u8(b);
    put(m, b, mt_from_data(buf, src, ndim, s, dt, &t), &t);
    free(buf);
}

static void view_op(machine *m, bytes *b) {
    mt_tensor *x = get(m, b), *t = NULL;
    if (!x) return;
    int64_t d[5], s[5];
    mt_status st;
    switch (u8(b) % 14) {
    case 0: st = mt_transpose(x, i64(b), i64(b), &t); break;
    case 1: { int n = dims_arg(b, d, 5); st = mt_permute(x, n, d, &t); break; }
    case 2: st = mt_select(x, i64(b), i64(b), &t); break;
    case 3: st = mt_slice(x, i64(b), i64(b), i64(b), i64(b), &t); break;
    case 4: { int n = dims_arg(b, d, 5); st = mt_expand(x, n, d, &t); break; }
    case 5: { int n = (int)(u8(b) % 4) - 1; for (int i = 0; i < (n > 0 ? n : 0); i++) d[i] = i64(b);
              st = mt_squeeze(x, n, d, &t); break; }
    case 6: st = mt_unsqueeze(x, i64(b), &t); break;
    case 7: st = mt_unfold(x, i64(b), i64(b), i64(b), &t); break;
    case 8: st = mt_diagonal(x, i64(b), i64(b), i64(b), &t); break;
    case 9: { int n = dims_arg(b, d, 5); for (int i = 0; i < n; i++) s[i] = i64(b);
              st = mt_as_strided(x, n, d, s, i64(b), &t); break; }
    case 10: { int n = dims_arg(b, d, 5); st = mt_view(x, n, d, &t); break; }
    case 11: { int n = dims_arg(b, d, 5); st = mt_reshape(x, n, d, &t); break; }
    case 12: st = mt_view_dtype(x, dtype_arg(b), &t); break;
    default: { int n = dims_arg(b, d, 5); st = mt_flip(x, n, d, &t); break; }
    }
    put(m, b, st, &t);
}

static void elementwise(machine *m, bytes *b) {
    mt_tensor *x = get(m, b), *y = get(m, b), *z = get(m, b), *t = NULL;
    uint8_t kind = u8(b) % 6;
    int op = u8(b); /* any code: ops of the wrong kind and unknown codes must be rejected */
    mt_tensor *out = (u8(b) % 4 == 0) ? get(m, b) : NULL;  /* out= / in place, maybe aliasing */
    if (!x) return;
    mt_status st;
    switch (kind) {
    case 0: st = mt_unary(op, x, out, &t); break;
    case 1: if (!y) return; st = mt_binary(op, x, y, f64(b), out, &t); break;
    case 2: st = mt_binary_scalar(op, x, f64(b), i64(b), u8(b) % 3, u8(b) & 1, f64(b), out, &t); break;
    case 3: if (!y || !z) return; st = mt_ternary(op, x, y, z, f64(b), out, &t); break;
    case 4: st = mt_activation(u8(b) % 17, x, f64(b), f64(b), f64(b), out == x ? x : NULL, &t); break;
    default: if (!y) return; st = mt_copy_(x, y); put(m, b, st, NULL); return;
    }
    if (st == MT_OK && out) { mt_tensor_release(t); return; } /* out-variant results alias out */
    put(m, b, st, &t);
}

static void reduction(machine *m, bytes *b) {
    mt_tensor *x = get(m, b), *t = NULL, *t2 = NULL;
    if (!x) return;
    int64_t d[5];
    int n = dims_arg(b, d, 4), keep = u8(b) & 1;
    mt_status st;
    switch (u8(b) % 9) {
    case 0: st = mt_reduce(u8(b) % 10, x, n, d, keep, dtype_arg(b) - 1, NULL, &t); break;
    case 1: st = mt_max_dim(u8(b) & 1, x, i64(b), keep, &t, &t2); break;
    case 2: st = mt_var(x, n, d, f64(b), keep, u8(b) & 1, &t, NULL); break;
    case 3: st = mt_vector_norm(x, f64(b), n, d, keep, dtype_arg(b) - 1, &t); break;
    case 4: st = mt_logsumexp(x, n, d, keep, &t); break;
    case 5: st = mt_scan(u8(b) % 4, x, i64(b), dtype_arg(b) - 1, NULL, &t); break;
    case 6: st = mt_sort(x, i64(b), u8(b) & 1, (int)(u8(b) % 3) - 1, &t, &t2); break;
    case 7: st = mt_topk(x, i64(b), i64(b), u8(b) & 1, u8(b) & 1, &t, &t2); break;
    default: st = mt_softmax(x, i64(b), u8(b) & 1, dtype_arg(b) - 1, &t); break;
    }
    mt_tensor_release(t2);
    put(m, b, st, &t);
}

static void linalg(machine *m, bytes *b) {
    mt_tensor *x = get(m, b), *y = get(m, b), *z = get(m, b), *t = NULL;
    if (!x || !y) return;
    mt_status st;
    switch (u8(b) % 7) {
    case 0: st = mt_matmul(x, y, &t); break;
    case 1: st = mt_mm(x, y, NULL, &t); break;
    case 2: st = mt_bmm(x, y, NULL, &t); break;
    case 3: if (!z) return; st = mt_addmm(z, x, y, f64(b), f64(b), NULL, &t); break;
    case 4: { char eq[16]; int n = u8(b) % 15; for (int i = 0; i < n; i++) eq[i] = "ij,k->.ab "[u8(b) % 10];
              eq[n] = 0; mt_tensor *ops[2] = {x, y}; st = mt_einsum(eq, 1 + (u8(b) & 1), ops, &t); break; }
    case 5: st = mt_dot(x, y, &t); break;
    default: { /* the LAPACK factorisations; the extra outputs are dropped */
        mt_tensor *t2 = NULL, *t3 = NULL;
        switch (u8(b) % 11) {
        case 0: st = mt_linalg_cholesky_ex(x, u8(b) & 1, u8(b) & 1, &t, &t2); break;
        case 1: st = mt_linalg_lu_factor_ex(x, u8(b) & 1, u8(b) & 1, &t, &t2, &t3); break;
        case 2: if (!z) return; st = mt_linalg_lu_solve(x, y, z, u8(b) & 1, u8(b) & 1, &t); break;
        case 3: st = mt_linalg_solve_ex(x, y, u8(b) & 1, u8(b) & 1, &t, &t2); break;
        case 4: st = mt_linalg_solve_triangular(x, y, u8(b) & 1, u8(b) & 1, u8(b) & 1, &t); break;
        case 5: st = mt_linalg_inv_ex(x, u8(b) & 1, &t, &t2); break;
        case 6: st = mt_linalg_det(x, &t); break;
        case 7: st = mt_linalg_slogdet(x, &t, &t2); break;
        case 8: st = mt_linalg_eigh(x, u8(b) & 1, u8(b) & 1, &t, &t2); break;
        case 9: st = mt_linalg_svd(x, u8(b) & 1, u8(b) & 1, &t2, &t, &t3); break;
        default: st = mt_linalg_qr(x, (int)(u8(b) % 4), &t2, &t); break;
        }
        mt_tensor_release(t2);
        mt_tensor_release(t3);
    }
    }
    put(m, b, st, &t);
}

static void indexing(machine *m, bytes *b) {
    mt_tensor *x = get(m, b), *idx = get(m, b), *v = get(m, b), *t = NULL;
    if (!x || !idx) return;
    mt_status st;
    switch (u8(b) % 8) {
    case 0: { mt_tensor *ind[3] = {idx, u8(b) & 1 ? NULL : v, NULL}; st = mt_index(x, 1 + u8(b) % 3, ind, &t); break; }
    case 1: { if (!v) return; mt_tensor *ind[1] = {idx}; st = mt_index_put_(x, 1, ind, v, u8(b) & 1); break; }
    case 2: st = mt_index_select(x, i64(b), idx, &t); break;
    case 3: st = mt_gather(x, i64(b), idx, &t); break;
    case 4: if (!v) return;
        st = mt_scatter(u8(b) % 3, x, i64(b), idx, v, u8(b) & 1, u8(b) % 6, u8(b) & 1, u8(b) & 1, &t); break;
    case 5: st = mt_take(x, idx, &t); break;
    case 6: st = mt_masked_select(x, idx, &t); break;
    default: { mt_tensor *ts[2] = {x, idx}; st = (u8(b) & 1) ? mt_cat(2, ts, i64(b), &t) : mt_stack(2, ts, i64(b), &t); break; }
    }
    if (st == MT_OK && t == x) { mt_tensor_release(t); return; } /* in-place variants */
    put(m, b, st, &t);
}

static void nn_ops(machine *m, bytes *b) {
    mt_tensor *x = get(m, b), *w = get(m, b), *bias = get(m, b), *t = NULL;
    if (!x) return;
    int64_t a[3] = {i64(b), i64(b), i64(b)}, c[3] = {i64(b), i64(b), i64(b)}, e[3] = {i64(b), i64(b), i64(b)};
    int64_t o[3] = {i64(b), i64(b), i64(b)};
    mt_status st;
    switch (u8(b) % 9) {
    case 0: if (!w) return; st = mt_convolution(x, w, bias, 1 + (u8(b) & 1), a, c, u8(b) % 4 == 0, e, u8(b) & 1, o,
                                               i64(b), &t); break;
    case 1: { mt_tensor *ix = NULL; st = mt_pool(u8(b) % 4, 2 + (u8(b) & 1), x, a, c, e, o, u8(b) & 1, u8(b) & 1, i64(b),
                                                  &t, u8(b) & 1 ? &ix : NULL); mt_tensor_release(ix); break; }
    case 2: { int64_t p[6]; int n = dims_arg(b, p, 6); st = mt_pad(x, n, p, u8(b) % 5, f64(b), &t); break; }
    case 3: { double sc[2] = {f64(b), f64(b)}; st = mt_upsample(x, u8(b) % 4, 1 + (u8(b) & 1), a, sc, u8(b) & 1, &t); break; }
    case 4: { int64_t s[3]; int n = dims_arg(b, s, 3); st = mt_layer_norm(x, n, s, w, bias, f64(b), &t); break; }
    case 5: if (!w) return; st = mt_cross_entropy(x, w, bias, u8(b) % 4, i64(b), f64(b), &t); break;
    case 6: if (!w) return; st = mt_embedding(w, x, i64(b), u8(b) & 1, &t); break;
    case 7: st = mt_im2col(x, a, c, e, o, &t); break;
    default: st = mt_dropout(x, f64(b), u8(b) & 1, u8(b) % 4, 0, NULL, &t); break;
    }
    put(m, b, st, &t);
}

static void autograd(machine *m, bytes *b) {
    mt_tensor *x = get(m, b);
    if (!x) return;
    switch (u8(b) % 3) {
    case 0: (void)mt_tensor_set_requires_grad(x, u8(b) & 1); break;
    case 1: {
        mt_tensor *s = NULL;
        if (mt_reduce(MT_RED_SUM, x, 0, NULL, 0, -1, NULL, &s) == MT_OK) {
            mt_tensor *roots[1] = {s}, *grads[1] = {NULL};
            (void)mt_backward(1, roots, grads, u8(b) & 1, u8(b) & 1, 0, NULL, NULL, 1);
            mt_tensor_release(s);
        }
        break;
    }
    default: {
        mt_tensor *t = NULL;
        put(m, b, mt_detach(x, &t), &t);
        break;
    }
    }
}

static void misc(machine *m, bytes *b) {
    mt_tensor *x = get(m, b), *t = NULL;
    if (!x) return;
    switch (u8(b) % 6) {
    case 0: put(m, b, mt_to_dtype(x, dtype_arg(b), u8(b) & 1, &t), &t); break;
    case 1: put(m, b, mt_contiguous(x, &t), &t); break;
    case 2: put(m, b, mt_clone(x, &t), &t); break;
    case 3: { double buf[2 * 257]; (void)mt_read(x, dtype_arg(b), buf, u8(b) % 257); break; } /* capacity: elements (complex128: 16 bytes) */
    case 4: { double f; int64_t i; (void)mt_item(x, &f, &i); break; }
    default: { int64_t d[4]; int n = dims_arg(b, d, 4);
               if (numel_of(n, d) >= 0) (void)mt_resize_(x, n, d); break; }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int64_t baseline = -1;
    if (baseline < 0) {
        mt_set_num_threads(1);
        baseline = mt_live_tensors();
    }
    bytes b = {data, size};
    machine m = {{0}};
    for (int steps = 0; b.n && steps < 64; steps++) {
        switch (u8(&b) % 9) {
        case 0: case 1: create(&m, &b); break;
        case 2: view_op(&m, &b); break;
        case 3: elementwise(&m, &b); break;
        case 4: reduction(&m, &b); break;
        case 5: linalg(&m, &b); break;
        case 6: indexing(&m, &b); break;
        case 7: nn_ops(&m, &b); break;
        default: if (u8(&b) & 1) autograd(&m, &b); else misc(&m, &b); break;
        }
    }
    for (int i = 0; i < R; i++) mt_tensor_release(m.r[i]);
    if (mt_live_tensors() != baseline) {
        fprintf(stderr, "leak: %lld live tensors after the program (baseline %lld)\n",
                (long long)mt_live_tensors(), (long long)baseline);
        abort();
    }
    return 0;
}
