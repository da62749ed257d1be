# The soft-segmentation network's connectivity pathfinder (Enzenberger 2003, section 2.5): the C
# layout and the contracts of engine/nets/softseg_pathfinder.pyx. The lattice, fields and cells
# are softseg_layout.pxd's.
#
# Reach slots. The global connectivity of colour c (0 the side to move, 1 the other) from source
# cell i is the reach slot s = c * num_cells + i: the points reached within the cut-off,
# reach_loc/reach_cost/reach_interval[s * num_cells ..][0..reach_count[s]), the source's
# self-connection first when it is at or above the cut-off. reach_cost is -log of the connection
# value, reach_interval its interval floor(value * intervals) (section 2.6).
#
# Use. set_steps() gives every point its steps (from its local-connection units) for a colour,
# then search() fills a slot. For successors: the base position's searches with record set, then
# save_base(); per successor, mark_steps()/mark_self() for the points whose units changed, then
# update_slot() of each slot next_dirty_slot() gives, and restore_base() before the next one.

cimport cython

from engine.nets.softseg_layout cimport NUM_FIELDS
from engine.rules.types cimport MAX_LOCS

cdef enum:
    SS_MAX_INTERVALS = 64
    INTERVAL_TABLE_SIZE = 1024    # interval_of()'s table (softseg_pathfinder.pyx): costs 0 .. 4
                                  # (values down to 0.018)
    INTERVAL_TABLE_SCALE = 256    # entries per unit of cost
    SS_MAX_WORDS = 12             # 64-bit words of a bitset over the cells (MAX_LOCS / 64 + 1)


@cython.final                     # no subclasses: its methods are called directly, and inlined
cdef class Pathfinder:
    cdef readonly double cutoff
    cdef readonly int num_intervals
    cdef readonly long long searches_made    # searches (one source, one colour) so far
    cdef double cost_limit                   # -log(cutoff): the dearest path kept
    cdef double interval_cost[SS_MAX_INTERVALS]   # -log(k / intervals): interval k's lower bound
    cdef int interval_table[INTERVAL_TABLE_SIZE]  # interval at cost index / INTERVAL_TABLE_SCALE
    # the lattice (prepare() sets the size)
    cdef int size, num_locs, num_cells
    cdef int offsets[NUM_FIELDS]
    cdef int cells[MAX_LOCS]
    cdef int cell_index[MAX_LOCS]            # loc -> index into cells, -1 off the board
    # the reach slots
    cdef int reach_count[2 * MAX_LOCS]
    cdef int *reach_loc
    cdef int *reach_interval
    cdef double *reach_cost
    cdef int reach_capacity
    # Search scratch. Steps per colour and point, cheapest first (a search stops scanning a
    # point's steps at the first that leaves the cut-off), and per field (field_cost, UNREACHED
    # where there is no step; field 0 the self-connection's cost) for the repair's look at a
    # point's predecessors. Between searches dist[] is UNREACHED, listed[] NOT_LISTED and the
    # bucket queue empty everywhere, so a search clears only what it touched.
    cdef int step_to[2][MAX_LOCS][8]
    cdef double step_cost[2][MAX_LOCS][8]    # -log(local connection) >= 0
    cdef int num_steps[2][MAX_LOCS]
    cdef double field_cost[2][MAX_LOCS][NUM_FIELDS]
    cdef double dist[MAX_LOCS]
    cdef int parent[MAX_LOCS]                # the point dist[] came from (base searches)
    cdef signed char listed[MAX_LOCS]        # NOT_LISTED, or in visited[] and CLEAN / AFFECTED
    cdef int visited[MAX_LOCS]
    cdef int num_visited
    cdef int path_scratch[MAX_LOCS]
    cdef int first_child[MAX_LOCS]           # the search's tree (order_parents_first())
    cdef int next_sibling[MAX_LOCS]
    cdef int base_entry[MAX_LOCS]            # a repair: each loaded point's entry in its slot
    cdef int *bucket_head                    # per bucket, its first entry (-1: empty)
    cdef unsigned long long *occupied        # per bucket, a bit: whether it holds entries
    cdef int *entry_loc
    cdef int *entry_next
    cdef double *entry_cost
    cdef int entry_capacity
    cdef int num_entries                     # entries used by the search under way
    cdef int live_entries                    # entries still queued
    # Successors: the base position's reach slots and steps, per colour and point the bitset of
    # the base searches (source cells) that expanded it, which points' steps differ from the base,
    # the slots to search again, and those changed since the base (restore_base()).
    cdef int *base_reach_loc
    cdef int *base_reach_interval
    cdef double *base_reach_cost
    cdef int *base_reach_parent              # the point each reached point's best path came from
    cdef int base_reach_count[2 * MAX_LOCS]
    cdef signed char *base_interval_at       # [slot][loc]: the point's base interval there, -1 none
    cdef unsigned long long *visitors        # [2][MAX_LOCS][visitor_words]
    cdef int visitor_words
    cdef unsigned long long dirty_bits[2 * SS_MAX_WORDS]
    cdef int dirty_word                      # next_dirty_slot()'s place in dirty_bits
    cdef bint steps_changed[2][MAX_LOCS]     # the successor's steps of the point differ
    cdef int base_step_to[2][MAX_LOCS][8]
    cdef double base_step_cost[2][MAX_LOCS][8]
    cdef int base_num_steps[2][MAX_LOCS]
    cdef double base_field_cost[2][MAX_LOCS][NUM_FIELDS]
    cdef int changed_steps[MAX_LOCS]         # the points whose steps (either colour) were set anew
    cdef int num_changed_steps
    cdef bint steps_marked[MAX_LOCS]
    cdef int changed_slots[2 * MAX_LOCS]     # the slots searched or repaired since the base
    cdef int num_changed_slots
    # What the last repair() changed in its slot, in the order written: the point, its interval
    # before (-1: it was not reached) and after (-1: it is lost), for the entries whose interval
    # changed.
    cdef int edit_loc[MAX_LOCS + 1]
    cdef signed char edit_before[MAX_LOCS + 1]
    cdef signed char edit_after[MAX_LOCS + 1]
    cdef int num_edits

    cdef int prepare(self, int size) except -1
    # sets the board size (lattice, cells, buffers); a no-op for the same size
    cdef void set_steps(self, int c, int p, const double *local) noexcept nogil
    # p's steps for colour c from its nine local-connection units local[0..9) of that colour
    # (field order; field 0 the self-connection)
    cdef void search(self, int c, int i, bint record) noexcept nogil
    # colour c's reach slot from cell i, from scratch (Dijkstra on -log values with a bucket
    # queue, cut off at the cut-off). record: a base search (its tree and visitors, for repairs)
    cdef void set_all_steps(self, const double *units, int row, int first) noexcept nogil
    # every cell's steps of both colours from an array of units: per loc a row of `row` doubles,
    # colour c's nine local-connection units at first + NUM_FIELDS * c
    cdef void search_all(self, bint record) noexcept nogil
    # every slot, from the steps as they are
    cdef void clear_visitors(self) noexcept nogil
    # before the base position's searches
    cdef void save_base(self) noexcept nogil
    # after the base position's steps and searches: what successors start from
    cdef void mark_steps(self, int c, int p, const double *local) noexcept nogil
    # a successor: p's steps of colour c differ from the base's (set_steps() with local): every
    # base search that expanded p is to be searched again
    cdef void mark_self(self, int c, int p, const double *local) noexcept nogil
    # a successor: only p's self-connection of colour c differs: p's own search is to be redone
    cdef void clear_dirty(self) noexcept nogil
    # no slot to search again (before the marks; or after them, to keep the connectivity)
    cdef int next_dirty_slot(self) noexcept nogil
    # the next slot to search again (colour by colour, cells in order), -1 after the last
    cdef bint update_slot(self, int slot) noexcept nogil
    # a slot next_dirty_slot() gave, searched again: repaired from the base's (True; edit_*[]
    # say what changed) or, when its source's own steps changed, searched from scratch (False)
    cdef void repair(self, int c, int i) noexcept nogil
    # colour c's slot from cell i for a successor, from the base's (cell i's own steps
    # unchanged): the same doubles as search()
    cdef void restore_base(self) noexcept nogil
    # the base position's steps and slots again
    cdef void queue_point(self, int x) noexcept nogil
    cdef void run_queue(self, int c) noexcept nogil
    cdef void write_reach(self, int c, int i, bint record) noexcept nogil
    cdef void write_repaired(self, int c, int i, int num_loaded) noexcept nogil
    cdef inline void set_entry(self, int e, int x, double cost) noexcept nogil
    cdef void change_entry(self, int e, double cost) noexcept nogil
    cdef void remove_entry(self, int e) noexcept nogil
    cdef void add_entry(self, int e, int x, double cost) noexcept nogil
    cdef inline void log_edit(self, int x, int before, int after) noexcept nogil
    cdef inline void note_steps(self, int p) noexcept nogil
    cdef void order_parents_first(self) noexcept nogil
    cdef void grow_entries(self) noexcept nogil
