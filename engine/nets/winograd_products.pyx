# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The products of a Winograd layer at play (engine/nets/winograd.py): for each point of the
transformed block, the blocks' windows (blocks x in) times the point's kernels (in x out).

One position has few blocks (25 on 19x19, 9 on 9x9), so these are many small products, where a
BLAS spends much of its time on the edges of its tiles. Here each product is cut into panels of
five rows (the 25 blocks of a 19x19 board exactly) and sixteen columns, whose ten sums stay in
vector registers for the whole depth, in AVX2 and FMA. Where the processor lacks them, numpy's
products serve (the portable vector code spills its registers). Training keeps numpy's products:
its batches make tall products, which a BLAS does well.

In bfloat16 (--policy-precision bf16), where the processor has AVX-512 BF16, the windows and
kernels are rounded to bfloat16 (8 bits of mantissa) and each instruction multiplies pairs of them
into float32 sums: twice the products an instruction. The kernels are packed once, in pairs along
their depth (pack_bfloat16); the windows are rounded a panel's rows at a time, as the panel starts.
Elsewhere the same rounded numbers are multiplied in float32, which gives the same results to the
sums' rounding, more slowly.
"""
import numpy as np

cdef extern from *:
    """
    typedef float kosumi_p8 __attribute__((vector_size(32), aligned(4)));
    #define KOSUMI_AVX2 __attribute__((target("avx2,fma")))

    /* c[r, :] = sum_k a[r, k] b[k, :] for r < R, the rows' sums of sixteen columns in registers */
    #define KOSUMI_PANEL(R)                                                                     \\
    KOSUMI_AVX2 static inline void kosumi_panel##R(const float *restrict a, long depth,         \\
                                                   const float *restrict b, long cols,          \\
                                                   float *restrict c) {                         \\
        long j = 0;                                                                             \\
        for (; j + 16 <= cols; j += 16) {                                                       \\
            kosumi_p8 low[R], high[R];                                                          \\
            for (int r = 0; r < R; r++) low[r] = high[r] = (kosumi_p8){0};                      \\
            for (long k = 0; k < depth; k++) {                                                  \\
                kosumi_p8 b_low = *(const kosumi_p8 *)(b + k * cols + j);                       \\
                kosumi_p8 b_high = *(const kosumi_p8 *)(b + k * cols + j + 8);                  \\
                for (int r = 0; r < R; r++) {                                                   \\
                    float x = a[r * depth + k];                                                 \\
                    low[r] += x * b_low;                                                        \\
                    high[r] += x * b_high;                                                      \\
                }                                                                               \\
            }                                                                                   \\
            for (int r = 0; r < R; r++) {                                                       \\
                *(kosumi_p8 *)(c + r * cols + j) = low[r];                                      \\
                *(kosumi_p8 *)(c + r * cols + j + 8) = high[r];                                 \\
            }                                                                                   \\
        }                                                                                       \\
        for (; j < cols; j++)                                                                   \\
            for (int r = 0; r < R; r++) {                                                       \\
                float s = 0;                                                                    \\
                for (long k = 0; k < depth; k++) s += a[r * depth + k] * b[k * cols + j];      \\
                c[r * cols + j] = s;                                                            \\
            }                                                                                   \\
    }
    KOSUMI_PANEL(5) KOSUMI_PANEL(4) KOSUMI_PANEL(3) KOSUMI_PANEL(2) KOSUMI_PANEL(1)

    /* c (rows x cols) = a (rows x depth) b (depth x cols) for each of `points`, all row-major.
       A layer's kernels (b) come from the shared cache, not the core's own: each panel first
       asks for its share of the next point's kernel, so that it is at hand when that point starts. */
    KOSUMI_AVX2 static void kosumi_products(const float *a, const float *b, float *c, long points,
                                            long rows, long depth, long cols) {
        const long line = 64 / sizeof(float), kernel = depth * cols, panels = (rows + 4) / 5;
        const long share = (kernel + panels - 1) / panels;
        for (long p = 0; p < points; p++) {
            const float *pa = a + p * rows * depth, *pb = b + p * kernel;
            const float *next = p + 1 < points ? pb + kernel : NULL;
            float *pc = c + p * rows * cols;
            long fetched = 0;
            for (long r = 0; r < rows; r += 5) {
                if (next)
                    for (long end = fetched + share < kernel ? fetched + share : kernel;
                         fetched < end; fetched += line)
                        __builtin_prefetch(next + fetched, 0, 2);
                switch (rows - r < 5 ? rows - r : 5) {
                    case 5: kosumi_panel5(pa + r * depth, depth, pb, cols, pc + r * cols); break;
                    case 4: kosumi_panel4(pa + r * depth, depth, pb, cols, pc + r * cols); break;
                    case 3: kosumi_panel3(pa + r * depth, depth, pb, cols, pc + r * cols); break;
                    case 2: kosumi_panel2(pa + r * depth, depth, pb, cols, pc + r * cols); break;
                    case 1: kosumi_panel1(pa + r * depth, depth, pb, cols, pc + r * cols); break;
                }
            }
        }
    }

    static int kosumi_has_avx2(void) {
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }

    /* bfloat16: b is a point's kernel packed by pack_bfloat16, (pairs, wide, 2) with wide a
       multiple of 16: the two depths of a pair side by side, for each column. a holds R rows of
       `pairs` pairs of the windows' bfloat16s. Each vdpbf16ps adds a pair's two products for
       sixteen columns; a panel is R rows and 16 x C columns, its sums in registers. Compilers
       before GCC 10 and Clang 9 do not know the instructions: there bfloat16 takes numpy's
       products of the rounded numbers. */
    #include <stdlib.h>
    #if defined(__clang__) ? __clang_major__ >= 9 : __GNUC__ >= 10
    #include <immintrin.h>
    #define KOSUMI_BF16 __attribute__((target("avx512f,avx512bf16")))

    /* the mask of a vector's first n of 16 lanes (none for n <= 0, all from 16) */
    static inline __mmask16 kosumi_lanes(long n) {
        return n >= 16 ? 0xffff : n > 0 ? (__mmask16)((1u << n) - 1) : 0;
    }

    #define KOSUMI_BF16_PANEL(R, C)                                                             \\
    KOSUMI_BF16 static inline void kosumi_bf16_panel##R##_##C(                                  \\
            const unsigned int *restrict a, long pairs, const unsigned short *restrict b,       \\
            long wide, float *restrict c, long stride, long cols) {                             \\
        __m512 sums[C][R];                                                                      \\
        for (int q = 0; q < C; q++)                                                             \\
            for (int r = 0; r < R; r++) sums[q][r] = _mm512_setzero_ps();                       \\
        for (long k = 0; k < pairs; k++) {                                                      \\
            __m512bh column[C];                                                                 \\
            for (int q = 0; q < C; q++)                                                         \\
                column[q] = (__m512bh)_mm512_loadu_si512(b + 2 * (k * wide + 16 * q));          \\
            for (int r = 0; r < R; r++) {                                                       \\
                __m512bh x = (__m512bh)_mm512_set1_epi32((int)a[r * pairs + k]);                \\
                for (int q = 0; q < C; q++) sums[q][r] = _mm512_dpbf16_ps(sums[q][r], x, column[q]); \\
            }                                                                                   \\
        }                                                                                       \\
        for (int q = 0; q < C; q++) {                                                           \\
            __mmask16 keep = kosumi_lanes(cols - 16 * q);                                       \\
            for (int r = 0; r < R; r++) _mm512_mask_storeu_ps(c + r * stride + 16 * q, keep, sums[q][r]); \\
        }                                                                                       \\
    }
    #define KOSUMI_BF16_PANELS(R) KOSUMI_BF16_PANEL(R, 2) KOSUMI_BF16_PANEL(R, 1)
    KOSUMI_BF16_PANELS(5) KOSUMI_BF16_PANELS(4) KOSUMI_BF16_PANELS(3) KOSUMI_BF16_PANELS(2)
    KOSUMI_BF16_PANELS(1)
    typedef void (*kosumi_bf16_panel)(const unsigned int *, long, const unsigned short *, long,
                                      float *, long, long);
    /* by the panel's rows: 32 columns, and the last 16 */
    static const kosumi_bf16_panel kosumi_bf16_wide[6] = {
        NULL, kosumi_bf16_panel1_2, kosumi_bf16_panel2_2, kosumi_bf16_panel3_2,
        kosumi_bf16_panel4_2, kosumi_bf16_panel5_2};
    static const kosumi_bf16_panel kosumi_bf16_narrow[6] = {
        NULL, kosumi_bf16_panel1_1, kosumi_bf16_panel2_1, kosumi_bf16_panel3_1,
        kosumi_bf16_panel4_1, kosumi_bf16_panel5_1};

    /* rows x depth floats of a as bfloat16 pairs (rounded to nearest, ties to even), each row
       `pairs` pairs long, an odd depth's last pair with a zero */
    KOSUMI_BF16 static void kosumi_bf16_rows(const float *a, long rows, long depth, long pairs,
                                             unsigned int *out) {
        for (long r = 0; r < rows; r++) {
            const float *row = a + r * depth;
            unsigned short *half = (unsigned short *)(out + r * pairs);
            for (long k = 0; k < 2 * pairs; k += 32) {
                __m512bh both = _mm512_cvtne2ps_pbh(
                    _mm512_maskz_loadu_ps(kosumi_lanes(depth - k - 16), row + k + 16),
                    _mm512_maskz_loadu_ps(kosumi_lanes(depth - k), row + k));
                /* as pairs: 16 lanes of 32 bits, an odd depth's zero included */
                _mm512_mask_storeu_epi32(half + k, kosumi_lanes(pairs - k / 2), (__m512i)both);
            }
        }
    }

    /* c (rows x cols) = a (rows x depth) b for each of `points`: a and c row-major floats, b the
       points' packed kernels (pairs x wide x 2 bfloat16s each); the next point's kernel fetched
       ahead as in kosumi_products. Returns -1 when the row buffer cannot be had. */
    KOSUMI_BF16 static int kosumi_products_bf16(const float *a, const unsigned short *b, float *c,
                                                long points, long rows, long depth, long pairs,
                                                long wide, long cols) {
        const long line = 64 / sizeof(unsigned short), kernel = 2 * pairs * wide;
        const long panels = (rows + 4) / 5, share = (kernel + panels - 1) / panels;
        unsigned int *converted = malloc(5 * pairs * sizeof(unsigned int));
        if (!converted) return -1;
        for (long p = 0; p < points; p++) {
            const float *pa = a + p * rows * depth;
            const unsigned short *pb = b + p * kernel, *next = p + 1 < points ? pb + kernel : NULL;
            float *pc = c + p * rows * cols;
            long fetched = 0;
            for (long r = 0; r < rows; r += 5) {
                long height = rows - r < 5 ? rows - r : 5;
                if (next)
                    for (long end = fetched + share < kernel ? fetched + share : kernel;
                         fetched < end; fetched += line)
                        __builtin_prefetch(next + fetched, 0, 2);
                kosumi_bf16_rows(pa + r * depth, height, depth, pairs, converted);
                for (long j = 0; j < cols; j += 32) {
                    const unsigned short *pbj = pb + 2 * j;
                    float *out = pc + r * cols + j;
                    long left = cols - j;
                    (left > 16 ? kosumi_bf16_wide : kosumi_bf16_narrow)[height](
                        converted, pairs, pbj, wide, out, cols, left);
                }
            }
        }
        free(converted);
        return 0;
    }

    static int kosumi_has_bf16(void) {
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
    }
    #else
    static int kosumi_products_bf16(const float *a, const unsigned short *b, float *c, long points,
                                    long rows, long depth, long pairs, long wide, long cols) {
        return -1;
    }
    static int kosumi_has_bf16(void) { return 0; }
    #endif
    """
    int kosumi_has_avx2()
    int kosumi_has_bf16()
    void kosumi_products(const float *a, const float *b, float *c, long points, long rows,
                         long depth, long cols) nogil
    int kosumi_products_bf16(const float *a, const unsigned short *b, float *c, long points,
                             long rows, long depth, long pairs, long wide, long cols) nogil

HAS_AVX2 = bool(kosumi_has_avx2())
HAS_BF16 = bool(kosumi_has_bf16())


def point_products(const float[:, :, ::1] windows, const float[:, :, ::1] kernels,
                   float[:, :, ::1] out):
    """out[p] = windows[p] @ kernels[p] for every point p: windows (points, blocks, in), kernels
    (points, in, out maps), out (points, blocks, out maps), as np.matmul(windows, kernels, out=out)."""
    cdef Py_ssize_t points = windows.shape[0], rows = windows.shape[1], depth = windows.shape[2]
    cdef Py_ssize_t cols = kernels.shape[2]
    if (kernels.shape[0] != points or kernels.shape[1] != depth or out.shape[0] != points
            or out.shape[1] != rows or out.shape[2] != cols):
        raise ValueError(f"point_products: windows {tuple(windows.shape)[:3]}, kernels "
                         f"{tuple(kernels.shape)[:3]} and out {tuple(out.shape)[:3]} do not fit")
    if not HAS_AVX2:
        np.matmul(windows, kernels, out=np.asarray(out))
    elif points and rows and cols:
        with nogil:
            kosumi_products(&windows[0, 0, 0], &kernels[0, 0, 0], &out[0, 0, 0], points, rows,
                            depth, cols)


def bfloat16(x):
    """float32 x rounded to the nearest bfloat16 (ties to even), as float32s."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).view(np.float32)


def pack_bfloat16(kernels):
    """Kernels (points, in, out) as bfloat16 in pairs along their depth: uint16 (points,
    ceil(in / 2), out rounded up to 16 columns, 2), zeros where in or out are padded."""
    points, depth, cols = kernels.shape
    packed = np.zeros((points, 2 * (-(-depth // 2)), -(-cols // 16) * 16), np.float32)
    packed[:, :depth, :cols] = bfloat16(kernels)
    halves = (packed.view(np.uint32) >> 16).astype(np.uint16)
    return np.ascontiguousarray(halves.reshape(points, -1, 2, packed.shape[2]).transpose(0, 1, 3, 2))


def unpack_bfloat16(packed, depth, cols):
    """pack_bfloat16's kernels back as float32 (points, depth, cols): the rounded numbers."""
    points = packed.shape[0]
    pairs = np.ascontiguousarray(packed.transpose(0, 1, 3, 2)).reshape(points, -1, packed.shape[2])
    return (pairs.astype(np.uint32) << 16).view(np.float32)[:, :depth, :cols]


def point_products_bfloat16(const float[:, :, ::1] windows, const unsigned short[:, :, :, ::1] packed,
                            float[:, :, ::1] out):
    """point_products with the windows and pack_bfloat16's kernels in bfloat16 (module
    docstring): out[p] = bfloat16(windows[p]) @ kernels[p], the sums in float32."""
    cdef Py_ssize_t points = windows.shape[0], rows = windows.shape[1], depth = windows.shape[2]
    cdef Py_ssize_t pairs = packed.shape[1], wide = packed.shape[2], cols = out.shape[2]
    cdef int failed = 0
    if (packed.shape[0] != points or pairs != (depth + 1) // 2 or packed.shape[3] != 2
            or wide % 16 or not cols <= wide < cols + 16 or out.shape[0] != points
            or out.shape[1] != rows):
        raise ValueError(f"point_products_bfloat16: windows {tuple(windows.shape)[:3]}, packed "
                         f"kernels {tuple(packed.shape)} and out {tuple(out.shape)[:3]} do not fit")
    if not HAS_BF16 or not depth:
        np.matmul(bfloat16(windows), unpack_bfloat16(np.asarray(packed), depth, cols), out=np.asarray(out))
    elif points and rows and cols:
        with nogil:
            failed = kosumi_products_bf16(&windows[0, 0, 0], &packed[0, 0, 0, 0], &out[0, 0, 0],
                                          points, rows, depth, pairs, wide, cols)
        if failed:
            raise MemoryError("point_products_bfloat16: no memory for a panel's rows")
