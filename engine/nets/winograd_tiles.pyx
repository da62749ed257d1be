# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The two transforms of a Winograd convolution (engine/nets/winograd.py), block by block in C,
and their adjoints (transposes), which carry a training step's gradients back through them
(engine/training/policywinograd.py).

As matrix products over whole layers (the Kronecker forms) they cost as much arithmetic as the
layer's own products and copy every map twice more. Here each is applied to one block's columns
and then its rows, eight maps at a time in vector registers (AVX2 and FMA where the processor
has them, the portable code otherwise), so that the layer's time goes to its products.
F(4x4, 3x3)'s matrices hold a few small integers, so its transforms have combines of their own
with a third of the general arithmetic. The input side also pads the board; the output side
also crops it and adds the bias, a res net's shortcut and the ReLU, in vector loops too.

The blocks' arrays (points, blocks, maps) may be those of a part of a batch, a slice of the
blocks of a larger array, so that threads can share a batch's transforms (they release the GIL).
"""
from cython cimport view
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

cdef extern from *:
    """
    /* out[i * out_step + c] = sum_k m[i * N + k] * in[k * in_step + c], for i < OUT and c < maps:
       one side of a block's transform, with N and OUT known to the compiler so that the sums
       stay in registers. */
    typedef float kosumi_v8 __attribute__((vector_size(32), aligned(4)));
    typedef void (*kosumi_combine)(const float *, long, float *, long, const float *, long);

    #define KOSUMI_COMBINE(NAME, N, OUT, TARGET)                                                \\
    TARGET static void NAME(const float *restrict in, long in_step, float *restrict out,       \\
                            long out_step, const float *restrict m, long maps) {               \\
        long c = 0;                                                                             \\
        for (; c + 8 <= maps; c += 8) {                                                         \\
            kosumi_v8 d[N];                                                                     \\
            for (int k = 0; k < N; k++) d[k] = *(const kosumi_v8 *)(in + k * in_step + c);     \\
            for (int i = 0; i < OUT; i++) {                                                     \\
                kosumi_v8 s = d[0] * m[i * N];                                                  \\
                for (int k = 1; k < N; k++) s += d[k] * m[i * N + k];                           \\
                *(kosumi_v8 *)(out + i * out_step + c) = s;                                     \\
            }                                                                                   \\
        }                                                                                       \\
        for (; c < maps; c++)                                                                   \\
            for (int i = 0; i < OUT; i++) {                                                     \\
                float s = 0;                                                                    \\
                for (int k = 0; k < N; k++) s += m[i * N + k] * in[k * in_step + c];            \\
                out[i * out_step + c] = s;                                                      \\
            }                                                                                   \\
    }

    #define KOSUMI_AVX2 __attribute__((target("avx2,fma")))
    #define KOSUMI_BOTH(N, OUT)                                                                  \
        KOSUMI_COMBINE(kosumi_##N##_##OUT##_avx2, N, OUT, KOSUMI_AVX2)                           \
        KOSUMI_COMBINE(kosumi_##N##_##OUT, N, OUT, )
    KOSUMI_BOTH(6, 6)       /* a 3x3 layer's windows: inputs, and their adjoint */
    KOSUMI_BOTH(6, 4)       /* its outputs */
    KOSUMI_BOTH(4, 6)       /* the outputs' adjoint */
    KOSUMI_BOTH(8, 8)       /* the same for a 5x5 layer */
    KOSUMI_BOTH(8, 4)
    KOSUMI_BOTH(4, 8)

    /* F(4x4, 3x3) on the points 0, 1, -1, 2, -2 (engine/nets/winograd.py's): its B^T and A^T
       have few distinct entries, so a combine that knows them takes a third of the general
       one's arithmetic (m is not read). ROW(k) is input k of the column, SET(i, v) output i. */
    #define KOSUMI_F43_INPUTS(T, ROW, SET) {                                                    \\
        T d0 = ROW(0), d1 = ROW(1), d2 = ROW(2), d3 = ROW(3), d4 = ROW(4), d5 = ROW(5);         \\
        T a = d4 - 4.0f * d2, b = d3 - 4.0f * d1, e = d4 - d2, f = 2.0f * (d3 - d1);            \\
        SET(0, 4.0f * d0 - 5.0f * d2 + d4); SET(1, a + b); SET(2, a - b);                      \\
        SET(3, e + f); SET(4, e - f); SET(5, 4.0f * d1 - 5.0f * d3 + d5); }
    #define KOSUMI_F43_OUTPUTS(T, ROW, SET) {                                                   \\
        T m0 = ROW(0), m1 = ROW(1), m2 = ROW(2), m3 = ROW(3), m4 = ROW(4), m5 = ROW(5);         \\
        T s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;                           \\
        SET(0, m0 + s12 + s34); SET(1, d12 + 2.0f * d34); SET(2, s12 + 4.0f * s34);            \\
        SET(3, d12 + 8.0f * d34 + m5); }
    #define KOSUMI_VROW(k) (*(const kosumi_v8 *)(in + (k) * in_step + c))
    #define KOSUMI_VSET(i, v) (*(kosumi_v8 *)(out + (i) * out_step + c) = (v))
    #define KOSUMI_SROW(k) (in[(k) * in_step + c])
    #define KOSUMI_SSET(i, v) (out[(i) * out_step + c] = (v))
    #define KOSUMI_F43(NAME, BODY, TARGET)                                                      \\
    TARGET static void NAME(const float *restrict in, long in_step, float *restrict out,       \\
                            long out_step, const float *restrict m, long maps) {               \\
        (void)m;                                                                                \\
        long c = 0;                                                                             \\
        for (; c + 8 <= maps; c += 8) BODY(kosumi_v8, KOSUMI_VROW, KOSUMI_VSET)                 \\
        for (; c < maps; c++) BODY(float, KOSUMI_SROW, KOSUMI_SSET)                             \\
    }
    KOSUMI_F43(kosumi_f43_inputs_avx2, KOSUMI_F43_INPUTS, KOSUMI_AVX2)
    KOSUMI_F43(kosumi_f43_inputs, KOSUMI_F43_INPUTS, )
    KOSUMI_F43(kosumi_f43_outputs_avx2, KOSUMI_F43_OUTPUTS, KOSUMI_AVX2)
    KOSUMI_F43(kosumi_f43_outputs, KOSUMI_F43_OUTPUTS, )

    /* out = max(0, v + bias [+ added]) over a point's maps: a layer's bias, shortcut and ReLU
       (plain loops the compiler puts in vector registers; added may be NULL) */
    typedef void (*kosumi_finish)(const float *, const float *, const float *, float *, long);
    #define KOSUMI_FINISH(NAME, TARGET)                                                         \\
    TARGET static void NAME(const float *restrict v, const float *restrict bias,                \\
                            const float *restrict added, float *restrict out, long maps) {      \\
        if (added)                                                                              \\
            for (long c = 0; c < maps; c++) {                                                   \\
                float s = v[c] + bias[c] + added[c];                                            \\
                out[c] = s > 0 ? s : 0;                                                         \\
            }                                                                                   \\
        else                                                                                    \\
            for (long c = 0; c < maps; c++) {                                                   \\
                float s = v[c] + bias[c];                                                       \\
                out[c] = s > 0 ? s : 0;                                                         \\
            }                                                                                   \\
    }
    KOSUMI_FINISH(kosumi_finish_avx2, KOSUMI_AVX2)
    KOSUMI_FINISH(kosumi_finish_portable, )

    /* whether to take the AVX2 code: allowed, and the processor has it */
    static int kosumi_avx2(int allow_avx2) {
        return allow_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }

    static kosumi_finish kosumi_finisher(int allow_avx2) {
        return kosumi_avx2(allow_avx2) ? kosumi_finish_avx2 : kosumi_finish_portable;
    }

    static const float kosumi_f43_bt[36] = {4, 0, -5, 0, 1, 0,   0, -4, -4, 1, 1, 0,
                                            0, 4, -4, -1, 1, 0,  0, -2, -1, 2, 1, 0,
                                            0, 2, -1, -2, 1, 0,  0, 4, 0, -5, 0, 1};
    static const float kosumi_f43_at[24] = {1, 1, 1, 1, 1, 0,  0, 1, -1, 2, -2, 0,
                                            0, 1, 1, 4, 4, 0,  0, 1, -1, 8, -8, 1};

    static int kosumi_same(const float *m, const float *want, int count) {
        for (int i = 0; i < count; i++)
            if (m[i] - want[i] > 1e-5f || want[i] - m[i] > 1e-5f) return 0;
        return 1;
    }

    /* The combine of n points to out points by the row-major matrix m (out x n), in AVX2 if
       allowed and the processor has it; NULL for a pair no transform needs. */
    static kosumi_combine kosumi_combiner(int n, int out, const float *m, int allow_avx2) {
        int avx2 = kosumi_avx2(allow_avx2);
        if (n == 6 && out == 6 && kosumi_same(m, kosumi_f43_bt, 36))
            return avx2 ? kosumi_f43_inputs_avx2 : kosumi_f43_inputs;
        if (n == 6 && out == 4 && kosumi_same(m, kosumi_f43_at, 24))
            return avx2 ? kosumi_f43_outputs_avx2 : kosumi_f43_outputs;
        #define KOSUMI_PICK(N, OUT) \
            if (n == N && out == OUT) return avx2 ? kosumi_##N##_##OUT##_avx2 : kosumi_##N##_##OUT;
        KOSUMI_PICK(6, 6) KOSUMI_PICK(6, 4) KOSUMI_PICK(4, 6)
        KOSUMI_PICK(8, 8) KOSUMI_PICK(8, 4) KOSUMI_PICK(4, 8)
        return NULL;
    }
    """
    ctypedef void (*kosumi_combine)(const float *, long, float *, long, const float *, long) noexcept nogil
    kosumi_combine kosumi_combiner(int n, int out, const float *m, int allow_avx2)
    ctypedef void (*kosumi_finish)(const float *, const float *, const float *, float *, long) noexcept nogil
    kosumi_finish kosumi_finisher(int allow_avx2)

DEF TILE = 4


cdef const float* _window(const float[:, :, :, ::1] x, Py_ssize_t b, Py_ssize_t top, Py_ssize_t left,
                          Py_ssize_t n, float* copy, Py_ssize_t* row_step) noexcept nogil:
    """The n x n window of position b of x (B, S, S, C) from point (top, left): in x where it lies
    on the board, else copied into `copy` with zeros off the board; *row_step is its rows' step."""
    cdef Py_ssize_t size = x.shape[1], channels = x.shape[3], i, j, y, col
    if top >= 0 and left >= 0 and top + n <= size and left + n <= size:
        row_step[0] = size * channels
        return &x[b, top, left, 0]
    for i in range(n):
        for j in range(n):
            y, col = top + i, left + j
            if 0 <= y < size and 0 <= col < size:
                memcpy(copy + (i * n + j) * channels, &x[b, y, col, 0], channels * sizeof(float))
            else:
                memset(copy + (i * n + j) * channels, 0, channels * sizeof(float))
    row_step[0] = n * channels
    return copy


cdef int _to_blocks(const float[:, :, :, ::1] x, const float* m, Py_ssize_t side, Py_ssize_t n,
                    Py_ssize_t pad, float[:, :, ::view.contiguous] out, kosumi_combine combine) except -1:
    """out[:, block] = M d M^T (n x n points) for the window d of each TILE x TILE block of x
    (B, S, S, C), `side` points a side from `pad` points before the block; M is n x side, row-major."""
    cdef Py_ssize_t batch = x.shape[0], size = x.shape[1], channels = x.shape[3]
    cdef Py_ssize_t blocks = (size + TILE - 1) // TILE, point_step = out.strides[0] // sizeof(float)
    cdef float* window = <float*> malloc((side * side + n * side) * channels * sizeof(float))
    if window == NULL:
        raise MemoryError()
    cdef float* rows = window + side * side * channels
    cdef const float* source
    cdef Py_ssize_t b, by, bx, block, i, j, row_step
    with nogil:
        for b in range(batch):
            for by in range(blocks):
                for bx in range(blocks):
                    block = (b * blocks + by) * blocks + bx
                    source = _window(x, b, by * TILE - pad, bx * TILE - pad, side, window, &row_step)
                    for j in range(side):       # M d, a column at a time
                        combine(source + j * channels, row_step, rows + j * channels, side * channels,
                                m, channels)
                    for i in range(n):          # (M d) M^T, a row at a time
                        combine(rows + i * side * channels, channels, &out[i * n, block, 0], point_step,
                                m, channels)
    free(window)
    return 0


cdef kosumi_combine _combiner(Py_ssize_t n, Py_ssize_t out, const float* m, bint avx2) except NULL:
    cdef kosumi_combine combine = kosumi_combiner(n, out, m, avx2)
    if combine == NULL:
        raise ValueError(f"no Winograd transform between windows of {n} and {out} points")
    return combine


def transform_inputs(const float[:, :, :, ::1] x, const float[:, ::1] bt, int pad,
                     float[:, :, ::view.contiguous] out, bint avx2=True):
    """out[p, block, c] = (B^T d B)[p] for every TILE x TILE block of outputs of x (B, S, S, C),
    d its (n x n) window of inputs, `pad` lines of zeros around the board; the blocks run over
    the batch, then their rows and columns; p over the window's points row by row. avx2=False:
    the portable code even where the processor has AVX2."""
    cdef Py_ssize_t batch = x.shape[0], size = x.shape[1], channels = x.shape[3]
    cdef Py_ssize_t n = bt.shape[0], blocks = (size + TILE - 1) // TILE
    if out.shape[0] != n * n or out.shape[1] != batch * blocks * blocks or out.shape[2] != channels:
        raise ValueError(f"transform_inputs: out has shape {tuple(out.shape)[:3]}, "
                         f"not {(n * n, batch * blocks * blocks, channels)}")
    _to_blocks(x, &bt[0, 0], n, n, pad, out, _combiner(n, n, &bt[0, 0], avx2))


def transform_outputs(const float[:, :, ::view.contiguous] products, const float[:, ::1] at,
                      const float[::1] bias, float[:, :, :, ::1] out, bint avx2=True,
                      const float[:, :, :, ::1] shortcut=None):
    """out[b, y, x, m] = max(0, (A^T M A) + bias [+ shortcut]) of the blocks' products (n*n,
    blocks, maps), as transform_inputs laid them out, cropped to out (B, S, S, maps): every conv
    layer of the policy net is followed by its ReLU, and a res net's adds an earlier layer's
    output (shortcut, out's shape) before it. avx2 as transform_inputs'."""
    cdef Py_ssize_t batch = out.shape[0], size = out.shape[1], maps = out.shape[3]
    cdef Py_ssize_t n = at.shape[1], blocks = (size + TILE - 1) // TILE
    if (products.shape[0] != n * n or products.shape[1] != batch * blocks * blocks
            or products.shape[2] != maps or bias.shape[0] != maps or at.shape[0] != TILE):
        raise ValueError(f"transform_outputs: products {tuple(products.shape)[:3]}, bias "
                         f"{bias.shape[0]} and A^T {tuple(at.shape)[:2]} do not fit out "
                         f"{tuple(out.shape)}")
    cdef bint adds = shortcut is not None
    if adds and tuple(shortcut.shape)[:4] != tuple(out.shape)[:4]:
        raise ValueError(f"transform_outputs: shortcut {tuple(shortcut.shape)[:4]} does not fit out "
                         f"{tuple(out.shape)[:4]}")
    cdef const float* added = NULL
    cdef kosumi_combine combine = _combiner(n, TILE, &at[0, 0], avx2)
    cdef kosumi_finish finish = kosumi_finisher(avx2)
    cdef float* rows = <float*> malloc((TILE * n + TILE) * maps * sizeof(float))
    if rows == NULL:
        raise MemoryError()
    cdef float* line = rows + TILE * n * maps
    cdef Py_ssize_t b, by, bx, block, i, j, y, col
    cdef Py_ssize_t point_step = products.strides[0] // sizeof(float)
    with nogil:
        for b in range(batch):
            for by in range(blocks):
                for bx in range(blocks):
                    block = (b * blocks + by) * blocks + bx
                    for j in range(n):          # A^T M, a column at a time
                        combine(&products[j, block, 0], n * point_step, rows + j * maps, n * maps,
                                &at[0, 0], maps)
                    for i in range(TILE):       # (A^T M) A, a row at a time
                        y = by * TILE + i
                        if y >= size:
                            break
                        combine(rows + i * n * maps, maps, line, maps, &at[0, 0], maps)
                        for j in range(TILE):
                            col = bx * TILE + j
                            if col >= size:
                                break
                            if adds:
                                added = &shortcut[b, y, col, 0]
                            finish(line + j * maps, &bias[0], added, &out[b, y, col, 0], maps)
    free(rows)


cdef float* _transposed(const float[:, ::1] m) except NULL:
    """A malloc'd row-major copy of m's transpose (the caller frees it)."""
    cdef Py_ssize_t rows = m.shape[0], cols = m.shape[1], i, j
    cdef float* t = <float*> malloc(rows * cols * sizeof(float))
    if t == NULL:
        raise MemoryError()
    for i in range(rows):
        for j in range(cols):
            t[j * rows + i] = m[i, j]
    return t


def adjoint_inputs(const float[:, :, ::view.contiguous] grads, const float[:, ::1] bt, int pad,
                   float[:, :, :, ::1] out, bint avx2=True):
    """The adjoint of transform_inputs with the same bt and pad: out (B, S, S, C) = for each point,
    the sum over the windows that cover it of B g B^T, g the window's gradients grads[:, block]
    (n*n, blocks, C); what falls on the padding is dropped. out is overwritten."""
    cdef Py_ssize_t batch = out.shape[0], size = out.shape[1], channels = out.shape[3]
    cdef Py_ssize_t n = bt.shape[0], blocks = (size + TILE - 1) // TILE
    if grads.shape[0] != n * n or grads.shape[1] != batch * blocks * blocks or grads.shape[2] != channels:
        raise ValueError(f"adjoint_inputs: grads have shape {tuple(grads.shape)[:3]}, "
                         f"not {(n * n, batch * blocks * blocks, channels)}")
    cdef float* b_matrix = _transposed(bt)
    cdef kosumi_combine combine
    try:
        combine = _combiner(n, n, b_matrix, avx2)
    except ValueError:
        free(b_matrix)
        raise
    cdef float* rows = <float*> malloc((n * n + n) * channels * sizeof(float))
    if rows == NULL:
        free(b_matrix)
        raise MemoryError()
    cdef float* line = rows + n * n * channels
    cdef float* target
    cdef float* source
    cdef Py_ssize_t b, by, bx, block, i, j, c, top, left, y, col
    cdef Py_ssize_t point_step = grads.strides[0] // sizeof(float)
    with nogil:
        for b in range(batch):
            memset(&out[b, 0, 0, 0], 0, size * size * channels * sizeof(float))
            for by in range(blocks):
                for bx in range(blocks):
                    block = (b * blocks + by) * blocks + bx
                    top, left = by * TILE - pad, bx * TILE - pad
                    for j in range(n):          # B g, a column at a time
                        combine(&grads[j, block, 0], n * point_step, rows + j * channels,
                                n * channels, b_matrix, channels)
                    for i in range(n):          # (B g) B^T, a row at a time, onto the board
                        y = top + i
                        if y < 0 or y >= size:
                            continue
                        combine(rows + i * n * channels, channels, line, channels, b_matrix, channels)
                        for j in range(n):
                            col = left + j
                            if 0 <= col < size:
                                target, source = &out[b, y, col, 0], line + j * channels
                                for c in range(channels):
                                    target[c] += source[c]
    free(rows)
    free(b_matrix)


def adjoint_outputs(const float[:, :, :, ::1] grads, const float[:, ::1] at,
                    float[:, :, ::view.contiguous] out, bint avx2=True):
    """The adjoint of transform_outputs' linear part (its products to the outputs before the bias
    and the ReLU), with the same at: out[:, block] (n*n, blocks, maps) = A g A^T, g the block's
    TILE x TILE gradients of grads (B, S, S, maps), zero beyond the board."""
    cdef Py_ssize_t batch = grads.shape[0], size = grads.shape[1], maps = grads.shape[3]
    cdef Py_ssize_t n = at.shape[1], blocks = (size + TILE - 1) // TILE
    if (out.shape[0] != n * n or out.shape[1] != batch * blocks * blocks or out.shape[2] != maps
            or at.shape[0] != TILE):
        raise ValueError(f"adjoint_outputs: out {tuple(out.shape)[:3]} and A^T "
                         f"{tuple(at.shape)[:2]} do not fit grads {tuple(grads.shape)}")
    cdef float* a_matrix = _transposed(at)
    try:
        _to_blocks(grads, a_matrix, TILE, n, 0, out, _combiner(TILE, n, a_matrix, avx2))
    finally:
        free(a_matrix)
