# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Input features of the evaluator: the registry of features and feature sets, and NeuroGo's
preprocessed board features (Enzenberger 2003, Table 1) computed in C, incrementally for 1-ply.

Reading order: FEATURES and FEATURE_SET_SPECS (what exists, with plane counts and versions),
feature_planes() (the Python view of one feature, used by the tests), then BoardFeatures:
compute_all() (every point of a position), successor() (what one move changes), and how the
ladder reads' footprints (engine/tactics/ladder.pyx) are indexed for successor().

Colours. The slots are computed in real colours; a feature set presents them in the frame where
the side to move is Black (as NeuroGo does, and as engine/nets/network.pyx presents the stones), so
"own" below is the side to move and "opponent" the other colour. Features ignore the ko point:
they describe shapes, and a ladder reader that honoured the root's ko would make every
position's features depend on the previous move.

The definitions (documented choices where Table 1 leaves room):
- liberties if played: true liberties of the block after the move, captures included; 0 when the
  move is suicide.
- ladders: the ladder reader of engine/tactics/ladder.pyx (attacker plays ataris at the
  liberties, defender extends or captures an attacking block in atari; up to 100 moves and 5000
  nodes, unresolved counts as escaped), with the ko point cleared; "if playing here" plays the
  stone, then lets the opponent attack first.
- single-point eye: the board's eye rule (Board.is_eye: every neighbour the colour's stone or the
  edge; at most one opposing diagonal inside, none on the edge).
- moves needed for an eye: the empty neighbours the colour must fill, when no opposing stone is a
  neighbour and the diagonals do not already make it false: 1, 2, >2.
- ponnuki: the four neighbours are on the board and the colour's stones, no diagonal is.
- atari if played: after the move (legal, ko ignored) an adjacent opposing block has one liberty.
- link patterns: two stones of the colour a straight one- or two-point jump apart, or a knight's
  or long knight's move apart, with every point between them empty; those points are the
  pattern's link points (one for the one-point jump, two for the two-point jump and the knight's
  move, four for the long knight's move).
- PON (Tajima and Sanechika's possible omission number, approximated): L1 + L2 / 2 - 3, from the
  block's liberties L1 and its second-order liberties L2 (empty points next to a liberty), so an
  isolated block in atari is -2 and a lone stone in the open 5; bucketed as Table 1.
"""

from collections import namedtuple

import numpy as np

from libc.stdlib cimport malloc, realloc, free, abort
from libc.string cimport memset, memcpy

from engine.rules.board cimport Board
from engine.rules.types cimport EMPTY as C_EMPTY, BLACK as C_BLACK, WHITE as C_WHITE, WALL as C_WALL
from engine.rules.types cimport MAX_LOCS, NO_LOC

# ---------------------------------------------------------------------------------------------
# The registry

# The slots of BoardFeatures.compute()'s rows, by name (see features.pxd).
SLOT = {"liberties_black": SLOT_LIBERTIES_BLACK, "liberties_white": SLOT_LIBERTIES_BLACK + 1,
        "ladder_black": SLOT_LADDER_BLACK, "ladder_white": SLOT_LADDER_BLACK + 1,
        "eye_black": SLOT_EYE_BLACK, "eye_white": SLOT_EYE_BLACK + 1,
        "eye_moves_black": SLOT_EYE_MOVES_BLACK, "eye_moves_white": SLOT_EYE_MOVES_BLACK + 1,
        "ponnuki_black": SLOT_PONNUKI_BLACK, "ponnuki_white": SLOT_PONNUKI_BLACK + 1,
        "atari_black": SLOT_ATARI_BLACK, "atari_white": SLOT_ATARI_BLACK + 1,
        "link_black": SLOT_LINK_BLACK, "link_white": SLOT_LINK_BLACK + 1,
        "pon": SLOT_PON, "ladder_attacker_first": SLOT_LADDER_ATTACKER_FIRST,
        "ladder_defender_first": SLOT_LADDER_DEFENDER_FIRST,
        "block_liberties": SLOT_BLOCK_LIBERTIES, "block_stones": SLOT_BLOCK_STONES}
NUM_SLOT_VALUES = NUM_SLOTS

Feature = namedtuple("Feature", "name planes points slot needs description")
# points: "any" (every lattice cell), "empty_own" / "empty_opponent" (empty points, the slot of
# the side to move / of the other colour), "own_stone" / "opponent_stone" (stones of that side).

FEATURES = {}


def register_feature(name, planes, points, slot, needs, description):
    """Add a feature to the registry (names are unique; a plane count is fixed once published)."""
    if name in FEATURES:
        raise ValueError(f"feature {name!r} is already registered")
    if points not in ("any", "empty_own", "empty_opponent", "own_stone", "opponent_stone"):
        raise ValueError(f"feature {name!r}: unknown point kind {points!r}")
    if planes < 1:
        raise ValueError(f"feature {name!r} needs at least one plane")
    FEATURES[name] = Feature(name, planes, points, slot, needs, description)


register_feature("stone_class", 14, "any", None, 0,
                 "isn14: opponent stone C1..C6, own stone C1..C6, empty, off-board (one-hot; "
                 "engine/nets/network.pyx computes it from the recurrence)")
for _side, _points in (("own", "empty_own"), ("opponent", "empty_opponent")):
    register_feature(f"liberties_if_{_side}_plays", 6, _points, SLOT_LIBERTIES_BLACK, NEED_TACTICS,
                     f"empty point: liberties if the {_side} side plays here: 0 (suicide), 1, 2, "
                     f"3, 4, >4")
    register_feature(f"ladder_if_{_side}_plays", 1, _points, SLOT_LADDER_BLACK, NEED_POINT_LADDERS,
                     f"empty point: a stone of the {_side} side played here is captured in a "
                     f"ladder")
    register_feature(f"eye_{_side}", 1, _points, SLOT_EYE_BLACK, NEED_EYES,
                     f"empty point: single-point eye of the {_side} side")
    register_feature(f"eye_moves_{_side}", 3, _points, SLOT_EYE_MOVES_BLACK, NEED_EYES,
                     f"empty point: 1, 2, >2 moves of the {_side} side make it a single-point eye")
    register_feature(f"ponnuki_{_side}", 1, _points, SLOT_PONNUKI_BLACK, NEED_EYES,
                     f"empty point: centre of a ponnuki of the {_side} side")
register_feature("atari_if_own_plays", 1, "empty_own", SLOT_ATARI_BLACK, NEED_TACTICS,
                 "empty point: a move here by the side to move puts an opposing block in atari")
for _side, _points in (("own", "empty_own"), ("opponent", "empty_opponent")):
    register_feature(f"link_{_side}", 1, _points, SLOT_LINK_BLACK, NEED_LINKS,
                     f"empty point: link point of a pattern of the {_side} side (one- and "
                     f"two-point jumps, knight's and long knight's moves)")
for _side, _points in (("own", "own_stone"), ("opponent", "opponent_stone")):
    register_feature(f"pon_{_side}", 8, _points, SLOT_PON, NEED_BLOCKS,
                     f"{_side} stone: its block's PON estimate < -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, "
                     f"4.5, >= 4.5")
    register_feature(f"ladder_attacker_first_{_side}", 1, _points, SLOT_LADDER_ATTACKER_FIRST,
                     NEED_BLOCK_LADDERS, f"{_side} stone: its block is captured in a ladder if the "
                                   f"other colour moves first")
    register_feature(f"ladder_defender_first_{_side}", 1, _points, SLOT_LADDER_DEFENDER_FIRST,
                     NEED_BLOCK_LADDERS, f"{_side} stone: its block is captured in a ladder even if "
                                   f"its own colour moves first")
    register_feature(f"block_liberties_{_side}", 4, _points, SLOT_BLOCK_LIBERTIES, NEED_BLOCKS,
                     f"{_side} stone: its block has 1, 2, 3, >3 liberties")
    register_feature(f"block_stones_{_side}", 5, _points, SLOT_BLOCK_STONES, NEED_BLOCKS,
                     f"{_side} stone: its block has 1, 2, 3, 4, >4 stones")

FeatureSetSpec = namedtuple("FeatureSetSpec", "name version features description")
# A set's version changes whenever the meaning of any of its inputs changes: weight files record
# it, and a net is never run on inputs of another version.
FEATURE_SET_SPECS = {
    "isn14": FeatureSetSpec("isn14", 1, ("stone_class",),
                            "Blair's 14 one-hot inputs: white stone C1..C6, black stone C1..C6, "
                            "empty, off-board; classes from the previous evaluation's Z+ and A+ "
                            "summed over the chain's liberties"),
    "neurogo": FeatureSetSpec("neurogo", 1, tuple(FEATURES),
                              "isn14 plus NeuroGo 3's preprocessed inputs (Enzenberger 2003, "
                              "Table 1) in the side-to-move frame; multi-hot"),
    # The "captured in a ladder if playing here" reads are most of neurogo's 1-ply cost (the
    # liberties of every block a move touches are re-read for both colours): this set leaves
    # them out, keeping the blocks' ladder inputs.
    "neurogo_lite": FeatureSetSpec("neurogo_lite", 1,
                                   tuple(name for name in FEATURES
                                         if name not in ("ladder_if_own_plays",
                                                         "ladder_if_opponent_plays")),
                                   "neurogo without the two inputs 'captured in a ladder if "
                                   "playing here' (the blocks' ladder inputs stay); multi-hot"),
}

SetLayout = namedtuple("SetLayout", "name version num_inputs offsets needs max_active one_hot")


def set_layout(name):
    """Input layout of a feature set: offsets {feature: first input}, inputs in feature order."""
    if name not in FEATURE_SET_SPECS:
        raise ValueError(f"unknown feature set {name!r}; known: {sorted(FEATURE_SET_SPECS)}")
    spec = FEATURE_SET_SPECS[name]
    if not spec.features or spec.features[0] != "stone_class":
        raise ValueError(f"feature set {name!r} must start with stone_class (the recurrence and "
                         f"the stone states come from it)")
    offsets, position, needs = {}, 0, 0
    for feature_name in spec.features:
        feature = FEATURES[feature_name]
        offsets[feature_name] = position
        position += feature.planes
        needs |= feature.needs
    one_hot = len(spec.features) == 1
    return SetLayout(name, spec.version, position, offsets, needs, len(spec.features), one_hot)


def slot_of(feature, int own):
    """The slot feature reads for a frame whose side to move is own (real colour)."""
    if feature.points == "empty_own":
        return feature.slot + (own - C_BLACK)
    if feature.points == "empty_opponent":
        return feature.slot + (C_WHITE - own)
    return feature.slot


def feature_values(name, slots, colours, int own):
    """Per point, the active plane of feature name (or -1), from slots (num_locs, NUM_SLOTS) of
    BoardFeatures.compute() and the points' real colours, for the frame where own is to move."""
    feature = FEATURES[name]
    if feature.slot is None:
        raise ValueError(f"{name} is computed by engine/nets/network.pyx (the recurrence), not here")
    colours = np.asarray(colours)
    values = np.asarray(slots)[:, slot_of(feature, own)].astype(np.int64)
    if feature.points in ("empty_own", "empty_opponent"):
        applies = colours == C_EMPTY
    elif feature.points == "own_stone":
        applies = colours == own
    else:
        applies = colours == 3 - own
    return np.where(applies, values, -1)


def feature_planes(board, int to_move, name):
    """The planes of one feature for board with to_move to play: bool (num_locs, planes)."""
    if to_move != C_BLACK and to_move != C_WHITE:
        raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {to_move}")
    feature = FEATURES[name]
    computer = BoardFeatures(feature.needs)
    slots = computer.compute(board)
    colours = np.array([board.get(p) for p in range(board.num_locs)])
    values = feature_values(name, slots, colours, to_move)
    planes = np.zeros((board.num_locs, feature.planes), dtype=bool)
    rows = np.nonzero(values >= 0)[0]
    planes[rows, values[rows]] = True
    return planes


# ---------------------------------------------------------------------------------------------
# Link patterns: (dx, dy) of the second stone, one orientation per unordered pair

_LINK_VECTORS = ((2, 0), (0, 2), (3, 0), (0, 3), (2, 1), (2, -1), (1, 2), (-1, 2),
                 (3, 1), (3, -1), (1, 3), (-1, 3))


def link_points_of(vector):
    """The link points of the pattern with the second stone at vector, relative to the first:
    strictly between the stones along the long axis, anywhere across the short one."""
    vx, vy = vector
    sx, sy = (1 if vx >= 0 else -1), (1 if vy >= 0 else -1)
    if abs(vx) >= abs(vy):
        return [(sx * i, sy * j) for i in range(1, abs(vx)) for j in range(abs(vy) + 1)]
    return [(sx * i, sy * j) for j in range(1, abs(vy)) for i in range(abs(vx) + 1)]


def _link_band():
    """Relative positions of the points whose content can change a point's link slots."""
    band = set()
    for vector in _LINK_VECTORS:
        points = link_points_of(vector)
        for lx, ly in points:
            for qx, qy in [(0, 0), vector] + points:
                band.add((qx - lx, qy - ly))
    band.discard((0, 0))
    return sorted(band)


_BAND = _link_band()
_DIAMOND = [(dx, dy) for dy in range(-2, 3) for dx in range(-2, 3) if abs(dx) + abs(dy) <= 2]


cdef inline signed char bucket(int value, int top) noexcept nogil:
    return <signed char> (value if value < top else top)


# ---------------------------------------------------------------------------------------------

cdef class BoardFeatures:
    """NeuroGo's board features of one position, and of its successors incrementally.
    BoardFeatures(needs=NEED_ALL): needs says which slots to compute (the rest stay -1).
    Not thread-safe: one per Network (which is one per thread)."""

    def __cinit__(self, int needs=NEED_ALL):
        self.needs = needs
        self.size = 0
        self.epoch = 0
        self.scratch_epoch = 0
        self.entries_cap = 4096
        self.queries_cap = 256
        self.entry_query = <int *> malloc(self.entries_cap * sizeof(int))
        self.entry_next = <int *> malloc(self.entries_cap * sizeof(int))
        self.query_point = <int *> malloc(self.queries_cap * sizeof(int))
        if (self.entry_query == NULL or self.entry_next == NULL
                or self.query_point == NULL):
            raise MemoryError()
        memset(self.overlay_mark, 0, sizeof(self.overlay_mark))
        memset(self.block_mark, 0, sizeof(self.block_mark))
        memset(self.touched_mark, 0, sizeof(self.touched_mark))
        memset(self.dirty_mark, 0, sizeof(self.dirty_mark))
        memset(self.tactics_mark, 0, sizeof(self.tactics_mark))
        memset(self.pattern_mark, 0, sizeof(self.pattern_mark))
        memset(self.link_mark, 0, sizeof(self.link_mark))
        memset(self.scratch_mark, 0, sizeof(self.scratch_mark))
        self.num_entries = self.num_queries = self.num_overlay = 0
        self.ladders = LadderReader()
        cdef int p
        for p in range(MAX_LOCS):
            self.first_entry[p] = -1
        cdef int k, j
        self.num_links = len(_LINK_VECTORS)
        for k, vector in enumerate(_LINK_VECTORS):
            self.link_dx[k], self.link_dy[k] = vector
            points = link_points_of(vector)
            self.link_count[k] = len(points)
            for j, (dx, dy) in enumerate(points):
                self.link_point_dx[k][j] = dx
                self.link_point_dy[k][j] = dy
        self.num_band = len(_BAND)
        for k, (dx, dy) in enumerate(_BAND):
            self.band_dx[k] = dx
            self.band_dy[k] = dy
        for k, (dx, dy) in enumerate(_DIAMOND):
            self.diamond_dx[k] = dx
            self.diamond_dy[k] = dy

    def __dealloc__(self):
        free(self.entry_query)
        free(self.entry_next)
        free(self.query_point)

    cdef void prepare(self, int size):
        if self.size == size:
            return
        self.size = size
        self.stride = size + 2
        self.num_locs = self.stride * self.stride
        self.ladders.prepare(size)
        self.neighbour[0] = 1
        self.neighbour[1] = -1
        self.neighbour[2] = self.stride
        self.neighbour[3] = -self.stride
        self.diagonal[0] = 1 + self.stride
        self.diagonal[1] = 1 - self.stride
        self.diagonal[2] = -1 + self.stride
        self.diagonal[3] = -1 - self.stride
        cdef int p, k, j
        for p in range(MAX_LOCS):       # shifted() without a division
            self.row_of[p] = p // self.stride
            self.col_of[p] = p % self.stride
        for k in range(self.num_links):
            self.link_offset[k] = self.link_dx[k] + self.link_dy[k] * self.stride
            for j in range(self.link_count[k]):
                self.link_point_offset[k][j] = (self.link_point_dx[k][j]
                                                + self.link_point_dy[k][j] * self.stride)

    cdef inline int shifted(self, int p, int dx, int dy) noexcept nogil:
        """The on-board point (dx, dy) from p, or -1."""
        cdef int row = self.row_of[p] + dy, col = self.col_of[p] + dx
        if row < 1 or row > self.size or col < 1 or col > self.size:
            return -1
        return row * self.stride + col

    # ------------------------------------------------------------------ ladder footprints

    cdef void begin_query(self) noexcept nogil:
        """A query starts: the ladder reads from here on record their footprint."""
        self.ladders.begin_footprint()
        self.ladders.recording = True

    cdef void end_query(self, int query_point) noexcept nogil:
        """Index the query's footprint: every point it read now names the query."""
        cdef int i, p, query = self.num_queries
        cdef int *bigger
        self.ladders.recording = False
        if self.num_queries == self.queries_cap:
            bigger = <int *> realloc(self.query_point, 2 * self.queries_cap * sizeof(int))
            if bigger == NULL:
                abort()
            self.query_point = bigger
            self.queries_cap *= 2
        self.query_point[query] = query_point
        self.num_queries += 1
        for i in range(self.ladders.footprint_len):
            if self.num_entries == self.entries_cap:
                bigger = <int *> realloc(self.entry_query, 2 * self.entries_cap * sizeof(int))
                if bigger == NULL:
                    abort()
                self.entry_query = bigger
                bigger = <int *> realloc(self.entry_next, 2 * self.entries_cap * sizeof(int))
                if bigger == NULL:
                    abort()
                self.entry_next = bigger
                self.entries_cap *= 2
            p = self.ladders.footprint[i]
            self.entry_query[self.num_entries] = query
            self.entry_next[self.num_entries] = self.first_entry[p]
            self.first_entry[p] = self.num_entries
            self.num_entries += 1

    # ------------------------------------------------------------------ per point and block

    cdef int lone_stone_tactics(self, Board board, int p, int colour, bint *atari) noexcept nogil:
        """Liberties of a stone played at p when it joins no block of its colour and captures
        nothing (then they are its empty neighbours), and whether it ataris an opposing block;
        -1 when the move joins or captures (the caller plays it out). Exact, without playing:
        an opposing block is left in atari when its pseudo-liberties other than p all name one
        point (the board's in_atari test with p's edges taken out)."""
        cdef int i, j, q, c, head, edges, empties = 0
        cdef long long n, total, squares
        atari[0] = False
        for i in range(4):
            q = p + self.neighbour[i]
            c = board.colour[q]
            if c == C_EMPTY:
                empties += 1
            elif c == colour:
                return -1
            elif c != C_WALL:
                head = board.chain_head[q]
                if board.in_atari(head):
                    return -1                 # p is its last liberty: the move captures
                edges = 0
                for j in range(4):
                    if board.colour[p + self.neighbour[j]] == c and \
                            board.chain_head[p + self.neighbour[j]] == head:
                        edges += 1
                n = board.pseudo_libs[head] - edges
                total = board.lib_sum[head] - <long long> edges * p
                squares = board.lib_sum_sq[head] - <long long> edges * p * p
                if n > 0 and n * squares == total * total:
                    atari[0] = True
        return empties

    cdef void point_tactics(self, Board board, int p, signed char *slots) noexcept nogil:
        """Liberties, atari and ladder if each colour plays at the empty point p."""
        cdef int colour, opponent, n, i, q, searched = 0
        cdef signed char liberties, atari, ladder
        cdef bint was_recording = board.recording, was_reading = board.reading, lone_atari
        if self.record_queries:
            self.begin_query()
            self.ladders.footprint_area(board, p)
            self.ladders.recording = False   # only ladder reads, below, add to the footprint
        board.recording = True
        board.reading = True             # the moves tried here are undone (see Board.reading)
        for colour in range(C_BLACK, C_WHITE + 1):
            opponent = 3 - colour
            liberties = 0
            atari = ladder = NO_VALUE
            n = self.lone_stone_tactics(board, p, colour, &lone_atari)
            if n >= 0 and (n > 2 or not (self.needs & NEED_POINT_LADDERS)):
                # no need to play: the lone stone's liberties are its empty neighbours (a lone
                # stone without any is suicide)
                liberties = bucket(n, 5)
                if lone_atari and n > 0:
                    atari = 0
            elif board.is_legal_fast(p, colour):
                board.play_move(p, colour, False)
                n = board.chain_liberty_count(p)
                liberties = bucket(n, 5)
                for i in range(4):
                    q = p + self.neighbour[i]
                    if board.colour[q] == opponent and board.in_atari(board.chain_head[q]):
                        atari = 0
                if (self.needs & NEED_POINT_LADDERS) and n <= 2:
                    self.ladders.recording = self.record_queries
                    if self.ladders.read(board, p, True):
                        ladder = 0
                    self.ladders.recording = False
                    searched += 1
                board.undo_move()
            if self.needs & NEED_TACTICS:
                slots[SLOT_LIBERTIES_BLACK + colour - C_BLACK] = liberties
                slots[SLOT_ATARI_BLACK + colour - C_BLACK] = atari
            slots[SLOT_LADDER_BLACK + colour - C_BLACK] = ladder
        board.recording = was_recording
        board.reading = was_reading
        if self.record_queries and searched:
            self.end_query(-1 - p)
        self.ladders.recording = False

    cdef void point_patterns(self, Board board, int p, signed char *slots) noexcept nogil:
        """Eye, moves to an eye, and ponnuki at the empty point p, for each colour."""
        cdef int colour, opponent, i, c, orth_empty, orth_opponent, orth_wall
        cdef int diagonal_opponent, diagonal_own, diagonal_wall
        cdef signed char eye, moves, ponnuki
        for colour in range(C_BLACK, C_WHITE + 1):
            opponent = 3 - colour
            orth_empty = orth_opponent = orth_wall = 0
            diagonal_opponent = diagonal_own = diagonal_wall = 0
            for i in range(4):
                c = board.colour[p + self.neighbour[i]]
                if c == C_EMPTY:
                    orth_empty += 1
                elif c == opponent:
                    orth_opponent += 1
                elif c == C_WALL:
                    orth_wall += 1
                c = board.colour[p + self.diagonal[i]]
                if c == opponent:
                    diagonal_opponent += 1
                elif c == colour:
                    diagonal_own += 1
                elif c == C_WALL:
                    diagonal_wall += 1
            eye = moves = ponnuki = NO_VALUE
            # the board's false-eye rule: on the edge no opposing diagonal, inside at most one
            if orth_opponent == 0 and (diagonal_opponent == 0 if diagonal_wall > 0
                                       else diagonal_opponent < 2):
                if orth_empty == 0:
                    eye = 0
                else:
                    moves = bucket(orth_empty - 1, 2)
            if orth_empty == 0 and orth_opponent == 0 and orth_wall == 0 and diagonal_own == 0:
                ponnuki = 0
            slots[SLOT_EYE_BLACK + colour - C_BLACK] = eye
            slots[SLOT_EYE_MOVES_BLACK + colour - C_BLACK] = moves
            slots[SLOT_PONNUKI_BLACK + colour - C_BLACK] = ponnuki

    cdef void point_links(self, Board board, int p, signed char *slots) noexcept nogil:
        """Whether the empty point p is a link point of a pattern of each colour. One pass over
        the patterns serves both colours: a pattern's first stone tells whose it can be."""
        cdef int colour, k, j, m, first, second, q, num_found = 0
        cdef bint clear
        cdef bint found[3]
        found[0] = found[1] = found[2] = False
        for k in range(self.num_links):
            for j in range(self.link_count[k]):
                first = self.shifted(p, -self.link_point_dx[k][j], -self.link_point_dy[k][j])
                if first < 0:
                    continue
                colour = board.colour[first]
                if (colour != C_BLACK and colour != C_WHITE) or found[colour]:
                    continue
                second = self.shifted(first, self.link_dx[k], self.link_dy[k])
                if second < 0 or board.colour[second] != colour:
                    continue
                # the link points lie between two on-board stones: on the board
                clear = True
                for m in range(self.link_count[k]):
                    q = first + self.link_point_offset[k][m]
                    if board.colour[q] != C_EMPTY:
                        clear = False
                        break
                if clear:
                    found[colour] = True
                    num_found += 1
                    if num_found == 2:
                        break
            if num_found == 2:
                break
        for colour in range(C_BLACK, C_WHITE + 1):
            slots[SLOT_LINK_BLACK + colour - C_BLACK] = 0 if found[colour] else NO_VALUE

    cdef void block_values(self, Board board, int head, bint reuse_ladders,
                           signed char *slots) noexcept nogil:
        """Slots SLOT_PON.. of the block at head; reuse_ladders takes the base's ladder results."""
        cdef int n = board.chain_liberties_into(head, self.scratch), i, j, q, second = 0, pon2
        cdef signed char bits = 0
        if self.needs & NEED_BLOCKS:
            self.scratch_epoch += 1
            if self.scratch_epoch == 0:
                memset(self.scratch_mark, 0, sizeof(self.scratch_mark))
                self.scratch_epoch = 1
            for i in range(n):
                self.scratch_mark[self.scratch[i]] = self.scratch_epoch
            for i in range(n):
                for j in range(4):
                    q = self.scratch[i] + self.neighbour[j]
                    if board.colour[q] == C_EMPTY and self.scratch_mark[q] != self.scratch_epoch:
                        self.scratch_mark[q] = self.scratch_epoch
                        second += 1
            pon2 = 2 * n + second - 6          # twice the PON estimate: buckets at odd values
            slots[SLOT_PON] = 0 if pon2 < -3 else bucket((pon2 + 5) // 2, 7)
            slots[SLOT_BLOCK_LIBERTIES] = bucket(n - 1 if n > 0 else 0, 3)
            slots[SLOT_BLOCK_STONES] = bucket(board.chain_size[head] - 1, 4)
        if self.needs & NEED_BLOCK_LADDERS:
            if reuse_ladders:
                bits = self.base_block_ladder[head]
            elif n <= 2:
                if self.record_queries:
                    self.begin_query()
                if self.ladders.read(board, head, True):
                    bits |= 1
                self.ladders.known_attacker_result = bits & 1
                if self.ladders.read(board, head, False):
                    bits |= 2
                self.ladders.known_attacker_result = -1
                if self.record_queries:
                    self.end_query(head)
            if self.in_base:
                self.base_block_ladder[head] = bits
            slots[SLOT_LADDER_ATTACKER_FIRST] = 0 if bits & 1 else NO_VALUE
            slots[SLOT_LADDER_DEFENDER_FIRST] = 0 if bits & 2 else NO_VALUE

    # ------------------------------------------------------------------ whole position

    cdef void compute_all(self, Board board, bint record) noexcept nogil:
        cdef int p, k, q, head, colour, saved_ko = board.ko_loc
        cdef signed char block[NUM_SLOTS]
        self.epoch += 1
        if self.epoch == 0:
            self._clear_marks()
        self.record_queries = record
        self.in_base = True
        self.ladders.recording = False
        if record:
            for p in range(self.num_locs):
                self.first_entry[p] = -1
            self.num_entries = 0
            self.num_queries = 0
        board.ko_loc = NO_LOC     # features ignore the ko point (see the module docstring)
        for p in range(self.num_locs):
            for k in range(NUM_SLOTS):
                self.value[p][k] = NO_VALUE
        for p in range(self.num_locs):
            colour = board.colour[p]
            if colour == C_EMPTY:
                if self.needs & (NEED_TACTICS | NEED_POINT_LADDERS):
                    self.point_tactics(board, p, self.value[p])
                if self.needs & NEED_EYES:
                    self.point_patterns(board, p, self.value[p])
                if self.needs & NEED_LINKS:
                    self.point_links(board, p, self.value[p])
            elif colour == C_BLACK or colour == C_WHITE:
                head = board.chain_head[p]
                if self.block_mark[head] == self.epoch:
                    continue
                self.block_mark[head] = self.epoch
                for k in range(NUM_SLOTS):
                    block[k] = NO_VALUE
                self.block_values(board, head, False, block)
                q = head
                while True:
                    memcpy(self.value[q], block, NUM_SLOTS * sizeof(signed char))
                    q = board.next_in_chain[q]
                    if q == head:
                        break
        board.ko_loc = saved_ko
        self.record_queries = False
        self.in_base = False

    cdef void _clear_marks(self) noexcept nogil:
        memset(self.overlay_mark, 0, sizeof(self.overlay_mark))
        memset(self.block_mark, 0, sizeof(self.block_mark))
        memset(self.touched_mark, 0, sizeof(self.touched_mark))
        memset(self.dirty_mark, 0, sizeof(self.dirty_mark))
        memset(self.tactics_mark, 0, sizeof(self.tactics_mark))
        memset(self.pattern_mark, 0, sizeof(self.pattern_mark))
        memset(self.link_mark, 0, sizeof(self.link_mark))
        self.epoch = 1

    # ------------------------------------------------------------------ one successor

    cdef signed char *overlay_cell(self, int p) noexcept nogil:
        if self.overlay_mark[p] != self.epoch:
            self.overlay_mark[p] = self.epoch
            memcpy(self.overlay[p], self.value[p], NUM_SLOTS * sizeof(signed char))
            self.overlay_cells[self.num_overlay] = p
            self.num_overlay += 1
        return self.overlay[p]

    cdef const signed char *cell_values(self, int p) noexcept nogil:
        if self.overlay_mark[p] == self.epoch:
            return self.overlay[p]
        return self.value[p]

    cdef void successor(self, Board board, int move) noexcept nogil:
        cdef int *captured
        cdef int num_captured = board.last_move_captured(&captured)
        cdef int saved_ko = board.ko_loc, j, i, k, c, q, head, e, query_point, n, stone_colour
        cdef int num_blocks = 0, num_touched = 0, num_tactics = 0, num_patterns = 0, num_links = 0
        cdef unsigned int epoch
        cdef signed char *slots
        cdef signed char block[NUM_SLOTS]
        self.epoch += 1
        if self.epoch == 0:
            self._clear_marks()
        epoch = self.epoch
        self.num_overlay = 0
        self.record_queries = False
        self.in_base = False
        board.ko_loc = NO_LOC
        # 1. What the changed points (the move, the captured stones) can reach.
        for j in range(-1, num_captured):
            c = move if j < 0 else captured[j]
            slots = self.overlay_cell(c)
            for k in range(NUM_SLOTS):
                slots[k] = NO_VALUE
            for i in range(5):
                q = c if i == 0 else c + self.neighbour[i - 1]
                if board.colour[q] == C_BLACK or board.colour[q] == C_WHITE:
                    head = board.chain_head[q]
                    if self.touched_mark[head] != epoch:   # its liberties changed
                        self.touched_mark[head] = epoch
                        self.touched_list[num_touched] = head
                        num_touched += 1
                    if self.block_mark[head] != epoch:
                        self.block_mark[head] = epoch
                        self.block_list[num_blocks] = head
                        num_blocks += 1
                elif board.colour[q] == C_EMPTY and self.tactics_mark[q] != epoch:
                    self.tactics_mark[q] = epoch
                    self.tactics_list[num_tactics] = q
                    num_tactics += 1
            if self.needs & NEED_BLOCKS:      # PON reads second-order liberties
                for i in range(13):
                    q = self.shifted(c, self.diamond_dx[i], self.diamond_dy[i])
                    if q >= 0 and (board.colour[q] == C_BLACK or board.colour[q] == C_WHITE):
                        head = board.chain_head[q]
                        if self.block_mark[head] != epoch:
                            self.block_mark[head] = epoch
                            self.block_list[num_blocks] = head
                            num_blocks += 1
            if self.needs & NEED_EYES:
                for i in range(9):
                    q = c if i == 8 else (c + self.neighbour[i] if i < 4 else c + self.diagonal[i - 4])
                    if board.colour[q] == C_EMPTY and self.pattern_mark[q] != epoch:
                        self.pattern_mark[q] = epoch
                        self.pattern_list[num_patterns] = q
                        num_patterns += 1
            if self.needs & NEED_LINKS:
                for i in range(self.num_band + 1):
                    q = c if i == self.num_band else self.shifted(c, self.band_dx[i], self.band_dy[i])
                    if q >= 0 and board.colour[q] == C_EMPTY and self.link_mark[q] != epoch:
                        self.link_mark[q] = epoch
                        self.link_list[num_links] = q
                        num_links += 1
            if self.needs & (NEED_POINT_LADDERS | NEED_BLOCK_LADDERS):   # ladders that read c,
                                                                         # wherever they are
                e = self.first_entry[c]
                while e >= 0:
                    query_point = self.query_point[self.entry_query[e]]
                    if query_point >= 0:
                        stone_colour = board.colour[query_point]
                        if stone_colour == C_BLACK or stone_colour == C_WHITE:
                            head = board.chain_head[query_point]
                            self.dirty_mark[head] = epoch
                            if self.block_mark[head] != epoch:
                                self.block_mark[head] = epoch
                                self.block_list[num_blocks] = head
                                num_blocks += 1
                    else:
                        q = -1 - query_point
                        if board.colour[q] == C_EMPTY and self.tactics_mark[q] != epoch:
                            self.tactics_mark[q] = epoch
                            self.tactics_list[num_tactics] = q
                            num_tactics += 1
                    e = self.entry_next[e]
        # 2. The liberties of every block that touches a changed point.
        if self.needs & (NEED_TACTICS | NEED_POINT_LADDERS):
            for j in range(num_touched):
                head = self.touched_list[j]
                n = board.chain_liberties_into(head, self.scratch)
                for i in range(n):
                    q = self.scratch[i]
                    if self.tactics_mark[q] != epoch:
                        self.tactics_mark[q] = epoch
                        self.tactics_list[num_tactics] = q
                        num_tactics += 1
        # 3. Recompute.
        for j in range(num_blocks):
            head = self.block_list[j]
            for k in range(NUM_SLOTS):
                block[k] = NO_VALUE
            self.block_values(board, head, self.touched_mark[head] != epoch
                              and self.dirty_mark[head] != epoch, block)
            q = head
            while True:
                slots = self.overlay_cell(q)
                for k in range(NUM_EMPTY_SLOTS, NUM_SLOTS):
                    slots[k] = block[k]
                q = board.next_in_chain[q]
                if q == head:
                    break
        if self.needs & (NEED_TACTICS | NEED_POINT_LADDERS):
            for j in range(num_tactics):
                q = self.tactics_list[j]
                self.point_tactics(board, q, self.overlay_cell(q))
        for j in range(num_patterns):
            q = self.pattern_list[j]
            self.point_patterns(board, q, self.overlay_cell(q))
        for j in range(num_links):
            q = self.link_list[j]
            self.point_links(board, q, self.overlay_cell(q))
        board.ko_loc = saved_ko

    # ------------------------------------------------------------------ Python API

    def _check(self, Board board):
        self.prepare(board.size)

    def compute(self, Board board):
        """The slots (num_locs, NUM_SLOTS) int8 of every point of board (-1: none)."""
        self.prepare(board.size)
        self.compute_all(board, False)
        return self._values_array()

    def _values_array(self):
        cdef signed char[:, ::1] view = <signed char[:self.num_locs, :NUM_SLOTS]> &self.value[0][0]
        return np.array(view, copy=True)

    def successor_slots(self, Board board, int move, int colour):
        """The slots of the position after colour plays move, computed incrementally from those of
        board (the reference is compute() on the successor). board is restored exactly."""
        if colour != C_BLACK and colour != C_WHITE:
            raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {colour}")
        if not board.is_legal(move, colour):
            raise ValueError(f"move {move} is illegal for colour {colour}")
        self.prepare(board.size)
        self.compute_all(board, True)
        result = self._values_array()
        board.play_move(move, colour, False)
        self.successor(board, move)
        cdef int i, p
        for i in range(self.num_overlay):
            p = self.overlay_cells[i]
            result[p] = [self.overlay[p][k] for k in range(NUM_SLOTS)]
        board.undo_move()
        return result, [self.overlay_cells[i] for i in range(self.num_overlay)]

    def one_ply(self, Board board, int colour, moves):
        """The feature work of one 1-ply move alone, as Network.successor_values does it: the
        base position's slots with their ladder footprints, then what each of moves (legal for
        colour) changes. For benchmarks, which time it against the network's share; board is
        restored exactly."""
        if colour != C_BLACK and colour != C_WHITE:
            raise ValueError(f"colour must be BLACK (1) or WHITE (2), not {colour}")
        cdef int[::1] points = np.ascontiguousarray(moves, dtype=np.intc)
        cdef int i
        for i in range(points.shape[0]):
            if not board.is_legal(points[i], colour):
                raise ValueError(f"move {points[i]} is illegal for colour {colour}")
        self.prepare(board.size)
        with nogil:
            self.compute_all(board, True)
            for i in range(points.shape[0]):
                board.play_move(points[i], colour, False)
                self.successor(board, points[i])
                board.undo_move()

    @property
    def ladder_queries(self):
        """Ladder reads remembered for successors (the last compute with record), and the total
        footprint entries: for statistics and tests."""
        return self.num_queries, self.num_entries

