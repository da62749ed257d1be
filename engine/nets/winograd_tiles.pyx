# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The two transforms of a Winograd convolution (engine/nets/winograd.py), block by block in C.

As matrix products over whole layers (the Kronecker forms) they cost as much arithmetic as the
layer's own products and copy every map twice more. Here each is applied to one block's columns
and then its rows, eight maps at a time in vector registers (AVX2 and FMA where the processor
has them, the portable code otherwise), so that the layer's time goes to its products. The input side
also pads the board; the output side also crops it and adds the bias and the ReLU.
"""
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
    KOSUMI_COMBINE(kosumi_inputs6_avx2, 6, 6, KOSUMI_AVX2)
    KOSUMI_COMBINE(kosumi_inputs8_avx2, 8, 8, KOSUMI_AVX2)
    KOSUMI_COMBINE(kosumi_outputs6_avx2, 6, 4, KOSUMI_AVX2)
    KOSUMI_COMBINE(kosumi_outputs8_avx2, 8, 4, KOSUMI_AVX2)
    KOSUMI_COMBINE(kosumi_inputs6, 6, 6, )
    KOSUMI_COMBINE(kosumi_inputs8, 8, 8, )
    KOSUMI_COMBINE(kosumi_outputs6, 6, 4, )
    KOSUMI_COMBINE(kosumi_outputs8, 8, 4, )

    /* The combine for a window of n points a side (6 or 8), to n (inputs) or 4 (outputs) points,
       in AVX2 if allowed and the processor has it; NULL for another window. */
    static kosumi_combine kosumi_combiner(int n, int inputs, int allow_avx2) {
        int avx2 = allow_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        if (n == 6) return inputs ? (avx2 ? kosumi_inputs6_avx2 : kosumi_inputs6)
                                  : (avx2 ? kosumi_outputs6_avx2 : kosumi_outputs6);
        if (n == 8) return inputs ? (avx2 ? kosumi_inputs8_avx2 : kosumi_inputs8)
                                  : (avx2 ? kosumi_outputs8_avx2 : kosumi_outputs8);
        return NULL;
    }
    """
    ctypedef void (*kosumi_combine)(const float *, long, float *, long, const float *, long) noexcept nogil
    kosumi_combine kosumi_combiner(int n, int inputs, int allow_avx2)

DEF TILE = 4


cdef kosumi_combine _combiner(Py_ssize_t n, bint inputs, bint avx2) except NULL:
    cdef kosumi_combine combine = kosumi_combiner(n, inputs, avx2)
    if combine == NULL:
        raise ValueError(f"no Winograd transform for a window of {n} points")
    return combine


def transform_inputs(const float[:, :, :, ::1] x, const float[:, ::1] bt, int pad,
                     float[:, :, ::1] out, bint avx2=True):
    """out[p, block, c] = (B^T d B)[p] for every TILE x TILE block of outputs of x (B, S, S, C),
    d its (n x n) window of inputs, `pad` lines of zeros around the board; the blocks run over
    the batch, then their rows and columns; p over the window's points row by row. avx2=False:
    the portable code even where the processor has AVX2."""
    cdef Py_ssize_t batch = x.shape[0], size = x.shape[1], channels = x.shape[3]
    cdef Py_ssize_t n = bt.shape[0], blocks = (size + TILE - 1) // TILE
    if out.shape[0] != n * n or out.shape[1] != batch * blocks * blocks or out.shape[2] != channels:
        raise ValueError(f"transform_inputs: out has shape {tuple(out.shape)[:3]}, "
                         f"not {(n * n, batch * blocks * blocks, channels)}")
    cdef kosumi_combine combine = _combiner(n, True, avx2)
    cdef float* window = <float*> malloc(2 * n * n * channels * sizeof(float))
    if window == NULL:
        raise MemoryError()
    cdef float* rows = window + n * n * channels
    cdef const float* source
    cdef Py_ssize_t b, by, bx, block, i, j, top, left, y, col, row_step
    cdef Py_ssize_t point_step = out.shape[1] * channels
    with nogil:
        for b in range(batch):
            for by in range(blocks):
                for bx in range(blocks):
                    block = (b * blocks + by) * blocks + bx
                    top, left = by * TILE - pad, bx * TILE - pad
                    if top >= 0 and left >= 0 and top + n <= size and left + n <= size:
                        source, row_step = &x[b, top, left, 0], size * channels
                    else:           # the window crosses the edge: a copy with its zeros
                        for i in range(n):
                            for j in range(n):
                                y, col = top + i, left + j
                                if 0 <= y < size and 0 <= col < size:
                                    memcpy(window + (i * n + j) * channels, &x[b, y, col, 0],
                                           channels * sizeof(float))
                                else:
                                    memset(window + (i * n + j) * channels, 0, channels * sizeof(float))
                        source, row_step = window, n * channels
                    for j in range(n):          # B^T d, a column at a time
                        combine(source + j * channels, row_step, rows + j * channels, n * channels,
                                &bt[0, 0], channels)
                    for i in range(n):          # (B^T d) B, a row at a time
                        combine(rows + i * n * channels, channels, &out[i * n, block, 0], point_step,
                                &bt[0, 0], channels)
    free(window)


def transform_outputs(const float[:, :, ::1] products, const float[:, ::1] at,
                      const float[::1] bias, float[:, :, :, ::1] out, bint avx2=True):
    """out[b, y, x, m] = max(0, (A^T M A) + bias) of the blocks' products (n*n, blocks, maps), as
    transform_inputs laid them out, cropped to out (B, S, S, maps): every conv layer of the
    policy net is followed by its ReLU. avx2 as transform_inputs'."""
    cdef Py_ssize_t batch = out.shape[0], size = out.shape[1], maps = out.shape[3]
    cdef Py_ssize_t n = at.shape[1], blocks = (size + TILE - 1) // TILE
    if (products.shape[0] != n * n or products.shape[1] != batch * blocks * blocks
            or products.shape[2] != maps or bias.shape[0] != maps or at.shape[0] != TILE):
        raise ValueError(f"transform_outputs: products {tuple(products.shape)[:3]}, bias "
                         f"{bias.shape[0]} and A^T {tuple(at.shape)[:2]} do not fit out "
                         f"{tuple(out.shape)}")
    cdef kosumi_combine combine = _combiner(n, False, avx2)
    cdef float* rows = <float*> malloc((TILE * n + TILE) * maps * sizeof(float))
    if rows == NULL:
        raise MemoryError()
    cdef float* line = rows + TILE * n * maps
    cdef float* point
    cdef Py_ssize_t b, by, bx, block, i, j, m, y, col
    cdef Py_ssize_t point_step = products.shape[1] * maps
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
                            point = line + j * maps
                            for m in range(maps):
                                point[m] += bias[m]
                                if point[m] < 0:
                                    point[m] = 0
                            memcpy(&out[b, y, col, 0], point, maps * sizeof(float))
    free(rows)
