/* vision_kernels.h — the loops of torchvision's CPU operators, stamped once per dtype by vision.c
 * (T = float or double, SUF names the copy). Each follows torchvision 0.28's kernel statement by
 * statement (same operation order, same float type), so results are bit-identical to it; inputs
 * arrive contiguous and checked. */

/* bilinear sample at (y, x) of one H x W plane as roi_align's pre_calc / bilinear_interpolate; the
 * four corner weights and offsets, or all zero weights when the point lies outside */
static void SUF(bilinear_weights)(int height, int width, T y, T x, T *w, int *pos, int *valid) {
    /* !(in range) so that NaN takes this branch */
    if (!(y >= -1.0 && y <= height && x >= -1.0 && x <= width)) {
        w[0] = w[1] = w[2] = w[3] = 0;
        pos[0] = pos[1] = pos[2] = pos[3] = 0;
        *valid = 0;
        return;
    }
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int y_low = (int)y, x_low = (int)x, y_high, x_high;
    if (y_low >= height - 1) {
        y_high = y_low = height - 1;
        y = (T)y_low;
    } else {
        y_high = y_low + 1;
    }
    if (x_low >= width - 1) {
        x_high = x_low = width - 1;
        x = (T)x_low;
    } else {
        x_high = x_low + 1;
    }
    T ly = y - y_low, lx = x - x_low;
    T hy = (T)1. - ly, hx = (T)1. - lx;
    w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
    pos[0] = y_low * width + x_low;
    pos[1] = y_low * width + x_high;
    pos[2] = y_high * width + x_low;
    pos[3] = y_high * width + x_high;
    *valid = 1;
}

static void SUF(nms)(int64_t n, const T *b, const int64_t *order, uint8_t *suppressed, int64_t *keep,
                     int64_t *num_keep, double thr) {
    T *areas = malloc((size_t)(n ? n : 1) * sizeof(T));
    for (int64_t i = 0; i < n; i++) areas[i] = (b[i * 4 + 2] - b[i * 4]) * (b[i * 4 + 3] - b[i * 4 + 1]);
    int64_t k = 0;
    for (int64_t _i = 0; _i < n; _i++) {
        int64_t i = order[_i];
        if (suppressed[i]) continue;
        keep[k++] = i;
        T ix1 = b[i * 4], iy1 = b[i * 4 + 1], ix2 = b[i * 4 + 2], iy2 = b[i * 4 + 3], iarea = areas[i];
        for (int64_t _j = _i + 1; _j < n; _j++) {
            int64_t j = order[_j];
            if (suppressed[j]) continue;
            /* std::max(a, b) is (a < b) ? b : a, std::min(a, b) is (b < a) ? b : a: NaN handling follows */
            T xx1 = ix1 < b[j * 4] ? b[j * 4] : ix1, yy1 = iy1 < b[j * 4 + 1] ? b[j * 4 + 1] : iy1;
            T xx2 = b[j * 4 + 2] < ix2 ? b[j * 4 + 2] : ix2, yy2 = b[j * 4 + 3] < iy2 ? b[j * 4 + 3] : iy2;
            T w = (T)0 < xx2 - xx1 ? xx2 - xx1 : (T)0, h = (T)0 < yy2 - yy1 ? yy2 - yy1 : (T)0;
            T inter = w * h;
            T ovr = inter / (iarea + areas[j] - inter);
            if (ovr > thr) suppressed[j] = 1;
        }
    }
    free(areas);
    *num_keep = k;
}

/* the grid of roi_align / ps_roi_align for one roi: samples per bin in each direction. 1 (and an empty grid)
 * when they, or the samples of the whole roi, pass an int: a huge or NaN roi, a sampling_ratio past an int
 * (torchvision's int arithmetic overflows there); the op refuses those rois first (grids_fit) */
static int SUF(grid)(int64_t ratio, T roi_h, T roi_w, int64_t ph, int64_t pw, int *gh, int *gw) {
    double h = ratio > 0 ? (double)ratio : ceil(roi_h / (T)ph), w = ratio > 0 ? (double)ratio : ceil(roi_w / (T)pw);
    *gh = *gw = 0;
    if (!(fabs(h) <= INT32_MAX && fabs(w) <= INT32_MAX && fabs(h * w) * (double)ph * (double)pw <= INT32_MAX)) return 1;
    *gh = (int)h, *gw = (int)w;
    return 0;
}

/* the first roi whose grid does not fit (roi_align's extents, ps_roi_align's with ps), else -1 */
static int64_t SUF(grids_fit)(const T *rois, int64_t K, int64_t PH, int64_t PW, T scale, int64_t ratio, int aligned,
                              int ps) {
    for (int64_t n = 0; n < K; n++) {
        const T *r = rois + n * 5;
        T off = ps || aligned ? (T)0.5 : (T)0.0;
        T rw = (r[3] * scale - off) - (r[1] * scale - off), rh = (r[4] * scale - off) - (r[2] * scale - off);
        if (!ps && !aligned) {
            rw = rw < (T)1. ? (T)1. : rw;
            rh = rh < (T)1. ? (T)1. : rh;
        }
        int gh, gw;
        if (SUF(grid)(ratio, rh, rw, PH, PW, &gh, &gw)) return n;
    }
    return -1;
}

static void SUF(roi_align_fwd)(const T *in, const T *rois, int64_t K, int64_t C, int H, int W, int64_t PH, int64_t PW,
                               T scale, int64_t ratio, int aligned, T *out) {
    for (int64_t n = 0; n < K; n++) {
        const T *r = rois + n * 5;
        int b = (int)r[0];
        T off = aligned ? (T)0.5 : (T)0.0;
        T sw = r[1] * scale - off, sh = r[2] * scale - off, ew = r[3] * scale - off, eh = r[4] * scale - off;
        T rw = ew - sw, rh = eh - sh;
        if (!aligned) {  /* malformed rois forced to 1x1 */
            rw = rw < (T)1. ? (T)1. : rw;
            rh = rh < (T)1. ? (T)1. : rh;
        }
        T bh = rh / (T)PH, bw = rw / (T)PW;
        int gh, gw;
        SUF(grid)(ratio, rh, rw, PH, PW, &gh, &gw);
        const T count = (T)(gh * gw > 1 ? gh * gw : 1);
        int64_t npc = (int64_t)gh * gw * PH * PW;
        T *wts = malloc((size_t)(npc ? npc : 1) * 4 * sizeof(T));
        int *pos = malloc((size_t)(npc ? npc : 1) * 4 * sizeof(int));
        int64_t k = 0;
        for (int64_t ph = 0; ph < PH; ph++)
            for (int64_t pw = 0; pw < PW; pw++)
                for (int iy = 0; iy < gh; iy++) {
                    const T yy = sh + ph * bh + (T)(iy + .5f) * bh / (T)gh;
                    for (int ix = 0; ix < gw; ix++, k++) {
                        const T xx = sw + pw * bw + (T)(ix + .5f) * bw / (T)gw;
                        int valid;
                        SUF(bilinear_weights)(H, W, yy, xx, wts + 4 * k, pos + 4 * k, &valid);
                    }
                }
        for (int64_t c = 0; c < C; c++) {
            const T *x = in + ((int64_t)b * C + c) * H * W;
            T *o = out + (n * C + c) * PH * PW;
            k = 0;
            for (int64_t p = 0; p < PH * PW; p++) {
                T v = 0.;
                for (int s = 0; s < gh * gw; s++, k++) {
                    const T *w = wts + 4 * k;
                    const int *q = pos + 4 * k;
                    v += w[0] * x[q[0]] + w[1] * x[q[1]] + w[2] * x[q[2]] + w[3] * x[q[3]];
                }
                v /= count;
                o[p] = v;
            }
        }
        free(wts);
        free(pos);
    }
}

/* roi_align's and ps_roi_align's backward: one output element's gradient spread over its samples */
static void SUF(align_bwd_one)(T g, T *gi, int H, int W, T hstart, T wstart, T bh, T bw, int gh, int gw, T count) {
    for (int iy = 0; iy < gh; iy++) {
        const T y = hstart + (T)(iy + .5f) * bh / (T)gh;
        for (int ix = 0; ix < gw; ix++) {
            const T x = wstart + (T)(ix + .5f) * bw / (T)gw;
            T w[4];
            int pos[4], valid;
            SUF(bilinear_weights)(H, W, y, x, w, pos, &valid);
            if (!valid) continue;
            for (int q = 0; q < 4; q++) gi[pos[q]] += g * w[q] / count;
        }
    }
}

static void SUF(roi_align_bwd)(const T *g, const int64_t *gs, const T *rois, int64_t K, int64_t C, int H, int W,
                               int64_t PH, int64_t PW, T scale, int64_t ratio, int aligned, T *gin) {
    for (int64_t n = 0; n < K; n++) {
        const T *r = rois + n * 5;
        int b = (int)r[0];
        T off = aligned ? (T)0.5 : (T)0.0;
        T sw = r[1] * scale - off, sh = r[2] * scale - off, ew = r[3] * scale - off, eh = r[4] * scale - off;
        T rw = ew - sw, rh = eh - sh;
        if (!aligned) {
            rw = rw < (T)1. ? (T)1. : rw;
            rh = rh < (T)1. ? (T)1. : rh;
        }
        T bh = rh / (T)PH, bw = rw / (T)PW;
        int gh, gw;
        SUF(grid)(ratio, rh, rw, PH, PW, &gh, &gw);
        const T count = (T)(gh * gw);
        for (int64_t c = 0; c < C; c++)
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++)
                    SUF(align_bwd_one)(g[n * gs[0] + c * gs[1] + ph * gs[2] + pw * gs[3]],
                                       gin + ((int64_t)b * C + c) * H * W, H, W, sh + ph * bh, sw + pw * bw, bh, bw,
                                       gh, gw, count);
    }
}

static void SUF(ps_roi_align_fwd)(const T *in, const T *rois, int64_t K, int64_t C, int H, int W, int64_t PH,
                                  int64_t PW, T scale, int64_t ratio, T *out, int32_t *map) {
    int64_t CO = C / (PH * PW);
    for (int64_t n = 0; n < K; n++) {
        const T *r = rois + n * 5;
        int b = (int)r[0];
        T sw = r[1] * scale - (T)0.5, sh = r[2] * scale - (T)0.5, ew = r[3] * scale - (T)0.5,
          eh = r[4] * scale - (T)0.5;
        T rw = ew - sw, rh = eh - sh;
        T bh = rh / (T)PH, bw = rw / (T)PW;
        int gh, gw;
        SUF(grid)(ratio, rh, rw, PH, PW, &gh, &gw);
        const T count = (T)(gh * gw);
        int c_in = 0;
        for (int64_t co = 0; co < CO; co++)
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++, c_in++) {
                    int64_t index = ((n * CO + co) * PH + ph) * PW + pw;
                    T hstart = (T)ph * bh + sh, wstart = (T)pw * bw + sw;
                    const T *x = in + ((int64_t)b * C + c_in) * H * W;
                    T sum = 0;
                    for (int iy = 0; iy < gh; iy++) {
                        const T y = hstart + (T)(iy + .5f) * bh / (T)gh;
                        for (int ix = 0; ix < gw; ix++) {
                            const T xx = wstart + (T)(ix + .5f) * bw / (T)gw;
                            T w[4];
                            int pos[4], valid;
                            SUF(bilinear_weights)(H, W, y, xx, w, pos, &valid);
                            T val = valid ? (w[0] * x[pos[0]] + w[1] * x[pos[1]] + w[2] * x[pos[2]] + w[3] * x[pos[3]])
                                          : (T)0;
                            sum += val;
                        }
                    }
                    sum /= count;
                    out[index] = sum;
                    map[index] = c_in;
                }
    }
}

static void SUF(ps_roi_align_bwd)(const T *g, const int32_t *map, const T *rois, int64_t K, int64_t C, int H, int W,
                                  int64_t PH, int64_t PW, T scale, int64_t ratio, T *gin) {
    int64_t CO = C / (PH * PW);
    for (int64_t index = 0; index < K * CO * PH * PW; index++) {
        int64_t pw = index % PW, ph = (index / PW) % PH, n = index / PW / PH / CO;
        const T *r = rois + n * 5;
        int b = (int)r[0];
        T sw = r[1] * scale - (T)0.5, sh = r[2] * scale - (T)0.5, ew = r[3] * scale - (T)0.5,
          eh = r[4] * scale - (T)0.5;
        T rw = ew - sw, rh = eh - sh;
        T bh = rh / (T)PH, bw = rw / (T)PW;
        int gh, gw;
        SUF(grid)(ratio, rh, rw, PH, PW, &gh, &gw);
        SUF(align_bwd_one)(g[index], gin + ((int64_t)b * C + map[index]) * H * W, H, W, (T)ph * bh + sh,
                           (T)pw * bw + sw, bh, bw, gh, gw, (T)(gh * gw));
    }
}

static inline int SUF(clampi)(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* a pooling bin of roi_pool / ps_roi_pool: [hs, he) x [ws, we) */
static void SUF(pool_bin)(int64_t ph, int64_t pw, T bh, T bw, int sh, int sw, int hmax, int wmax, int *hs, int *he,
                          int *ws, int *we) {
    *hs = SUF(clampi)(mt__sat_int(floor((T)ph * bh)) + sh, 0, hmax);
    *ws = SUF(clampi)(mt__sat_int(floor((T)pw * bw)) + sw, 0, wmax);
    *he = SUF(clampi)(mt__sat_int(ceil((T)(ph + 1) * bh)) + sh, 0, hmax);
    *we = SUF(clampi)(mt__sat_int(ceil((T)(pw + 1) * bw)) + sw, 0, wmax);
}

/* roi_pool (ps = 0) and ps_roi_pool (ps = 1) forward; idx: argmax or channel mapping */
static void SUF(pool_fwd)(int ps, const T *in, const T *rois, int64_t K, int64_t C, int H, int W, int64_t PH,
                          int64_t PW, T scale, T *out, int32_t *idx) {
    int64_t CO = ps ? C / (PH * PW) : C;
    for (int64_t n = 0; n < K; n++) {
        const T *r = rois + n * 5;
        int b = (int)r[0];
        int sw = mt__sat_int(round(r[1] * scale)), sh = mt__sat_int(round(r[2] * scale));
        int ew = mt__sat_int(round(r[3] * scale)), eh = mt__sat_int(round(r[4] * scale));
        int extra = ps ? 0 : 1;  /* roi_pool counts the end pixel */
        int rw = ew - sw + extra > 1 ? ew - sw + extra : 1, rh = eh - sh + extra > 1 ? eh - sh + extra : 1;
        T bh = (T)rh / (T)PH, bw = (T)rw / (T)PW;
        for (int64_t ph = 0; ph < PH; ph++)
            for (int64_t pw = 0; pw < PW; pw++) {
                int hs, he, ws, we;
                /* ps_roi_pool's forward clips to H - 1 / W - 1 (its backward to H / W), as torchvision */
                SUF(pool_bin)(ph, pw, bh, bw, sh, sw, ps ? H - 1 : H, ps ? W - 1 : W, &hs, &he, &ws, &we);
                int empty = he <= hs || we <= ws;
                for (int64_t co = 0; co < CO; co++) {
                    int64_t index = ((n * CO + co) * PH + ph) * PW + pw;
                    int64_t c = ps ? (co * PH + ph) * PW + pw : co;
                    const T *x = in + ((int64_t)b * C + c) * H * W;
                    if (ps) {
                        T sum = 0;
                        for (int h = hs; h < he; h++)
                            for (int w = ws; w < we; w++) sum += x[h * W + w];
                        T area = (T)((he - hs) * (we - ws));
                        out[index] = empty ? (T)0 : sum / area;
                        idx[index] = (int32_t)c;
                    } else {
                        T maxval = empty ? (T)0 : (T)-FLT_MAX;
                        int maxidx = -1;
                        for (int h = hs; h < he; h++)
                            for (int w = ws; w < we; w++)
                                if (x[h * W + w] > maxval) {
                                    maxval = x[h * W + w];
                                    maxidx = h * W + w;
                                }
                        out[index] = maxval;
                        idx[index] = maxidx;
                    }
                }
            }
    }
}

static void SUF(pool_bwd)(int ps, const T *g, const int64_t *gs, const int32_t *idx, const T *rois, int64_t K,
                          int64_t C, int H, int W, int64_t PH, int64_t PW, T scale, T *gin) {
    int64_t CO = ps ? C / (PH * PW) : C;
    for (int64_t n = 0; n < K; n++) {
        const T *r = rois + n * 5;
        int b = (int)r[0];
        if (!ps) {
            for (int64_t c = 0; c < C; c++)
                for (int64_t ph = 0; ph < PH; ph++)
                    for (int64_t pw = 0; pw < PW; pw++) {
                        int a = idx[((n * C + c) * PH + ph) * PW + pw];
                        if (a != -1)
                            gin[((int64_t)b * C + c) * H * W + a] += g[n * gs[0] + c * gs[1] + ph * gs[2] + pw * gs[3]];
                    }
            continue;
        }
        /* ps_roi_pool's backward rounds with roundf, in float, as torchvision */
        int sw = mt__sat_int(roundf((float)(r[1] * scale))), sh = mt__sat_int(roundf((float)(r[2] * scale)));
        int ew = mt__sat_int(roundf((float)(r[3] * scale))), eh = mt__sat_int(roundf((float)(r[4] * scale)));
        int rw = ew - sw > 1 ? ew - sw : 1, rh = eh - sh > 1 ? eh - sh : 1;
        T bh = (T)rh / (T)PH, bw = (T)rw / (T)PW;
        for (int64_t ph = 0; ph < PH; ph++)
            for (int64_t pw = 0; pw < PW; pw++) {
                int hs, he, ws, we;
                SUF(pool_bin)(ph, pw, bh, bw, sh, sw, H, W, &hs, &he, &ws, &we);
                int empty = he <= hs || we <= ws;
                for (int64_t co = 0; co < CO; co++) {
                    int64_t index = ((n * CO + co) * PH + ph) * PW + pw;
                    T *gi = gin + ((int64_t)b * C + idx[index]) * H * W;
                    T area = (T)((he - hs) * (we - ws));
                    T d = empty ? (T)0 : g[index] / area;
                    for (int h = hs; h < he; h++)
                        for (int w = ws; w < we; w++) gi[h * W + w] += d;
                }
            }
    }
}

/* deform_conv2d's bilinear sample: zero outside, partial corners at the border */
static T SUF(deform_sample)(const T *in, int H, int W, T h, T w) {
    if (!(h > -1 && h < H && w > -1 && w < W)) return 0;  /* NaN too (torchvision's test lets it through) */
    int hl = (int)floor(h), wl = (int)floor(w), hh_ = hl + 1, wh = wl + 1;
    T lh = h - hl, lw = w - wl, hh = 1 - lh, hw = 1 - lw;
    T v1 = 0, v2 = 0, v3 = 0, v4 = 0;
    if (hl >= 0 && wl >= 0) v1 = in[hl * W + wl];
    if (hl >= 0 && wh <= W - 1) v2 = in[hl * W + wh];
    if (hh_ <= H - 1 && wl >= 0) v3 = in[hh_ * W + wl];
    if (hh_ <= H - 1 && wh <= W - 1) v4 = in[hh_ * W + wh];
    T w1 = hh * hw, w2 = hh * lw, w3 = lh * hw, w4 = lh * lw;
    return w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4;
}

/* deformable im2col over all B images: columns [C * KH * KW, B * OH * OW] */
static void SUF(deform_im2col)(const T *in, const T *offset, const T *mask, const dc_geom *g, T *col) {
    int64_t OHW = (int64_t)g->oh * g->ow, N = g->B * OHW, cpg = g->C / g->og;
    for (int64_t index = 0; index < g->C * N; index++) {
        int ox = (int)(index % g->ow), oy = (int)((index / g->ow) % g->oh);
        int64_t b = (index / OHW) % g->B, c = index / N;
        int64_t grp = c / cpg;
        T *cp = col + c * g->kh * g->kw * N + b * OHW + (int64_t)oy * g->ow + ox;
        const T *ip = in + (b * g->C + c) * g->H * g->W;
        const T *op = offset + (b * g->og + grp) * 2 * g->kh * g->kw * OHW;
        const T *mp = mask ? mask + (b * g->og + grp) * g->kh * g->kw * OHW : NULL;
        for (int i = 0; i < g->kh; i++)
            for (int j = 0; j < g->kw; j++) {
                int m = i * g->kw + j;
                int64_t at = (int64_t)oy * g->ow + ox;
                T mv = mp ? mp[m * OHW + at] : (T)1;
                const T oh = op[2 * m * OHW + at], ow = op[(2 * m + 1) * OHW + at];
                const T y = (oy * g->sh - g->ph) + i * g->dh + oh, x = (ox * g->sw - g->pw) + j * g->dw + ow;
                *cp = mv * SUF(deform_sample)(ip, g->H, g->W, y, x);
                cp += N;
            }
    }
}

static T SUF(coord_weight)(const T *im, int H, int W, T y, T x, int is_y) {
    int yl = (int)floor(y), xl = (int)floor(x), yh = yl + 1, xh = xl + 1;
    int vyl = 0 <= yl && yl < H, vyh = 0 <= yh && yh < H, vxl = 0 <= xl && xl < W, vxh = 0 <= xh && xh < W;
    T v_yx = (vyl && vxl) ? im[yl * W + xl] : (T)0, v_yX = (vyl && vxh) ? im[yl * W + xh] : (T)0;
    T v_Yx = (vyh && vxl) ? im[yh * W + xl] : (T)0, v_YX = (vyh && vxh) ? im[yh * W + xh] : (T)0;
    if (is_y) {
        T dx = x - xl;
        return dx * (v_YX - v_yX) + (1 - dx) * (v_Yx - v_yx);
    }
    T dy = y - yl;
    return dy * (v_YX - v_Yx) + (1 - dy) * (v_yX - v_yx);
}

/* deformable col2im (input gradient) and col2im_coord (offset and mask gradients) */
static void SUF(deform_col2im)(const T *col, const T *in, const T *offset, const T *mask, const dc_geom *g, T *gin,
                               T *goff, T *gmask) {
    int64_t OHW = (int64_t)g->oh * g->ow, N = g->B * OHW, cpg = g->C / g->og;
    for (int64_t index = 0; index < g->C * g->kh * g->kw * N; index++) {
        int ox = (int)(index % g->ow), oy = (int)((index / g->ow) % g->oh);
        int64_t b = (index / OHW) % g->B;
        int j = (int)((index / N) % g->kw), i = (int)((index / (N * g->kw)) % g->kh);
        int64_t c = index / (N * g->kw * g->kh), grp = c / cpg;
        const T *op = offset + (b * g->og + grp) * 2 * g->kh * g->kw * OHW;
        const T *mp = mask ? mask + (b * g->og + grp) * g->kh * g->kw * OHW : NULL;
        int m = i * g->kw + j;
        int64_t at = (int64_t)oy * g->ow + ox;
        const T oh = op[2 * m * OHW + at], ow = op[(2 * m + 1) * OHW + at];
        T mv = mp ? mp[m * OHW + at] : (T)1;
        const T y = (oy * g->sh - g->ph) + i * g->dh + oh, x = (ox * g->sw - g->pw) + j * g->dw + ow;
        if (!(y > -2 && y < g->H + 1 && x > -2 && x < g->W + 1)) continue;  /* no pixel within 1 (and NaN) */
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int yp = (int)y + dy, xp = (int)x + dx;
                if (0 <= yp && yp < g->H && 0 <= xp && xp < g->W && fabs(y - yp) < 1 && fabs(x - xp) < 1) {
                    T w = (1 - (T)fabs(y - yp)) * (1 - (T)fabs(x - xp));
                    gin[((b * g->C + c) * g->H + yp) * g->W + xp] += mv * w * col[index];
                }
            }
    }
    int64_t oc = 2 * g->kh * g->kw * g->og;
    for (int64_t index = 0; index < oc * N; index++) {
        T goff_v = 0, gmask_v = 0;
        int w = (int)(index % g->ow), h = (int)((index / g->ow) % g->oh);
        int w_w = (int)((index / (OHW * 2)) % g->kw), w_h = (int)((index / (OHW * 2 * g->kw)) % g->kh);
        int64_t c = (index / OHW) % oc, b = index / (OHW * oc);
        int64_t grp = c / (2 * g->kh * g->kw);
        int64_t step = g->kh * g->kw;
        const T *cp = col + grp * cpg * g->kh * g->kw * N;
        const T *ip = in + (b * g->og + grp) * cpg * g->H * g->W;
        const T *op = offset + (b * g->og + grp) * 2 * g->kh * g->kw * OHW;
        const T *mp = mask ? mask + (b * g->og + grp) * g->kh * g->kw * OHW : NULL;
        int64_t offc = c - grp * 2 * g->kh * g->kw;
        int is_y = offc % 2 == 0;
        for (int64_t cc = offc / 2; cc < cpg * g->kh * g->kw; cc += step) {
            int64_t pos = ((cc * g->B + b) * g->oh + h) * g->ow + w;
            int j = (int)((pos / N) % g->kw), i = (int)((pos / (N * g->kw)) % g->kh);
            int m = i * g->kw + j;
            int64_t at = (int64_t)h * g->ow + w;
            const T oh = op[2 * m * OHW + at], ow = op[(2 * m + 1) * OHW + at];
            T mv = mp ? mp[m * OHW + at] : (T)1;
            T y = (h * g->sh - g->ph) + i * g->dh + oh, x = (w * g->sw - g->pw) + j * g->dw + ow;
            /* floor() of a value far outside reads no pixel: every corner test fails (and NaN) */
            T wt = (y > -2 && y < g->H + 1 && x > -2 && x < g->W + 1) ? SUF(coord_weight)(ip, g->H, g->W, y, x, is_y)
                                                                     : (T)0;
            goff_v += mv * wt * cp[pos];
            if (mp && is_y) gmask_v += cp[pos] * SUF(deform_sample)(ip, g->H, g->W, y, x);
            ip += g->H * g->W;
        }
        goff[index] = goff_v;
        if (mp && is_y) gmask[(((b * g->og + grp) * g->kh + w_h) * g->kw + w_w) * OHW + (int64_t)h * g->ow + w] = gmask_v;
    }
}
