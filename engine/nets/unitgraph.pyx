# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""NeuroGo's unit graph (Enzenberger 1996): the position as units (strings and empty points), the
relation expert that connects them, the feature expert that gives each unit its inputs, and the
external expert (Benson's unconditional life) whose verdicts override the network. The network
over this graph is engine/nets/unitnet.pyx; the C layout and the contracts are in unitgraph.pxd.

Reading order: UnitGraph.build() (units, groups, edges, inputs, Benson), build_edges() (the
relation expert), unit_inputs() (the feature expert), benson_colour(), then successor() (what a
move changes) and the Python views the tests read (units(), relations(), inputs(), benson()).

Choices where the paper leaves room (its feature list and its table of relations are lost in our
copy; the text names distances Dn, adjacency, "same" and groups):
- relations, most important first: same, group, adjacent (distance 1), D2 .. Dmax (Dmax a setting,
  3 by default). The distance of two units is the length of the shortest path from a point of one
  to a point of the other whose points in between are all empty, so a wall of stones cuts it.
- groups: the paper's rule (two liberties shared, or one where the opponent would be captured in
  a ladder if he played there), closed transitively; a shared liberty where the opponent cannot
  play at all (suicide) links like a ladder. Only strings are in groups.
- inputs: for strings, Table 1 of NeuroGo 3 (liberties, stones, PON, the two ladder reads); for
  empty points, whose liberty the point is (and whether of a string in atari), the line, and
  NeuroGo 3's point features (liberties and ladder if either side plays here, eyes, eye moves,
  ponnuki, atari, links). Every unit has a constant input, so that the weights of a relation can
  count the units around.
- Benson: engine.rules.game.pass_alive's algorithm, in C here so that every successor pays a few
  microseconds for it (a test holds the two to each other); Müller's extensions are not in.
"""

import numpy as np

from libc.stdlib cimport malloc, realloc, free, abort
from libc.string cimport memcpy, memset

from engine.rules.board cimport Board
from engine.nets.features cimport (BoardFeatures, NO_VALUE, NEED_ALL, SLOT_LIBERTIES_BLACK,
                                   SLOT_LADDER_BLACK, SLOT_EYE_BLACK, SLOT_EYE_MOVES_BLACK,
                                   SLOT_PONNUKI_BLACK, SLOT_ATARI_BLACK, SLOT_LINK_BLACK, SLOT_PON,
                                   SLOT_LADDER_ATTACKER_FIRST, SLOT_LADDER_DEFENDER_FIRST,
                                   SLOT_BLOCK_LIBERTIES, SLOT_BLOCK_STONES)
from engine.rules.types cimport (EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE,
                                 WALL as C_WALL, MAX_LOCS, MIN_SIZE, MAX_SIZE)

# The feature set's name and version: a weight file records them, and a net never meets inputs
# of another version.
FEATURE_SETS = {"units": 1}
DEFAULT_FEATURE_SET = "units"
DEFAULT_MAX_DISTANCE = 3
KIND_NAMES = ("empty", "own", "opponent")
NUM_KINDS = NUM_UNIT_KINDS
NUM_INPUTS = UG_NUM_INPUTS
MAX_DISTANCE = UG_MAX_DISTANCE


# The empty point's inputs read from the feature slots of one colour, in the order unit_inputs()
# writes them: the slot of Black's value (White's is the next), the colour (own: the side to
# move), the input (the first of a run where the slot's value picks one), and whether it does.
DEF NUM_POINT_INPUTS = 13
cdef int POINT_INPUT_SLOT[NUM_POINT_INPUTS]
cdef bint POINT_INPUT_OWN[NUM_POINT_INPUTS]
cdef int POINT_INPUT_FIRST[NUM_POINT_INPUTS]
cdef bint POINT_INPUT_VALUED[NUM_POINT_INPUTS]
for _k, (_slot, _own, _first, _valued) in enumerate((
        (SLOT_LIBERTIES_BLACK, True, E_LIBERTIES_OWN, True),
        (SLOT_LIBERTIES_BLACK, False, E_LIBERTIES_OPPONENT, True),
        (SLOT_LADDER_BLACK, True, E_LADDER_OWN, False),
        (SLOT_LADDER_BLACK, False, E_LADDER_OPPONENT, False),
        (SLOT_EYE_BLACK, True, E_EYE_OWN, False),
        (SLOT_EYE_BLACK, False, E_EYE_OPPONENT, False),
        (SLOT_EYE_MOVES_BLACK, True, E_EYE_MOVES_OWN, True),
        (SLOT_EYE_MOVES_BLACK, False, E_EYE_MOVES_OPPONENT, True),
        (SLOT_PONNUKI_BLACK, True, E_PONNUKI_OWN, False),
        (SLOT_PONNUKI_BLACK, False, E_PONNUKI_OPPONENT, False),
        (SLOT_ATARI_BLACK, True, E_ATARI_IF_OWN, False),
        (SLOT_LINK_BLACK, True, E_LINK_OWN, False),
        (SLOT_LINK_BLACK, False, E_LINK_OPPONENT, False))):
    POINT_INPUT_SLOT[_k], POINT_INPUT_OWN[_k] = _slot, _own
    POINT_INPUT_FIRST[_k], POINT_INPUT_VALUED[_k] = _first, _valued


def relation_names(int max_distance):
    """Relation index -> name: same, group, adjacent, D2 .. Dmax."""
    return ["same", "group", "adjacent"] + [f"D{n}" for n in range(2, max_distance + 1)]


cdef class UnitGraph:
    """The graph of one position (and of its successors, incrementally). Sizes are set per board;
    max_distance is the largest Dn the relation expert draws."""

    def __cinit__(self, int max_distance=DEFAULT_MAX_DISTANCE):
        self.edge_source = NULL
        self.edge_relation = NULL
        if not 1 <= max_distance <= UG_MAX_DISTANCE:
            raise ValueError(f"max_distance must be 1..{UG_MAX_DISTANCE}, not {max_distance}")
        self.max_distance = max_distance
        self.num_relations = REL_ADJACENT + max_distance
        self.features = BoardFeatures(NEED_ALL)
        self.edge_capacity = 32 * MAX_LOCS
        self.edge_source = <int *> malloc(self.edge_capacity * sizeof(int))
        self.edge_relation = <signed char *> malloc(self.edge_capacity)
        if self.edge_source == NULL or self.edge_relation == NULL:
            raise MemoryError()
        self.edges_used = 0
        self.epoch = 0
        memset(self.point_mark, 0, sizeof(self.point_mark))
        memset(self.unit_mark, 0, sizeof(self.unit_mark))
        memset(self.dirty_mark, 0, sizeof(self.dirty_mark))
        memset(self.new_mark, 0, sizeof(self.new_mark))
        self.size = 0
        self.prepare(9)

    def __dealloc__(self):
        free(self.edge_source)
        free(self.edge_relation)

    cdef int prepare(self, int size) except -1:
        cdef int p, row, col, line
        if size == self.size:
            return 0
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"board size must be {MIN_SIZE}..{MAX_SIZE}, not {size}")
        self.size = size
        self.stride = size + 2
        self.num_locs = self.stride * self.stride
        self.neighbour[0] = 1
        self.neighbour[1] = -1
        self.neighbour[2] = self.stride
        self.neighbour[3] = -self.stride
        self.num_cells = 0
        for p in range(MAX_LOCS):
            self.anchor_of[p] = -1
            self.kind[p] = -1
            self.line_bucket[p] = -1
            self.base_anchor_of[p] = -1
            self.base_kind[p] = -1
        for row in range(size):
            for col in range(size):
                p = (row + 1) * self.stride + col + 1
                self.cells[self.num_cells] = p
                self.num_cells += 1
                line = min(min(row, col), min(size - 1 - row, size - 1 - col))
                self.line_bucket[p] = min(line, 3)
        self.features.prepare(size)
        return 0

    cdef unsigned int next_epoch(self) noexcept nogil:
        self.epoch += 1
        if self.epoch == 0:      # wrapped: every mark must be older than the new epoch
            memset(self.point_mark, 0, sizeof(self.point_mark))
            memset(self.unit_mark, 0, sizeof(self.unit_mark))
            memset(self.dirty_mark, 0, sizeof(self.dirty_mark))
            memset(self.new_mark, 0, sizeof(self.new_mark))
            self.epoch = 1
        return self.epoch

    cdef void ensure_edges(self, int room) noexcept nogil:
        cdef int capacity = self.edge_capacity
        if self.edges_used + room <= capacity:
            return
        while capacity < self.edges_used + room:
            capacity *= 2
        self.edge_source = <int *> realloc(self.edge_source, capacity * sizeof(int))
        self.edge_relation = <signed char *> realloc(self.edge_relation, capacity)
        if self.edge_source == NULL or self.edge_relation == NULL:
            abort()         # a lost edge list would silently evaluate another graph
        self.edge_capacity = capacity

    # ----------------------------------------------------------------- the whole graph

    cdef int build(self, Board board, int to_move, bint record) except -1:
        cdef int i, p, a, colour
        self.prepare(board.size)
        self.to_move = to_move
        with nogil:
            self.features.compute_all(board, record)
            for i in range(self.num_cells):
                p = self.cells[i]
                self.kind[p] = -1
            for i in range(self.num_cells):
                p = self.cells[i]
                colour = board.colour[p]
                if colour == C_EMPTY:
                    a = p
                    self.kind[a] = UNIT_EMPTY
                    self.unit_size[a] = 1
                else:
                    a = board.chain_head[p]
                    self.kind[a] = UNIT_OWN if colour == to_move else UNIT_OPPONENT
                    self.unit_size[a] = board.chain_size[a]
                self.anchor_of[p] = a
            self.compute_groups(board)
            self.edges_used = 0
            for i in range(self.num_cells):
                a = self.cells[i]
                if self.anchor_of[a] == a:
                    self.build_edges(board, a)
                    self.num_active[a] = self.unit_inputs(board, a, self.active[a])
            self.compute_benson(board)
            if record:
                self.save_base()
        self.num_dirty_edges = 0
        self.num_changed_inputs = 0
        return 0

    cdef void save_base(self) noexcept nogil:
        cdef int n = self.num_locs, i, a
        memcpy(self.base_anchor_of, self.anchor_of, n * sizeof(int))
        memcpy(self.base_kind, self.kind, n * sizeof(signed char))
        memcpy(self.base_unit_size, self.unit_size, n * sizeof(int))
        memcpy(self.base_edge_start, self.edge_start, n * sizeof(int))
        memcpy(self.base_edge_count, self.edge_count, n * sizeof(int))
        memcpy(self.base_override, self.override, n * sizeof(double))
        memcpy(self.base_group_of, self.group_of, n * sizeof(int))
        memcpy(self.base_group_start, self.group_start, n * sizeof(int))
        memcpy(self.base_group_count, self.group_count, n * sizeof(int))
        memcpy(self.base_group_members, self.group_members, n * sizeof(int))
        self.base_num_groups = self.num_groups
        self.base_edges_used = self.edges_used
        for i in range(self.num_cells):
            a = self.cells[i]
            if self.anchor_of[a] == a:
                self.base_num_active[a] = self.num_active[a]
                memcpy(self.base_active[a], self.active[a], UG_MAX_ACTIVE)

    cdef void restore_base(self) noexcept nogil:
        cdef int n = self.num_locs, i, a
        memcpy(self.anchor_of, self.base_anchor_of, n * sizeof(int))
        memcpy(self.kind, self.base_kind, n * sizeof(signed char))
        memcpy(self.unit_size, self.base_unit_size, n * sizeof(int))
        memcpy(self.edge_start, self.base_edge_start, n * sizeof(int))
        memcpy(self.edge_count, self.base_edge_count, n * sizeof(int))
        memcpy(self.override, self.base_override, n * sizeof(double))
        memcpy(self.group_of, self.base_group_of, n * sizeof(int))
        memcpy(self.group_start, self.base_group_start, n * sizeof(int))
        memcpy(self.group_count, self.base_group_count, n * sizeof(int))
        memcpy(self.group_members, self.base_group_members, n * sizeof(int))
        self.num_groups = self.base_num_groups
        self.edges_used = self.base_edges_used
        for i in range(self.num_input_touched):
            a = self.input_touched[i]
            self.num_active[a] = self.base_num_active[a]
            memcpy(self.active[a], self.base_active[a], UG_MAX_ACTIVE)
        self.num_input_touched = 0

    # ----------------------------------------------------------------- the relation expert

    cdef void compute_groups(self, Board board) noexcept nogil:
        """group_of / group_members of the strings of board (anchor_of must be set): union-find
        over the links of pairs of one colour, then the classes listed by increasing anchor."""
        cdef int i, j, k, p, q, x, a, b, s, t, colour, opponent, stone, head, count
        cdef int num_touched
        cdef const signed char *slots
        for i in range(self.num_cells):
            p = self.cells[i]
            self.group_of[p] = -1
            if self.anchor_of[p] == p and self.kind[p] != UNIT_EMPTY:
                self.parent[p] = p
        for i in range(self.num_cells):
            s = self.cells[i]
            if self.anchor_of[s] != s or self.kind[s] == UNIT_EMPTY:
                continue
            colour = board.colour[s]
            opponent = 3 - colour
            # each liberty of s once (point_mark); at each, every string of s's colour with a
            # larger anchor counted once (a string can touch a liberty from two sides), so that
            # each pair is weighed once, from its smaller anchor
            self.next_epoch()
            num_touched = 0
            stone = s
            while True:
                for j in range(4):
                    p = stone + self.neighbour[j]
                    if board.colour[p] != C_EMPTY or self.point_mark[p] == self.epoch:
                        continue
                    self.point_mark[p] = self.epoch
                    for k in range(4):
                        q = p + self.neighbour[k]
                        if board.colour[q] != colour:
                            continue
                        t = self.anchor_of[q]
                        if t <= s:
                            continue
                        x = 0      # count t at its first neighbour of p only
                        while x < k:
                            if board.colour[p + self.neighbour[x]] == colour and \
                                    self.anchor_of[p + self.neighbour[x]] == t:
                                break
                            x += 1
                        if x < k:
                            continue
                        if self.unit_mark[t] != self.epoch:
                            self.unit_mark[t] = self.epoch
                            self.shared_count[t] = 0
                            self.touched[num_touched] = t
                            num_touched += 1
                        self.shared_count[t] += 1
                        self.shared_point[t] = p
                stone = board.next_in_chain[stone]
                if stone == s:
                    break
            for j in range(num_touched):
                t = self.touched[j]
                count = self.shared_count[t]
                if count == 1:
                    slots = self.features.cell_values(self.shared_point[t])
                    if slots[SLOT_LIBERTIES_BLACK + opponent - 1] != 0 and \
                            slots[SLOT_LADDER_BLACK + opponent - 1] == NO_VALUE:
                        continue     # the opponent can cut there and survive
                a = s
                while self.parent[a] != a:
                    a = self.parent[a]
                b = t
                while self.parent[b] != b:
                    b = self.parent[b]
                if a != b:
                    if a < b:
                        self.parent[b] = a
                    else:
                        self.parent[a] = b
        # classes: members by increasing anchor, groups numbered by their smallest anchor
        self.num_groups = 0
        for i in range(self.num_cells):
            s = self.cells[i]
            if self.anchor_of[s] != s or self.kind[s] == UNIT_EMPTY:
                continue
            a = s
            while self.parent[a] != a:
                a = self.parent[a]
            self.parent[s] = a          # path compression for the passes below
            if a == s:
                self.group_of[s] = self.num_groups
                self.group_count[self.num_groups] = 0
                self.num_groups += 1
            else:
                self.group_of[s] = self.group_of[a]
            self.group_count[self.group_of[s]] += 1
        count = 0
        for i in range(self.num_groups):
            self.group_start[i] = count
            count += self.group_count[i]
            self.group_count[i] = 0
        for i in range(self.num_cells):
            s = self.cells[i]
            if self.anchor_of[s] != s or self.kind[s] == UNIT_EMPTY:
                continue
            j = self.group_of[s]
            self.group_members[self.group_start[j] + self.group_count[j]] = s
            self.group_count[j] += 1

    cdef void build_edges(self, Board board, int a) noexcept nogil:
        """Unit a's incoming edges (the order of unitgraph.pxd), appended to the edge pool."""
        cdef int head = 0, tail = 0, i, j, x, y, d, b, g, stone
        cdef unsigned int epoch = self.next_epoch()
        cdef int limit = self.max_distance
        self.ensure_edges(self.num_cells + 1)
        cdef int *source = self.edge_source + self.edges_used
        cdef signed char *relation = self.edge_relation + self.edges_used
        cdef int n = 0
        source[n] = a
        relation[n] = REL_SAME
        n += 1
        self.unit_mark[a] = epoch
        if self.kind[a] != UNIT_EMPTY:
            g = self.group_of[a]
            for i in range(self.group_start[g], self.group_start[g] + self.group_count[g]):
                b = self.group_members[i]
                if b != a:
                    source[n] = b
                    relation[n] = REL_GROUP
                    n += 1
                    self.unit_mark[b] = epoch
            stone = a
            while True:
                self.point_mark[stone] = epoch
                self.queue[tail] = stone
                self.queue_depth[tail] = 0
                tail += 1
                stone = board.next_in_chain[stone]
                if stone == a:
                    break
        else:
            self.point_mark[a] = epoch
            self.queue[tail] = a
            self.queue_depth[tail] = 0
            tail += 1
        while head < tail:
            x = self.queue[head]
            d = self.queue_depth[head]
            head += 1
            for j in range(4):
                y = x + self.neighbour[j]
                if self.point_mark[y] == epoch or board.colour[y] == C_WALL:
                    continue
                self.point_mark[y] = epoch
                b = self.anchor_of[y]
                if self.unit_mark[b] != epoch:
                    self.unit_mark[b] = epoch
                    source[n] = b
                    relation[n] = REL_ADJACENT + d
                    n += 1
                if board.colour[y] == C_EMPTY and d + 1 < limit:
                    self.queue[tail] = y
                    self.queue_depth[tail] = d + 1
                    tail += 1
        self.edge_start[a] = self.edges_used
        self.edge_count[a] = n
        self.edges_used += n

    # ----------------------------------------------------------------- the feature expert

    cdef int unit_inputs(self, Board board, int a, signed char *out) noexcept nogil:
        """The active inputs of unit a (current board and anchors) into out; returns how many."""
        cdef int own = self.to_move, opponent = 3 - self.to_move, n = 0, j, k, q, c, v
        cdef bint own_next = False, opponent_next = False, own_atari = False, opponent_atari = False
        cdef const signed char *slots = self.features.cell_values(a)
        out[n] = E_PRESENT
        n += 1
        if self.kind[a] != UNIT_EMPTY:
            v = slots[SLOT_BLOCK_LIBERTIES]
            if v != NO_VALUE:
                out[n] = S_LIBERTIES + v
                n += 1
            v = slots[SLOT_BLOCK_STONES]
            if v != NO_VALUE:
                out[n] = S_STONES + v
                n += 1
            v = slots[SLOT_PON]
            if v != NO_VALUE:
                out[n] = S_PON + v
                n += 1
            if slots[SLOT_LADDER_ATTACKER_FIRST] != NO_VALUE:
                out[n] = S_LADDER_ATTACKER_FIRST
                n += 1
            if slots[SLOT_LADDER_DEFENDER_FIRST] != NO_VALUE:
                out[n] = S_LADDER_DEFENDER_FIRST
                n += 1
            return n
        out[n] = E_LINE + self.line_bucket[a]
        n += 1
        for j in range(4):
            q = a + self.neighbour[j]
            c = board.colour[q]
            if c == own:
                own_next = True
                if board.in_atari(board.chain_head[q]):
                    own_atari = True
            elif c == opponent:
                opponent_next = True
                if board.in_atari(board.chain_head[q]):
                    opponent_atari = True
        if own_next:
            out[n] = E_OWN_LIBERTY
            n += 1
        if opponent_next:
            out[n] = E_OPPONENT_LIBERTY
            n += 1
        if own_atari:
            out[n] = E_OWN_ATARI_LIBERTY
            n += 1
        if opponent_atari:
            out[n] = E_OPPONENT_ATARI_LIBERTY
            n += 1
        for k in range(NUM_POINT_INPUTS):
            v = slots[POINT_INPUT_SLOT[k] + (own if POINT_INPUT_OWN[k] else opponent) - 1]
            if v != NO_VALUE:
                out[n] = POINT_INPUT_FIRST[k] + (v if POINT_INPUT_VALUED[k] else 0)
                n += 1
        return n

    # ----------------------------------------------------------------- the external expert

    cdef void compute_benson(self, Board board) noexcept nogil:
        cdef int i, p
        for i in range(self.num_cells):
            p = self.cells[i]
            self.override[p] = -1.0
        self.benson_colour(board, self.to_move, 1.0)
        self.benson_colour(board, 3 - self.to_move, 0.0)

    cdef void benson_colour(self, Board board, int colour, double value) noexcept nogil:
        """Benson's algorithm for colour (engine.rules.game.pass_alive's steps): override of its
        pass-alive strings and of every unit in a region they make safe set to value."""
        cdef int i, j, k, x, p, q, c, h, r, start, head, tail, num_regions = 0, num_pairs = 0
        cdef int seen[4]
        cdef int num_seen
        cdef bint changed, safe
        cdef unsigned int epoch
        # regions: the 4-connected classes of the points that are not colour's stones
        for i in range(self.num_cells):
            self.region_of[self.cells[i]] = -1
        tail = 0
        for i in range(self.num_cells):
            p = self.cells[i]
            if board.colour[p] == colour or self.region_of[p] >= 0:
                continue
            start = tail
            self.region_of[p] = num_regions
            self.region_points[tail] = p
            tail += 1
            head = start
            while head < tail:
                x = self.region_points[head]
                head += 1
                for j in range(4):
                    q = x + self.neighbour[j]
                    c = board.colour[q]
                    if c != C_WALL and c != colour and self.region_of[q] < 0:
                        self.region_of[q] = num_regions
                        self.region_points[tail] = q
                        tail += 1
            self.region_start[num_regions] = start
            self.region_size[num_regions] = tail - start
            num_regions += 1
        # per region, the chains bordering it, and for each how many of its empty points it
        # touches: vital when that is all of them
        for r in range(num_regions):
            epoch = self.next_epoch()
            self.region_empty[r] = 0
            self.region_first_pair[r] = num_pairs
            for i in range(self.region_start[r], self.region_start[r] + self.region_size[r]):
                p = self.region_points[i]
                num_seen = 0
                for j in range(4):
                    q = p + self.neighbour[j]
                    if board.colour[q] != colour:
                        continue
                    h = board.chain_head[q]
                    if self.unit_mark[h] != epoch:
                        self.unit_mark[h] = epoch
                        self.pair_index[h] = num_pairs
                        self.pair_region[num_pairs] = r
                        self.pair_chain[num_pairs] = h
                        self.pair_count[num_pairs] = 0
                        num_pairs += 1
                    if board.colour[p] != C_EMPTY:
                        continue
                    k = 0
                    while k < num_seen and seen[k] != h:
                        k += 1
                    if k == num_seen:           # a liberty counts once for its chain
                        seen[num_seen] = h
                        num_seen += 1
                        self.pair_count[self.pair_index[h]] += 1
                if board.colour[p] == C_EMPTY:
                    self.region_empty[r] += 1
            self.region_end_pair[r] = num_pairs
            self.region_live[r] = num_pairs > self.region_first_pair[r]
        for k in range(num_pairs):
            self.chain_alive[self.pair_chain[k]] = True
        # drop chains with fewer than two vital live regions, and the regions they border
        changed = True
        while changed:
            changed = False
            for k in range(num_pairs):
                self.vital_count[self.pair_chain[k]] = 0
            for k in range(num_pairs):
                r = self.pair_region[k]
                if self.region_live[r] and self.region_empty[r] > 0 and \
                        self.pair_count[k] == self.region_empty[r]:
                    self.vital_count[self.pair_chain[k]] += 1
            for k in range(num_pairs):
                h = self.pair_chain[k]
                if self.chain_alive[h] and self.vital_count[h] < 2:
                    self.chain_alive[h] = False
                    changed = True
            if changed:
                for k in range(num_pairs):
                    if not self.chain_alive[self.pair_chain[k]]:
                        self.region_live[self.pair_region[k]] = False
        # chains bordering no region at all (a board full of one colour) have no vital region:
        # chain_alive was set only for chains in pairs, so they stay out
        for k in range(num_pairs):
            h = self.pair_chain[k]
            if self.chain_alive[h]:
                self.override[self.anchor_of[h]] = value
        for r in range(num_regions):
            if not self.region_live[r] or self.region_empty[r] == 0:
                continue
            safe = False
            for k in range(self.region_first_pair[r], self.region_end_pair[r]):
                if self.pair_count[k] == self.region_empty[r]:
                    safe = True
                    break
            if safe:
                for i in range(self.region_start[r], self.region_start[r] + self.region_size[r]):
                    self.override[self.anchor_of[self.region_points[i]]] = value
        for k in range(num_pairs):
            self.chain_alive[self.pair_chain[k]] = False

    # ----------------------------------------------------------------- successors

    cdef void mark_dirty(self, int a) noexcept nogil:
        if self.dirty_mark[a] != self.successor_epoch:
            self.dirty_mark[a] = self.successor_epoch
            self.dirty_edges[self.num_dirty_edges] = a
            self.num_dirty_edges += 1

    cdef void successor(self, Board board, int move) noexcept nogil:
        """The current arrays become those of the position after move (see unitgraph.pxd).
        The changed points are the new string's stones (the move and the strings it joined) and
        the captured ones. A unit's edges can change only if one of its paths of at most
        max_distance steps through empty points reaches a changed point: on such a path in the
        successor, the points before the first changed one were empty in the base too, so a
        search from the changed points through the base's empty points finds every such unit.
        Groups are recomputed whole (ladders can change far away) and compared with the base's."""
        cdef int *captured
        cdef int num_captured = board.last_move_captured(&captured)
        cdef int new_anchor = board.chain_head[move], limit = self.max_distance
        cdef int i, j, x, y, d, a, s, g, bg, n, head = 0, tail = 0, stone, start, base_start
        cdef unsigned int epoch, mark
        cdef bint same
        cdef signed char scratch[UG_MAX_ACTIVE]
        self.features.successor(board, move)
        self.successor_epoch += 1
        if self.successor_epoch == 0:
            memset(self.dirty_mark, 0, sizeof(self.dirty_mark))
            memset(self.new_mark, 0, sizeof(self.new_mark))
            self.successor_epoch = 1
        mark = self.successor_epoch
        self.num_dirty_edges = 0
        self.num_changed_inputs = 0
        self.num_input_touched = 0
        # 1. the units within max_distance of a changed point, through the base's empty points
        epoch = self.next_epoch()
        stone = new_anchor
        while True:
            self.point_mark[stone] = epoch
            self.queue[tail] = stone
            self.queue_depth[tail] = 0
            tail += 1
            stone = board.next_in_chain[stone]
            if stone == new_anchor:
                break
        for i in range(num_captured):
            self.point_mark[captured[i]] = epoch
            self.queue[tail] = captured[i]
            self.queue_depth[tail] = 0
            tail += 1
        while head < tail:
            x = self.queue[head]
            d = self.queue_depth[head]
            head += 1
            for j in range(4):
                y = x + self.neighbour[j]
                if self.point_mark[y] == epoch or board.colour[y] == C_WALL:
                    continue
                self.point_mark[y] = epoch     # not a changed point: its unit is the base's
                self.mark_dirty(self.base_anchor_of[y])
                if board.colour[y] == C_EMPTY and d + 1 < limit:
                    self.queue[tail] = y
                    self.queue_depth[tail] = d + 1
                    tail += 1
        # 2. the units the move removed and made
        stone = new_anchor
        while True:
            self.kind[self.base_anchor_of[stone]] = -1
            stone = board.next_in_chain[stone]
            if stone == new_anchor:
                break
        for i in range(num_captured):
            self.kind[self.base_anchor_of[captured[i]]] = -1
        stone = new_anchor
        while True:
            self.anchor_of[stone] = new_anchor
            stone = board.next_in_chain[stone]
            if stone == new_anchor:
                break
        self.kind[new_anchor] = UNIT_OWN if board.colour[move] == self.to_move else UNIT_OPPONENT
        self.unit_size[new_anchor] = board.chain_size[new_anchor]
        self.new_mark[new_anchor] = mark
        self.mark_dirty(new_anchor)
        for i in range(num_captured):
            x = captured[i]
            self.anchor_of[x] = x
            self.kind[x] = UNIT_EMPTY
            self.unit_size[x] = 1
            self.new_mark[x] = mark
            self.mark_dirty(x)
        # 3. groups: a string whose group's members changed has other GROUP edges
        self.compute_groups(board)
        for g in range(self.num_groups):
            start = self.group_start[g]
            s = -1
            for i in range(start, start + self.group_count[g]):
                if self.new_mark[self.group_members[i]] != mark:
                    s = self.group_members[i]
                    break
            if s < 0:
                continue
            bg = self.base_group_of[s]
            base_start = self.base_group_start[bg]
            same = self.group_count[g] == self.base_group_count[bg]
            i = 0
            while same and i < self.group_count[g]:
                same = self.group_members[start + i] == self.base_group_members[base_start + i]
                i += 1
            if same:
                continue
            for i in range(start, start + self.group_count[g]):
                self.mark_dirty(self.group_members[i])
            for i in range(base_start, base_start + self.base_group_count[bg]):
                a = self.base_group_members[i]
                if self.kind[a] != -1 and self.kind[a] != UNIT_EMPTY and self.anchor_of[a] == a:
                    self.mark_dirty(a)
        # 4. the dirty units' edges, after the base's in the pool
        for i in range(self.num_dirty_edges):
            self.build_edges(board, self.dirty_edges[i])
        # 5. inputs: every unit's, kept where they equal the base's
        for i in range(self.num_cells):
            a = self.cells[i]
            if self.anchor_of[a] != a:
                continue
            n = self.unit_inputs(board, a, scratch)
            if self.new_mark[a] != mark and n == self.num_active[a]:
                j = 0
                while j < n and scratch[j] == self.active[a][j]:
                    j += 1
                if j == n:
                    continue
            self.changed_inputs[self.num_changed_inputs] = a
            self.num_changed_inputs += 1
            self.input_touched[self.num_input_touched] = a
            self.num_input_touched += 1
            self.num_active[a] = n
            memcpy(self.active[a], scratch, n)
        # 6. Benson's verdicts, whole
        self.compute_benson(board)

    # ----------------------------------------------------------------- Python views (tests)

    def load(self, Board board, int to_move):
        """Build the graph of board with to_move as own (the side the network sees as Black)."""
        _check_colour(to_move)
        self.build(board, to_move, False)

    def load_successor(self, Board board, int to_move, int move):
        """The graph after the opponent of to_move plays move on board, computed incrementally
        from board's (successor()); board is left with the move played, for a full build of it
        to compare with. Returns (units whose edges were rebuilt, units whose inputs changed)."""
        _check_colour(to_move)
        if not board.is_legal(move, 3 - to_move):
            raise ValueError(f"move {move} is illegal for colour {3 - to_move}")
        self.build(board, to_move, True)
        board.play_move(move, 3 - to_move, False)
        self.successor(board, move)
        return ([self.dirty_edges[i] for i in range(self.num_dirty_edges)],
                [self.changed_inputs[i] for i in range(self.num_changed_inputs)])

    def _anchors(self):
        return [p for p in (self.cells[i] for i in range(self.num_cells)) if self.anchor_of[p] == p]

    def units(self):
        """{anchor: (kind name, sorted points)} of the current graph."""
        points = {}
        for i in range(self.num_cells):
            p = self.cells[i]
            points.setdefault(self.anchor_of[p], []).append(p)
        return {a: (KIND_NAMES[self.kind[a]], sorted(points[a])) for a in self._anchors()}

    def unit_of(self, int point):
        return self.anchor_of[point]

    def relations(self):
        """{(unit, source unit): relation name}, every edge of the current graph."""
        names = relation_names(self.max_distance)
        result = {}
        for a in self._anchors():
            for e in range(self.edge_start[a], self.edge_start[a] + self.edge_count[a]):
                result[(a, self.edge_source[e])] = names[self.edge_relation[e]]
        return result

    def edge_lists(self):
        """{unit: [(source, relation index), ...]} in the order the network sums them."""
        return {a: [(self.edge_source[e], self.edge_relation[e])
                    for e in range(self.edge_start[a], self.edge_start[a] + self.edge_count[a])]
                for a in self._anchors()}

    def groups(self):
        """The groups of strings (sorted anchor lists), by smallest anchor."""
        return [[self.group_members[i] for i in range(self.group_start[g],
                                                      self.group_start[g] + self.group_count[g])]
                for g in range(self.num_groups)]

    def inputs(self):
        """{unit: sorted active input indices}."""
        return {a: sorted(self.active[a][k] for k in range(self.num_active[a]))
                for a in self._anchors()}

    def benson(self):
        """Per loc, the override of its unit (1 own, 0 opponent, -1 none; -1 off the board)."""
        result = np.full(self.num_locs, -1.0)
        for i in range(self.num_cells):
            p = self.cells[i]
            result[p] = self.override[self.anchor_of[p]]
        return result


def _check_colour(int colour):
    if colour != C_BLACK and colour != C_WHITE:
        raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {colour}")
