# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The products of a Winograd layer at play (engine/nets/winograd.py): for each point of the
transformed block, the blocks' windows (blocks x in) times the point's kernels (in x out).

One position has few blocks (25 on 19x19, 9 on 9x9), so these are many small products, where a
BLAS spends much of its time on the edges of its tiles. Here each product is cut into panels of
five rows (the 25 blocks of a 19x19 board exactly) and sixteen columns, whose ten sums stay in
vector registers for the whole depth, in AVX2 and FMA. Where the processor lacks them, numpy's
products serve (the portable vector code spills its registers). Training keeps numpy's products:
its batches make tall products, which a BLAS does well.
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
    """
    int kosumi_has_avx2()
    void kosumi_products(const float *a, const float *b, float *c, long points, long rows,
                         long depth, long cols) nogil

HAS_AVX2 = bool(kosumi_has_avx2())


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
