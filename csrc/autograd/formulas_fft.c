/* formulas_fft.c — the autograd layer of the Fourier transforms (kernels in kernels/cpu/fft.c):
 * derivatives.yaml's formulas for _fft_c2c, _fft_r2c and _fft_c2r, written with the transforms
 * themselves, so double backward records through them. Nodes keep the dims in iv and
 * (normalization, forward or onesided) in s. */
#include "formula.h"
#include "../kernels/cpu/fft.h"

#define NOGRAD(call) ({ int prev__ = mt__grad_push(0); mt_status st__ = (call); mt__grad_pop(prev__); st__; })

enum { FFT_C2C, FFT_R2C, FFT_C2R };

static mt_tensor *C2C(F *c, mt_tensor *g, mt_node *n, int ndims, int forward) {
    mt_tensor *r = NULL;
    return OK2(g, 1) ? KEEP(c, mt_fft_c2c(g, ndims, n->iv, (int)n->s[0], forward, &r), r) : NULL;
}

static mt_status fft_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *g = grads[0], *r = NULL;
    const mt_meta *m = &n->in_meta[0];
    int nd = n->niv, last = (int)n->iv[nd - 1];
    switch (n->op) {
    case FFT_C2C: /* self: _fft_c2c(grad, dim, normalization, !forward) */
        r = C2C(c, g, n, nd, !(int)n->s[1]);
        break;
    case FFT_R2C: { /* fft_r2c_backward: the discarded half as zeros, an inverse c2c, the real part */
        mt_tensor *full = g;
        if (n->s[1] != 0 && !c->st) { /* onesided */
            mt_meta fm = *m;
            fm.dtype = g->dtype;
            mt_tensor *part = NULL;
            full = ZEROS(c, &fm);
            if (!c->st) COPY_INTO_VIEW(c, full, KEEP(c, mt__impl_slice(full, last, 0, g->sizes[last], 1, &part), part), g);
        }
        r = U(c, MT_OP_REAL, C2C(c, full, n, nd, 0));
        break;
    }
    case FFT_C2R: { /* fft_c2r_backward: an r2c of grad, the entries whose mirror image was dropped doubled */
        mt_tensor *gi = NULL;
        if (!c->st) gi = KEEP(c, mt_fft_r2c(g, nd, n->iv, (int)n->s[0], 1, &gi), gi);
        int64_t doubled = gi ? g->sizes[last] - gi->sizes[last] : 0;
        if (doubled > 0 && !c->st) {
            int64_t sizes[MT_MAX_DIMS], len = gi->sizes[last];
            for (int d = 0; d < gi->ndim; d++) sizes[d] = d == last ? len : 1;
            mt_meta wm = {.ndim = gi->ndim, .dtype = g->dtype};
            memcpy(wm.sizes, sizes, sizeof sizes);
            mt_tensor *w = ZEROS(c, &wm), *twos = NULL;
            if (!c->st) c->st = mt__impl_fill(w, 1, 0, MT_SCALAR_FLOAT);
            if (!c->st) twos = KEEP(c, mt__impl_slice(w, last, 1, 1 + doubled, 1, &twos), twos);
            if (!c->st) c->st = mt__impl_fill(twos, 2, 0, MT_SCALAR_FLOAT);
            gi = B(c, MT_OP_MUL, gi, w);
        }
        r = gi;
        break;
    }
    default: return no_formula(n, grads, out);
    }
    GIVE(c, out, 0, r);
    return END(c, out, 1);
}

static mt_status record_fft(const char *name, int kind, mt_tensor *x, int ndims, const int64_t *dims,
                            double norm, double flag, mt_tensor **out) {
    if (!mt__grad_enabled() || !mt__requires_grad(x)) return MT_OK;
    mt_node *n;
    mt_status st = mt__record(name, fft_backward, 1, &x, 1, out, &n);
    if (!st && n) {
        n->op = kind;
        n->niv = ndims;
        for (int i = 0; i < ndims; i++) {
            n->iv[i] = dims[i];
            st = st ? st : mt__wrap_dim(&n->iv[i], x->ndim);
        }
        n->s[0] = norm, n->s[1] = flag;
    }
    if (st) MT_DROP(*out);
    return st;
}

mt_status mt_fft_c2c(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int forward, mt_tensor **out) {
    MT_PROFILE("_fft_c2c", x);
    MT_TRY(NOGRAD(mt__impl_fft_c2c(x, ndims, dims, normalization, forward, out)));
    return record_fft("FftC2CBackward0", FFT_C2C, x, ndims, dims, normalization, forward != 0, out);
}

mt_status mt_fft_r2c(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int onesided, mt_tensor **out) {
    MT_PROFILE("_fft_r2c", x);
    MT_TRY(NOGRAD(mt__impl_fft_r2c(x, ndims, dims, normalization, onesided, out)));
    return record_fft("FftR2CBackward0", FFT_R2C, x, ndims, dims, normalization, onesided != 0, out);
}

mt_status mt_fft_c2r(mt_tensor *x, int ndims, const int64_t *dims, int normalization, int64_t last_dim_size,
                     mt_tensor **out) {
    MT_PROFILE("_fft_c2r", x);
    *out = NULL;
    int64_t last = ndims > 0 ? dims[ndims - 1] : 0;
    if (ndims > 0 && last_dim_size > 0 && !mt__wrap_dim(&last, x->ndim) && x->sizes[last] > last_dim_size / 2 + 1) {
        /* only the first last_dim_size/2+1 entries are read: the rest get no gradient (recorded as a slice) */
        mt_tensor *head;
        MT_TRY(mt_slice(x, last, 0, last_dim_size / 2 + 1, 1, &head));
        mt_status st = mt_fft_c2r(head, ndims, dims, normalization, last_dim_size, out);
        mt_tensor_release(head);
        return st;
    }
    MT_TRY(NOGRAD(mt__impl_fft_c2r(x, ndims, dims, normalization, last_dim_size, out)));
    return record_fft("FftC2RBackward0", FFT_C2R, x, ndims, dims, normalization, 0, out);
}
