/* einsum.c — einsum and tensordot as PyTorch composes them: every operand becomes
 * a view over one canonical list of dims (output dims first, then contracted
 * ones; repeated subscripts become diagonal views), dims found in one operand
 * only are summed early, then operands are contracted left to right by
 * permute/reshape/bmm (sumproduct_pair). Everything is public ops, so autograd
 * records through the parts, as for PyTorch's CompositeImplicit ops. */
#include <stdio.h>

#include "../../autograd/formula.h"

mt_status mt__diag_merge(mt_tensor *x, int64_t d0, int64_t d1, mt_tensor **out);

#define NLAB 52          /* A-Z then a-z, as PyTorch numbers them */
#define ELL_BASE NLAB    /* ellipsis dims get ids NLAB + i */

static int label_id(char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
    return -1;
}
static char label_char(int id) { return id < 26 ? (char)('A' + id) : (char)('a' + id - 26); }

typedef struct {
    int nlab;          /* subscripts, an ellipsis counted as one entry (-1) */
    int lab[MT_MAX_DIMS + 1];
    int has_ell;
} term_t;

/* parse one term (an operand's subscripts or the output) from s[b, e) */
static mt_status parse_term(const char *s, int b, int e, int operand, term_t *t) {
    memset(t, 0, sizeof *t);
    for (int i = b; i < e; i++) {
        char ch = s[i];
        if (ch == ' ') continue;
        if (ch == '.') {
            if (t->has_ell) {
                if (operand >= 0)
                    return mt__error(MT_ERR_RUNTIME, "einsum(): found '.' for operand %d for which an ellipsis was already found", operand);
                return mt__error(MT_ERR_RUNTIME, "einsum(): found more than one ellipsis in the output");
            }
            if (i + 2 >= e + 0 || s[i + 1] != '.' || s[i + 2] != '.') {
                if (operand >= 0) return mt__error(MT_ERR_RUNTIME, "einsum(): found '.' for operand %d that is not part of any ellipsis", operand);
                return mt__error(MT_ERR_RUNTIME, "einsum(): found '.' for output that is not part of any ellipsis");
            }
            i += 2;
            t->has_ell = 1;
            t->lab[t->nlab++] = -1;
            continue;
        }
        int id = label_id(ch);
        if (id < 0)
            return mt__error(MT_ERR_RUNTIME, "einsum(): invalid subscript given at index %d in the equation string, "
                             "subscripts must be in [a-zA-Z]", i);
        if (t->nlab > MT_MAX_DIMS) return mt__error(MT_ERR_RUNTIME, "einsum(): too many subscripts");
        t->lab[t->nlab++] = id;
    }
    return MT_OK;
}

#define REL(t) do { mt_tensor_release(t); t = NULL; } while (0)

/* sum the dims (keepdim) of *t in place of *t */
static mt_status sum_keep(mt_tensor **t, int n, const int64_t *dims) {
    if (n == 0) return MT_OK;
    mt_tensor *r;
    MT_TRY(mt_reduce(MT_RED_SUM, *t, n, dims, 1, -1, NULL, &r));
    MT_DROP(*t);
    *t = r;
    return MT_OK;
}

/* PyTorch's sumproduct_pair: left and right have the same ndim (size-1 dims broadcast) */
static mt_status sumproduct_pair(mt_tensor *left_in, mt_tensor *right_in, int nsum, const int64_t *sum_dims,
                                 mt_tensor **result) {
    int dim = left_in->ndim;
    if (nsum == 0) return mt_binary(MT_OP_MUL, left_in, right_in, 1, NULL, result);
    int is_sum[MT_MAX_DIMS] = {0};
    for (int i = 0; i < nsum; i++) is_sum[sum_dims[i]] = 1;
    mt_tensor *left = left_in, *right = right_in;
    mt_tensor_retain(left);
    mt_tensor_retain(right);
    int64_t lro[MT_MAX_DIMS], lo[MT_MAX_DIMS], ro[MT_MAX_DIMS];
    int nlro = 0, nlo = 0, nro = 0;
    int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
    mt_status st = MT_OK;
    for (int i = 0; i < dim && !st; i++) {
        int sl = left->sizes[i] != 1, sr = right->sizes[i] != 1;
        int64_t d = i;
        if (is_sum[i]) {
            if (sl && sr) {
                if (left->sizes[i] != right->sizes[i]) st = mt__error(MT_ERR_RUNTIME, "non-broadcast dimensions must match");
                sum_size = mt__wmul(sum_size, left->sizes[i]);
            } else if (sl) st = sum_keep(&left, 1, &d);
            else if (sr) st = sum_keep(&right, 1, &d);
        } else if (sl && sr) {
            if (left->sizes[i] != right->sizes[i]) st = mt__error(MT_ERR_RUNTIME, "non-broadcast dimensions must match");
            lro[nlro++] = i, lro_size = mt__wmul(lro_size, left->sizes[i]);
        } else if (sl) {
            lo[nlo++] = i, lo_size = mt__wmul(lo_size, left->sizes[i]);
        } else {
            ro[nro++] = i, ro_size = mt__wmul(ro_size, right->sizes[i]);
        }
    }
    int64_t lperm[MT_MAX_DIMS], rperm[MT_MAX_DIMS], operm[MT_MAX_DIMS], osz[MT_MAX_DIMS];
    int k = 0, q = 0;
    for (int i = 0; i < nlro; i++) lperm[k++] = lro[i], rperm[q++] = lro[i];
    for (int i = 0; i < nlo; i++) lperm[k++] = lo[i];
    for (int i = 0; i < nsum; i++) lperm[k++] = sum_dims[i], rperm[q++] = sum_dims[i];
    for (int i = 0; i < nro; i++) lperm[k++] = ro[i], rperm[q++] = ro[i];
    for (int i = 0; i < nlo; i++) rperm[q++] = lo[i];
    int o = 0;
    for (int i = 0; i < nlro; i++) osz[o] = left->sizes[lro[i]], operm[lro[i]] = o++;
    for (int i = 0; i < nlo; i++) osz[o] = left->sizes[lo[i]], operm[lo[i]] = o++;
    for (int i = 0; i < nsum; i++) osz[o] = 1, operm[sum_dims[i]] = o++;
    for (int i = 0; i < nro; i++) osz[o] = right->sizes[ro[i]], operm[ro[i]] = o++;
    mt_tensor *lp = NULL, *rp = NULL, *l3 = NULL, *r3 = NULL, *prod = NULL, *v = NULL;
    if (!st) st = mt_permute(left, dim, lperm, &lp);
    if (!st) st = mt_reshape(lp, 3, (int64_t[]){lro_size, lo_size, sum_size}, &l3);
    if (!st) st = mt_permute(right, dim, rperm, &rp);
    if (!st) st = mt_reshape(rp, 3, (int64_t[]){lro_size, sum_size, ro_size}, &r3);
    if (!st) st = mt_bmm(l3, r3, NULL, &prod);
    if (!st) st = mt_view(prod, o, osz, &v);
    if (!st) st = mt_permute(v, o, operm, result);
    mt_tensor_release(left); mt_tensor_release(right); mt_tensor_release(lp); mt_tensor_release(rp);
    mt_tensor_release(l3); mt_tensor_release(r3); mt_tensor_release(prod); mt_tensor_release(v);
    return st;
}

mt_status mt_einsum(const char *eq, int n, mt_tensor *const *ops, mt_tensor **result) {
    MT_PROFILE_ARRAY("einsum", MT_PROF_OP, n, ops);
    if (n < 1) return mt__error(MT_ERR_RUNTIME, "einsum(): must provide at least one operand");
    int len = (int)strlen(eq), arrow = -1;
    for (int i = 0; i + 1 < len; i++) if (eq[i] == '-' && eq[i + 1] == '>') { arrow = i; break; }
    int lhs_end = arrow >= 0 ? arrow : len;
    /* the operand terms */
    term_t *terms = calloc((size_t)n, sizeof(term_t));
    if (!terms) return mt__error(MT_ERR_OOM, "out of memory");
    mt_status st = MT_OK;
    int nterm = 0, b = 0;
    for (int i = 0; i <= lhs_end && !st; i++) {
        if (i < lhs_end && eq[i] != ',') continue;
        if (nterm >= n) { st = mt__error(MT_ERR_RUNTIME, "einsum(): fewer operands were provided than specified in the equation"); break; }
        st = parse_term(eq, b, i, nterm, &terms[nterm]);
        nterm++;
        b = i + 1;
    }
    if (!st && nterm < n) st = mt__error(MT_ERR_RUNTIME, "einsum(): more operands were provided than specified in the equation");
    /* label counts and the ellipsis width */
    int count[NLAB] = {0}, ell = 0;
    for (int k = 0; k < n && !st; k++) {
        term_t *t = &terms[k];
        int nl = t->nlab - t->has_ell;
        if (t->has_ell) {
            if (nl > ops[k]->ndim)
                st = mt__error(MT_ERR_RUNTIME, "einsum(): the number of subscripts in the equation (%d) is more than the "
                               "number of dimensions (%d) for operand %d", nl, ops[k]->ndim, k);
            else if (ops[k]->ndim - nl > ell) ell = ops[k]->ndim - nl;
        } else if (nl != ops[k]->ndim) {
            st = mt__error(MT_ERR_RUNTIME, "einsum(): the number of subscripts in the equation (%d) does not match the "
                           "number of dimensions (%d) for operand %d and no ellipsis was given", nl, ops[k]->ndim, k);
        }
        for (int i = 0; i < t->nlab; i++) if (t->lab[i] >= 0) count[t->lab[i]]++;
    }
    /* canonical dims: output (explicit or implicit), then contracted labels */
    int pos[NLAB + MT_MAX_DIMS];
    for (int i = 0; i < NLAB + MT_MAX_DIMS; i++) pos[i] = -1;
    int total = 0, out_nd = 0;
    if (!st && arrow >= 0) {
        term_t ot;
        st = parse_term(eq, arrow + 2, len, -1, &ot);
        for (int i = 0; i < ot.nlab && !st; i++) {
            int id = ot.lab[i];
            if (id < 0) { for (int e = 0; e < ell; e++) pos[ELL_BASE + e] = total++; continue; }
            if (pos[id] >= 0) st = mt__error(MT_ERR_RUNTIME, "einsum(): output subscript %c appears more than once in the output", label_char(id));
            else if (!count[id]) st = mt__error(MT_ERR_RUNTIME, "einsum(): output subscript %c does not appear in the equation for any input operand", label_char(id));
            else pos[id] = total++;
        }
        if (!st && !ot.has_ell) /* ellipsis dims not in the output are summed */
            for (int e = 0; e < ell; e++) pos[ELL_BASE + e] = -2;
    } else if (!st) {
        for (int e = 0; e < ell; e++) pos[ELL_BASE + e] = total++;
        for (int id = 0; id < NLAB; id++) if (count[id] == 1) pos[id] = total++;
    }
    out_nd = total;
    for (int id = 0; id < NLAB; id++) if (count[id] && pos[id] < 0) pos[id] = total++;
    for (int e = 0; e < ell; e++) if (pos[ELL_BASE + e] == -2) pos[ELL_BASE + e] = total++;
    if (!st && total > MT_MAX_DIMS) st = mt__error(MT_ERR_RUNTIME, "einsum(): too many dimensions");
    /* each operand as a view over the canonical dims */
    mt_tensor **v = calloc((size_t)n, sizeof(mt_tensor *));
    int *ell_start = calloc((size_t)n, sizeof(int));
    if (!ell_start && !st) st = mt__error(MT_ERR_OOM, "out of memory");
    if (!v && !st) st = mt__error(MT_ERR_OOM, "out of memory");
    for (int k = 0; k < n && !st; k++) {
        term_t *t = &terms[k];
        int nd = ops[k]->ndim, lab[MT_MAX_DIMS], j = 0;
        int nell = nd - (t->nlab - t->has_ell);
        for (int i = 0; i < t->nlab; i++) {
            if (t->lab[i] < 0) { ell_start[k] = j; for (int e = 0; e < nell; e++) lab[j++] = ELL_BASE + (ell - nell) + e; }
            else lab[j++] = t->lab[i];
        }
        mt_tensor *x = ops[k];
        mt_tensor_retain(x);
        /* repeated subscripts: diagonal views */
        for (int a = 0; a < nd && !st; a++)
            for (int c = a + 1; c < nd && !st; c++) {
                if (lab[c] != lab[a]) continue;
                if (x->sizes[a] != x->sizes[c]) {
                    st = mt__error(MT_ERR_RUNTIME, "einsum(): subscript %c is repeated for operand %d but the sizes don't "
                                   "match, %lld != %lld", label_char(lab[a]), k, (long long)x->sizes[c], (long long)x->sizes[a]);
                    break;
                }
                mt_tensor *dg;
                if ((st = mt__diag_merge(x, a, c, &dg))) break;
                mt_tensor_release(x);
                x = dg;
                for (int m = c; m + 1 < nd; m++) lab[m] = lab[m + 1];
                nd--, c--;
            }
        /* permute present dims into canonical order, then unsqueeze the absent ones */
        int64_t perm[MT_MAX_DIMS];
        int np = 0;
        for (int p = 0; p < total; p++)
            for (int a = 0; a < nd; a++) if (pos[lab[a]] == p) perm[np++] = a;
        mt_tensor *y = NULL;
        if (!st) st = mt_permute(x, nd, perm, &y);
        mt_tensor_release(x);
        x = y;
        for (int p = 0, have = 0; p < total && !st; p++) {
            int present = 0;
            for (int a = 0; a < nd; a++) if (pos[lab[a]] == p) present = 1;
            if (!present) {
                mt_tensor *u;
                if ((st = mt_unsqueeze(x, have, &u))) break;
                mt_tensor_release(x);
                x = u;
            }
            have++;
        }
        if (st) mt_tensor_release(x);
        else v[k] = x;
    }
    /* broadcast check of the canonical shapes */
    int id_at[MT_MAX_DIMS];
    for (int id = 0; id < NLAB + MT_MAX_DIMS; id++) if (pos[id] >= 0 && pos[id] < MT_MAX_DIMS) id_at[pos[id]] = id;
    for (int p = 0; p < total && !st; p++) {
        int64_t s = 1;
        for (int k = 0; k < n && !st; k++) {
            int64_t z = v[k]->sizes[p];
            if (z != 1 && s != 1 && z != s) {
                if (id_at[p] < NLAB)
                    st = mt__error(MT_ERR_RUNTIME, "einsum(): subscript %c has size %lld for operand %d which does not "
                                   "broadcast with previously seen size %lld", label_char(id_at[p]), (long long)z, k, (long long)s);
                else
                    st = mt__error(MT_ERR_RUNTIME, "einsum(): dimension %d covered by ellipsis in operand %d has size %lld "
                                   "which does not broadcast with previously seen ellipsis with size %lld for the respective "
                                   "dimension", ell_start[k] + (id_at[p] - ELL_BASE) - (ell - (ops[k]->ndim - (terms[k].nlab - 1))),
                                   k, (long long)z, (long long)s);
            }
            if (z != 1) s = z;
        }
    }
    mt_tensor *r = NULL;
    if (!st && n == 1) {
        r = v[0], v[0] = NULL;
        int64_t dims[MT_MAX_DIMS];
        int nsum = 0;
        for (int p = out_nd; p < total; p++) dims[nsum++] = p;
        if (nsum) {
            mt_tensor *s;
            st = mt_reduce(MT_RED_SUM, r, nsum, dims, 0, -1, NULL, &s);
            mt_tensor_release(r);
            r = st ? NULL : s;
        }
    } else if (!st) {
        int dim_counts[MT_MAX_DIMS] = {0};
        for (int p = out_nd; p < total; p++)
            for (int k = 0; k < n; k++) dim_counts[p] += v[k]->sizes[p] != 1;
        r = v[0], v[0] = NULL;
        for (int k = 1; k < n && !st; k++) {
            mt_tensor *bk = v[k];
            int64_t dims[MT_MAX_DIMS];
            int nsum = 0;
            for (int p = out_nd; p < total && !st; p++) {
                int64_t d = p;
                if (r->sizes[p] != 1 && bk->sizes[p] != 1) {
                    if (--dim_counts[p] == 1) dims[nsum++] = p, dim_counts[p] = 0;
                } else if (dim_counts[p] == 1) {
                    if (r->sizes[p] != 1) { st = sum_keep(&r, 1, &d); dim_counts[p] = 0; }
                    else if (bk->sizes[p] != 1) { st = sum_keep(&v[k], 1, &d); bk = v[k]; dim_counts[p] = 0; }
                }
            }
            mt_tensor *nr = NULL;
            if (!st) st = sumproduct_pair(r, bk, nsum, dims, &nr);
            mt_tensor_release(r);
            r = st ? NULL : nr;
        }
        if (!st && total > out_nd) { /* the contracted dims are all size 1 now */
            mt_tensor *s;
            st = mt_view(r, out_nd, r->sizes, &s);
            mt_tensor_release(r);
            r = st ? NULL : s;
        }
    }
    for (int k = 0; v && k < n; k++) mt_tensor_release(v[k]);
    free(v);
    free(ell_start);
    free(terms);
    if (st) { mt_tensor_release(r); return st; }
    *result = r;
    return MT_OK;
}

/* tensordot: a's free dims x b's free dims, contracting dims_a[i] with dims_b[i] by one mm */
mt_status mt_tensordot(mt_tensor *a, mt_tensor *b, int n, const int64_t *dims_a, const int64_t *dims_b, mt_tensor **result) {
    MT_PROFILE("tensordot", a, b);
    if (a->dtype != b->dtype) return mt__error(MT_ERR_RUNTIME, "both inputs should have same dtype");
    int ca[MT_MAX_DIMS] = {0}, cb[MT_MAX_DIMS] = {0};
    int64_t da[MT_MAX_DIMS], db[MT_MAX_DIMS];
    mt_tensor *x = a, *y = b;
    mt_tensor_retain(x);
    mt_tensor_retain(y);
    mt_status st = MT_OK;
    int64_t csize = 1;
    for (int i = 0; i < n && !st; i++) {
        int64_t d1 = dims_a[i], d2 = dims_b[i];
        if ((st = mt__wrap_dim(&d1, a->ndim)) || (st = mt__wrap_dim(&d2, b->ndim))) break;
        int64_t s1 = a->sizes[d1], s2 = b->sizes[d2];
        /* a size-1 side broadcasts: the other side is summed over that dim */
        if (s2 == 1) st = sum_keep(&x, 1, &d1);
        else if (s1 == 1) st = sum_keep(&y, 1, &d2);
        else if (s1 != s2)
            st = mt__error(MT_ERR_RUNTIME, "contracted dimensions need to match, but first has size %lld in dim %lld "
                           "and second has size %lld in dim %lld", (long long)s1, (long long)dims_a[i],
                           (long long)s2, (long long)dims_b[i]);
        else csize = mt__wmul(csize, s1);
    }
    /* repeats after the sizes, a's list first, as PyTorch; a list without repeats fits da/db */
    for (int side = 0; side < 2 && !st; side++)
        for (int i = 0; i < n && !st; i++) {
            int64_t d = (side ? dims_b : dims_a)[i];
            mt__wrap_dim(&d, side ? b->ndim : a->ndim);
            int *seen = side ? cb : ca;
            if (seen[d]) st = mt__error(MT_ERR_RUNTIME, "dim %lld appears multiple times in the list of dims", (long long)d);
            else seen[d] = 1, (side ? db : da)[i] = d;
        }
    int64_t pa[MT_MAX_DIMS], pb[MT_MAX_DIMS], rs[MT_MAX_DIMS];
    int na = 0, nb = 0, nr = 0;
    int64_t s1 = 1, s2 = 1;
    int rank = a->ndim - n + b->ndim - n; /* the free dims of both (the lists have no repeats now) */
    if (!st && rank > MT_MAX_DIMS)
        st = mt__error(MT_ERR_RUNTIME, "tensors with more than %d dimensions are not supported (got %d)", MT_MAX_DIMS, rank);
    if (st) { mt_tensor_release(x); mt_tensor_release(y); return st; }
    for (int d = 0; d < a->ndim; d++) if (!ca[d]) pa[na++] = d, rs[nr++] = x->sizes[d], s1 = mt__wmul(s1, x->sizes[d]);
    for (int i = 0; i < n; i++) pa[na++] = da[i], pb[nb++] = db[i];
    for (int d = 0; d < b->ndim; d++) if (!cb[d]) pb[nb++] = d, rs[nr++] = y->sizes[d], s2 = mt__wmul(s2, y->sizes[d]);
    mt_tensor *xp = NULL, *yp = NULL, *x2 = NULL, *y2 = NULL, *m = NULL;
    if (!st) st = mt_permute(x, a->ndim, pa, &xp);
    if (!st) st = mt_reshape(xp, 2, (int64_t[]){s1, csize}, &x2);
    if (!st) st = mt_permute(y, b->ndim, pb, &yp);
    if (!st) st = mt_reshape(yp, 2, (int64_t[]){csize, s2}, &y2);
    if (!st) st = mt_mm(x2, y2, NULL, &m);
    if (!st) st = mt_reshape(m, nr, rs, result);
    mt_tensor_release(x); mt_tensor_release(y); mt_tensor_release(xp); mt_tensor_release(yp);
    mt_tensor_release(x2); mt_tensor_release(y2); mt_tensor_release(m);
    return st;
}
