"""Board speed: uniform random playouts per second and play+undo pairs per second, one core.

    python benchmarks/board_speed.py [--seconds 3]

Playouts never fill their own single-point eyes and end with two passes (the board's own nogil
playout loop, on a copy of the empty board). Play+undo pairs run every legal move of a
middle-game position (reached by a seeded playout prefix) through the journaled play/undo path
that the 1-ply evaluator uses. Results go to RESULTS.md by hand, with this command.
"""
import argparse
import time

from engine.rules.board import BLACK, Board, play_undo_pairs


def playouts_per_second(size, seconds):
    empty = Board(size)
    count, moves, start = 0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(50):
            board = empty.copy()
            moves += board.playout(BLACK, max_moves=size * size * 4, seed=count)
            count += 1
    elapsed = time.perf_counter() - start
    return count / elapsed, moves / count


def middle_game(size, seed=1):
    """A position about a third full: a seeded sequence of random legal moves."""
    import random
    rng = random.Random(seed)
    board = Board(size)
    colour = BLACK
    for _ in range(size * size // 3):
        moves = [p for p in board.legal_moves(colour) if not board.is_eye(p, colour)]
        board.play(rng.choice(moves), colour)
        colour = 3 - colour
    return board.copy(), colour


def play_undo_per_second(size, seconds):
    board, colour = middle_game(size)
    pairs, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        pairs += play_undo_pairs(board, colour, 100)
    board.check_consistency()
    return pairs / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    print("| board | playouts/s | moves/playout | play+undo pairs/s |")
    print("|---|---|---|---|")
    for size in (9, 19):
        rate, length = playouts_per_second(size, args.seconds)
        pairs = play_undo_per_second(size, args.seconds)
        print(f"| {size}x{size} | {rate:,.0f} | {length:.0f} | {pairs:,.0f} |")


if __name__ == "__main__":
    main()
