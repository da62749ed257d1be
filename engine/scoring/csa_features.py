"""The block features of CSA* (engine/scoring/csa.py; van der Werf et al., "Learning to Score
Final Positions in the Game of Go", section 4): `BlockFeatures` computes, once per board, what the
features need (blocks, liberties, colour-enclosed regions and their miai accessibility,
optimistic chains, disputed territory); then `features()` gives every block its feature vector,
with eyespace (and the six recursive features of section 4.2) depending on the previous cascade
step's predictions.

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
from dataclasses import dataclass

import numpy as np

from engine.rules.board import BLACK, EMPTY, WALL, WHITE
from engine.rules.game import connected_parts, pass_alive
from engine.scoring.counting import area_map
from engine.search.playout import mean_ownership

FEATURE_VERSION = 3        # 2: inputs squashed by sign(x) log(1 + |x|); 3: playout ownership
ALIVE_THRESHOLD = 0.5      # predicted probability of life at or above which a block stays
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
