"""CSA*, the Cascaded Scoring Architecture of van der Werf et al., "Learning to Score Final
Positions in the Game of Go" (sections 3 and 4): which blocks are dead on a finished board.

Reading order: `analyse()` is the whole method. `BlockFeatures` computes, once per board, what
the block features of section 4.1 need (blocks, liberties, colour-enclosed regions and their
miai accessibility, optimistic chains, disputed territory) and then `features()` gives
every block its feature vector, with eyespace (and the six recursive features of section 4.2)
depending on the previous step's predictions. `Classifier` is the cascade of one-hidden-layer
tanh MLPs, read from a versioned .npz. `score_by_flood_fill()` / `score_by_distance()` count the
board with the dead blocks taken off; when they differ the board is doubtful (the paper's
check), and so it is when a block's final prediction is far from certain, when the cascade's
steps disagree on a block, or (where the classifier's rule asks) when a false eye its owner may
have to fill leaves the count one point apart between rules and players (ours). `analyse(..., review=True)` also asks a tree search for a
second opinion (`search_count()`, the "local search" the paper proposes for the positions its
classifier gets wrong): a board whose count the search expects far from CSA*'s is doubtful too.

A block's prediction is the probability that it is alive. Benson's pass-alive blocks are alive
and blocks standing in the other colour's pass-alive safe region dead, whatever the net says.

Feature definitions where the paper leaves room (each is the one the classifier was trained on;
change one and FEATURE_VERSION must change, which makes old classifier files refuse to load):
- perimeter: distinct on-board points adjacent to the set; split point: a point of a set whose
  removal disconnects the set inside the point's 3x3 window.
- CERs of a block: the connected regions of points not holding the block's colour that touch
  the block. Accessible points start as the region's empty points adjacent to the colour; an
  interior empty point becomes accessible when two accessible points next to it are still free
  to serve as its miai pair (greedy, repeated until nothing changes). Fully accessible: every
  point of the region is accessible (so it holds no opponent stone).
- eyespace of a colour: empty points not next to a living opponent stone and not false eyes
  (on the edge with a living opponent stone diagonally, elsewhere with two), plus the stones of
  opponent blocks predicted dead. Before any prediction the only dead blocks are Benson's.
- optimistic chain: the blocks of one colour linked by shared liberties, transitively.
- the weakest adjacent opponent block is the one with fewest liberties (then fewest stones);
  each of the three opponent slots carries an "exists" flag and zeros when empty.
- disputed territory: empty points reached by the flood fills from both colours' stones.
Three features are additions to the paper's list: Benson pass-alive, standing in the
opponent's Benson-safe region, and the playout ownership of the block (the mean final owner of
its stones over OWNERSHIP_PLAYOUTS playouts of the search's policy from the board, half of them
with each colour first; +1 when the block's colour owns them in every playout). The playouts
see what the static features miss on quiet boards (a lone stone that connects, a cutting stone
that can be taken), the static features what random play misses (false eyes and nakade, where
the playouts leave a dead group standing).
"""
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.rules.board import BLACK, EMPTY, WALL, WHITE
from engine.nets.weights import read_npz, shipped_weights_path
from engine.rules.game import connected_parts, empty_regions, pass_alive
from engine.scoring.teire import teire_points
from engine.search.playout import mean_ownership
from engine.search.tree import TreeSearch

FEATURE_VERSION = 3        # 2: inputs squashed by sign(x) log(1 + |x|); 3: playout ownership
FORMAT_NAME = "kosumi-csa"
FORMAT_VERSION = 1
CASCADE_STEPS = 4          # the paper's CSA*: direct classification and three recursive steps
ALIVE_THRESHOLD = 0.5      # predicted probability of life at or above which a block stays
NAKADE_LIMIT = 3           # capturing 3+ stones and the filling one leaves 4+ points, mostly two eyes;
                           # 2 stones leave a killable three-point eye (the nakade of a semeai)
DOUBT_BAND = 0.2           # a block predicted between 0.2 and 0.8 makes the board doubtful
DOUBT_REASONS = ("its counts by flood fill and by distance differ, it is unsure of a block, a "
                 "false eye may have to be filled, or a tree search expects another count")
REVIEW_SIMULATIONS = 3000  # per colour to move: 0.17 s a 9x9 board, 0.7 s a 19x19 one
REVIEW_GAP = 10            # points between CSA*'s count and the search's that make a board doubtful
REVIEW_SEED = 1            # fixed: the same board always gets the same review
OWNERSHIP_PLAYOUTS = 128   # a mean within about 0.1; 1-2 ms on 9x9, 5-6 ms on 19x19
OWNERSHIP_SEED = 1         # fixed: the same board always gets the same features

WEAK_SLOT_FEATURES = ("exists", "perimeter", "liberties", "shared_liberties", "split_points",
                      "eyespace_perimeter")
BASE_FEATURES = (
    "size", "perimeter", "opponents", "liberties", "protected_liberties", "auto_atari_liberties",
    "second_order_liberties", "third_order_liberties", "adjacent_opponent_blocks",
    "local_majority", "edge_distance_closest", "edge_distance_second", "bounding_box",
    "full_cer_count", "full_cer_size", "full_cer_perimeter", "full_cer_split_points",
    "partial_cer_count", "partial_accessible_size", "partial_accessible_perimeter",
    "inaccessible_size", "inaccessible_perimeter", "inaccessible_split_points",
    "eyespace_size", "eyespace_perimeter",
    "chain_blocks", "chain_size", "chain_perimeter", "chain_split_points", "chain_cers",
    "chain_cers_with_eyespace", "chain_cers_fully_accessible", "chain_eyespace_size",
    "chain_eyespace_perimeter", "external_opponent_liberties",
    *(f"{slot}_{name}" for slot in ("weakest", "second_weakest", "chain_weakest")
      for name in WEAK_SLOT_FEATURES),
    "disputed_direct_liberties", "disputed_friendly_liberties", "disputed_enemy_liberties",
    "benson_pass_alive", "in_opponent_benson_region", "playout_ownership",
)
RECURSIVE_FEATURES = (
    "strongest_friend_sharing_liberty_value", "weakest_opponent_value",
    "second_weakest_opponent_value", "weakest_opponent_chain_mean_value",
    "weakest_opponent_chain_eyespace_size", "weakest_opponent_chain_eyespace_perimeter",
)
NUM_BASE = len(BASE_FEATURES)
BASE_COLUMN = {name: i for i, name in enumerate(BASE_FEATURES)}
NUM_RECURSIVE = NUM_BASE + len(RECURSIVE_FEATURES)


@dataclass(frozen=True)
class DoubtRule:
    """When a count is doubtful: the paper's check (flood fill and distance counts more than
    `counts_gap` points apart), a decided block whose final probability of life lies within
    `band` of neither 0 nor 1, the cascade's steps disagreeing on a block (`changed_mind`), a
    false eye in some territory that its owner may have to fill (`teire`: counts with and
    without teire, and the players who filled it or not, are a point apart), or, when reviewed,
    the tree search's count more than `review_gap` points from CSA*'s. The
    defaults are the rule chosen on held-out 9x9 boards (docs/notebook/csa.md); a classifier
    file may carry its own (metadata "doubt", `agreedcounts tune-flag` chooses one on boards
    the classifier never learnt), so that a 19x19 classifier tuned on counted 19x19 games keeps
    the 9x9 rule for 9x9."""
    counts_gap: float = 0.0        # points; the paper's check is any difference
    band: float = DOUBT_BAND       # 0.5: no block's probability makes the board doubtful
    changed_mind: bool = True
    review_gap: float = REVIEW_GAP
    teire: bool = False            # files written before the sign existed keep their flag

    FIELDS = ("counts_gap", "band", "changed_mind", "review_gap", "teire")

    @classmethod
    def from_metadata(cls, value, path="<metadata>"):
        """The rule of a classifier file's metadata "doubt" (None: the default rule);
        ClassifierFileError naming the file for anything else than the four known fields of
        the right types and ranges (a record without "teire" leaves it off)."""
        if value is None:
            return cls()
        if not isinstance(value, dict) or set(value) - set(cls.FIELDS):
            raise ClassifierFileError(path, f"doubt should be a record of {', '.join(cls.FIELDS)}, "
                                            f"got {value!r}")
        rule = {}
        for name, default in zip(cls.FIELDS, (cls.counts_gap, cls.band, cls.changed_mind,
                                              cls.review_gap, cls.teire)):
            item = value.get(name, default)
            if name in ("changed_mind", "teire"):
                if not isinstance(item, bool):
                    raise ClassifierFileError(path, f"doubt.{name} should be true or "
                                                    f"false, got {item!r}")
            elif isinstance(item, bool) or not isinstance(item, (int, float)) or \
                    not 0 <= item <= (0.5 if name == "band" else 1e6):
                raise ClassifierFileError(path, f"doubt.{name} out of range: {item!r}")
            rule[name] = item
        return cls(**rule)

    def to_metadata(self):
        return {name: getattr(self, name) for name in self.FIELDS}

    def flags(self, signs):
        """Whether a board with these doubt signs (CsaResult.doubt_signs()) is doubtful."""
        return (signs["counts_gap"] > self.counts_gap + 1e-9
                or signs["least_sure"] < 0.5 - self.band
                or (self.changed_mind and signs["changed_mind"])
                or (self.teire and signs.get("teire_points", 0) > 0)
                or (signs["search_gap"] is not None and signs["search_gap"] > self.review_gap))


class ClassifierFileError(ValueError):
    """A CSA* classifier file that cannot be used; the message names the file."""

    def __init__(self, path, problem):
        super().__init__(f"CSA* classifier file {path}: {problem}")
        self.path = path
        self.problem = problem

    def __reduce__(self):
        # rebuilt from its own arguments, so the message survives the trip from a worker process
        return type(self), (self.path, self.problem)


# ---------------------------------------------------------------------- geometry helpers


def _perimeter(points, colours, stride):
    """Distinct on-board points adjacent to the set and not in it."""
    seen = set()
    for p in points:
        for q in (p - stride, p - 1, p + 1, p + stride):
            if colours[q] != WALL and q not in points:
                seen.add(q)
    return len(seen)


def _split_points(points, stride):
    """Points of the set whose removal splits the set inside their own 3x3 window: the
    orthogonal neighbours in the set fall into two or more groups when linked only through
    diagonal neighbours in the set."""
    count = 0
    for p in points:
        n, s, w, e = p - stride, p + stride, p - 1, p + 1
        ring = (n, n + 1, e, s + 1, s, s - 1, w, n - 1)   # clockwise from north
        inside = [q in points for q in ring]
        orthogonal = sum(inside[0::2])
        if orthogonal < 2:
            continue
        # groups = orthogonal members not joined to the next orthogonal member via the corner
        links = sum(1 for i in range(0, 8, 2) if inside[i] and inside[i + 1] and inside[(i + 2) % 8])
        if orthogonal - links >= 2:
            count += 1
    return count


# ---------------------------------------------------------------------- per-board analysis


@dataclass
class Block:
    index: int
    colour: int
    stones: frozenset
    liberties: frozenset
    neighbours: frozenset      # adjacent on-board points not in the block
    opponents: frozenset       # indices of adjacent opponent blocks


class BlockFeatures:
    """Everything about one board that does not depend on predictions, and the per-block feature
    vectors given predictions. `board` is an engine.rules.board.Board; it is not changed."""

    def __init__(self, board):
        self.board = board
        self.size = board.size
        stride = self.stride = board.stride
        self.points = board.points()
        colours = self.colours = [WALL] * board.num_locs
        for p in self.points:
            colours[p] = board.get(p)
        self._find_blocks()
        self.ownership = mean_ownership(board, OWNERSHIP_PLAYOUTS, seed=OWNERSHIP_SEED)
        self._benson()
        self._find_regions()
        self._find_chains()
        self._find_disputed()
        self._static = [self._static_features(block) for block in self.blocks]
        self.block_split_points = [_split_points(block.stones, stride) for block in self.blocks]
        self._prepare_slots()
        self._cache = {}

    # --- structure ------------------------------------------------------------------------

    def _find_blocks(self):
        colours, stride = self.colours, self.stride
        self.block_of = [-1] * len(colours)
        self.blocks = []
        for p in self.points:
            if colours[p] in (BLACK, WHITE) and self.block_of[p] < 0:
                index = len(self.blocks)
                stones = set(self.board.chain(p))
                for q in stones:
                    self.block_of[q] = index
                neighbours = {q for r in stones for q in (r - stride, r - 1, r + 1, r + stride)
                              if colours[q] != WALL and q not in stones}
                liberties = frozenset(q for q in neighbours if colours[q] == EMPTY)
                self.blocks.append(Block(index, colours[p], frozenset(stones), liberties,
                                         frozenset(neighbours), frozenset()))
        for block in self.blocks:
            block.opponents = frozenset(self.block_of[q] for q in block.neighbours
                                        if colours[q] not in (EMPTY, block.colour))

    def _benson(self):
        self.pass_alive = [False] * len(self.blocks)
        self.in_safe_region = [False] * len(self.blocks)   # inside the opponent's safe region
        for colour in (BLACK, WHITE):
            stones, safe = pass_alive(self.board, colour)
            for block in self.blocks:
                probe = next(iter(block.stones))
                if block.colour == colour and probe in stones:
                    self.pass_alive[block.index] = True
                elif block.colour != colour and probe in safe:
                    self.in_safe_region[block.index] = True

    def _find_regions(self):
        """Colour-enclosed regions for each colour: components of points without that colour's
        stones, each with its miai-accessible points."""
        colours, stride = self.colours, self.stride
        self.region_of = {}        # colour -> list indexed by loc: region index or -1
        self.regions = {}          # colour -> list of dicts
        for colour in (BLACK, WHITE):
            region_of = [-1] * len(colours)
            regions = []
            for start in self.points:
                if colours[start] == colour or region_of[start] >= 0:
                    continue
                index = len(regions)
                members = {start}
                region_of[start] = index
                stack = [start]
                while stack:
                    p = stack.pop()
                    for q in (p - stride, p - 1, p + 1, p + stride):
                        c = colours[q]
                        if c != WALL and c != colour and region_of[q] < 0:
                            region_of[q] = index
                            members.add(q)
                            stack.append(q)
                regions.append(self._region_record(colour, members))
            self.region_of[colour] = region_of
            self.regions[colour] = regions

    def _region_record(self, colour, members):
        colours, stride = self.colours, self.stride
        accessible = {p for p in members if colours[p] == EMPTY and any(
            colours[q] == colour for q in (p - stride, p - 1, p + 1, p + stride))}
        interior = [p for p in members if colours[p] == EMPTY and p not in accessible]
        used = set()
        changed = True
        while changed and interior:
            changed = False
            for p in list(interior):
                pair = [q for q in (p - stride, p - 1, p + 1, p + stride)
                        if q in accessible and q not in used][:2]
                if len(pair) == 2:
                    used.update(pair)
                    accessible.add(p)
                    interior.remove(p)
                    changed = True
        full = len(accessible) == len(members)
        inaccessible = members - accessible
        return {
            "members": members, "full": full,
            "size": len(members), "perimeter": _perimeter(members, colours, stride),
            "split_points": _split_points(members, stride),
            "accessible_size": len(accessible),
            "accessible_perimeter": _perimeter(accessible, colours, stride) if accessible else 0,
            "inaccessible_size": len(inaccessible),
            "inaccessible_perimeter": _perimeter(inaccessible, colours, stride) if inaccessible else 0,
            "inaccessible_split_points": _split_points(inaccessible, stride),
        }

    def _find_chains(self):
        """Optimistic chains: blocks of one colour sharing a liberty, transitively."""
        parent = list(range(len(self.blocks)))

        def find(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        colours, stride = self.colours, self.stride
        for p in self.points:
            if colours[p] != EMPTY:
                continue
            by_colour = {}
            for q in (p - stride, p - 1, p + 1, p + stride):
                if colours[q] in (BLACK, WHITE):
                    b = self.block_of[q]
                    other = by_colour.setdefault(colours[q], b)
                    parent[find(b)] = find(other)
        groups = {}
        for block in self.blocks:
            groups.setdefault(find(block.index), []).append(block.index)
        self.chain_of = [0] * len(self.blocks)
        self.chains = []
        for members in groups.values():
            index = len(self.chains)
            stones = frozenset(s for b in members for s in self.blocks[b].stones)
            liberties = frozenset(q for b in members for q in self.blocks[b].liberties)
            neighbours = frozenset(q for b in members for q in self.blocks[b].neighbours) - stones
            opponents = frozenset(o for b in members for o in self.blocks[b].opponents)
            colour = self.blocks[members[0]].colour
            region_of = self.region_of[colour]
            cers = frozenset(region_of[q] for q in neighbours)
            self.chains.append({"blocks": members, "stones": stones, "liberties": liberties,
                                "neighbours": neighbours, "opponents": opponents, "cers": cers,
                                "perimeter": len(neighbours),
                                "split_points": _split_points(stones, self.stride)})
            for b in members:
                self.chain_of[b] = index

    def _find_disputed(self):
        colours, stride = self.colours, self.stride
        reached = {}
        for colour in (BLACK, WHITE):
            seen = set()
            stack = [q for p in self.points if colours[p] == colour
                     for q in (p - stride, p - 1, p + 1, p + stride) if colours[q] == EMPTY]
            seen.update(stack)
            while stack:
                p = stack.pop()
                for q in (p - stride, p - 1, p + 1, p + stride):
                    if colours[q] == EMPTY and q not in seen:
                        seen.add(q)
                        stack.append(q)
            reached[colour] = seen
        disputed = reached[BLACK] & reached[WHITE]
        self.disputed_region_of = {}
        self.disputed_regions = []
        for part in connected_parts(disputed, stride):
            index = len(self.disputed_regions)
            touching = {BLACK: 0, WHITE: 0}
            for p in part:
                self.disputed_region_of[p] = index
                adjacent = {colours[q] for q in (p - stride, p - 1, p + 1, p + stride)}
                for colour in (BLACK, WHITE):
                    if colour in adjacent:
                        touching[colour] += 1
            self.disputed_regions.append(touching)

    # --- features -------------------------------------------------------------------------

    def _static_features(self, block):
        """The features of block that do not depend on predictions (a dict by name)."""
        board, colours, stride, size = self.board, self.colours, self.stride, self.size
        colour = block.colour
        other = BLACK + WHITE - colour
        f = {}
        stones = block.stones
        f["size"] = len(stones)
        f["perimeter"] = len(block.neighbours)
        f["opponents"] = sum(1 for q in block.neighbours if colours[q] == other)
        f["liberties"] = len(block.liberties)
        f["protected_liberties"] = sum(1 for q in block.liberties
                                       if board.liberties_if_played(q, other) <= 1)
        f["auto_atari_liberties"] = sum(1 for q in block.liberties
                                        if board.liberties_if_played(q, colour) <= 1)
        second = {r for q in block.liberties for r in (q - stride, q - 1, q + 1, q + stride)
                  if colours[r] == EMPTY and r not in block.liberties}
        third = {r for q in second for r in (q - stride, q - 1, q + 1, q + stride)
                 if colours[r] == EMPTY and r not in block.liberties and r not in second}
        f["second_order_liberties"] = len(second)
        f["third_order_liberties"] = len(third)
        f["adjacent_opponent_blocks"] = len(block.opponents)
        near = set()
        for p in stones:
            row, col = divmod(p, stride)
            for dr in range(-2, 3):
                span = 2 - abs(dr)
                for dc in range(-span, span + 1):
                    if 1 <= row + dr <= size and 1 <= col + dc <= size:
                        near.add((row + dr) * stride + col + dc)
        f["local_majority"] = sum(1 if colours[q] == colour else -1 for q in near
                                  if colours[q] in (BLACK, WHITE))
        closest = second_closest = 0.0
        rows, cols = [], []
        for p in stones:
            row, col = divmod(p, stride)
            rows.append(row)
            cols.append(col)
            edges = sorted((row - 1, size - row, col - 1, size - col))
            closest += edges[0]
            second_closest += edges[1]
        f["edge_distance_closest"] = closest / len(stones)
        f["edge_distance_second"] = second_closest / len(stones)
        f["bounding_box"] = (max(rows) - min(rows) + 1) * (max(cols) - min(cols) + 1)

        regions = self.regions[colour]
        adjacent = {self.region_of[colour][q] for q in block.neighbours}
        for key in ("full_cer_count", "full_cer_size", "full_cer_perimeter",
                    "full_cer_split_points", "partial_cer_count", "partial_accessible_size",
                    "partial_accessible_perimeter", "inaccessible_size", "inaccessible_perimeter",
                    "inaccessible_split_points"):
            f[key] = 0
        for r in adjacent:
            region = regions[r]
            if region["full"]:
                f["full_cer_count"] += 1
                f["full_cer_size"] += region["size"]
                f["full_cer_perimeter"] += region["perimeter"]
                f["full_cer_split_points"] += region["split_points"]
            else:
                f["partial_cer_count"] += 1
                f["partial_accessible_size"] += region["accessible_size"]
                f["partial_accessible_perimeter"] += region["accessible_perimeter"]
                f["inaccessible_size"] += region["inaccessible_size"]
                f["inaccessible_perimeter"] += region["inaccessible_perimeter"]
                f["inaccessible_split_points"] += region["inaccessible_split_points"]

        chain = self.chains[self.chain_of[block.index]]
        f["chain_blocks"] = len(chain["blocks"])
        f["chain_size"] = len(chain["stones"])
        f["chain_perimeter"] = chain["perimeter"]
        f["chain_split_points"] = chain["split_points"]
        f["chain_cers"] = len(chain["cers"])
        f["chain_cers_fully_accessible"] = sum(1 for r in chain["cers"] if regions[r]["full"])
        external = set()
        for o in chain["opponents"]:
            external.update(q for q in self.blocks[o].liberties if q not in chain["neighbours"])
        f["external_opponent_liberties"] = len(external)

        direct = [q for q in block.liberties if q in self.disputed_region_of]
        touched = {self.disputed_region_of[q] for q in direct}
        f["disputed_direct_liberties"] = len(direct)
        f["disputed_friendly_liberties"] = sum(self.disputed_regions[r][colour] for r in touched)
        f["disputed_enemy_liberties"] = sum(self.disputed_regions[r][other] for r in touched)
        f["benson_pass_alive"] = float(self.pass_alive[block.index])
        f["in_opponent_benson_region"] = float(self.in_safe_region[block.index])
        sign = 1.0 if colour == BLACK else -1.0
        f["playout_ownership"] = sign * sum(self.ownership[p] for p in stones) / len(stones)
        return f

    def _weakness(self, b):
        return len(self.blocks[b].liberties), len(self.blocks[b].stones), b

    def _weak_order(self, indices):
        return sorted(indices, key=self._weakness)

    def _prepare_slots(self):
        """Per block, once: the weakest, second-weakest and chain-weakest opponent blocks (None
        when absent) and the friendly blocks sharing a liberty; they do not depend on
        predictions."""
        stride, colours = self.stride, self.colours
        self.slots = []
        self.friends_sharing = []
        chain_weakest = []     # per chain: its weakest opponent block adjacent or sharing a liberty
        for chain in self.chains:
            colour = self.blocks[chain["blocks"][0]].colour
            near = set(chain["opponents"])
            for q in chain["liberties"]:
                for r in (q - stride, q - 1, q + 1, q + stride):
                    if colours[r] not in (EMPTY, WALL, colour):
                        near.add(self.block_of[r])
            chain_weakest.append(min(near, key=self._weakness) if near else None)
        for block in self.blocks:
            adjacent = self._weak_order(block.opponents)
            self.slots.append((adjacent[0] if adjacent else None,
                               adjacent[1] if len(adjacent) > 1 else None,
                               chain_weakest[self.chain_of[block.index]]))
            self.friends_sharing.append(
                {self.block_of[r] for q in block.liberties for r in (q - stride, q - 1, q + 1, q + stride)
                 if colours[r] == block.colour} - {block.index})
        columns = BASE_COLUMN
        self._static_matrix = np.zeros((len(self.blocks), NUM_BASE))
        for block in self.blocks:
            row = self._static_matrix[block.index]
            for name, value in self._static[block.index].items():
                row[columns[name]] = value
            for slot, b in zip(("weakest", "second_weakest", "chain_weakest"),
                               self.slots[block.index]):
                if b is None:
                    continue
                opponent = self.blocks[b]
                row[columns[f"{slot}_exists"]] = 1
                row[columns[f"{slot}_perimeter"]] = len(opponent.neighbours)
                row[columns[f"{slot}_liberties"]] = len(opponent.liberties)
                row[columns[f"{slot}_shared_liberties"]] = len(opponent.liberties & block.liberties)
                row[columns[f"{slot}_split_points"]] = self.block_split_points[b]

    def eyespace(self, alive):
        """Per colour: (list indexed by loc: eyespace component or -1, component records
        (size, perimeter, region)) under `alive` (a bool per block)."""
        colours, stride, block_of = self.colours, self.stride, self.block_of
        result = {}
        for colour in (BLACK, WHITE):
            other = BLACK + WHITE - colour
            members = set()
            for p in self.points:
                c = colours[p]
                if c == other:
                    if not alive[block_of[p]]:
                        members.add(p)
                    continue
                if c != EMPTY:
                    continue
                on_edge = False
                blocked = False
                for q in (p - stride, p - 1, p + 1, p + stride):
                    c = colours[q]
                    if c == WALL:
                        on_edge = True
                    elif c == other and alive[block_of[q]]:
                        blocked = True
                        break
                if blocked:
                    continue
                diagonal = 0
                for q in (p - stride - 1, p - stride + 1, p + stride - 1, p + stride + 1):
                    if colours[q] == other and alive[block_of[q]]:
                        diagonal += 1
                if diagonal >= (1 if on_edge else 2):
                    continue   # a false eye
                members.add(p)
            component_of = [-1] * len(colours)
            records = []
            for index, part in enumerate(connected_parts(members, stride)):
                for p in part:
                    component_of[p] = index
                region = self.region_of[colour][next(iter(part))]
                records.append((len(part), _perimeter(part, colours, stride), region))
            result[colour] = (component_of, records)
        return result

    def _eyespace_of(self, points, colour, eyespace):
        component_of, records = eyespace[colour]
        touched = {component_of[q] for q in points if component_of[q] >= 0}
        return (sum(records[c][0] for c in touched), sum(records[c][1] for c in touched), touched)

    def _base_features(self, alive):
        """(base feature matrix, per-chain eyespace (size, perimeter, CERs with eyespace)) under
        `alive`; cached, since later cascade steps mostly repeat the same alive/dead split."""
        key = tuple(alive)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        eyespace = self.eyespace(alive)
        chain_eyes = []
        for chain in self.chains:
            colour = self.blocks[chain["blocks"][0]].colour
            size, perimeter, touched = self._eyespace_of(chain["neighbours"], colour, eyespace)
            records = eyespace[colour][1]
            regions_with_eyes = {records[c][2] for c in touched}
            chain_eyes.append((size, perimeter, len(chain["cers"] & regions_with_eyes)))
        block_eyes = [self._eyespace_of(block.neighbours, block.colour, eyespace)[:2]
                      for block in self.blocks]
        matrix = self._static_matrix.copy()
        column = BASE_COLUMN
        for block in self.blocks:
            row = matrix[block.index]
            row[column["eyespace_size"]], row[column["eyespace_perimeter"]] = block_eyes[block.index]
            size, perimeter, with_eyes = chain_eyes[self.chain_of[block.index]]
            row[column["chain_eyespace_size"]] = size
            row[column["chain_eyespace_perimeter"]] = perimeter
            row[column["chain_cers_with_eyespace"]] = with_eyes
            for slot, b in zip(("weakest", "second_weakest", "chain_weakest"),
                               self.slots[block.index]):
                if b is not None:
                    row[column[f"{slot}_eyespace_perimeter"]] = block_eyes[b][1]
        self._cache[key] = (matrix, chain_eyes)
        return matrix, chain_eyes

    def features(self, predictions=None):
        """Feature matrix (blocks x NUM_BASE, or x NUM_RECURSIVE when predictions, the
        probability of life of every block from the previous step, are given)."""
        if predictions is None:
            alive = [not self.in_safe_region[b] for b in range(len(self.blocks))]
        else:
            alive = [self.pass_alive[b] or (predictions[b] >= ALIVE_THRESHOLD
                                            and not self.in_safe_region[b])
                     for b in range(len(self.blocks))]
        base, chain_eyes = self._base_features(alive)
        if predictions is None:
            return base.copy()
        matrix = np.zeros((len(self.blocks), NUM_RECURSIVE))
        matrix[:, :NUM_BASE] = base
        for block in self.blocks:
            row = matrix[block.index]
            weakest, second, _ = self.slots[block.index]
            row[NUM_BASE] = max((predictions[b] for b in self.friends_sharing[block.index]),
                                default=0.0)
            if weakest is not None:
                row[NUM_BASE + 1] = predictions[weakest]
                weak_chain = self.chain_of[weakest]
                members = self.chains[weak_chain]["blocks"]
                row[NUM_BASE + 3] = sum(predictions[b] for b in members) / len(members)
                row[NUM_BASE + 4], row[NUM_BASE + 5] = chain_eyes[weak_chain][:2]
            if second is not None:
                row[NUM_BASE + 2] = predictions[second]
        return matrix

    # --- which blocks the learning task covers (section 3.1) -------------------------------

    def blocks_to_classify(self, dead_blocks):
        """Indices of the blocks whose status decides the score, given the true dead blocks:
        dead blocks in the opponent's area, and living blocks at the border of their area."""
        dead_stones = [s for b in dead_blocks for s in self.blocks[b].stones]
        area = area_map(self.board, dead_stones)
        chosen = []
        for block in self.blocks:
            if block.index in dead_blocks:
                probe = next(iter(block.stones))
                if area[probe] == BLACK + WHITE - block.colour:
                    chosen.append(block.index)
            elif any(area[q] != block.colour for q in block.neighbours):
                chosen.append(block.index)
        return chosen


# ---------------------------------------------------------------------- counting


def _colours_after_removal(board, dead):
    colours = [WALL] * board.num_locs
    for p in board.points():
        colours[p] = board.get(p)
    for p in dead:
        colours[p] = EMPTY
    return colours


def area_map(board, dead=()):
    """Owner of every loc by flood fill after `dead` stones are taken off: BLACK, WHITE, or
    EMPTY for neutral points (and WALL off the board)."""
    colours = _colours_after_removal(board, dead)
    owner = list(colours)
    for region, borders in empty_regions(board, colours):
        value = borders.pop() if len(borders) == 1 else EMPTY
        for p in region:
            owner[p] = value
    return owner


def distance_map(board, dead=()):
    """Owner of every loc by distance (breadth first through empty points) to the nearest
    remaining stone of each colour: BLACK, WHITE, or EMPTY when both are equally near or
    neither is reachable (and WALL off the board)."""
    colours = _colours_after_removal(board, dead)
    stride = board.stride
    unreached = len(colours)
    distances = {}
    for colour in (BLACK, WHITE):
        distance = [unreached] * len(colours)
        frontier = [p for p in board.points() if colours[p] == colour]
        step = 0
        while frontier:
            step += 1
            following = []
            for p in frontier:
                for q in (p - stride, p - 1, p + 1, p + stride):
                    if colours[q] == EMPTY and distance[q] == unreached:
                        distance[q] = step
                        following.append(q)
            frontier = following
        distances[colour] = distance
    owner = list(colours)
    black, white = distances[BLACK], distances[WHITE]
    for p in board.points():
        if colours[p] == EMPTY:
            owner[p] = BLACK if black[p] < white[p] else WHITE if white[p] < black[p] else EMPTY
    return owner


def count(owner, points, komi):
    black = sum(1 for p in points if owner[p] == BLACK)
    white = sum(1 for p in points if owner[p] == WHITE)
    return black - white - komi


def score_by_flood_fill(board, komi, dead=()):
    return count(area_map(board, dead), board.points(), komi)


def score_by_distance(board, komi, dead=()):
    return count(distance_map(board, dead), board.points(), komi)


# ---------------------------------------------------------------------- the classifier


class Classifier:
    """The cascade: one MLP (inputs squashed and standardised, one tanh hidden layer, a sigmoid output: the
    probability that the block is alive) per step. Step 0 reads the NUM_BASE features, the
    later steps NUM_RECURSIVE."""

    ARRAYS = ("mean", "scale", "w1", "b1", "w2", "b2")

    def __init__(self, steps, metadata=None):
        self.steps = steps            # list of dicts with the ARRAYS
        self.metadata = metadata or {}
        self.doubt_rule = DoubtRule.from_metadata(self.metadata.get("doubt"))

    @staticmethod
    def squash(x):
        """sign(x) log(1 + |x|): counts on a 19x19 board (region sizes, liberties of big
        chains) stay near the range a 9x9-trained network has seen."""
        return np.sign(x) * np.log1p(np.abs(x))

    @staticmethod
    def forward(step, x):
        x = Classifier.squash(x)
        h = np.tanh(((x - step["mean"]) / step["scale"]) @ step["w1"] + step["b1"])
        z = h @ step["w2"] + step["b2"]
        return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))

    def params_digest(self):
        digest = hashlib.sha256()
        for step in self.steps:
            for name in self.ARRAYS:
                digest.update(np.ascontiguousarray(step[name], dtype=np.float64).tobytes())
        return digest.hexdigest()

    def save(self, path, metadata):
        """Write atomically: arrays step{k}_{name} and a JSON metadata record, no pickle."""
        path = Path(path)
        metadata = dict(metadata, format=FORMAT_NAME, format_version=FORMAT_VERSION,
                        feature_version=FEATURE_VERSION, num_base_features=NUM_BASE,
                        num_recursive_features=NUM_RECURSIVE, steps=len(self.steps),
                        hidden=int(self.steps[0]["w1"].shape[1]),
                        params_sha256=self.params_digest())
        arrays = {f"step{k}_{name}": np.asarray(step[name], dtype=np.float64)
                  for k, step in enumerate(self.steps) for name in self.ARRAYS}
        arrays["metadata"] = np.frombuffer(json.dumps(metadata, sort_keys=True).encode("utf-8"),
                                           dtype=np.uint8)
        directory = path.parent if str(path.parent) else Path(".")
        descriptor, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp",
                                                 dir=directory)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                np.savez(handle, **arrays)
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
        self.metadata = metadata
        self.doubt_rule = DoubtRule.from_metadata(metadata.get("doubt"), path)
        return metadata

    @classmethod
    def load(cls, path):
        """A classifier from a file; ClassifierFileError naming the file for anything missing,
        damaged, pickled, of another version or of the wrong shapes."""
        path = Path(path)
        arrays = read_npz(path, ClassifierFileError)
        raw = arrays.pop("metadata", None)
        if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
            raise ClassifierFileError(path, "no metadata record (UTF-8 JSON bytes)")
        try:
            metadata = json.loads(raw.tobytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ClassifierFileError(path, f"metadata is not valid JSON: {error}") from None
        if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
            raise ClassifierFileError(path, "not a kosumi CSA* classifier file")
        for key, expected in (("format_version", FORMAT_VERSION),
                              ("feature_version", FEATURE_VERSION),
                              ("num_base_features", NUM_BASE),
                              ("num_recursive_features", NUM_RECURSIVE)):
            if metadata.get(key) != expected:
                raise ClassifierFileError(path, f"{key} is {metadata.get(key)!r}, this kosumi "
                                                f"needs {expected}")
        count = metadata.get("steps")
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 16:
            raise ClassifierFileError(path, f"steps should be 1..16, got {count!r}")
        steps = []
        for k in range(count):
            step = {}
            for name in cls.ARRAYS:
                key = f"step{k}_{name}"
                if key not in arrays:
                    raise ClassifierFileError(path, f"missing array {key!r}")
                value = arrays[key]
                if value.dtype != np.float64:
                    raise ClassifierFileError(path, f"{key} should be float64, got {value.dtype}")
                if not np.all(np.isfinite(value)):
                    raise ClassifierFileError(path, f"{key} holds NaN or infinity")
                step[name] = value
            inputs = NUM_BASE if k == 0 else NUM_RECURSIVE
            hidden = step["w1"].shape[1] if step["w1"].ndim == 2 else -1
            shapes = {"mean": (inputs,), "scale": (inputs,), "w1": (inputs, hidden),
                      "b1": (hidden,), "w2": (hidden,), "b2": ()}
            for name, shape in shapes.items():
                if step[name].shape != shape or hidden < 1:
                    raise ClassifierFileError(path, f"step{k}_{name} has shape "
                                                    f"{step[name].shape}, expected {shape}")
            if np.any(step["scale"] <= 0):
                raise ClassifierFileError(path, f"step{k}_scale has a value <= 0")
            steps.append(step)
        DoubtRule.from_metadata(metadata.get("doubt"), path)   # names the file when wrong
        classifier = cls(steps, metadata)
        if classifier.params_digest() != metadata.get("params_sha256"):
            raise ClassifierFileError(path, "arrays do not match their recorded checksum "
                                            "(corrupt or altered)")
        return classifier


# ---------------------------------------------------------------------- the whole method


@dataclass
class CsaResult:
    features: BlockFeatures
    step_predictions: list        # per cascade step: probability of life per block
    dead_blocks: list             # indices of blocks taken off (after the last step)
    flood_fill_score: float
    distance_score: float
    search_score: float = None    # search_count() of the board when analysed with review=True
    rule: DoubtRule = DoubtRule()  # when the board is doubtful (the classifier's rule)

    @property
    def counts_differ(self):
        """The paper's check: flood fill and distance disagree (by more than the rule's
        counts_gap), open regions are unsettled."""
        return abs(self.flood_fill_score - self.distance_score) > self.rule.counts_gap + 1e-9

    @property
    def uncertain(self):
        """Some block the classifier decides has a final probability of life within the rule's
        band (DOUBT_BAND by default) of a coin flip's distance from 0 and 1 (our addition:
        most of our wrong boards are settled ones)."""
        return self._least_sure() < 0.5 - self.rule.band

    def _least_sure(self):
        """The smallest distance from 0.5 of a decided block's final probability (0.5 when
        there is none)."""
        final = self.step_predictions[-1] if self.step_predictions else []
        return min((abs(float(final[b]) - 0.5) for b in self._decided_blocks()), default=0.5)

    def doubt_signs(self):
        """What the doubtful flag reads, as numbers (for choosing a DoubtRule on measured
        boards): the flood-fill and distance counts' gap, the least sure decided block's
        distance from 0.5, whether the steps changed their mind, how many false eyes may have
        to be filled, and the review search's gap (None when not reviewed)."""
        return {"counts_gap": abs(self.flood_fill_score - self.distance_score),
                "least_sure": round(self._least_sure(), 6),
                "changed_mind": bool(self._changed_mind()),
                "teire_points": len(self._teire_points()),
                "search_gap": (None if self.search_score is None
                               else abs(self.search_score - self.flood_fill_score))}

    @property
    def changed_mind(self):
        """Some block the classifier decides is called alive by one cascade step and dead by
        another (ours: on held-out 9x9 boards most wrong counts had such a block, few right ones
        did; docs/notebook/csa.md), where the rule reads it."""
        return self.rule.changed_mind and self._changed_mind()

    def _changed_mind(self):
        return any(min(p[b] for p in self.step_predictions) < ALIVE_THRESHOLD
                   <= max(p[b] for p in self.step_predictions) for b in self._decided_blocks())

    def _decided_blocks(self):
        """The blocks whose status the classifier decides: not Benson's pass-alive blocks, nor
        the blocks inside the opponent's pass-alive area (dead whatever it says)."""
        if not self.step_predictions:
            return []
        return [b for b in range(len(self.features.blocks))
                if not self.features.pass_alive[b] and not self.features.in_safe_region[b]]

    @property
    def teire_doubt(self):
        """The rule asks about teire and some territory holds a false eye its owner may have to
        fill (engine/scoring/teire.py): rules with teire count the board one point apart from
        rules without, and players filled such points or not (ours: on the 19x19 development
        boards of the agreed counts, most boards counted one point off have one, few right
        ones do; docs/notebook/csa.md)."""
        return self.rule.teire and bool(self._teire_points())

    def _teire_points(self):
        return teire_points(self.features.board, self.dead_stones)

    @property
    def search_disagrees(self):
        """The tree search's count is more than the rule's review_gap points (REVIEW_GAP by
        default) from CSA*'s (ours: it reads the races and eye shapes whose outcome the block
        features cannot see)."""
        return self.search_score is not None and \
            abs(self.search_score - self.flood_fill_score) > self.rule.review_gap

    @property
    def doubtful(self):
        return (self.counts_differ or self.uncertain or self.changed_mind or self.teire_doubt
                or self.search_disagrees)

    @property
    def dead_stones(self):
        blocks = self.features.blocks
        return sorted(s for b in self.dead_blocks for s in blocks[b].stones)


def killing_shape(points, stride):
    """Whether an eyespace of these points, wholly enclosed by one block, makes one eye at most
    when the opponent plays its vital point: every space of three points or fewer, the square
    and pyramid fours, the bulky and crossed fives and the rabbity six (the nakade shapes)."""
    points = set(points)
    if len(points) <= 3:
        return True
    if len(points) > 6:
        return False
    most_neighbours = max(sum(q in points for q in (p - stride, p - 1, p + 1, p + stride))
                          for p in points)
    square = any({p + 1, p + stride, p + stride + 1} <= points for p in points)
    if len(points) == 4:
        return square or most_neighbours == 3
    if len(points) == 5:
        return square or most_neighbours == 4
    return square and most_neighbours == 4


def dead_blocks_from(features, predictions):
    """The blocks taken off: predicted dead (or in the opponent's Benson-safe region), never
    pass-alive, and not in a seki the board shows plainly, which the classifier, having seen few
    sekis, tends to miss. A block predicted dead is kept next to an opponent block when every
    liberty they share is self-atari for both colours (neither side can attack) and either both
    are predicted dead, or both have the same two or more liberties and no other, hold at
    least NAKADE_LIMIT stones each (capturing a smaller one leaves a three-point killing shape),
    and the living block cannot kill by sacrifice (filling a shared liberty and being captured
    would leave its stones and that point as the dead block's only eyespace, and if that space
    is a killing shape it is no seki) nor gain liberties by taking another dead block first."""
    dead = {b for b in range(len(features.blocks))
            if not features.pass_alive[b]
            and (features.in_safe_region[b] or predictions[b] < ALIVE_THRESHOLD)}
    board = features.board
    rescued = set()
    for b in dead:
        block = features.blocks[b]
        if features.in_safe_region[b]:
            continue
        for o in block.opponents:
            other = features.blocks[o]
            if features.in_safe_region[o] or features.pass_alive[o]:
                continue
            shared = block.liberties & other.liberties
            if not shared or (o not in dead and (
                    len(shared) < 2 or other.liberties != shared or block.liberties != shared
                    or min(len(block.stones), len(other.stones)) < NAKADE_LIMIT
                    or any(killing_shape(other.stones | {q}, features.stride) for q in shared)
                    or any(x in dead for x in other.opponents if x != b))):
                continue
            if all(board.liberties_if_played(q, block.colour) <= 1
                   and board.liberties_if_played(q, other.colour) <= 1 for q in shared):
                rescued.add(b)
                if o in dead:
                    rescued.add(o)
    dead -= rescued
    # A block can only be dead in the opponent's area: with no living opponent stone left,
    # nothing of a colour is dead (a lone stone on an empty board owns it; the paper notes its
    # classifier learned this, ours is told).
    living_colours = {block.colour for block in features.blocks if block.index not in dead}
    return sorted(b for b in dead
                  if BLACK + WHITE - features.blocks[b].colour in living_colours)


def predict_steps(features, classifier, steps=None):
    """Probability of life of every block after each cascade step (a list of arrays)."""
    steps = len(classifier.steps) if steps is None else steps
    results = []
    predictions = None
    for k in range(steps):
        if not features.blocks:
            results.append(np.zeros(0))
            continue
        x = features.features(predictions)
        predictions = Classifier.forward(classifier.steps[k], x)
        results.append(predictions)
    return results


def analyse(board, komi, classifier, steps=None, review=False):
    """CSA* on a finished board: predictions, dead blocks, both scores (komi included), and with
    review the tree search's count (search_count: it takes far longer than the rest, so the
    pass decisions go without it)."""
    features = BlockFeatures(board)
    step_predictions = predict_steps(features, classifier, steps)
    final = step_predictions[-1] if step_predictions else np.zeros(0)
    dead = dead_blocks_from(features, final)
    stones = [s for b in dead for s in features.blocks[b].stones]
    return CsaResult(features, step_predictions, dead, score_by_flood_fill(board, komi, stones),
                     score_by_distance(board, komi, stones),
                     search_count(board, komi) if review else None, classifier.doubt_rule)


def search_count(board, komi, simulations=REVIEW_SIMULATIONS, seed=REVIEW_SEED):
    """The area count (komi included) a tree search expects from a finished board: every point
    goes to the colour that owns it at the end of most of the search's simulations, averaged
    over two searches, one with each colour to move (the board does not say whose turn it is,
    and an unsettled race goes to the side that moves first). The search plays on past passes
    and sees no net: its playouts take dead stones off and its tree reads what the playouts get
    wrong."""
    counts = []
    for colour in (BLACK, WHITE):
        tree = TreeSearch(board.size, komi, seed=seed)
        tree.set_root(board, colour, (board.hash,))
        tree.run(simulations, stop_early=False)
        ownership = tree.ownership()
        counts.append(sum(np.sign(ownership[p]) for p in board.points()) - komi)
    return float(np.mean(counts))


# ---------------------------------------------------------------------- shipped classifiers

_LOADED = {}


def default_classifier_path(size):
    """weights/csa_19x19.npz for boards of 15 and more lines when it exists, else
    weights/csa_9x9.npz (the paper scores 19x19 boards with a 9x9-trained cascade); from the
    checkout, or after a plain `pip install .` from <prefix>/share/kosumi/weights."""
    large = shipped_weights_path("csa_19x19.npz")
    if size >= 15 and large.exists():
        return large
    return shipped_weights_path("csa_9x9.npz")


def classifier_for(size, path=None):
    """The classifier for a board size (loaded once per file)."""
    path = Path(path) if path is not None else default_classifier_path(size)
    key = str(path)
    if key not in _LOADED:
        _LOADED[key] = Classifier.load(path)
    return _LOADED[key]
