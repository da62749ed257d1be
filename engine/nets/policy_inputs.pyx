# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A position as the move-prediction network's raw record: a few bytes per point, in real colours,
from which every policy feature set (engine/nets/policy_features.py) is computed.

The same record is written by the training data's reader (engine/training/policydata.py, millions
of positions, stored) and by the player at move time (one position), so that a net meets at play
exactly the inputs it was trained on.

Record planes (uint8, one value per board point, row 0 = the top line):
  STONE           0 empty, 1 Black, 2 White
  LIBERTIES       a stone: its chain's true liberties (capped at 15); empty: 0
  MOVE_LIBERTIES  empty: the liberties of the side to move's chain after playing here, captures
                  included; 0 when the move is illegal (occupied, suicide, simple-ko retake)
  CAPTURES        empty: the stones the side to move captures by playing here (capped at 15)
  AGE             how many moves ago the stone here was played: 1 the last move .. 15; 0 for an
                  empty point, an older stone or a setup stone
  LADDER          bit 0: the chain here is captured in a ladder if its opponent moves first;
                  bit 1: ... even if its own side moves first; bit 2 (empty): a stone of the
                  side to move played here is captured in a ladder (engine/nets/features.pyx's
                  ladder reader, the one the value nets use)
"""
import numpy as np

from engine.rules.board cimport Board
from engine.rules.types cimport EMPTY, BLACK, WHITE, PASS_LOC
from engine.nets.features cimport (BoardFeatures, NEED_TACTICS, NEED_POINT_LADDERS, NEED_BLOCKS,
                                   NEED_BLOCK_LADDERS, SLOT_LADDER_BLACK, SLOT_LADDER_ATTACKER_FIRST,
                                   SLOT_LADDER_DEFENDER_FIRST)

cdef enum:
    C_STONE, C_LIBERTIES, C_MOVE_LIBERTIES, C_CAPTURES, C_AGE, C_LADDER, C_RECORD_PLANES
    C_LADDER_ATTACKER_FIRST = 1
    C_LADDER_DEFENDER_FIRST = 2
    C_LADDER_IF_PLAYED = 4
    C_MAX_AGE = 15

RECORD_PLANES = C_RECORD_PLANES
STONE, LIBERTIES, MOVE_LIBERTIES, CAPTURES, AGE, LADDER = range(RECORD_PLANES)
MAX_AGE = C_MAX_AGE
LADDER_ATTACKER_FIRST = C_LADDER_ATTACKER_FIRST
LADDER_DEFENDER_FIRST = C_LADDER_DEFENDER_FIRST
LADDER_IF_PLAYED = C_LADDER_IF_PLAYED

cdef inline unsigned char capped(int n, int cap) noexcept nogil:
    return <unsigned char> (cap if n > cap else n)


cdef class PositionEncoder:
    """Fills records. One encoder per thread: it keeps the ladder reader's scratch space."""
    cdef BoardFeatures tactics

    def __cinit__(self):
        self.tactics = BoardFeatures(NEED_TACTICS | NEED_POINT_LADDERS | NEED_BLOCKS | NEED_BLOCK_LADDERS)

    def encode(self, Board board, int to_move, recent_moves, unsigned char[:, ::1] out):
        """Writes the record of board with to_move to play into out (RECORD_PLANES, size*size).
        recent_moves: the locs of the last moves, most recent first (PASS for a pass), for AGE."""
        cdef int size = board.size, stride = board.stride, row, col, p, q, i, n, head, colour
        cdef int opponent = 3 - to_move
        cdef int captured, age
        cdef int heads[4]
        cdef const signed char *slots
        if to_move != BLACK and to_move != WHITE:
            raise ValueError(f"to_move must be BLACK or WHITE, not {to_move}")
        if out.shape[0] != C_RECORD_PLANES or out.shape[1] != size * size:
            raise ValueError(f"record array must be ({C_RECORD_PLANES}, {size * size})")
        self.tactics.prepare(size)
        self.tactics.compute_all(board, False)
        for row in range(size):
            for col in range(size):
                p = (row + 1) * stride + col + 1
                i = row * size + col
                for n in range(C_RECORD_PLANES):
                    out[n, i] = 0
                colour = board.colour[p]
                slots = &self.tactics.value[p][0]
                if colour != EMPTY:
                    out[C_STONE, i] = colour
                    out[C_LIBERTIES, i] = capped(board.chain_liberty_count(p), 15)
                    out[C_LADDER, i] = ((C_LADDER_ATTACKER_FIRST if slots[SLOT_LADDER_ATTACKER_FIRST] == 0 else 0)
                                      | (C_LADDER_DEFENDER_FIRST if slots[SLOT_LADDER_DEFENDER_FIRST] == 0 else 0))
                    continue
                out[C_MOVE_LIBERTIES, i] = capped(board.liberties_if_played_fast(p, to_move), 15)
                if out[C_MOVE_LIBERTIES, i] == 0:
                    continue
                if slots[SLOT_LADDER_BLACK + to_move - BLACK] == 0:
                    out[C_LADDER, i] = C_LADDER_IF_PLAYED
                captured = 0
                heads[0] = heads[1] = heads[2] = heads[3] = -1
                for n in range(4):
                    q = p + board.neighbour_offset[n]
                    if board.colour[q] == opponent and board.in_atari(board.chain_head[q]):
                        head = board.chain_head[q]
                        if head != heads[0] and head != heads[1] and head != heads[2]:
                            heads[n] = head
                            captured += board.chain_size[head]
                out[C_CAPTURES, i] = capped(captured, 15)
        age = 1
        for move in recent_moves:
            if age > C_MAX_AGE:
                break
            if move != PASS_LOC:
                row, col = move // stride - 1, move % stride - 1
                i = row * size + col
                if 0 <= row < size and 0 <= col < size and out[C_STONE, i] != 0 and out[C_AGE, i] == 0:
                    out[C_AGE, i] = age
            age += 1


def new_record(size):
    """An empty record array for a size x size board."""
    return np.zeros((C_RECORD_PLANES, size * size), dtype=np.uint8)
