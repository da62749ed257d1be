# The playout policy (MoGo's, as Gelly & Silver and Pachi's "moggy" play it) and the Tromp-Taylor
# count that ends a playout: the C layer of engine/search/playout.pyx.
#
# Contracts
# - Playouts play on a board whose recording is off (Board.copy_position_from): moves are never
#   undone, and the board is left in the final position.
# - A move chosen by the policy is legal under simple ko, never fills the mover's own eye
#   (Board.is_eye_fast) and is never a self-atari of a chain of two or more stones.
# - first_player[p], where given, records the colour that first put a stone on p (0 = none yet):
#   the all-moves-as-first statistics of RAVE. The caller clears it.
# - ladders: make_ladder_reader(policy, board size): a reader when policy.read_ladders, else None
#   (never touched then). One per thread: it is scratch. Its reads play and undo on the playout
#   board, which they leave exactly as they found it.

cimport cython
from engine.rules.board cimport Board
from engine.rules.types cimport loc_t
from engine.tactics.ladder cimport LadderReader

cdef struct PlayoutPolicy:
    const unsigned char *pattern_table   # patterns.pattern_table(): 1 = an urgent local move
    bint use_patterns                    # 3x3 patterns around the last move
    bint use_tactics                     # escapes and captures around the last move
    bint fuego_tactics                   # with use_tactics, Fuego's tactics too: low
                                         # liberties, nakade, self-atari correction
    bint read_ladders                    # with fuego_tactics, Pachi's ladder check on escapes
    int max_moves                        # a playout longer than this is cut and counted

@cython.final
cdef class ReplyMemory:
    # last good replies with forgetting (playout.pyx): reply1[colour - 1][slot of the previous
    # move], reply2[colour - 1][slot of the move before][slot of the previous move]; a slot is a
    # loc, or slots - 1 for a pass or no move; NO_LOC where no reply is stored
    cdef loc_t *reply1
    cdef loc_t *reply2
    cdef readonly int slots              # num_locs + 1
    cdef void clear(self) noexcept nogil
    cdef int _slot(self, loc_t move) noexcept nogil
    cdef long _index1(self, int colour, loc_t previous) noexcept nogil
    cdef long _index2(self, int colour, loc_t before, loc_t previous) noexcept nogil
    cdef loc_t reply_to_two(self, int colour, loc_t before, loc_t previous) noexcept nogil
    cdef loc_t reply_to_one(self, int colour, loc_t previous) noexcept nogil
    cdef void learn(self, const loc_t *moves, int count, int colour, loc_t before,
                    loc_t previous, int winner) noexcept nogil

cdef PlayoutPolicy make_policy(bint use_patterns, bint use_tactics, str playout_tactics,
                               int size) except *
# playout_tactics: one of playout.pyx's PLAYOUT_TACTICS, else ValueError naming them. (The
# pattern table is built once, at import, and lives as long as the module.)
cdef LadderReader make_ladder_reader(const PlayoutPolicy *policy, int size)
# the ladders argument of choose_move / play_out: a reader for size, or None without read_ladders
cdef unsigned long long next_random(unsigned long long *state) noexcept nogil
cdef int pattern_index(Board board, loc_t p, int colour) noexcept nogil
cdef loc_t choose_move(Board board, int colour, loc_t last_move, loc_t move_before,
                       const PlayoutPolicy *policy, LadderReader ladders, ReplyMemory replies,
                       unsigned long long *rng) noexcept nogil
# replies: None, or the tree's ReplyMemory (tried after the escapes and captures)
cdef int play_out(Board board, int colour, loc_t last_move, loc_t move_before,
                  const PlayoutPolicy *policy, LadderReader ladders, ReplyMemory replies,
                  unsigned long long *rng, int *first_player, loc_t *record) noexcept nogil
cdef double area_margin(Board board, double komi, signed char *owner) noexcept nogil
