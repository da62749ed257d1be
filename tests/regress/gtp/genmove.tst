# genmove, reg_genmove, kgs-genmove_cleanup with the uniform evaluator (an area count), seed 1.

# A white stone in atari: capturing it makes the whole board Black's, by far the best move.
boardsize 5
clear_board
komi 0.5
play b B3
play b C4
play b D3
play w C3
1 reg_genmove b
#? [C2]
2 list_stones b
#? [C4 B3 D3]
3 genmove b
#? [C2]
4 list_stones w
#? []

# Black's wall on line 4 is pass-alive (Benson: A5-C5 and E5 are vital regions); the white
# stone B5 inside is dead. Every empty point is Black's already: no move gains, Black passes
# rather than fill its own area.
clear_board
play b A4
play b B4
play b C4
play b D4
play b E4
play b D5
play w B5
5 genmove b
#? [pass]
# White (to move, Black's pass taken back) has everything to gain in the open lower area.
undo
6 genmove w
#? [[A-E][1-3]]
undo

# After White passes: Black counts the board with B5 removed (25 - 0.5), wins, and passes.
play w pass
7 genmove b
#? [pass]
undo
# With a komi that loses the count by 1 point (inside the margin of doubt), Black plays on only
# with a move that gains; none does (A5 and C5 are its own safe points, and taking B5 changes
# no count), so it passes rather than fill its own area.
komi 26
play w pass
8 kosumi-chosen_move b
#? [TEXT pass: opponent passed and the count loses by 1, within the margin of doubt .*, and no move gains.*]
undo
# Lost by far more than the margin (75 points): Black passes (it resigns without --no-resign).
komi 100
play w pass
16 kosumi-chosen_move b
#? [TEXT pass: opponent passed and the count loses by 75, more than the margin of doubt.*]
undo
komi 0.5

# kgs-genmove_cleanup takes the dead stone off before passing: its liberties are A5 and C5.
play w pass
9 kgs-genmove_cleanup b
#? [[AC]5]
play w pass
10 kgs-genmove_cleanup b
#? [[AC]5]
11 list_stones w
#? []
play w pass
12 kgs-genmove_cleanup b
#? [pass]

# genmove for the side not to move is allowed (GTP), and genmove works on every size.
boardsize 2
clear_board
13 genmove w
#? [[AB][12]|pass]
boardsize 25
clear_board
14 genmove b
#? [[A-HJ-Z]([1-9]|1\d|2[0-5])]
15 genmove w
#? [[A-HJ-Z]([1-9]|1\d|2[0-5])|pass]
