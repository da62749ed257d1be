# play, undo, is_legal, list_stones, showboard: captures, ko, superko, suicide, any case.

boardsize 5
clear_board
komi 0
# A ko at B2/C2: black B3 A2 B1 around the white stone B2; white C3 D2 C1 around C2.
play b B3
play B a2
play black B1
play w C3
play W D2
play white c1
play w B2
1 play b C2
#? []
2 list_stones white
#? [C3 D2 C1]
3 showboard
#? [.*Black \(X\) captured 1, White \(O\) captured 0.*]
play w B2
#! [illegal move]
4 is_legal w B2
#? [0]
# Suicide is illegal (A1 captures nothing), and so is playing on a stone.
5 is_legal w A1
#? [0]
play w A1
#! [illegal move]
play b C3
#! [illegal move]
6 is_legal b A1
#? [1]
# After a ko threat and its answer the retake is legal.
play w E5
play b E4
7 is_legal w b2
#? [1]
8 play w B2
#? []
9 list_stones black
#? [E4 B3 A2 B1]

# Bad arguments change nothing.
play b
#! [syntax error.*]
play b F1
#! [syntax error.*]
play b I3
#! [syntax error.*]
play x C4
#! [syntax error.*]
play b C4 C5
#! [syntax error.*]
is_legal b
#! [syntax error.*]
list_stones blue
#! [syntax error.*]
10 list_stones black
#? [E4 B3 A2 B1]

# pass, in any case, and consecutive same-colour plays (setup stones from Sabaki).
11 play b PASS
#? []
12 play W pass
#? []
13 play b D4
#? []
14 play b D5
#? []
15 list_stones b
#? [D5 D4 E4 B3 A2 B1]

# undo takes back exactly one move at a time, passes included.
undo
undo
undo
undo
16 list_stones b
#? [E4 B3 A2 B1]
clear_board
undo
#! [cannot undo]
play b C3
17 undo
#? []
18 list_stones b
#? []
undo
#! [cannot undo]

# The smallest board: a two-stone capture on 2x2.
boardsize 2
clear_board
play b A1
play w B2
play b B1
19 is_legal w A2
#? [1]
play w A2
20 list_stones white
#? [A2 B2]
21 list_stones black
#? []
