# play takes the controller's moves: a repetition of an earlier position (GNU Go knows only
# simple ko) and a multi-stone suicide are played; is_legal and genmove keep kosumi's rules.

# Three kos (tests/unit/gtp/test_controller_moves.py draws them): Black takes at C8 and C1,
# White at G4.
boardsize 9
clear_board
komi 0
play b B9
play b A8
play b B7
play b G5
play b F4
play b H4
play b G3
play b B2
play b A1
play w C9
play w B8
play w D8
play w C7
play w H5
play w J4
play w H3
play w C2
play w B1
play w D1
# Six captures, none an immediate retake; White's B1 brings the start back, Black to move.
play b C8
play w G4
play b C1
play w B8
play b H4
1 is_legal w B1
#? [0]
# The move kosumi refused in game 19 of the match against GNU Go.
2 play w B1
#? []
3 list_stones white
#? [C9 B8 D8 C7 H5 J4 H3 C2 B1 D1]
# Black's C8 and C1 would each repeat a position: kosumi neither plays nor allows them.
4 is_legal b C8
#? [0]
5 is_legal b C1
#? [0]
6 genmove b
#? [!C8|C1]
# The simple-ko retake stays refused, and so does a stone on a stone.
undo
undo
undo
play b H4
play w G4
#! [illegal move]
play w H4
#! [illegal move]

# A multi-stone suicide: Black A1 joins A2 B2 B1, left without a liberty, capturing nothing.
boardsize 5
clear_board
play b A2
play b B2
play b B1
play w A3
play w B3
play w C2
play w C1
7 is_legal b A1
#? [0]
8 play b A1
#? []
9 list_stones black
#? []
10 showboard
#? [.*White \(O\) captured 4.*]
# A single-stone suicide would change no stone: refused.
play w A2
play w B1
play b A1
#! [illegal move]
