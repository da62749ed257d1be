# options: --search mcts --playouts 300
# The Monte-Carlo search player (--search mcts) behind the same commands: moves, analysis from the
# tree (visits, win rates, principal variations), GoGui's search display, cleanup and scoring.

boardsize 9
clear_board
komi 7
1 genmove b
#? [[A-HJ][1-9]]
2 reg_genmove w
#? [[A-HJ][1-9]|pass]
3 genmove w
#? [[A-HJ][1-9]|pass]

# KataGo format from the tree: real visit counts, a principal variation of several moves.
4 kata-analyze b 50 maxmoves 3 ownership true
#? [info move [A-HJ][1-9] visits [1-9]\d* winrate [01]\.\d+ scoreMean -?\d+\.\d+ scoreLead -?\d+\.\d+ prior [01]\.\d+ lcb -?[01]\.\d+ order 0 pv [A-HJ][1-9]( [A-HJ][1-9]| pass)+ info move .* order 2 pv .* ownership( -?[01]\.\d{4}){81}]
5 lz-analyze b 50 maxmoves 1
#? [info move [A-HJ][1-9] visits [1-9]\d* winrate \d+ prior \d+ lcb -?\d+ order 0 pv [A-HJ][1-9]( [A-HJ][1-9]| pass)*]
6 kata-genmove_analyze b 50
#? [info move .*\nplay [A-HJ][1-9]]
7 kosumi-search w
#? [LABEL( [A-HJ][1-9] \d+)+\nVAR w [A-HJ][1-9]( [bw] ([A-HJ][1-9]|pass))*\nTEXT \d+ visits: best [A-HJ][1-9] .*]
8 kosumi-chosen_move w
#? [VAR w [A-HJ][1-9]\nTEXT [A-HJ][1-9]: search: \d+ visits, probability [01]\.\d{3}, value .*]
9 kosumi-move_values w
#? [LABEL( [A-HJ][1-9] -?\d+\.\d)+\nSQUARE [A-HJ][1-9]\nTEXT best .*]

# avoid/allow restrict the root of the search, in the analysis and in the move chosen.
12 kata-analyze b 10 allow b E5,D4 1
#? [(?!.*info move (?!E5 |D4 )).*info move (E5|D4) .*]
13 lz-analyze b 10 avoid b E5,D4,C3,C4,C5,C6,C7,D3,D5,D6,D7 1 maxmoves 8
#? [(?!.*info move (E5|D4|C3|C4|C5|C6|C7|D3|D5|D6|D7) ).*info move .*]
14 kata-genmove_analyze b 10 allow b J9 1
#? [info move J9 .*\nplay J9]

# A won position after the opponent's pass: pass, as the 1-ply player does.
boardsize 5
clear_board
komi 0.5
play b C3
play w pass
10 genmove b
#? [pass]

# After two passes the game is over, but a GUI may still analyse the position: the search goes on
# as if play continued.
play w pass
11 kata-analyze w 10 maxmoves 1
#? [info move \S+ visits [1-9]\d* .*]
