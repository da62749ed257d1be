# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The soft-segmentation network's connectivity pathfinder (Enzenberger 2003, section 2.5): the
global connectivity of every point to every point, from the local-connection units.

Reading order: set_steps() and search() (run_queue(): Dijkstra with a bucket queue; write_reach()),
then the successors' part: save_base(), mark_steps(), update_slot() and repair(), restore_base().
The C layout is in softseg_pathfinder.pxd; the network that uses it is softseg_forward.pyx.

Choices where the paper leaves room:
- 2.5 the connection value of p to itself is its local self-connection unit; of p to any other
  point, the best product over paths of 3x3 steps of the local-connection units of the points the
  steps leave (a window neighbour's direct unit is the one-step path). Dijkstra on -log values
  (a bucket queue), from every point, pruned at the 0.1 cut-off (footnote 2): a path whose
  product falls below it can only fall further, so every pair at or above it is exact.
- 1-ply: a search that expanded a point whose local connections changed is repaired from the
  position's (repair(): only the points whose best path crossed a changed point are searched
  again, to the same doubles), or redone when its source's own steps changed.
- 2.6 the interval of a connection value v is floor(v * intervals) (the last includes 1).

A Pathfinder keeps its searches in per-object buffers: use one per thread.
"""

import numpy as np

from libc.math cimport exp, log
from libc.stdlib cimport malloc, calloc, realloc, free, abort
from libc.string cimport memset, memcpy

cdef extern from *:
    int count_trailing_zeros "__builtin_ctzll" (unsigned long long bits) noexcept nogil

from engine.nets.softseg_layout cimport NUM_FIELDS, board_cells, field_offset
from engine.rules.types cimport MAX_LOCS, MIN_SIZE, MAX_SIZE

DEFAULT_CUTOFF = 0.1            # section 2.6, footnote 2
cdef double PATH_QUANTUM = 64.0    # the pathfinder's buckets per unit of -log(value): a coarser
                                   # quantum makes longer bucket lists to keep in order; the
                                   # empty buckets are skipped by their bitmap
cdef double UNREACHED = 1e300    # dist[] of a point no path has reached (within the cut-off)
cdef enum:                       # listed[]: whether a point is in the search's visited[] and,
    NOT_LISTED = 0               # during a repair, whether its base path is still valid
    CLEAN = 1
    AFFECTED = 2


cdef inline int interval_of(const int *table, const double *bounds, int intervals,
                            double cost) noexcept nogil:
    # floor(value * intervals) of value = exp(-cost): the table on the quantised cost gives it
    # but near an interval bound, which the bounds' own costs (-log(k / intervals), decreasing
    # in k) settle
    cdef int index = <int> (cost * INTERVAL_TABLE_SCALE)
    cdef int k
    if index >= INTERVAL_TABLE_SIZE:
        index = INTERVAL_TABLE_SIZE - 1
    k = table[index]
    while k + 1 < intervals and cost <= bounds[k + 1]:
        k += 1
    while k > 0 and cost > bounds[k]:
        k -= 1
    return k


cdef inline void insert_in_order(int *bucket_head, int *entry_next, const double *entry_cost,
                                 unsigned long long *occupied, int bucket, int n) noexcept nogil:
    # entry n into its bucket's list after the entries that cost no more: the points then come
    # out of the queue cheapest first. Without it a bucket is a stack, and where strong
    # connections (costs near 0) crowd a bucket, points come out before their best path and are
    # expanded again (about 3 times each in the positions of trained 9x9 games)
    cdef int previous = -1, e = bucket_head[bucket]
    cdef double cost = entry_cost[n]
    while e >= 0 and entry_cost[e] <= cost:
        previous = e
        e = entry_next[e]
    entry_next[n] = e
    if previous < 0:
        bucket_head[bucket] = n
        occupied[bucket >> 6] |= 1ULL << (bucket & 63)
    else:
        entry_next[previous] = n


cdef class Pathfinder:
    """The global connectivity of both colours from every point, cut off below `cutoff`, with
    each connection value's interval of `intervals` (section 2.6)."""

    def __cinit__(self, double cutoff=DEFAULT_CUTOFF, int intervals=8):
        cdef int k, num_buckets
        self.reach_loc = NULL
        self.reach_interval = NULL
        self.reach_cost = NULL
        self.base_reach_loc = NULL
        self.base_reach_interval = NULL
        self.base_reach_cost = NULL
        self.base_reach_parent = NULL
        self.base_interval_at = NULL
        self.visitors = NULL
        self.entry_loc = NULL
        self.entry_next = NULL
        self.entry_cost = NULL
        self.bucket_head = NULL
        self.occupied = NULL
        if not 1 <= intervals <= SS_MAX_INTERVALS:
            raise ValueError(f"intervals must be 1..{SS_MAX_INTERVALS}, not {intervals}")
        if not 0.0 < cutoff < 1.0:
            raise ValueError(f"cutoff must be in (0, 1), not {cutoff}")
        self.cutoff = cutoff
        self.cost_limit = -log(cutoff) + 1e-12
        self.num_intervals = intervals
        self.searches_made = 0
        self.entry_capacity = 16 * MAX_LOCS
        self.entry_loc = <int *> malloc(self.entry_capacity * sizeof(int))
        self.entry_next = <int *> malloc(self.entry_capacity * sizeof(int))
        self.entry_cost = <double *> malloc(self.entry_capacity * sizeof(double))
        num_buckets = <int> (-log(cutoff) * PATH_QUANTUM) + 4
        self.bucket_head = <int *> malloc(num_buckets * sizeof(int))
        self.occupied = <unsigned long long *> calloc(num_buckets // 64 + 2, sizeof(unsigned long long))
        if (self.entry_loc == NULL or self.entry_next == NULL or self.entry_cost == NULL
                or self.bucket_head == NULL or self.occupied == NULL):
            raise MemoryError()
        for k in range(1, intervals):
            self.interval_cost[k] = -log(<double> k / intervals)
        for k in range(INTERVAL_TABLE_SIZE):       # the interval at the table entry's low end
            self.interval_table[k] = min(<int> (exp(-k / <double> INTERVAL_TABLE_SCALE) * intervals),
                                         intervals - 1)
        for k in range(num_buckets):
            self.bucket_head[k] = -1
        for k in range(MAX_LOCS):
            self.dist[k] = UNREACHED
            self.listed[k] = NOT_LISTED
        memset(self.steps_changed, 0, sizeof(self.steps_changed))
        memset(self.steps_marked, 0, sizeof(self.steps_marked))
        self.num_entries = 0
        self.live_entries = 0
        self.num_changed_steps = 0
        self.num_changed_slots = 0
        self.num_edits = 0
        self.reach_capacity = 0
        self.visitor_words = 0
        self.size = 0
        self.prepare(9)

    def __dealloc__(self):
        free(self.reach_loc)
        free(self.reach_interval)
        free(self.reach_cost)
        free(self.base_reach_loc)
        free(self.base_reach_interval)
        free(self.base_reach_cost)
        free(self.base_reach_parent)
        free(self.base_interval_at)
        free(self.visitors)
        free(self.entry_loc)
        free(self.entry_next)
        free(self.entry_cost)
        free(self.bucket_head)
        free(self.occupied)

    cdef int prepare(self, int size) except -1:
        cdef int f, i, needed
        if size == self.size:
            return 0
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"board size must be {MIN_SIZE}..{MAX_SIZE}, not {size}")
        self.size = size
        self.num_locs = (size + 2) * (size + 2)
        for f in range(NUM_FIELDS):
            self.offsets[f] = field_offset(f, size + 2)
        self.num_cells = board_cells(size, self.cells, self.cell_index, self.num_locs)
        needed = 2 * self.num_cells * self.num_cells
        if needed > self.reach_capacity:
            self.reach_loc = <int *> realloc(self.reach_loc, needed * sizeof(int))
            self.reach_interval = <int *> realloc(self.reach_interval, needed * sizeof(int))
            self.reach_cost = <double *> realloc(self.reach_cost, needed * sizeof(double))
            self.base_reach_loc = <int *> realloc(self.base_reach_loc, needed * sizeof(int))
            self.base_reach_interval = <int *> realloc(self.base_reach_interval, needed * sizeof(int))
            self.base_reach_cost = <double *> realloc(self.base_reach_cost, needed * sizeof(double))
            self.base_reach_parent = <int *> realloc(self.base_reach_parent, needed * sizeof(int))
            self.base_interval_at = <signed char *> realloc(self.base_interval_at,
                                                            2 * self.num_cells * self.num_locs)
            if (self.reach_loc == NULL or self.reach_interval == NULL or self.reach_cost == NULL
                    or self.base_reach_loc == NULL or self.base_reach_interval == NULL
                    or self.base_reach_cost == NULL or self.base_reach_parent == NULL
                    or self.base_interval_at == NULL):
                raise MemoryError()
            self.reach_capacity = needed
        self.visitor_words = (self.num_cells + 63) // 64
        self.visitors = <unsigned long long *> realloc(
            self.visitors, 2 * MAX_LOCS * self.visitor_words * sizeof(unsigned long long))
        if self.visitors == NULL:
            raise MemoryError()
        for i in range(2 * self.num_cells):
            self.reach_count[i] = 0
        return 0

    # ----------------------------------------------------------------- searches

    cdef void set_steps(self, int c, int p, const double *local) noexcept nogil:
        # the steps a path of colour c may take from p: window neighbours on the board whose
        # local connection is at or above the cut-off, at cost -log value, cheapest first (ties
        # in field order); and the cost of p's self-connection unit
        cdef int f, k, n = 0
        cdef int *step_to = self.step_to[c][p]
        cdef double *step_cost = self.step_cost[c][p]
        cdef double value, cost
        value = local[0]
        self.field_cost[c][p][0] = -log(value) if value >= self.cutoff else UNREACHED
        for f in range(1, NUM_FIELDS):
            value = local[f]
            if self.cell_index[p + self.offsets[f]] < 0 or value < self.cutoff:
                self.field_cost[c][p][f] = UNREACHED
                continue
            cost = -log(value)
            self.field_cost[c][p][f] = cost
            k = n
            while k > 0 and step_cost[k - 1] > cost:
                step_cost[k] = step_cost[k - 1]
                step_to[k] = step_to[k - 1]
                k -= 1
            step_cost[k] = cost
            step_to[k] = p + self.offsets[f]
            n += 1
        self.num_steps[c][p] = n

    cdef void queue_point(self, int x) noexcept nogil:
        # queue x at its current distance (the bucket of its quantised cost)
        cdef int bucket = <int> (self.dist[x] * PATH_QUANTUM)
        cdef int n = self.num_entries
        if n == self.entry_capacity:
            self.grow_entries()
        self.entry_loc[n] = x
        self.entry_cost[n] = self.dist[x]
        insert_in_order(self.bucket_head, self.entry_next, self.entry_cost, self.occupied, bucket, n)
        self.num_entries = n + 1
        self.live_entries += 1

    cdef void run_queue(self, int c) noexcept nogil:
        # Colour c's Dijkstra from the queued points over the steps, with a bucket queue on costs
        # quantised to 1/PATH_QUANTUM whose buckets are kept in cost order (insert_in_order()):
        # the points come out cheapest first, so each is expanded once, at its exact best path
        # (no point can improve after it: steps cost >= 0, and so do their floating-point sums);
        # pruned at the cut-off. Points reached for the first time are appended to visited[];
        # the queue is left empty.
        cdef int k, x, y, b = 0, word, entry, stop, n = self.num_entries
        cdef int live = self.live_entries, capacity = self.entry_capacity
        cdef double limit = self.cost_limit, d, nd
        cdef double *dist = self.dist
        cdef int *parent = self.parent
        cdef signed char *listed = self.listed
        cdef int *bucket_head = self.bucket_head
        cdef unsigned long long *occupied = self.occupied
        cdef unsigned long long bits
        cdef int *entry_loc = self.entry_loc
        cdef int *entry_next = self.entry_next
        cdef double *entry_cost = self.entry_cost
        cdef const int *step_to = &self.step_to[c][0][0]
        cdef const double *step_cost = &self.step_cost[c][0][0]
        cdef const int *num_steps = self.num_steps[c]
        while live > 0:
            entry = bucket_head[b]
            if entry < 0:                 # b is spent: on to the first occupied bucket after it
                word = b >> 6
                occupied[word] &= ~(1ULL << (b & 63))
                bits = occupied[word] & (~0ULL << (b & 63))
                while bits == 0:
                    word += 1
                    bits = occupied[word]
                b = (word << 6) + count_trailing_zeros(bits)
                continue
            bucket_head[b] = entry_next[entry]
            live -= 1
            x = entry_loc[entry]
            d = entry_cost[entry]
            if d > dist[x]:               # stale: x was reached more cheaply since
                continue
            stop = x * 8 + num_steps[x]
            for k in range(x * 8, stop):
                nd = d + step_cost[k]
                if nd > limit:            # and so are the dearer steps after it
                    break
                y = step_to[k]
                if nd >= dist[y]:
                    continue
                if listed[y] == NOT_LISTED:
                    listed[y] = CLEAN
                    self.visited[self.num_visited] = y
                    self.num_visited += 1
                dist[y] = nd
                parent[y] = x
                if n == capacity:
                    self.num_entries = n
                    self.grow_entries()
                    capacity = self.entry_capacity
                    entry_loc = self.entry_loc
                    entry_next = self.entry_next
                    entry_cost = self.entry_cost
                entry_loc[n] = y
                entry_cost[n] = nd
                insert_in_order(bucket_head, entry_next, entry_cost, occupied,
                                <int> (nd * PATH_QUANTUM), n)
                n += 1
                live += 1
        occupied[b >> 6] &= ~(1ULL << (b & 63))
        self.num_entries = n
        self.live_entries = 0

    cdef void search(self, int c, int i, bint record) noexcept nogil:
        # Colour c's connection values from cell i into its reach slot, from scratch.
        # record: the base position's search (write_reach()).
        cdef int p = self.cells[i]
        self.searches_made += 1
        self.dist[p] = 0.0
        self.parent[p] = -1
        self.listed[p] = CLEAN
        self.visited[0] = p
        self.num_visited = 1
        self.num_entries = 0
        self.live_entries = 0
        self.queue_point(p)
        self.run_queue(c)
        self.write_reach(c, i, record)

    cdef void set_all_steps(self, const double *units, int row, int first) noexcept nogil:
        cdef int c, i, p
        for c in range(2):
            for i in range(self.num_cells):
                p = self.cells[i]
                self.set_steps(c, p, units + p * row + first + NUM_FIELDS * c)

    cdef void search_all(self, bint record) noexcept nogil:
        # record as a constant in each call, so that the compiler specialises search() for it
        cdef int c, i
        for c in range(2):
            for i in range(self.num_cells):
                if record:
                    self.search(c, i, True)
                else:
                    self.search(c, i, False)

    cdef inline void set_entry(self, int e, int x, double cost) noexcept nogil:
        self.reach_loc[e] = x
        self.reach_cost[e] = cost
        self.reach_interval[e] = interval_of(self.interval_table, self.interval_cost,
                                             self.num_intervals, cost)

    cdef void write_reach(self, int c, int i, bint record) noexcept nogil:
        # The finished search's reach slot: the source's self-connection unit, then every
        # visited point within the cut-off; the scratch cleared for the next search. record:
        # also the base paths' parents, and i in the visitor sets of the points reached.
        cdef int k, x, e, p = self.cells[i], slot = c * self.num_cells + i
        cdef double cost = self.field_cost[c][p][0]
        cdef unsigned long long bit = 1ULL << (i & 63)
        cdef int word = i >> 6, words = self.visitor_words
        e = slot * self.num_cells
        if record:
            self.order_parents_first()
        if cost != UNREACHED:             # p to itself: its self-connection unit
            self.set_entry(e, p, cost)
            e += 1
        for k in range(self.num_visited):
            x = self.visited[k]
            cost = self.dist[x]
            self.dist[x] = UNREACHED
            self.listed[x] = NOT_LISTED
            if record:
                self.visitors[(c * MAX_LOCS + x) * words + word] |= bit
            if k == 0:                    # the source (its self entry is above)
                continue
            if record:
                self.base_reach_parent[e] = self.parent[x]
            self.set_entry(e, x, cost)
            e += 1
        self.reach_count[slot] = e - slot * self.num_cells

    cdef void order_parents_first(self) noexcept nogil:
        # visited[] in breadth-first order of the search's tree (parent[]), so that every point
        # comes after its parent: a repair then classifies the base's points in one pass
        cdef int k, x, y, head = 0, tail = 1, n = self.num_visited
        cdef int *first_child = self.first_child
        cdef int *next_sibling = self.next_sibling
        cdef int *order = self.path_scratch
        for k in range(n):
            first_child[self.visited[k]] = -1
        for k in range(1, n):
            x = self.visited[k]
            next_sibling[x] = first_child[self.parent[x]]
            first_child[self.parent[x]] = x
        order[0] = self.visited[0]
        while head < tail:
            y = first_child[order[head]]
            head += 1
            while y >= 0:
                order[tail] = y
                tail += 1
                y = next_sibling[y]
        memcpy(self.visited, order, n * sizeof(int))

    cdef void grow_entries(self) noexcept nogil:
        cdef int capacity = 2 * self.entry_capacity
        self.entry_loc = <int *> realloc(self.entry_loc, capacity * sizeof(int))
        self.entry_next = <int *> realloc(self.entry_next, capacity * sizeof(int))
        self.entry_cost = <double *> realloc(self.entry_cost, capacity * sizeof(double))
        if self.entry_loc == NULL or self.entry_next == NULL or self.entry_cost == NULL:
            abort()
        self.entry_capacity = capacity

    # ----------------------------------------------------------------- successors

    cdef void clear_visitors(self) noexcept nogil:
        memset(self.visitors, 0, 2 * MAX_LOCS * self.visitor_words * sizeof(unsigned long long))

    cdef void save_base(self) noexcept nogil:
        # the base position's slots, the interval of each point in each slot, and its steps
        cdef int k, slot, e, p, N = self.num_cells
        memcpy(self.base_reach_loc, self.reach_loc, 2 * N * N * sizeof(int))
        memcpy(self.base_reach_interval, self.reach_interval, 2 * N * N * sizeof(int))
        memcpy(self.base_reach_cost, self.reach_cost, 2 * N * N * sizeof(double))
        memcpy(self.base_reach_count, self.reach_count, 2 * N * sizeof(int))
        memset(self.base_interval_at, -1, 2 * N * self.num_locs)
        for slot in range(2 * N):
            for e in range(slot * N, slot * N + self.reach_count[slot]):
                self.base_interval_at[slot * self.num_locs + self.reach_loc[e]] = \
                    <signed char> self.reach_interval[e]
        memcpy(self.base_step_to, self.step_to, sizeof(self.step_to))
        memcpy(self.base_step_cost, self.step_cost, sizeof(self.step_cost))
        memcpy(self.base_num_steps, self.num_steps, sizeof(self.num_steps))
        memcpy(self.base_field_cost, self.field_cost, sizeof(self.field_cost))
        for k in range(self.num_changed_steps):
            p = self.changed_steps[k]
            self.steps_marked[p] = False
            self.steps_changed[0][p] = False
            self.steps_changed[1][p] = False
        self.num_changed_steps = 0
        self.num_changed_slots = 0

    cdef void restore_base(self) noexcept nogil:
        # undo what a successor changed: the steps set anew and the slots searched again
        cdef int k, p, c, slot, start, count
        for k in range(self.num_changed_steps):
            p = self.changed_steps[k]
            self.steps_marked[p] = False
            for c in range(2):
                self.num_steps[c][p] = self.base_num_steps[c][p]
                memcpy(self.step_to[c][p], self.base_step_to[c][p], 8 * sizeof(int))
                memcpy(self.step_cost[c][p], self.base_step_cost[c][p], 8 * sizeof(double))
                memcpy(self.field_cost[c][p], self.base_field_cost[c][p],
                       NUM_FIELDS * sizeof(double))
                self.steps_changed[c][p] = False
        self.num_changed_steps = 0
        for k in range(self.num_changed_slots):
            slot = self.changed_slots[k]
            start = slot * self.num_cells
            count = self.base_reach_count[slot]
            memcpy(self.reach_loc + start, self.base_reach_loc + start, count * sizeof(int))
            memcpy(self.reach_interval + start, self.base_reach_interval + start, count * sizeof(int))
            memcpy(self.reach_cost + start, self.base_reach_cost + start, count * sizeof(double))
            self.reach_count[slot] = count
        self.num_changed_slots = 0

    cdef void clear_dirty(self) noexcept nogil:
        memset(self.dirty_bits, 0, sizeof(self.dirty_bits))
        self.dirty_word = 0

    cdef inline void note_steps(self, int p) noexcept nogil:
        # p's steps are set anew: restore_base() puts the base's back
        if not self.steps_marked[p]:
            self.steps_marked[p] = True
            self.changed_steps[self.num_changed_steps] = p
            self.num_changed_steps += 1

    cdef void mark_steps(self, int c, int p, const double *local) noexcept nogil:
        cdef int w, words = self.visitor_words
        self.steps_changed[c][p] = True
        self.note_steps(p)
        self.set_steps(c, p, local)
        for w in range(words):
            self.dirty_bits[c * words + w] |= self.visitors[(c * MAX_LOCS + p) * words + w]

    cdef void mark_self(self, int c, int p, const double *local) noexcept nogil:
        cdef int i = self.cell_index[p]
        self.note_steps(p)
        self.set_steps(c, p, local)
        self.dirty_bits[c * self.visitor_words + (i >> 6)] |= 1ULL << (i & 63)

    cdef int next_dirty_slot(self) noexcept nogil:
        cdef int words = self.visitor_words, c, i, slot
        cdef unsigned long long bits
        while self.dirty_word < 2 * words:
            bits = self.dirty_bits[self.dirty_word]
            if bits:
                self.dirty_bits[self.dirty_word] = bits & (bits - 1)
                c = self.dirty_word // words
                i = (self.dirty_word - c * words) * 64 + count_trailing_zeros(bits)
                slot = c * self.num_cells + i
                self.changed_slots[self.num_changed_slots] = slot
                self.num_changed_slots += 1
                return slot
            self.dirty_word += 1
        return -1

    cdef bint update_slot(self, int slot) noexcept nogil:
        cdef int c = slot // self.num_cells, i = slot - c * self.num_cells
        if self.steps_changed[c][self.cells[i]]:
            self.search(c, i, False)
            return False
        self.repair(c, i)
        return True

    cdef void repair(self, int c, int i) noexcept nogil:
        # Colour c's search from cell i for a successor, from the base position's (the source's
        # own steps unchanged): a point whose base path never leaves a point with changed steps
        # (CLEAN) keeps its base cost, which the successor can only lower; the others (AFFECTED)
        # start from their best step out of a clean point; then the Dijkstra runs from them and
        # from the clean points whose steps changed. It ends where a search from scratch would:
        # every point's cost is the exact best path (the same sums, so the same doubles).
        cdef int k, e, f, x, y, q, num_affected = 0, num_loaded
        cdef int p = self.cells[i], slot = c * self.num_cells + i
        cdef int *affected = self.path_scratch
        cdef int first = slot * self.num_cells, stop = first + self.base_reach_count[slot]
        cdef double limit = self.cost_limit, best, nd
        cdef double *dist = self.dist
        cdef signed char *listed = self.listed
        cdef const bint *steps_changed = self.steps_changed[c]
        self.searches_made += 1
        dist[p] = 0.0
        listed[p] = CLEAN
        self.visited[0] = p
        self.num_visited = 1
        self.num_entries = 0
        self.live_entries = 0
        # the base's points, parents first (write_reach()), classified as they come
        for e in range(first, stop):
            x = self.base_reach_loc[e]
            if x == p:                    # the self entry, not a path
                continue
            y = self.base_reach_parent[e]
            dist[x] = self.base_reach_cost[e]
            self.base_entry[x] = e
            self.visited[self.num_visited] = x
            self.num_visited += 1
            if listed[y] == CLEAN and not steps_changed[y]:
                listed[x] = CLEAN
                if steps_changed[x]:
                    self.queue_point(x)
            else:
                listed[x] = AFFECTED
                affected[num_affected] = x
                num_affected += 1
        for k in range(num_affected):
            q = affected[k]
            best = UNREACHED
            for f in range(1, NUM_FIELDS):
                x = q - self.offsets[f]
                if listed[x] == CLEAN:
                    nd = dist[x] + self.field_cost[c][x][f]
                    if nd < best:
                        best = nd
            dist[q] = best
            if best <= limit:
                self.queue_point(q)
        num_loaded = self.num_visited
        self.run_queue(c)
        self.write_repaired(c, i, num_loaded)

    cdef void write_repaired(self, int c, int i, int num_loaded) noexcept nogil:
        # A repair's reach slot, edited in place: restore_base() has left the base's entries
        # there, so only the points whose cost changed, those lost (now beyond the cut-off) and
        # those found (visited[num_loaded..]) are written, and the self entry if it changed;
        # the scratch cleared for the next search. The entries whose interval changed are
        # listed in edit_*[], in the order they were written.
        cdef int k, x, e, p = self.cells[i], slot = c * self.num_cells + i
        cdef int first = slot * self.num_cells, stop = first + self.reach_count[slot]
        cdef int lost = 0
        cdef double limit = self.cost_limit, cost = self.field_cost[c][p][0]
        self.num_edits = 0
        if stop > first and self.reach_loc[first] == p:       # the base's self entry
            if cost == UNREACHED:
                self.remove_entry(first)
                lost += 1
            elif cost != self.reach_cost[first]:
                self.change_entry(first, cost)
        elif cost != UNREACHED:
            self.add_entry(stop, p, cost)
            stop += 1
        for k in range(1, self.num_visited):
            x = self.visited[k]
            cost = self.dist[x]
            self.dist[x] = UNREACHED
            self.listed[x] = NOT_LISTED
            if k < num_loaded:
                e = self.base_entry[x]
                if cost > limit:
                    self.remove_entry(e)
                    lost += 1
                elif cost != self.reach_cost[e]:
                    self.change_entry(e, cost)
            elif cost <= limit:
                self.add_entry(stop, x, cost)
                stop += 1
        self.dist[p] = UNREACHED
        self.listed[p] = NOT_LISTED
        if lost:                          # close the gaps
            e = first
            for k in range(first, stop):
                if self.reach_loc[k] >= 0:
                    self.reach_loc[e] = self.reach_loc[k]
                    self.reach_cost[e] = self.reach_cost[k]
                    self.reach_interval[e] = self.reach_interval[k]
                    e += 1
            stop = e
        self.reach_count[slot] = stop - first

    cdef void change_entry(self, int e, double cost) noexcept nogil:
        # entry e's point at a new cost: an edit if its interval changes
        cdef int before = self.reach_interval[e]
        self.set_entry(e, self.reach_loc[e], cost)
        if self.reach_interval[e] != before:
            self.log_edit(self.reach_loc[e], before, self.reach_interval[e])

    cdef void remove_entry(self, int e) noexcept nogil:
        # entry e's point lost (the gap is closed afterwards)
        self.log_edit(self.reach_loc[e], self.reach_interval[e], -1)
        self.reach_loc[e] = -1

    cdef void add_entry(self, int e, int x, double cost) noexcept nogil:
        self.set_entry(e, x, cost)
        self.log_edit(x, -1, self.reach_interval[e])

    cdef inline void log_edit(self, int x, int before, int after) noexcept nogil:
        self.edit_loc[self.num_edits] = x
        self.edit_before[self.num_edits] = <signed char> before
        self.edit_after[self.num_edits] = <signed char> after
        self.num_edits += 1

    # ----------------------------------------------------------------- Python API

    def connectivity(self):
        """The last searches' global connectivity: (2, num_locs, num_locs), [colour][p][q] the
        connection value of p to q (0 below the cut-off); colour 0 is the side to move."""
        result = np.zeros((2, self.num_locs, self.num_locs))
        cdef int c, i, e, first
        for c in range(2):
            for i in range(self.num_cells):
                first = (c * self.num_cells + i) * self.num_cells
                for e in range(first, first + self.reach_count[c * self.num_cells + i]):
                    result[c, self.cells[i], self.reach_loc[e]] = exp(-self.reach_cost[e])
        return result


def pathfinder_reference(local, int size, double cutoff=DEFAULT_CUTOFF):
    """The pathfinder alone on given local connections (num_locs, 2, 9), for tests: returns the
    connectivity (2, num_locs, num_locs) as SoftSegNetwork computes it."""
    cdef Pathfinder paths = Pathfinder(cutoff, 1)   # the intervals do not change the connectivity
    paths.prepare(size)
    local = np.ascontiguousarray(local, dtype=np.float64)
    if local.shape != (paths.num_locs, 2, NUM_FIELDS):
        raise ValueError(f"local connections must have shape ({paths.num_locs}, 2, 9)")
    cdef double[:, :, ::1] view = local
    cdef int i, c, p
    for c in range(2):
        for i in range(paths.num_cells):
            p = paths.cells[i]
            paths.set_steps(c, p, &view[p, c, 0])
    paths.search_all(False)
    return paths.connectivity()
