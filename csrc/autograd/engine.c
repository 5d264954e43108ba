/* engine.c — run backward: count dependencies per edge, execute each node once
 * after all its gradients have arrived (summed), highest sequence number first,
 * sum broadcast gradients back to each input's shape and cast to its dtype. */
#include <pthread.h>

#include "autograd.h"

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER; /* node scratch fields: one run at a time */

typedef struct {
    mt_node **v;
    int n, cap;
} nodevec;

static int push(nodevec *a, mt_node *x) {
    if (a->n == a->cap) {
        int cap = a->cap ? a->cap * 2 : 64;
        mt_node **p = realloc(a->v, cap * sizeof *p);
        if (!p) return 0;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 1;
}

/* max-heap on seq: later nodes run first, as in PyTorch */
static int heap_push(nodevec *h, mt_node *x) {
    if (!push(h, x)) return 0;
    int i = h->n - 1;
    while (i > 0 && h->v[(i - 1) / 2]->seq < h->v[i]->seq) {
        mt_node *t = h->v[i]; h->v[i] = h->v[(i - 1) / 2]; h->v[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
    return 1;
}

static mt_node *heap_pop(nodevec *h) {
    mt_node *top = h->v[0];
    h->v[0] = h->v[--h->n];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->v[l]->seq > h->v[m]->seq) m = l;
        if (r < h->n && h->v[r]->seq > h->v[m]->seq) m = r;
        if (m == i) break;
        mt_node *t = h->v[i]; h->v[i] = h->v[m]; h->v[m] = t;
        i = m;
    }
    return top;
}

/* grad summed/viewed to meta's shape and cast to its dtype (new reference) */
static mt_status conform(mt_tensor *g, const mt_meta *m, mt_tensor **out) {
    mt_tensor *cur = g;
    mt_tensor_retain(cur);
    if (cur->ndim != m->ndim || memcmp(cur->sizes, m->sizes, m->ndim * sizeof(int64_t))) {
        int64_t dims[MT_MAX_DIMS];
        int nd = 0, lead = cur->ndim - m->ndim;
        if (lead < 0) { mt_tensor_release(cur); return mt__error(MT_ERR_RUNTIME, "autograd: gradient has fewer dims than its input"); }
        for (int d = 0; d < cur->ndim; d++)
            if (d < lead || (m->sizes[d - lead] == 1 && cur->sizes[d] != 1)) dims[nd++] = d;
        mt_tensor *r = NULL, *v = NULL;
        mt_status st = nd ? mt_reduce(MT_RED_SUM, cur, nd, dims, 1, -1, NULL, &r) : (mt_tensor_retain(cur), r = cur, MT_OK);
        if (!st) st = mt_reshape(r, m->ndim, m->sizes, &v);
        mt_tensor_release(r);
        mt_tensor_release(cur);
        if (st) return st;
        cur = v;
    }
    if (cur->dtype != m->dtype) {
        mt_tensor *c;
        mt_status st = mt_to_dtype(cur, m->dtype, 0, &c);
        mt_tensor_release(cur);
        if (st) return st;
        cur = c;
    }
    *out = cur;
    return MT_OK;
}

static mt_status add_into(mt_tensor **slot, mt_tensor *g) {
    if (!*slot) {
        mt_tensor_retain(g);
        *slot = g;
        return MT_OK;
    }
    mt_tensor *sum;
    MT_TRY(mt_binary(MT_OP_ADD, *slot, g, 1, NULL, &sum));
    mt_tensor_release(*slot);
    *slot = sum;
    return MT_OK;
}

static mt_status zeros_of(const mt_meta *m, mt_tensor **out) {
    MT_TRY(mt_empty(m->ndim, m->sizes, m->dtype, MT_CPU, out));
    return mt_fill(*out, 0, 0, MT_SCALAR_INT);
}

/* Run the graph behind roots with root gradients grads (NULL entries: ones for scalars).
 * capture: if ninputs > 0, the gradients reaching inputs[i] are returned in input_grads[i]
 * (new references, NULL if unreached) and, unless accumulate, nothing else is written. */
static int any_buf(const mt_node *n) {
    for (int k = 0; k < n->n_out; k++) if (n->buf[k]) return 1;
    return 0;
}

static void clear_bufs(mt_node *n) {
    for (int k = 0; k < n->n_out; k++) { mt_tensor_release(n->buf[k]); n->buf[k] = NULL; }
}

/* Run node n on its summed output gradients (zeros for outputs that got none);
 * outg[n_next] receives the gradient for each input (new references or NULL). */
static mt_status apply_node(mt_node *n, mt_tensor **outg) {
    mt_tensor *small_in[4], *small_made[4];
    mt_tensor **gin = n->n_out <= 4 ? small_in : malloc(2 * n->n_out * sizeof *gin);
    if (!gin) return mt__error(MT_ERR_OOM, "out of memory in the autograd engine");
    mt_tensor **made = n->n_out <= 4 ? small_made : gin + n->n_out;
    mt_status st = MT_OK;
    for (int k = 0; k < n->n_out; k++) {
        gin[k] = n->buf[k];
        made[k] = NULL;
        if (!gin[k] && !n->variable && !st && !(st = zeros_of(&n->out_meta[k], &made[k]))) gin[k] = made[k];
    }
    if (!st) st = n->apply(n, gin, outg);
    for (int k = 0; k < n->n_out; k++) mt_tensor_release(made[k]);
    if (gin != small_in) free(gin);
    return st;
}

/* Run the graph behind roots with root gradients grads (NULL entries: ones for scalars).
 * capture: if ninputs > 0, the gradients reaching inputs[i] are returned in input_grads[i]
 * (new references, NULL if unreached) and, unless accumulate, nothing else is written. */
mt_status mt_backward(int nroots, mt_tensor *const *roots, mt_tensor *const *grads, int retain_graph,
                      int create_graph, int ninputs, mt_tensor *const *inputs, mt_tensor **input_grads,
                      int accumulate) {
    mt_status st = MT_OK;
    nodevec all = {0}, ready = {0}, stack = {0};
    for (int i = 0; i < ninputs; i++) input_grads[i] = NULL;
    for (int i = 0; i < ninputs; i++)
        if (!mt__requires_grad(inputs[i]))
            return mt__error(MT_ERR_RUNTIME, "One of the differentiated Tensors does not require grad");
    for (int i = 0; i < nroots; i++) {
        if (!mt__requires_grad(roots[i]))
            return mt__error(MT_ERR_RUNTIME, "element %d of tensors does not require grad and does not have a grad_fn", i);
    }
    /* targets[i]: where inputs[i]'s gradient arrives; root_edges[i]: where root i's gradient goes */
    mt_edge *targets = malloc((ninputs + nroots + 1) * sizeof *targets), *root_edges = targets + ninputs;
    mt_tensor **outg = NULL;
    if (!targets) return mt__error(MT_ERR_OOM, "out of memory in the autograd engine");
    for (int i = 0; i < ninputs; i++) {
        mt_tensor *t = inputs[i];
        targets[i].node = t->grad_fn ? t->grad_fn : t->grad_acc;
        targets[i].input_nr = t->grad_fn ? t->output_nr : 0;
    }
    pthread_mutex_lock(&engine_lock);
    int prev_mode = mt__grad_push(create_graph);
    /* leaves given as roots get an accumulator to land in */
    for (int i = 0; i < nroots; i++) {
        mt_tensor *r = roots[i];
        if (r->grad_fn) { root_edges[i].node = r->grad_fn; root_edges[i].input_nr = r->output_nr; }
        else {
            root_edges[i].node = r->grad_acc;
            root_edges[i].input_nr = 0;
            if (!r->grad_acc) { /* a leaf nobody used: its gradient is the root gradient itself */
                if (accumulate && (!ninputs)) {
                    mt_tensor *g = grads[i];
                    if (!g) { st = mt__error(MT_ERR_RUNTIME, "grad can be implicitly created only for scalar outputs"); goto out; }
                    mt_tensor *c;
                    if ((st = mt_clone(g, &c))) goto out;
                    if (r->grad) { mt_tensor *s2; st = mt_binary(MT_OP_ADD, r->grad, c, 1, r->grad, &s2); mt_tensor_release(s2); mt_tensor_release(c); }
                    else r->grad = c;
                    if (st) goto out;
                }
                for (int k = 0; k < ninputs; k++)
                    if (inputs[k] == r && grads[i]) { mt_tensor_retain(grads[i]); input_grads[k] = grads[i]; }
                continue;
            }
        }
    }
    /* discover the graph and count incoming edges */
    int max_next = 1;
    for (int i = 0; i < nroots; i++) {
        mt_node *n = root_edges[i].node;
        if (n && n->deps == 0) {
            if (!push(&stack, n)) goto oom;
            n->deps = -1; /* -1: seen, no incoming edge yet */
        }
    }
    while (stack.n) {
        mt_node *n = stack.v[--stack.n];
        if (!push(&all, n)) goto oom;
        if (n->n_next > max_next) max_next = n->n_next;
        for (int e = 0; e < n->n_next; e++) {
            mt_node *m = n->next[e].node;
            if (!m) continue;
            if (m->deps == 0) {
                m->deps = 1;
                if (!push(&stack, m)) goto oom;
            } else {
                m->deps = m->deps < 0 ? 1 : m->deps + 1;
            }
        }
    }
    for (int i = 0; i < all.n; i++) if (all.v[i]->deps < 0) all.v[i]->deps = 0;
    if (!(outg = calloc(max_next, sizeof *outg))) goto oom;
    /* seed the root gradients */
    for (int i = 0; i < nroots; i++) {
        mt_node *n = root_edges[i].node;
        if (!n) continue;
        mt_tensor *g = grads[i];
        if (!g) { st = mt__error(MT_ERR_RUNTIME, "grad can be implicitly created only for scalar outputs"); goto out; }
        if ((st = add_into(&n->buf[root_edges[i].input_nr], g))) goto out;
    }
    for (int i = 0; i < all.n; i++)
        if (all.v[i]->deps == 0 && !heap_push(&ready, all.v[i])) goto oom;
    while (ready.n) {
        mt_node *n = heap_pop(&ready);
        int have = any_buf(n);
        /* captured for autograd.grad / retain_grad */
        for (int k = 0; k < ninputs; k++)
            if (targets[k].node == n && n->buf[targets[k].input_nr] && !input_grads[k]) {
                mt_tensor_retain(n->buf[targets[k].input_nr]);
                input_grads[k] = n->buf[targets[k].input_nr];
            }
        for (int k = 0; k < n->n_out; k++)
            if (n->retained[k] && n->buf[k] && accumulate) {
                mt_tensor *c;
                if ((st = mt_clone(n->buf[k], &c))) goto out;
                mt_tensor_release(n->retained[k]->grad);
                n->retained[k]->grad = c;
            }
        int run = have;
        if (n->variable) { /* AccumulateGrad: only for backward(), and only the listed leaves if any */
            run = have && accumulate;
            if (run && ninputs) {
                run = 0;
                for (int k = 0; k < ninputs; k++) run |= targets[k].node == n;
            }
        }
        if (run && (st = apply_node(n, outg))) goto out;
        clear_bufs(n);
        for (int e = 0; e < n->n_next; e++) {
            mt_edge *ed = &n->next[e];
            if (ed->node && outg[e]) {
                mt_tensor *c = NULL;
                st = conform(outg[e], &n->in_meta[e], &c);
                if (!st) st = add_into(&ed->node->buf[ed->input_nr], c);
                if (!st) mt_tensor_release(c);
            }
            mt_tensor_release(outg[e]);
            outg[e] = NULL;
            if (st) {
                for (int r = e + 1; r < n->n_next; r++) { mt_tensor_release(outg[r]); outg[r] = NULL; }
                goto out;
            }
            if (ed->node && --ed->node->deps == 0 && !heap_push(&ready, ed->node)) goto oom;
        }
        if (!retain_graph) {
            n->released = 1;
            for (int k = 0; k < MT_NODE_SAVED; k++) { mt_tensor_release(n->saved[k]); n->saved[k] = NULL; }
        }
    }
    goto out;
oom:
    st = mt__error(MT_ERR_OOM, "out of memory in the autograd engine");
out:
    for (int i = 0; i < all.n; i++) {
        all.v[i]->deps = 0;
        clear_bufs(all.v[i]);
    }
    for (int i = 0; i < stack.n; i++) stack.v[i]->deps = 0;
    free(all.v);
    free(ready.v);
    free(stack.v);
    free(outg);
    free(targets);
    mt__grad_pop(prev_mode);
    pthread_mutex_unlock(&engine_lock);
    if (st)
        for (int i = 0; i < ninputs; i++) { mt_tensor_release(input_grads[i]); input_grads[i] = NULL; }
    return st;
}
