# What both trees (engine/search/tree.pyx, engine/search/puct.pyx) keep of the game above their
# root, as C arrays: the earlier positions no move may repeat (positional superko), sorted for a
# binary search, and the root's permitted moves (GTP analysis `avoid`/`allow`). Inline, so each
# tree's hot loop calls them without a module boundary.

from libc.stdlib cimport malloc
from engine.rules.board cimport hash_t


cdef inline hash_t *sorted_hashes(seen_hashes, int *count) except NULL:
    """A new malloc'ed array of the distinct hashes, ascending; their number in count[0]."""
    hashes = sorted({int(h) for h in seen_hashes})
    cdef hash_t *array = <hash_t *> malloc(max(len(hashes), 1) * sizeof(hash_t))
    if array == NULL:
        raise MemoryError()
    for i, h in enumerate(hashes):
        array[i] = h
    count[0] = len(hashes)
    return array


cdef inline bint sorted_contains(const hash_t *array, int count, hash_t h) noexcept nogil:
    cdef int low = 0, high = count - 1, middle
    while low <= high:
        middle = (low + high) // 2
        if array[middle] == h:
            return True
        if array[middle] < h:
            low = middle + 1
        else:
            high = middle - 1
    return False


cdef inline unsigned char *move_flags(permitted, int count) except NULL:
    """A new malloc'ed copy of `count` flags (one per loc, the last for pass); ValueError for
    another number."""
    import numpy as np
    flags = np.ascontiguousarray(permitted, dtype=np.uint8)
    if flags.shape != (count,):
        raise ValueError("the root filter needs one flag per point and one for pass")
    cdef unsigned char *array = <unsigned char *> malloc(count)
    if array == NULL:
        raise MemoryError()
    for i in range(count):
        array[i] = flags[i]
    return array
