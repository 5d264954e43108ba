/* linalg_ext.c — addmv, addr, addbmm, vdot, linalg.cross: checks in PyTorch's
 * order and words, then the GEMM core (addmm/mm) or whole-tensor elementwise
 * ops on views (cross). These are the kernels; formulas_linalg.c records them. */
#include "../../autograd/formula.h"

/* r <- result of a computation into a new tensor; with out=, resized and copied into out */
static mt_status finish_out(mt_tensor *r, mt_tensor *out, mt_tensor **result) {
    if (!out) { *result = r; return MT_OK; }
    mt_status st = MT_OK;
    if (out->ndim != r->ndim || memcmp(out->sizes, r->sizes, r->ndim * sizeof(int64_t)))
        st = mt_resize_(out, r->ndim, r->sizes);
    if (!st) st = mt_copy_(out, r);
    mt_tensor_release(r);
    if (st) return st;
    mt_tensor_retain(out);
    *result = out;
    return MT_OK;
}

mt_status mt__impl_addmv(mt_tensor *self, mt_tensor *mat, mt_tensor *vec, double beta, double alpha, mt_tensor *out,
                         mt_tensor **result) {
    if (mat->ndim != 2 || vec->ndim != 1 || self->ndim > 1)
        return mt__error(MT_ERR_RUNTIME, "vector + matrix @ vector expected, got %d, %d, %d", self->ndim, mat->ndim,
                         vec->ndim);
    int64_t in = self->ndim ? self->sizes[0] : 1;
    if (mat->sizes[1] != vec->sizes[0] || (self->ndim && in != mat->sizes[0] && in != 1))
        return mt__error(MT_ERR_RUNTIME, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)", (long long)in,
                         (long long)mat->sizes[0], (long long)mat->sizes[1], (long long)vec->sizes[0]);
    if (self->dtype != mat->dtype || mat->dtype != vec->dtype)
        return mt__error(MT_ERR_RUNTIME, "addmv input tensors must have the same dtype, but got %s, %s, and %s",
                         mt_dtype_names[self->dtype], mt_dtype_names[mat->dtype], mt_dtype_names[vec->dtype]);
    /* addmm with self as an [n, 1] column and vec as a [k, 1] matrix */
    mt_tensor *s1 = NULL, *s2 = NULL, *v2 = NULL, *r2 = NULL, *r = NULL;
    int64_t n = mat->sizes[0];
    mt_status st = mt_expand(self, 1, &n, &s1);
    if (!st) st = mt_unsqueeze(s1, 1, &s2);
    if (!st) st = mt_unsqueeze(vec, 1, &v2);
    if (!st) st = mt__impl_addmm(s2, mat, v2, beta, alpha, NULL, &r2);
    if (!st) st = mt_view(r2, 1, &n, &r);
    mt_tensor_release(s1); mt_tensor_release(s2); mt_tensor_release(v2); mt_tensor_release(r2);
    return st ? st : finish_out(r, out, result);
}

mt_status mt__impl_addr(mt_tensor *self, mt_tensor *v1, mt_tensor *v2, double beta, double alpha, mt_tensor *out,
                        mt_tensor **result) {
    if (v1->ndim != 1) return mt__error(MT_ERR_RUNTIME, "addr: Expected 1-D argument vec1, but got %d-D", v1->ndim);
    if (v2->ndim != 1) return mt__error(MT_ERR_RUNTIME, "addr: Expected 1-D argument vec2, but got %d-D", v2->ndim);
    int dt = mt_promote_types(self->dtype, v1->dtype);
    if (dt < 0 || (dt = mt_promote_types(dt, v2->dtype)) < 0) return MT_ERR_RUNTIME;
    int work = dt == MT_BOOL ? MT_I64 : dt; /* bool: (beta and self) or (alpha and vec1 x vec2) */
    if (dt == MT_BOOL) beta = beta != 0, alpha = alpha != 0;
    int64_t sz[2] = {v1->sizes[0], v2->sizes[0]};
    mt_tensor *se = NULL, *s = NULL, *a = NULL, *b = NULL, *ac = NULL, *bc = NULL, *r = NULL, *rb = NULL;
    mt_status st = mt_expand(self, 2, sz, &se);
    if (!st) st = mt_to_dtype(se, work, 0, &s);
    if (!st) st = mt_to_dtype(v1, work, 0, &a);
    if (!st) st = mt_to_dtype(v2, work, 0, &b);
    if (!st) st = mt_unsqueeze(a, 1, &ac);
    if (!st) st = mt_unsqueeze(b, 0, &bc);
    if (!st) st = mt__impl_addmm(s, ac, bc, beta, alpha, NULL, &r);
    if (!st && dt == MT_BOOL) { st = mt_to_dtype(r, MT_BOOL, 0, &rb); mt_tensor_release(r); r = rb; }
    mt_tensor_release(se); mt_tensor_release(s); mt_tensor_release(a); mt_tensor_release(b);
    mt_tensor_release(ac); mt_tensor_release(bc);
    return st ? st : finish_out(r, out, result);
}

mt_status mt__impl_addbmm(mt_tensor *self, mt_tensor *b1, mt_tensor *b2, double beta, double alpha, mt_tensor *out,
                          mt_tensor **result) {
    mt_tensor *se = NULL;
    if (b1->ndim >= 2 && b2->ndim >= 3) /* PyTorch expands self to the result shape first */
        MT_TRY(mt_expand(self, 2, (int64_t[]){b1->sizes[1], b2->sizes[2]}, &se));
    mt_status st = MT_OK;
    if (b1->ndim != 3) st = mt__error(MT_ERR_RUNTIME, "batch1 must be a 3D tensor");
    else if (b2->ndim != 3) st = mt__error(MT_ERR_RUNTIME, "batch2 must be a 3D tensor");
    else if (b1->sizes[0] != b2->sizes[0])
        st = mt__error(MT_ERR_RUNTIME, "batch1 and batch2 must have same number of batches, got %lld and %lld",
                       (long long)b1->sizes[0], (long long)b2->sizes[0]);
    else if (b1->sizes[2] != b2->sizes[1])
        st = mt__error(MT_ERR_RUNTIME, "Incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)",
                       (long long)b1->sizes[1], (long long)b1->sizes[2], (long long)b2->sizes[1], (long long)b2->sizes[2]);
    if (st) { mt_tensor_release(se); return st; }
    /* sum_b b1[b] @ b2[b] = [n, B*k] @ [B*k, p] */
    int64_t B = b1->sizes[0], n = b1->sizes[1], k = b1->sizes[2], p = b2->sizes[2];
    mt_tensor *t = NULL, *m1 = NULL, *m2 = NULL, *r = NULL;
    st = mt_permute(b1, 3, (int64_t[]){1, 0, 2}, &t);
    if (!st) st = mt_reshape(t, 2, (int64_t[]){n, B * k}, &m1);
    if (!st) st = mt_reshape(b2, 2, (int64_t[]){B * k, p}, &m2);
    if (!st) st = mt__impl_addmm(se, m1, m2, beta, alpha, NULL, &r);
    mt_tensor_release(se); mt_tensor_release(t); mt_tensor_release(m1); mt_tensor_release(m2);
    return st ? st : finish_out(r, out, result);
}

/* dot(conj(a), b): conj is the identity (no copy) on real dtypes */
mt_status mt__impl_vdot(mt_tensor *a, mt_tensor *b, mt_tensor **result) {
    mt_tensor *ac;
    MT_TRY(mt_unary(MT_OP_CONJ, a, NULL, &ac));
    mt_status st = mt__impl_dot(ac, b, result);
    mt_tensor_release(ac);
    return st;
}

/* linalg.cross: three whole-tensor multiply-subtracts over the broadcast views */
mt_status mt__impl_cross(mt_tensor *a, mt_tensor *b, int64_t dim, mt_tensor **result) {
    if (a->ndim != b->ndim)
        return mt__error(MT_ERR_RUNTIME, "linalg.cross: inputs must have the same number of dimensions.");
    /* dim is taken in the broadcast shape */
    mt_tensor *ins[2] = {a, b};
    int nd;
    int64_t sz[MT_MAX_DIMS];
    MT_TRY(mt__broadcast_shapes(2, ins, &nd, sz));
    int64_t d = dim;
    MT_TRY(mt__wrap_dim(&d, nd));
    int64_t da = d - (nd - a->ndim), db = d - (nd - b->ndim);
    int64_t la = da >= 0 ? a->sizes[da] : 1, lb = db >= 0 ? b->sizes[db] : 1;
    if (la != 3 || lb != 3)
        return mt__error(MT_ERR_RUNTIME, "linalg.cross: inputs dimension %lld must have length 3. Got %lld and %lld",
                         (long long)dim, (long long)la, (long long)lb);
    if (a->dtype != b->dtype)
        return mt__error(MT_ERR_RUNTIME, "expected scalar type %s but found %s", mt_dtype_names[a->dtype],
                         mt_dtype_names[b->dtype]);
    mt_tensor *r;
    MT_TRY(mt__alloc(nd, sz, NULL, a->dtype, a->device, &r));
    mt_status st = MT_OK;
    for (int i = 0; i < 3 && !st; i++) { /* r_i = a_j b_k - a_k b_j */
        int j = (i + 1) % 3, k = (i + 2) % 3;
        mt_tensor *aj = NULL, *ak = NULL, *bj = NULL, *bk = NULL, *p = NULL, *q = NULL, *ri = NULL, *w = NULL;
        st = mt_select(a, da, j, &aj);
        if (!st) st = mt_select(a, da, k, &ak);
        if (!st) st = mt_select(b, db, j, &bj);
        if (!st) st = mt_select(b, db, k, &bk);
        if (!st) st = mt_select(r, d, i, &ri);
        if (!st) st = mt__impl_binary(MT_OP_MUL, aj, bk, 1, NULL, &p);
        if (!st) st = mt__impl_binary(MT_OP_MUL, ak, bj, 1, NULL, &q);
        if (!st) st = mt__impl_binary(MT_OP_SUB, p, q, 1, ri, &w);
        mt_tensor_release(aj); mt_tensor_release(ak); mt_tensor_release(bj); mt_tensor_release(bk);
        mt_tensor_release(p); mt_tensor_release(q); mt_tensor_release(ri); mt_tensor_release(w);
    }
    if (st) { mt_tensor_release(r); return st; }
    *result = r;
    return MT_OK;
}
