/* formulas_lapack.c — the autograd layer of the matrix factorisations (kernels/cpu/lapack.c):
 * each public mt_linalg_* runs its kernel with grad mode off and records PyTorch's node with the
 * formula of derivatives.yaml / FunctionsManual.cpp, written with public (recorded) ops so that
 * double backward works. Complex inputs (LU family, cholesky, QR, slogdet, triangular solve, eigh, eig,
 * SVD) use MH, the conjugate transpose: PyTorch's conjugate-Wirtinger gradients. */
#include "../kernels/cpu/lapack.h"
#include "formula.h"

/* ---- helpers for the formulas ---------------------------------------------------------------- */

static mt_tensor *SQ(F *c, mt_tensor *t, int64_t d) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_squeeze(t, 1, &d, &r), r) : NULL;
}
static mt_tensor *TRIL(F *c, mt_tensor *t, int64_t diagonal, int upper) { /* upper: triu */
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_tril(t, diagonal, upper, NULL, &r), r) : NULL;
}
static mt_tensor *DIAG_EMBED(F *c, mt_tensor *t) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_diag_embed(t, 0, -2, -1, &r), r) : NULL;
}
static mt_tensor *EYE(F *c, int64_t n, int dtype) {
    mt_tensor *r = NULL;
    return c->st ? NULL : KEEP(c, mt_eye(n, n, dtype, MT_CPU, &r), r);
}
static mt_tensor *NARROW(F *c, mt_tensor *t, int64_t dim, int64_t start, int64_t len) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_slice(t, dim, start, start + len, 1, &r), r) : NULL;
}
static mt_tensor *CAT2(F *c, mt_tensor *a, mt_tensor *b, int64_t dim) {
    mt_tensor *r = NULL, *ts[2] = {a, b};
    return OK2(a, b) ? KEEP(c, mt_cat(2, ts, dim, &r), r) : NULL;
}
static mt_tensor *SOLVE_TRI(F *c, mt_tensor *a, mt_tensor *b, int upper, int left, int unit) {
    mt_tensor *r = NULL;
    return OK2(a, b) ? KEEP(c, mt_linalg_solve_triangular(a, b, upper, left, unit, &r), r) : NULL;
}
static mt_tensor *SOLVE(F *c, mt_tensor *a, mt_tensor *b, int left) {
    mt_tensor *r = NULL, *info = NULL;
    if (!OK2(a, b)) return NULL;
    mt_status st = mt_linalg_solve_ex(a, b, left, 0, &r, &info);
    mt_tensor_release(info);
    return keep(c, st, r);
}
static mt_tensor *INV(F *c, mt_tensor *a) {
    mt_tensor *r = NULL, *info = NULL;
    if (!OK2(a, 1)) return NULL;
    mt_status st = mt_linalg_inv_ex(a, 0, &r, &info);
    mt_tensor_release(info);
    return keep(c, st, r);
}
static mt_tensor *ADD(F *c, mt_tensor *a, mt_tensor *b) { return a && b ? B(c, MT_OP_ADD, a, b) : a ? a : b; }
static mt_tensor *SUB(F *c, mt_tensor *a, mt_tensor *b) { return B(c, MT_OP_SUB, a, b); }
static mt_tensor *MUL(F *c, mt_tensor *a, mt_tensor *b) { return B(c, MT_OP_MUL, a, b); }
static mt_tensor *DIV(F *c, mt_tensor *a, mt_tensor *b) { return B(c, MT_OP_DIV, a, b); }
static mt_tensor *NEG(F *c, mt_tensor *a) { return U(c, MT_OP_NEG, a); }
static mt_tensor *MH(F *c, mt_tensor *a) { /* ^H: the conjugate transpose (a transpose on reals) */
    mt_tensor *t = TR(c, a);
    return t && mt__is_complex(t->dtype) ? U(c, MT_OP_CONJ, t) : t;
}
static mt_tensor *DIAG(F *c, mt_tensor *t) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_diagonal(t, 0, -2, -1, &r), r) : NULL;
}
static int64_t rows(mt_tensor *t) { return t->sizes[t->ndim - 2]; }
static int64_t cols(mt_tensor *t) { return t->sizes[t->ndim - 1]; }

static int wants_grad(mt_tensor *a, mt_tensor *b) {
    return mt__grad_enabled() && (mt__requires_grad(a) || (b && mt__requires_grad(b)));
}
#define NO_GRAD(call)                       \
    ({                                      \
        int prev__ = mt__grad_push(0);      \
        mt_status st__ = (call);            \
        mt__grad_pop(prev__);               \
        st__;                               \
    })

/* ---- cholesky ------------------------------------------------------------------------------------ */

/* gA = L^-H Φ(L^H gL) L^-1 with Φ taking the lower triangle and halving the diagonal, symmetrised */
static mt_status cholesky_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *L = SAVED(c, n, 0), *gL = grads[0];
    if (n->iv[0]) L = MH(c, L), gL = MH(c, gL); /* upper: A = U^H U with U = L^H */
    mt_tensor *gA = TRIL(c, MM(c, MH(c, L), gL), 0, 0);
    gA = BS(c, MT_OP_MUL, ADD(c, gA, MH(c, TRIL(c, gA, -1, 0))), 0.5);
    gA = SOLVE_TRI(c, MH(c, L), gA, 1, 1, 0);
    gA = SOLVE_TRI(c, L, gA, 0, 0, 0);
    GIVE(c, out, 0, gA);
    return END(c, out, 1);
}

mt_status mt_linalg_cholesky_ex(mt_tensor *a, int upper, int check_errors, mt_tensor **L, mt_tensor **info) {
    MT_PROFILE("linalg_cholesky_ex", a);
    int grad = wants_grad(a, NULL);
    MT_TRY(NO_GRAD(mt__impl_linalg_cholesky_ex(a, upper, check_errors, L, info)));
    if (!grad) return MT_OK;
    mt_node *n;
    mt_status st = mt__record("LinalgCholeskyExBackward0", cholesky_backward, 1, &a, 1, L, &n);
    if (!st && n) {
        n->iv[0] = upper;
        st = mt__save(n, 0, *L, 1);
    }
    if (st) { MT_DROP(*L); MT_DROP(*info); }
    return st;
}

/* ---- LU: factor and solve (no derivative yet) ------------------------------------------------------ */

mt_status mt_linalg_lu_factor_ex(mt_tensor *a, int pivot, int check_errors, mt_tensor **LU, mt_tensor **pivots,
                                 mt_tensor **info) {
    MT_PROFILE("linalg_lu_factor_ex", a);
    int grad = wants_grad(a, NULL);
    MT_TRY(NO_GRAD(mt__impl_linalg_lu_factor_ex(a, pivot, check_errors, LU, pivots, info)));
    if (!grad) return MT_OK;
    mt_node *n;
    mt_status st = mt__record("LinalgLuFactorExBackward0", no_formula, 1, &a, 1, LU, &n);
    if (st) { MT_DROP(*LU); MT_DROP(*pivots); MT_DROP(*info); }
    return st;
}

mt_status mt_linalg_lu_solve(mt_tensor *LU, mt_tensor *pivots, mt_tensor *b, int left, int adjoint,
                             mt_tensor **result) {
    MT_PROFILE("linalg_lu_solve", LU, pivots, b);
    int grad = wants_grad(LU, b);
    MT_TRY(NO_GRAD(mt__impl_linalg_lu_solve(LU, pivots, b, left, adjoint, result)));
    if (!grad) return MT_OK;
    mt_node *n;
    mt_tensor *ins[2] = {LU, b};
    mt_status st = mt__record("LinalgLuSolveBackward0", no_formula, 2, ins, 1, result, &n);
    if (st) MT_DROP(*result);
    return st;
}

/* ---- LDL, geqrf: not differentiable in PyTorch; ormqr's kernel ------------------------------------------ */

/* linalg_ldl_factor_ex and linalg_ldl_solve have no derivatives.yaml entry: PyTorch records its
 * NotImplemented node, whose backward fails with a RuntimeError; geqrf's entry is not_implemented */
static mt_status no_derivative(mt_node *n, mt_tensor *const *g, mt_tensor **out) {
    (void)g, (void)out;
    static const char *const aten[] = {"linalg_ldl_factor_ex", "linalg_ldl_solve"};
    if (n->iv[0] == 2) return mt__error(MT_ERR_NOT_IMPLEMENTED, "the derivative for 'geqrf' is not implemented.");
    return mt__error(MT_ERR_RUNTIME, "derivative for aten::%s is not implemented", aten[n->iv[0]]);
}

static mt_status record_no_derivative(const char *name, int which, int nin, mt_tensor **ins, int nout,
                                      mt_tensor **outs) {
    mt_node *n;
    mt_status st = mt__record(name, no_derivative, nin, ins, nout, outs, &n);
    if (!st && n) n->iv[0] = which;
    return st;
}

mt_status mt_linalg_ldl_factor_ex(mt_tensor *a, int hermitian, mt_tensor **LD, mt_tensor **pivots, mt_tensor **info) {
    MT_PROFILE("linalg_ldl_factor_ex", a);
    int grad = wants_grad(a, NULL);
    MT_TRY(NO_GRAD(mt__impl_linalg_ldl_factor_ex(a, hermitian, LD, pivots, info)));
    mt_status st = grad ? record_no_derivative("NotImplemented", 0, 1, &a, 1, LD) : MT_OK;
    if (st) { MT_DROP(*LD); MT_DROP(*pivots); MT_DROP(*info); }
    return st;
}

mt_status mt_linalg_ldl_solve(mt_tensor *LD, mt_tensor *pivots, mt_tensor *b, int hermitian, mt_tensor **result) {
    MT_PROFILE("linalg_ldl_solve", LD, pivots, b);
    int grad = wants_grad(LD, b);
    MT_TRY(NO_GRAD(mt__impl_linalg_ldl_solve(LD, pivots, b, hermitian, result)));
    mt_tensor *ins[2] = {LD, b};
    mt_status st = grad ? record_no_derivative("NotImplemented", 1, 2, ins, 1, result) : MT_OK;
    if (st) MT_DROP(*result);
    return st;
}

mt_status mt_geqrf(mt_tensor *a, mt_tensor **A, mt_tensor **tau) {
    MT_PROFILE("geqrf", a);
    int grad = wants_grad(a, NULL);
    MT_TRY(NO_GRAD(mt__impl_geqrf(a, A, tau)));
    mt_tensor *outs[2] = {*A, *tau};
    mt_status st = grad ? record_no_derivative("GeqrfBackward0", 2, 1, &a, 2, outs) : MT_OK;
    if (st) { MT_DROP(*A); MT_DROP(*tau); }
    return st;
}

mt_status mt_ormqr(mt_tensor *a, mt_tensor *tau, mt_tensor *c, int left, int transpose, mt_tensor **result) {
    MT_PROFILE("ormqr", a, tau, c);
    return NO_GRAD(mt__impl_ormqr(a, tau, c, left, transpose, result));
}

/* ---- triangular solve --------------------------------------------------------------------------------- */

/* gB = A^-H g (same triangle flipped); gA = -gB X^H (left) or -X^H gB, kept to A's triangle */
static mt_status solve_triangular_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int upper = (int)n->iv[0], left = (int)n->iv[1], unit = (int)n->iv[2];
    mt_tensor *A = SAVED(c, n, 0), *X = SAVED(c, n, 1);
    mt_tensor *gB = SOLVE_TRI(c, MH(c, A), grads[0], !upper, left, unit);
    if (needs(n, 0)) {
        mt_tensor *gA = NEG(c, left ? MM(c, gB, MH(c, X)) : MM(c, MH(c, X), gB));
        GIVE(c, out, 0, TRIL(c, gA, upper ? unit : -unit, upper));
    }
    if (needs(n, 1)) GIVE(c, out, 1, gB);
    return END(c, out, 2);
}

mt_status mt_linalg_solve_triangular(mt_tensor *a, mt_tensor *b, int upper, int left, int unitriangular,
                                     mt_tensor **result) {
    MT_PROFILE("linalg_solve_triangular", a, b);
    int grad = wants_grad(a, b);
    MT_TRY(NO_GRAD(mt__impl_linalg_solve_triangular(a, b, upper, left, unitriangular, result)));
    if (!grad) return MT_OK;
    mt_node *n;
    mt_tensor *ins[2] = {a, b};
    mt_status st = mt__record("LinalgSolveTriangularBackward0", solve_triangular_backward, 2, ins, 1, result, &n);
    if (!st && n) {
        n->iv[0] = upper, n->iv[1] = left, n->iv[2] = unitriangular;
        st = mt__save(n, 0, a, 0);
        if (!st) st = mt__save(n, 1, *result, 1);
    }
    if (st) MT_DROP(*result);
    return st;
}

/* ---- solve ------------------------------------------------------------------------------------------------ */

/* gB = solve(A^H, gX); gA = -gB X^H (left) or -X^H gB; vectors as one-column matrices */
static mt_status solve_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int left = (int)n->iv[0], vec = (int)n->iv[1];
    mt_tensor *A = SAVED(c, n, 0), *X = SAVED(c, n, 1), *gX = grads[0];
    if (vec) X = UNSQ(c, X, -1), gX = UNSQ(c, gX, -1);
    mt_tensor *gB = SOLVE(c, MH(c, A), gX, left);
    if (needs(n, 0)) GIVE(c, out, 0, NEG(c, left ? MM(c, gB, MH(c, X)) : MM(c, MH(c, X), gB)));
    if (needs(n, 1)) GIVE(c, out, 1, vec ? SQ(c, gB, -1) : gB);
    return END(c, out, 2);
}

mt_status mt_linalg_solve_ex(mt_tensor *a, mt_tensor *b, int left, int check_errors, mt_tensor **result,
                             mt_tensor **info) {
    MT_PROFILE("linalg_solve_ex", a, b);
    int grad = wants_grad(a, b);
    MT_TRY(NO_GRAD(mt__impl_linalg_solve_ex(a, b, left, check_errors, result, info)));
    if (!grad) return MT_OK;
    mt_node *n;
    mt_tensor *ins[2] = {a, b};
    mt_status st = mt__record("LinalgSolveExBackward0", solve_backward, 2, ins, 1, result, &n);
    if (!st && n) {
        n->iv[0] = left, n->iv[1] = mt__solve_vector_rhs(a, b);
        st = mt__save(n, 0, a, 0);
        if (!st) st = mt__save(n, 1, *result, 1);
    }
    if (st) { MT_DROP(*result); MT_DROP(*info); }
    return st;
}

/* ---- inverse --------------------------------------------------------------------------------------------- */

static mt_status inv_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *Ai = SAVED(c, n, 0), *AiH = MH(c, Ai);
    GIVE(c, out, 0, NEG(c, MM(c, AiH, MM(c, grads[0], AiH))));
    return END(c, out, 1);
}

mt_status mt_linalg_inv_ex(mt_tensor *a, int check_errors, mt_tensor **inverse, mt_tensor **info) {
    MT_PROFILE("linalg_inv_ex", a);
    int grad = wants_grad(a, NULL);
    MT_TRY(NO_GRAD(mt__impl_linalg_inv_ex(a, check_errors, inverse, info)));
    if (!grad) return MT_OK;
    mt_node *n;
    mt_status st = mt__record("LinalgInvExBackward0", inv_backward, 1, &a, 1, inverse, &n);
    if (!st && n) st = mt__save(n, 0, *inverse, 1);
    if (st) { MT_DROP(*inverse); MT_DROP(*info); }
    return st;
}

/* ---- determinants ------------------------------------------------------------------------------------------ */

/* prod_{j != i} s_j of every row of s (contiguous [batch, k]), without dividing (s may hold zeros) */
static mt_status prod_others(mt_tensor *s, mt_tensor **out) {
    MT_TRY(mt__alloc(s->ndim, s->sizes, NULL, s->dtype, MT_CPU, out));
    int64_t k = s->sizes[s->ndim - 1], nb = k ? mt_tensor_numel(s) / k : 0;
    mt_tensor *sc = NULL;
    mt_status st = mt__impl_contiguous(s, &sc);
    if (st) { MT_DROP(*out); return st; }
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < k; i++) {
            double p = 1;
            for (int64_t j = 0; j < k; j++)
                if (j != i) p *= s->dtype == MT_F32 ? ((float *)mt__data(sc))[b * k + j] : ((double *)mt__data(sc))[b * k + j];
            if (s->dtype == MT_F32) ((float *)mt__data(*out))[b * k + i] = (float)p;
            else ((double *)mt__data(*out))[b * k + i] = p;
        }
    mt_tensor_release(sc);
    return MT_OK;
}

/* gA = g det A^-H; at a singular A (det 0) the cofactors come from the SVD A = U S Vh:
 * gA = g conj(det(U) det(Vh)) U diag(prod_{j != i} s_j) Vh */
static mt_status det_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *A = SAVED(c, n, 0), *det = SAVED(c, n, 1), *g = grads[0];
    int singular = 0;
    mt_tensor *zs = B(c, MT_OP_EQ, det, SCALAR(c, 0)), *any = NULL;
    if (zs && !c->st) c->st = mt_reduce(MT_RED_ANY, zs, 0, NULL, 0, -1, NULL, &any);
    if (keep(c, c->st, any)) singular = *(const uint8_t *)mt__data(any) != 0;
    int cx = det && mt__is_complex(det->dtype);
    mt_tensor *gd = UNSQ(c, UNSQ(c, MUL(c, g, cx ? U(c, MT_OP_CONJ, det) : det), -1), -1); /* g conj(det) */
    if (!singular) {
        GIVE(c, out, 0, MUL(c, gd, MH(c, INV(c, A))));
        return END(c, out, 1);
    }
    if (!c->st && mt__grad_enabled())
        c->st = mt__error(MT_ERR_NOT_IMPLEMENTED,
                          "the second derivative of linalg.det at a singular matrix is not implemented");
    mt_tensor *u = NULL, *s = NULL, *vh = NULL, *du = NULL, *dv = NULL, *po = NULL;
    if (!c->st) c->st = mt__impl_linalg_svd(A, 0, 1, &u, &s, &vh);
    keep(c, c->st, u), keep(c, c->st, s), keep(c, c->st, vh);
    if (!c->st) c->st = mt__impl_linalg_det(u, &du);
    keep(c, c->st, du);
    if (!c->st) c->st = mt__impl_linalg_det(vh, &dv);
    keep(c, c->st, dv);
    if (!c->st) c->st = prod_others(s, &po);
    keep(c, c->st, po);
    mt_tensor *dudv = MUL(c, du, dv), *alpha = MUL(c, cx ? U(c, MT_OP_CONJ, dudv) : dudv, g);
    mt_tensor *D = MUL(c, po, UNSQ(c, alpha, -1));
    GIVE(c, out, 0, MM(c, MUL(c, u, UNSQ(c, D, -2)), vh));
    return END(c, out, 1);
}

mt_status mt_linalg_det(mt_tensor *a, mt_tensor **result) {
    MT_PROFILE("linalg_det", a);
    int grad = wants_grad(a, NULL);
    MT_TRY(NO_GRAD(mt__impl_linalg_det(a, result)));
    if (!grad) return MT_OK;
    mt_node *n;
    mt_status st = mt__record("LinalgDetBackward0", det_backward, 1, &a, 1, result, &n);
    if (!st && n) {
        st = mt__save(n, 0, a, 0);
        if (!st) st = mt__save(n, 1, *result, 1);
    }
    if (st) MT_DROP(*result);
    return st;
}

/* gA = g A^-H with g = g_logabsdet + i Im(g_sign conj(sign)) (d sign = i sign Im tr(A^-1 dA)); a real
 * sign has no derivative */
static mt_status slogdet_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *A = SAVED(c, n, 0), *g = grads[1];
    int cx = A && mt__is_complex(A->dtype);
    if (cx && grads[0]) {
        mt_tensor *sign = SAVED(c, n, 1);
        mt_tensor *ph = MUL(c, SCALAR_J(c, 1), U(c, MT_OP_IMAG, MUL(c, grads[0], U(c, MT_OP_CONJ, sign))));
        g = g ? ADD(c, g, ph) : ph;
    }
    if (!g) return END(c, out, 1);
    GIVE(c, out, 0, MUL(c, UNSQ(c, UNSQ(c, g, -1), -1), MH(c, INV(c, A))));
    return END(c, out, 1);
}

mt_status mt_linalg_slogdet(mt_tensor *a, mt_tensor **sign, mt_tensor **logabsdet) {
    MT_PROFILE("linalg_slogdet", a);
    int grad = wants_grad(a, NULL);
    MT_TRY(NO_GRAD(mt__impl_linalg_slogdet(a, sign, logabsdet)));
    if (!grad) return MT_OK;
    mt_node *n;
    mt_tensor *outs[2] = {*sign, *logabsdet};
    mt_status st = mt__record("LinalgSlogdetBackward0", slogdet_backward, 1, &a, 2, outs, &n);
    if (!st && n) {
        n->no_materialize = 1;
        st = mt__save(n, 0, a, 0);
        if (!st && mt__is_complex(a->dtype)) st = mt__save(n, 1, *sign, 1);
    }
    if (st) { MT_DROP(*sign); MT_DROP(*logabsdet); }
    return st;
}

/* ---- eigh, eig ------------------------------------------------------------------------------------------------ */

static mt_tensor *DIAGONAL(F *c, mt_tensor *t) {
    mt_tensor *r = NULL;
    return OK2(t, 1) ? KEEP(c, mt_diagonal(t, 0, -2, -1, &r), r) : NULL;
}
static mt_tensor *IMAG(F *c, mt_tensor *t) { return U(c, MT_OP_IMAG, t); }

/* PyTorch's allclose(x, y, rtol=1e-2, atol=1e-2) on real tensors (NULL: zeros), read back: the check that a
 * loss does not depend on the phases of complex eigen- or singular vectors */
static int phase_invariant(F *c, mt_tensor *x, mt_tensor *y) {
    mt_tensor *xc = NULL, *yc = NULL, *any = x ? x : y;
    if (c->st || !any) return 1;
    if (x && !KEEP(c, mt__impl_contiguous(x, &xc), xc)) return 1;
    if (y && !KEEP(c, mt__impl_contiguous(y, &yc), yc)) return 1;
    int single = any->dtype == MT_F32;
    for (int64_t i = 0; i < mt_tensor_numel(any); i++) {
        double a = !xc ? 0 : single ? ((float *)mt__data(xc))[i] : ((double *)mt__data(xc))[i];
        double b = !yc ? 0 : single ? ((float *)mt__data(yc))[i] : ((double *)mt__data(yc))[i];
        if (!(fabs(a - b) <= 1e-2 + 1e-2 * fabs(b))) return 0;
    }
    return 1;
}

/* PyTorch's linalg_eig_backward for A = V diag(L) V^-1 (herm: eigh, V unitary):
 * gA = V^-H (diag(gL) + P(V^H gV) / conj(E)) V^H with E_ij = L_j - L_i, where P projects onto the tangent space
 * of V (unit columns for eig, skew-Hermitian for eigh); diag(gL) replaces the diagonal when given */
static mt_tensor *eig_backward(F *c, mt_tensor *gL, mt_tensor *gV, mt_tensor *L, mt_tensor *V, int herm) {
    if (c->st || (!gL && !gV)) return NULL;
    mt_tensor *Vh = MH(c, V);
    if (!gV) /* eigenvalues only: V^-H diag(gL) V^H */
        return herm ? MM(c, MUL(c, V, UNSQ(c, gL, -2)), Vh) : SOLVE(c, Vh, MUL(c, UNSQ(c, gL, -1), Vh), 1);
    mt_tensor *VhgV = MM(c, Vh, gV), *d = DIAGONAL(c, VhgV);
    if (d && mt__is_complex(d->dtype) && !phase_invariant(c, IMAG(c, d), NULL) && !c->st)
        c->st = mt__error(MT_ERR_RUNTIME, "%s: The eigenvectors in the complex case are specified up to "
                          "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                          "it is ill-defined.", herm ? "linalg_eigh_backward" : "linalg_eig_backward");
    if (herm) VhgV = BS(c, MT_OP_MUL, SUB(c, VhgV, MH(c, VhgV)), 0.5);
    else VhgV = SUB(c, VhgV, MM(c, Vh, MUL(c, V, UNSQ(c, U(c, MT_OP_REAL, d), -2))));
    mt_tensor *Lc = L && mt__is_complex(L->dtype) ? U(c, MT_OP_CONJ, L) : L;
    mt_tensor *I = EYE(c, cols(V), mt__complex_to_real(V->dtype));
    mt_tensor *inner = DIV(c, VhgV, ADD(c, SUB(c, UNSQ(c, Lc, -2), UNSQ(c, Lc, -1)), I));
    if (gL) inner = ADD(c, MUL(c, inner, SB(c, MT_OP_SUB, 1.0, I)), DIAG_EMBED(c, gL));
    return herm ? MM(c, V, MM(c, inner, Vh)) : SOLVE(c, Vh, MM(c, inner, Vh), 1);
}

static mt_status eigh_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    GIVE(c, out, 0, eig_backward(c, grads[0], grads[1], SAVED(c, n, 0), SAVED(c, n, 1), 1));
    return END(c, out, 1);
}

/* real A: the real part (PyTorch's handle_r_to_c) */
static mt_status eig_backward_node(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    mt_tensor *gA = eig_backward(c, grads[0], grads[1], SAVED(c, n, 0), SAVED(c, n, 1), 0);
    GIVE(c, out, 0, n->iv[0] ? U(c, MT_OP_REAL, gA) : gA);
    return END(c, out, 1);
}

/* the autograd half of eig and eigh: the node (under grad) with the values and the vectors, both saved; the
 * vectors, computed for the derivative even when not asked for (PyTorch's eigvals and eigvalsh under grad do
 * too), are an output of the node so that double backward sees their history; iv[0]: A is real */
static mt_status record_eig(const char *name, mt_backward_fn fn, mt_tensor *a, int grad, int compute_v,
                            mt_tensor **values, mt_tensor *vectors, mt_tensor **eigenvectors) {
    mt_status st = MT_OK;
    if (grad) {
        mt_node *n;
        mt_tensor *outs[2] = {*values, vectors};
        st = mt__record(name, fn, 1, &a, 2, outs, &n);
        if (!st && n) {
            n->no_materialize = 1;
            n->iv[0] = !mt__is_complex(a->dtype);
            st = mt__save(n, 0, *values, 1);
            if (!st) st = mt__save(n, 1, vectors, 1);
        }
    }
    if (st) { MT_DROP(*values); MT_DROP(vectors); return st; }
    if (compute_v) *eigenvectors = vectors;
    else mt_tensor_release(vectors);
    return MT_OK;
}

mt_status mt_linalg_eig(mt_tensor *a, int compute_v, mt_tensor **eigenvalues, mt_tensor **eigenvectors) {
    MT_PROFILE("linalg_eig", a);
    int grad = wants_grad(a, NULL);
    mt_tensor *vectors = NULL; /* under grad, eigvals is eig (PyTorch's: its node, its checks) */
    MT_TRY(NO_GRAD(mt__impl_linalg_eig(a, compute_v || grad, eigenvalues, &vectors)));
    return record_eig("LinalgEigBackward0", eig_backward_node, a, grad, compute_v, eigenvalues, vectors, eigenvectors);
}

mt_status mt_linalg_eigh(mt_tensor *a, int upper, int compute_v, mt_tensor **eigenvalues, mt_tensor **eigenvectors) {
    MT_PROFILE("linalg_eigh", a);
    int grad = wants_grad(a, NULL);
    mt_tensor *vectors = NULL;
    MT_TRY(NO_GRAD(mt__impl_linalg_eigh(a, upper, compute_v || grad, eigenvalues, &vectors)));
    return record_eig("LinalgEighBackward0", eigh_backward, a, grad, compute_v, eigenvalues, vectors, eigenvectors);
}

/* ---- SVD ------------------------------------------------------------------------------------------------------- */

/* PyTorch's svd_backward on the reduced factors (full ones narrowed to k = min(m, n) columns/rows):
 * gA = U [(skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS)] V^H (E_jk = s_k^2 - s_j^2, E_jj = 1),
 * plus the parts of gU (m > n) or gV (m < n) outside the span of U or V; complex: the loss must not
 * depend on the vectors' phases, and the diagonal takes i Im(diag(U^H gU)) / S */
static mt_status svd_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int full = (int)n->iv[0];
    mt_tensor *U = SAVED(c, n, 0), *S = SAVED(c, n, 1), *Vh = SAVED(c, n, 2);
    mt_tensor *gU = grads[0], *gS = grads[1], *gVh = grads[2], *gA = NULL;
    if (c->st) return END(c, out, 1);
    int64_t k = S->sizes[S->ndim - 1];
    if (full) {
        U = NARROW(c, U, -1, 0, k), Vh = NARROW(c, Vh, -2, 0, k);
        if (gU) gU = NARROW(c, gU, -1, 0, k);
        if (gVh) gVh = NARROW(c, gVh, -2, 0, k);
    }
    if (c->st) return END(c, out, 1);
    int64_t m = rows(U), nn = cols(Vh);
    int cx = mt__is_complex(U->dtype);
    if (!gU && !gVh) {
        if (gS) gA = m >= nn ? MM(c, U, MUL(c, UNSQ(c, gS, -1), Vh)) : MM(c, MUL(c, U, UNSQ(c, gS, -2)), Vh);
        GIVE(c, out, 0, gA);
        return END(c, out, 1);
    }
    mt_tensor *UhgU = NULL, *VhgV = NULL;
    if (gU) { mt_tensor *x = MM(c, MH(c, U), gU); UhgU = SUB(c, x, MH(c, x)); }
    if (gVh) { mt_tensor *x = MM(c, Vh, MH(c, gVh)); VhgV = SUB(c, x, MH(c, x)); }
    if (cx) { /* Im diag(U^H gU) = -Im diag(V^H gV) */
        mt_tensor *imU = UhgU ? IMAG(c, DIAGONAL(c, UhgU)) : NULL;
        mt_tensor *imV = VhgV ? NEG(c, IMAG(c, DIAGONAL(c, VhgV))) : NULL;
        if (!phase_invariant(c, imU, imV) && !c->st)
            c->st = mt__error(MT_ERR_RUNTIME, "svd_backward: The singular vectors in the complex case are specified "
                              "up to multiplication by e^{i phi}. The specified loss function depends on this phase "
                              "term, making it ill-defined.");
    }
    mt_tensor *S2 = MUL(c, S, S);
    mt_tensor *E = ADD(c, SUB(c, UNSQ(c, S2, -2), UNSQ(c, S2, -1)), EYE(c, k, S->dtype));
    mt_tensor *num = ADD(c, UhgU ? MUL(c, UhgU, UNSQ(c, S, -2)) : NULL, VhgV ? MUL(c, UNSQ(c, S, -1), VhgV) : NULL);
    gA = DIV(c, num, E);
    if (gS) gA = ADD(c, gA, DIAG_EMBED(c, gS));
    if (cx && gU && gVh) gA = ADD(c, gA, DIAG_EMBED(c, DIV(c, DIAGONAL(c, UhgU), BS(c, MT_OP_MUL, S, 2.0))));
    if (m > nn && gU) {
        gA = MM(c, U, gA);
        mt_tensor *gUSinv = DIV(c, gU, UNSQ(c, S, -2));
        gA = SUB(c, ADD(c, gA, gUSinv), MM(c, U, MM(c, MH(c, U), gUSinv)));
        gA = MM(c, gA, Vh);
    } else if (m < nn && gVh) {
        gA = MM(c, gA, Vh);
        mt_tensor *SinvgVh = DIV(c, gVh, UNSQ(c, S, -1));
        gA = SUB(c, ADD(c, gA, SinvgVh), MM(c, MM(c, SinvgVh, MH(c, Vh)), Vh));
        gA = MM(c, U, gA);
    } else {
        gA = MM(c, U, MM(c, gA, Vh));
    }
    GIVE(c, out, 0, gA);
    return END(c, out, 1);
}

mt_status mt_linalg_svd(mt_tensor *a, int full_matrices, int compute_uv, mt_tensor **U, mt_tensor **S,
                        mt_tensor **Vh) {
    MT_PROFILE("linalg_svd", a);
    int grad = wants_grad(a, NULL);
    /* the derivative needs U and Vh: PyTorch's svdvals computes them under grad too (outputs of the
     * node even when not returned, for double backward) */
    mt_tensor *u = NULL, *vh = NULL;
    MT_TRY(NO_GRAD(mt__impl_linalg_svd(a, compute_uv ? full_matrices : 0, compute_uv || grad, &u, S, &vh)));
    mt_status st = MT_OK;
    if (grad) {
        mt_node *n;
        mt_tensor *outs[3] = {u, *S, vh};
        st = mt__record("LinalgSvdBackward0", svd_backward, 1, &a, 3, outs, &n);
        if (!st && n) {
            n->no_materialize = 1;
            n->iv[0] = compute_uv && full_matrices;
            for (int k = 0; k < 3 && !st; k++) st = mt__save(n, k, outs[k], 1);
        }
    }
    if (!st && !compute_uv && grad) { /* svdvals: U and Vh were for the derivative only */
        mt_tensor_release(u), mt_tensor_release(vh), u = vh = NULL;
        int64_t zero = 0;
        st = mt__alloc(1, &zero, NULL, a->dtype, a->device, &u);
        if (!st) st = mt__alloc(1, &zero, NULL, a->dtype, a->device, &vh);
    }
    if (st) { MT_DROP(u); MT_DROP(*S); MT_DROP(vh); return st; }
    *U = u, *Vh = vh;
    return MT_OK;
}

/* ---- QR -------------------------------------------------------------------------------------------------------- */

/* square or tall (m >= n) reduced QR: gA = [gQ + Q syminvadj(triu(gR R^H - Q^H gQ))] R^-H, where
 * syminvadj(T) = T + T^H with the real part of its diagonal halved (R's diagonal is real) */
static mt_tensor *qr_tall_backward(F *c, mt_tensor *gQ, mt_tensor *gR, mt_tensor *Q, mt_tensor *R) {
    mt_tensor *M = NULL;
    if (gR) M = MM(c, gR, MH(c, R));
    if (gQ) { mt_tensor *q = MM(c, MH(c, Q), gQ); M = M ? SUB(c, M, q) : NEG(c, q); }
    mt_tensor *T = TRIL(c, M, 0, 1), *S;
    if (T && mt__is_complex(T->dtype))
        S = SUB(c, ADD(c, T, MH(c, T)), DIAG_EMBED(c, U(c, MT_OP_REAL, DIAG(c, T))));
    else
        S = ADD(c, T, TR(c, TRIL(c, T, 1, 1)));
    mt_tensor *gA = MM(c, Q, S);
    if (gQ) gA = ADD(c, gA, gQ);
    return SOLVE_TRI(c, MH(c, R), gA, 0, 0, 0);
}

static mt_status qr_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int r_only = n->iv[0] == MT_QR_R; /* mode 'r' recorded R as its only output */
    mt_tensor *Q = SAVED(c, n, 0), *R = SAVED(c, n, 1), *gQ = r_only ? NULL : grads[0], *gR = grads[r_only ? 0 : 1];
    if (c->st) return END(c, out, 1);
    if (r_only) /* Q is an empty placeholder then: check before reading its sizes */
        c->st = mt__error(MT_ERR_RUNTIME, "The derivative of linalg.qr depends on Q, which is not computed when "
                                          "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                                          "differentiate through linalg.qr.");
    int64_t m = c->st ? 0 : rows(Q), nn = cols(R);
    if (!c->st && n->iv[0] == MT_QR_COMPLETE && m > nn)
        c->st = mt__error(MT_ERR_RUNTIME,
                          "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
    if (c->st || (!gQ && !gR)) return END(c, out, 1);
    mt_tensor *gA;
    if (m >= nn) {
        gA = qr_tall_backward(c, gQ, gR, Q, R);
    } else {
        /* A = [X | Y] with X = Q U (m x m) and Y = Q Z: Z = Q^H Y feeds back into gQ */
        mt_tensor *Ur = NARROW(c, R, -1, 0, m), *Z = NARROW(c, R, -1, m, nn - m);
        mt_tensor *gU = gR ? NARROW(c, gR, -1, 0, m) : NULL, *gZ = gR ? NARROW(c, gR, -1, m, nn - m) : NULL;
        mt_tensor *gQx = gZ ? ADD(c, gQ, MM(c, Q, MM(c, Z, MH(c, gZ)))) : gQ;
        mt_tensor *gX = qr_tall_backward(c, gQx, gU, Q, Ur);
        mt_tensor *gY = gZ ? MM(c, Q, gZ) : NULL;
        if (!gY && !c->st) { /* no gradient through Z: zeros */
            mt_meta zm;
            mt__meta_of(Z, &zm);
            gY = ZEROS(c, &zm);
        }
        gA = CAT2(c, gX, gY, -1);
    }
    GIVE(c, out, 0, gA);
    return END(c, out, 1);
}

mt_status mt_linalg_qr(mt_tensor *a, int mode, mt_tensor **Q, mt_tensor **R) {
    MT_PROFILE("linalg_qr", a);
    if (mode < MT_QR_REDUCED || mode > MT_QR_R) return mt__error(MT_ERR_VALUE, "mt_linalg_qr: bad mode %d", mode);
    int grad = wants_grad(a, NULL);
    MT_TRY(NO_GRAD(mt__impl_linalg_qr(a, mode, Q, R)));
    if (!grad) return MT_OK;
    mt_node *n;
    mt_tensor *outs[2] = {*Q, *R};
    mt_status st = mode == MT_QR_R ? mt__record("LinalgQrBackward0", qr_backward, 1, &a, 1, R, &n)
                                   : mt__record("LinalgQrBackward0", qr_backward, 1, &a, 2, outs, &n);
    if (!st && n) {
        n->no_materialize = 1;
        n->iv[0] = mode;
        st = mt__save(n, 0, *Q, mode != MT_QR_R);
        if (!st) st = mt__save(n, 1, *R, 1);
    }
    if (st) { MT_DROP(*Q); MT_DROP(*R); }
    return st;
}

/* ---- least squares ---------------------------------------------------------------------------------------------- */

/* A's pseudo-inverse from its SVD, singular values up to eps * max(m, n) * s_max dropped (linalg.pinv's
 * defaults), written with recorded ops */
static mt_tensor *PINV(F *c, mt_tensor *A) {
    mt_tensor *u = NULL, *s = NULL, *vh = NULL;
    if (!OK2(A, 1)) return NULL;
    c->st = mt_linalg_svd(A, 0, 1, &u, &s, &vh);
    keep(c, c->st, u), keep(c, c->st, s), keep(c, c->st, vh);
    if (c->st) return NULL;
    int64_t m = rows(A), n = cols(A), k = cols(s);
    if (!k) { /* an empty A: its pseudo-inverse is an empty n x m */
        mt_meta pm;
        mt__meta_of(TR(c, A), &pm);
        return ZEROS(c, &pm);
    }
    double eps = A->dtype == MT_F32 ? 0x1p-23 : 0x1p-52;
    mt_tensor *tol = BS(c, MT_OP_MUL, NARROW(c, s, -1, 0, 1), eps * (double)(m > n ? m : n));
    mt_tensor *sinv = WHERE(c, B(c, MT_OP_GT, s, tol), U(c, MT_OP_RECIPROCAL, s), BS(c, MT_OP_MUL, s, 0));
    return MM(c, MUL(c, TR(c, vh), UNSQ(c, sinv, -2)), TR(c, u));
}

/* the derivative of P = pinv(A) given gP, as PyTorch's pinv_backward (the smaller products first) */
static mt_tensor *pinv_backward(F *c, mt_tensor *gP, mt_tensor *P, mt_tensor *A) {
    mt_tensor *Ph = TR(c, P), *gPh = TR(c, gP);
    if (!c->st && rows(A) <= cols(A)) {
        mt_tensor *K = MM(c, gPh, P), *KPh = MM(c, K, Ph);
        mt_tensor *r = SUB(c, KPh, TR(c, MM(c, P, K)));
        r = SUB(c, r, MM(c, MM(c, A, P), KPh));
        return ADD(c, r, MM(c, MM(c, Ph, P), SUB(c, gPh, MM(c, K, A))));
    }
    mt_tensor *K = MM(c, P, gPh), *PhK = MM(c, Ph, K);
    mt_tensor *r = SUB(c, MM(c, MM(c, SUB(c, gPh, MM(c, A, K)), P), Ph), TR(c, MM(c, K, P)));
    return SUB(c, ADD(c, r, PhK), MM(c, MM(c, PhK, P), A));
}

/* through the pseudo-inverse, X = pinv(A) B: gA = pinv_backward(gX B^H), gB = pinv(A)^H gX */
static mt_status lstsq_backward(mt_node *n, mt_tensor *const *grads, mt_tensor **out) {
    F c0 = {0}, *c = &c0;
    int vec = (int)n->iv[0];
    mt_tensor *A = SAVED(c, n, 0), *Bm = SAVED(c, n, 1), *gX = grads[0];
    if (!gX) return END(c, out, 2);
    if (vec) Bm = UNSQ(c, Bm, -1), gX = UNSQ(c, gX, -1);
    mt_tensor *P = PINV(c, A);
    if (needs(n, 0)) GIVE(c, out, 0, pinv_backward(c, MM(c, gX, TR(c, Bm)), P, A));
    if (needs(n, 1)) {
        mt_tensor *gB = MM(c, TR(c, P), gX);
        GIVE(c, out, 1, vec ? SQ(c, gB, -1) : gB);
    }
    return END(c, out, 2);
}

mt_status mt_linalg_lstsq(mt_tensor *a, mt_tensor *b, int has_rcond, double rcond, int driver, mt_tensor **solution,
                          mt_tensor **residuals, mt_tensor **rank, mt_tensor **singular_values) {
    MT_PROFILE("linalg_lstsq", a, b);
    int grad = wants_grad(a, b);
    MT_TRY(NO_GRAD(mt__impl_linalg_lstsq(a, b, has_rcond, rcond, driver, solution, residuals, rank,
                                         singular_values)));
    if (!grad) return MT_OK;
    mt_node *n;
    mt_tensor *ins[2] = {a, b};
    /* only the solution is differentiable, as in PyTorch */
    mt_status st = mt__record("LinalgLstsqBackward0", lstsq_backward, 2, ins, 1, solution, &n);
    if (!st && n) {
        n->iv[0] = b->ndim == a->ndim - 1;
        st = mt__save(n, 0, a, 0);
        if (!st) st = mt__save(n, 1, b, 0);
    }
    if (st) { MT_DROP(*solution); MT_DROP(*residuals); MT_DROP(*rank); MT_DROP(*singular_values); }
    return st;
}
