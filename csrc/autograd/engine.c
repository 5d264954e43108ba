/* engine.c — run backward: count dependencies per edge, execute each node once
 * after all its gradients have arrived (summed), highest sequence number first,
 * sum broadcast gradients back to each input's shape and cast to its dtype.
 *
 * Per-run state (dependency counts, gradient buffers) lives in the run, not in the
 * nodes, so a hook or a custom Function's backward may itself run backward (reentrant
 * checkpointing) on a graph that shares nodes with the outer one. Hooks and custom
 * Functions are reached through the autograd callback (mt__callback). */
#include <pthread.h>

#include "autograd.h"

/* runs are serialised across threads (AccumulateGrad writes .grad); the same thread may nest */
static pthread_mutex_t engine_lock;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static void engine_init(void) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&engine_lock, &a);
    pthread_mutexattr_destroy(&a);
}

typedef struct {
    mt_node *node;
    int deps;        /* incoming edges not delivered yet */
    int reach;       /* with targets: a target is reachable from here (or this is one) */
    mt_tensor **buf; /* [n_out] gradients summed per output */
} slot;

/* the nodes of one run, found by pointer through an open-addressing table */
typedef struct {
    slot *v;
    int n, cap;
    int *tab; /* slot index + 1, 0 = empty */
    int tcap;
} run_graph;

static unsigned hash_ptr(const void *p) {
    uint64_t x = (uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (unsigned)x;
}

static int find(const run_graph *g, const mt_node *n) {
    if (!g->tcap) return -1;
    for (unsigned h = hash_ptr(n) & (g->tcap - 1);; h = (h + 1) & (g->tcap - 1)) {
        int k = g->tab[h];
        if (!k) return -1;
        if (g->v[k - 1].node == n) return k - 1;
    }
}

static int rehash(run_graph *g, int tcap) {
    int *tab = calloc(tcap, sizeof *tab);
    if (!tab) return 0;
    for (int i = 0; i < g->n; i++) {
        unsigned h = hash_ptr(g->v[i].node) & (tcap - 1);
        while (tab[h]) h = (h + 1) & (tcap - 1);
        tab[h] = i + 1;
    }
    free(g->tab);
    g->tab = tab;
    g->tcap = tcap;
    return 1;
}

/* a new slot for n (not yet present); -1 when out of memory */
static int add(run_graph *g, mt_node *n) {
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 64;
        slot *v = realloc(g->v, cap * sizeof *v);
        if (!v) return -1;
        g->v = v;
        g->cap = cap;
    }
    if (2 * (g->n + 1) > g->tcap && !rehash(g, g->tcap ? g->tcap * 2 : 128)) return -1;
    mt_tensor **buf = calloc(n->n_out ? n->n_out : 1, sizeof *buf);
    if (!buf) return -1;
    int i = g->n++;
    g->v[i] = (slot){n, 0, 0, buf};
    unsigned h = hash_ptr(n) & (g->tcap - 1);
    while (g->tab[h]) h = (h + 1) & (g->tcap - 1);
    g->tab[h] = i + 1;
    return i;
}

static void clear_bufs(slot *s) {
    for (int k = 0; k < s->node->n_out; k++) { mt_tensor_release(s->buf[k]); s->buf[k] = NULL; }
}

typedef struct {
    int *v;
    int n, cap;
} intvec;

static int ipush(intvec *a, int x) {
    if (a->n == a->cap) {
        int cap = a->cap ? a->cap * 2 : 64;
        int *p = realloc(a->v, cap * sizeof *p);
        if (!p) return 0;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 1;
}

/* max-heap of slots on seq: later nodes run first, as in PyTorch */
static int heap_push(intvec *h, const run_graph *g, int x) {
    if (!ipush(h, x)) return 0;
    int i = h->n - 1;
    while (i > 0 && g->v[h->v[(i - 1) / 2]].node->seq < g->v[h->v[i]].node->seq) {
        int t = h->v[i]; h->v[i] = h->v[(i - 1) / 2]; h->v[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
    return 1;
}

static int heap_pop(intvec *h, const run_graph *g) {
    int top = h->v[0];
    h->v[0] = h->v[--h->n];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && g->v[h->v[l]].node->seq > g->v[h->v[m]].node->seq) m = l;
        if (r < h->n && g->v[h->v[r]].node->seq > g->v[h->v[m]].node->seq) m = r;
        if (m == i) break;
        int t = h->v[i]; h->v[i] = h->v[m]; h->v[m] = t;
        i = m;
    }
    return top;
}

/* grad summed/viewed to meta's shape and cast to its dtype (new reference) */
mt_status mt__conform(mt_tensor *g, const mt_meta *m, mt_tensor **out) {
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
    MT_DROP(*slot);
    *slot = sum;
    return MT_OK;
}

static mt_status zeros_of(const mt_meta *m, mt_tensor **out) {
    MT_TRY(mt_empty(m->ndim, m->sizes, m->dtype, MT_CPU, out));
    return mt_fill(*out, 0, 0, MT_SCALAR_INT);
}

/* grads[k] replaced by the callback's non-NULL outputs */
static mt_status run_callback(void *handle, int kind, mt_node *n, int nin, mt_tensor **in, int nrep, mt_tensor **rep) {
    mt_tensor *small[8] = {0}, **out = nrep <= 8 ? small : calloc(nrep, sizeof *out);
    if (!out) return mt__error(MT_ERR_OOM, "out of memory in the autograd engine");
    mt_status st = mt__callback(handle, kind, n, nin, in, nrep, out);
    for (int k = 0; k < nrep; k++) {
        if (!out[k]) continue;
        if (st) { mt_tensor_release(out[k]); continue; }
        mt_tensor_release(rep[k]);
        rep[k] = out[k];
    }
    if (out != small) free(out);
    return st;
}

/* Run node n on its summed output gradients (zeros for outputs that got none, unless the
 * node takes them as missing); outg[n_next] receives each input's gradient (or NULL),
 * after the node's pre-hooks and before its post-hooks. */
static mt_status apply_node(mt_node *n, mt_tensor **buf, mt_tensor **outg) {
    MT_PROFILE_ARRAY(n->name, MT_PROF_NODE, 0, NULL);
    mt_tensor *small_in[8];
    mt_tensor **gin = n->n_out <= 8 ? small_in : malloc(n->n_out * sizeof *gin);
    if (!gin) return mt__error(MT_ERR_OOM, "out of memory in the autograd engine");
    mt_status st = MT_OK;
    if (n->handle && (n->hook_flags & MT_HOOK_PRE)) st = run_callback(n->handle, MT_CB_NODE_PRE, n, n->n_out, buf, n->n_out, buf);
    for (int k = 0; k < n->n_out && !st; k++)
        if (!buf[k] && !n->variable && !n->no_materialize) st = zeros_of(&n->out_meta[k], &buf[k]);
    for (int k = 0; k < n->n_out; k++) gin[k] = buf[k];
    if (!st) st = n->apply(n, gin, outg);
    if (!st && n->handle && (n->hook_flags & MT_HOOK_POST)) {
        int m = n->n_next + n->n_out;
        mt_tensor **all = malloc(m * sizeof *all);
        if (!all) st = mt__error(MT_ERR_OOM, "out of memory in the autograd engine");
        else {
            memcpy(all, outg, n->n_next * sizeof *all);
            memcpy(all + n->n_next, gin, n->n_out * sizeof *all);
            st = run_callback(n->handle, MT_CB_NODE_POST, n, m, all, n->n_next, outg);
            free(all);
        }
    }
    if (gin != small_in) free(gin);
    return st;
}

/* anomaly mode: PyTorch's error for a backward that produced NaN */
static mt_status check_nan(mt_node *n, mt_tensor **outg) {
    for (int e = 0; e < n->n_next; e++) {
        mt_tensor *g = outg[e], *isnan = NULL, *any = NULL;
        if (!g || !mt__is_differentiable(g->dtype)) continue;
        double f = 0;
        int64_t i = 0;
        int prev = mt__grad_push(0);
        mt_status st = mt_unary(MT_OP_ISNAN, g, NULL, &isnan);
        if (!st) st = mt_reduce(MT_RED_ANY, isnan, 0, NULL, 0, -1, NULL, &any);
        if (!st) st = mt_item(any, &f, &i);
        mt__grad_pop(prev);
        mt_tensor_release(isnan);
        mt_tensor_release(any);
        if (st) return st;
        if (i || f) return mt__error(MT_ERR_RUNTIME, "Function '%s' returned nan values in its %dth output.", n->name, e);
    }
    return MT_OK;
}

/* leaf or non-leaf target of backward(inputs=...): its .grad accumulates like a leaf's */
static mt_status accumulate_into(mt_tensor *t, mt_tensor *g) {
    mt_tensor *r;
    if (!t->grad) {
        MT_TRY(mt__first_grad(t, g, &r));
    } else {
        MT_TRY(mt_binary(MT_OP_ADD, t->grad, g, 1, NULL, &r));
        mt_tensor_release(t->grad);
    }
    t->grad = r;
    return MT_OK;
}

/* Run the graph behind roots with root gradients grads. With ninputs > 0 only what leads to
 * inputs runs, and the gradients reaching inputs[i] are returned in input_grads[i] (new
 * references, NULL if unreached); accumulate = 1 also writes them into .grad (backward). */
mt_status mt_backward(int nroots, mt_tensor *const *roots, mt_tensor *const *grads, int retain_graph,
                      int create_graph, int ninputs, mt_tensor *const *inputs, mt_tensor **input_grads,
                      int accumulate) {
    mt_status st = MT_OK;
    run_graph g = {0};
    intvec ready = {0}, stack = {0};
    if (nroots < 0 || ninputs < 0 || (nroots && (!roots || !grads)) || (ninputs && (!inputs || !input_grads)))
        return mt__error(MT_ERR_VALUE, "mt_backward: negative counts or NULL arrays");
    for (int i = 0; i < ninputs; i++) input_grads[i] = NULL;
    for (int i = 0; i < ninputs; i++)
        if (!mt__requires_grad(inputs[i]))
            return mt__error(MT_ERR_RUNTIME, "One of the differentiated Tensors does not require grad");
    for (int i = 0; i < nroots; i++) {
        if (!mt__requires_grad(roots[i]))
            return mt__error(MT_ERR_RUNTIME, "element %d of tensors does not require grad and does not have a grad_fn", i);
        if (!grads[i]) return mt__error(MT_ERR_RUNTIME, "grad can be implicitly created only for scalar outputs");
        /* the engine's kernels trust gradients to have their outputs' shapes */
        if (grads[i]->ndim != roots[i]->ndim ||
            memcmp(grads[i]->sizes, roots[i]->sizes, (size_t)roots[i]->ndim * sizeof(int64_t))) {
            char a[512], b[512];
            return mt__error(MT_ERR_RUNTIME, "Mismatch in shape: grad_output[%d] has a shape of torch.Size(%s) and "
                             "output[%d] has a shape of torch.Size(%s).", i,
                             mt__fmt_sizes(a, sizeof a, grads[i]->ndim, grads[i]->sizes), i,
                             mt__fmt_sizes(b, sizeof b, roots[i]->ndim, roots[i]->sizes));
        }
        if (grads[i]->device != roots[i]->device) /* ... and their device: a meta gradient has no data */
            return mt__error(MT_ERR_RUNTIME, "invalid gradient at index %d - expected device %s but got %s", i,
                             mt__device_name(roots[i]->device), mt__device_name(grads[i]->device));
    }
    for (int i = 0; i < ninputs; i++) MT_TRY(mt__sync_view(inputs[i]));
    for (int i = 0; i < nroots; i++) MT_TRY(mt__sync_view(roots[i]));
    /* targets[i]: where inputs[i]'s gradient arrives; root_edges[i]: where root i's gradient goes */
    mt_edge *targets = malloc((ninputs + nroots + 1) * sizeof *targets), *root_edges = targets + ninputs;
    mt_tensor **outg = NULL, *leaf = NULL; /* the running AccumulateGrad's leaf */
    if (!targets) return mt__error(MT_ERR_OOM, "out of memory in the autograd engine");
    for (int i = 0; i < ninputs; i++) {
        mt_tensor *t = inputs[i];
        targets[i].node = t->grad_fn ? t->grad_fn : t->grad_acc;
        targets[i].input_nr = t->grad_fn ? t->output_nr : 0;
    }
    pthread_once(&engine_once, engine_init);
    pthread_mutex_lock(&engine_lock);
    int prev_mode = mt__grad_push(create_graph);
    for (int i = 0; i < nroots; i++) {
        mt_tensor *r = roots[i];
        if (r->grad_fn) { root_edges[i].node = r->grad_fn; root_edges[i].input_nr = r->output_nr; continue; }
        root_edges[i].node = r->grad_acc;
        root_edges[i].input_nr = 0;
        if (r->grad_acc) continue;
        /* a leaf nobody used: its gradient is the root gradient itself */
        if (accumulate && !ninputs && (st = accumulate_into(r, grads[i]))) goto out;
        for (int k = 0; k < ninputs; k++)
            if (inputs[k] == r) {
                mt_tensor_retain(grads[i]);
                input_grads[k] = grads[i];
                if (accumulate && (st = accumulate_into(r, grads[i]))) goto out;
            }
    }
    /* discover the graph and count incoming edges */
    int max_next = 1;
    for (int i = 0; i < nroots; i++) {
        mt_node *n = root_edges[i].node;
        if (n && find(&g, n) < 0) {
            int k = add(&g, n);
            if (k < 0 || !ipush(&stack, k)) goto oom;
        }
    }
    while (stack.n) {
        mt_node *n = g.v[stack.v[--stack.n]].node;
        if (n->n_next > max_next) max_next = n->n_next;
        for (int e = 0; e < n->n_next; e++) {
            mt_node *m = n->next[e].node;
            if (!m) continue;
            int k = find(&g, m);
            if (k < 0) {
                if ((k = add(&g, m)) < 0 || !ipush(&stack, k)) goto oom;
            }
            g.v[k].deps++;
        }
    }
    if (!(outg = calloc(max_next, sizeof *outg))) goto oom;
    if (ninputs) { /* reach: walk a topological order backwards */
        int *deps = malloc(g.n * sizeof *deps);
        if (!deps) goto oom;
        for (int i = 0; i < g.n; i++) deps[i] = g.v[i].deps;
        for (int i = 0; i < ninputs; i++) {
            int k = targets[i].node ? find(&g, targets[i].node) : -1;
            if (k >= 0) g.v[k].reach = 1;
        }
        stack.n = 0;
        for (int i = 0; i < g.n; i++)
            if (!deps[i] && !ipush(&stack, i)) { free(deps); goto oom; }
        for (int q = 0; q < stack.n; q++) {
            mt_node *n = g.v[stack.v[q]].node;
            for (int e = 0; e < n->n_next; e++) {
                if (!n->next[e].node) continue;
                int k = find(&g, n->next[e].node);
                if (--deps[k] == 0 && !ipush(&stack, k)) { free(deps); goto oom; }
            }
        }
        free(deps);
        for (int q = stack.n - 1; q >= 0; q--) {
            slot *s = &g.v[stack.v[q]];
            for (int e = 0; e < s->node->n_next && !s->reach; e++)
                if (s->node->next[e].node) s->reach = g.v[find(&g, s->node->next[e].node)].reach;
        }
        stack.n = 0;
    }
    /* seed the root gradients */
    for (int i = 0; i < nroots; i++) {
        if (!root_edges[i].node) continue;
        slot *s = &g.v[find(&g, root_edges[i].node)];
        if ((st = add_into(&s->buf[root_edges[i].input_nr], grads[i]))) goto out;
    }
    for (int i = 0; i < g.n; i++)
        if (g.v[i].deps == 0 && !heap_push(&ready, &g, i)) goto oom;
    while (ready.n) {
        int si = heap_pop(&ready, &g);
        slot *s = &g.v[si];
        mt_node *n = s->node;
        int have = 0;
        for (int k = 0; k < n->n_out; k++) have |= s->buf[k] != NULL;
        int is_target = 0;
        for (int k = 0; k < ninputs; k++) is_target |= targets[k].node == n;
        mt_tensor_release(leaf);
        leaf = mt__acc_variable(n); /* held while its node runs: a leaf view may be freed meanwhile */
        mt_tensor *v = leaf;
        if (have) {
            /* tensor hooks (on the summed gradient), then retain_grad, then captures */
            if (v && v->handle && (v->hook_flags & MT_HOOK_TENSOR_PRE))
                st = run_callback(v->handle, MT_CB_TENSOR_PRE, n, 1, s->buf, 1, s->buf);
            else if (!v && n->handle && (n->hook_flags & MT_HOOK_TENSOR_PRE))
                st = run_callback(n->handle, MT_CB_TENSOR_PRE, n, n->n_out, s->buf, n->n_out, s->buf);
            if (st) goto out;
            for (int k = 0; k < n->n_out; k++)
                if (n->retained[k] && s->buf[k] && (st = accumulate_into(n->retained[k], s->buf[k]))) goto out;
            for (int k = 0; k < ninputs; k++) {
                mt_tensor *b = targets[k].node == n ? s->buf[targets[k].input_nr] : NULL;
                if (!b || input_grads[k]) continue;
                mt_tensor_retain(b);
                input_grads[k] = b;
                if (accumulate && !v && (st = accumulate_into(inputs[k], b))) goto out;
            }
        }
        int run = have;
        if (v) run = have && accumulate && (!ninputs || is_target);
        else if (ninputs) {
            run = 0;
            for (int e = 0; e < n->n_next && have && !run; e++)
                if (n->next[e].node) run = g.v[find(&g, n->next[e].node)].reach;
        }
        if (run) {
            st = apply_node(n, s->buf, outg);
            if (!st && mt__anomaly_enabled() == 2) st = check_nan(n, outg);
            if (st && mt__anomaly_enabled()) mt__callback(n->handle, MT_CB_ANOMALY_REPORT, n, 0, NULL, 0, NULL);
            if (!st && v && v->handle && (v->hook_flags & MT_HOOK_POST_ACCUMULATE))
                st = mt__callback(v->handle, MT_CB_POST_ACCUMULATE, n, 1, &v, 0, NULL);
            if (st) {
                for (int e = 0; e < n->n_next; e++) { mt_tensor_release(outg[e]); outg[e] = NULL; }
                goto out;
            }
        }
        clear_bufs(s);
        for (int e = 0; e < n->n_next; e++) {
            mt_edge *ed = &n->next[e];
            int k = ed->node ? find(&g, ed->node) : -1;
            if (k >= 0 && outg[e]) {
                mt_tensor *c = NULL;
                st = mt__conform(outg[e], &n->in_meta[e], &c);
                if (!st) st = add_into(&g.v[k].buf[ed->input_nr], c);
                if (!st) mt_tensor_release(c);
            }
            mt_tensor_release(outg[e]);
            outg[e] = NULL;
            if (st) {
                for (int r = e + 1; r < n->n_next; r++) { mt_tensor_release(outg[r]); outg[r] = NULL; }
                goto out;
            }
            if (k >= 0 && --g.v[k].deps == 0 && !heap_push(&ready, &g, k)) goto oom;
        }
        if (run && !retain_graph) mt__release_saved(n);
    }
    goto out;
oom:
    st = mt__error(MT_ERR_OOM, "out of memory in the autograd engine");
out:
    mt_tensor_release(leaf);
    for (int i = 0; i < g.n; i++) {
        clear_bufs(&g.v[i]);
        free(g.v[i].buf);
    }
    free(g.v);
    free(g.tab);
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
