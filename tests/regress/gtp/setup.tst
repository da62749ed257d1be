# boardsize, clear_board, komi, handicap; a failing command changes nothing.

boardsize 9
clear_board
komi 6.5
1 showboard
#? [.*komi 6\.5.*black to move]

# gogui-twogtp sends komi once per process: komi survives boardsize and clear_board.
boardsize 13
clear_board
2 showboard
#? [.*13 \. \. .*komi 6\.5.*]

boardsize 1
#! [unacceptable size]
boardsize 26
#! [unacceptable size]
boardsize nine
#! [syntax error.*]
komi seven
#! [syntax error.*]
komi nan
#! [syntax error.*]

# ... and none of those failures touched the board, its size or the komi.
play b N13
boardsize 99
#! [unacceptable size]
3 list_stones black
#? [N13]
4 showboard
#? [.*komi 6\.5.*]

# Every size from 2 to 25, and komi may come before or after boardsize.
komi 0.5
boardsize 2
5 showboard
#? [\s*A B\s+2 \. \. 2\s+1 \. \. 1\s+A B\s+.*komi 0\.5.*]
boardsize 25
6 play b Z25
#? []
7 list_stones b
#? [Z25]
komi -3
8 showboard
#? [.*komi -3.*]

# fixed_handicap
boardsize 9
clear_board
komi 0.5
9 fixed_handicap 2
#? [G7 C3]
10 list_stones black
#? [G7 C3]
11 showboard
#? [.*white to move]
fixed_handicap 2
#! [board not empty]
clear_board
fixed_handicap 1
#! [invalid number of stones]
fixed_handicap 10
#! [invalid number of stones]
fixed_handicap two
#! [syntax error.*]
12 fixed_handicap 9
#? [([A-HJ][1-9] ){8}[A-HJ][1-9]]
boardsize 7
fixed_handicap 5
#! [invalid number of stones]
13 fixed_handicap 4
#? [([A-G][1-7] ){3}[A-G][1-7]]

# place_free_handicap: kosumi picks the points (standard ones when they exist)
boardsize 9
clear_board
14 place_free_handicap 3
#? [([A-HJ][1-9] ){2}[A-HJ][1-9]]
15 list_stones white
#? []
clear_board
place_free_handicap 1
#! [invalid number of stones]
boardsize 5
16 place_free_handicap 6
#? [([A-E][1-5] ){5}[A-E][1-5]]

# set_free_handicap: the controller picks (Sabaki sends setup stones this way)
boardsize 9
clear_board
17 set_free_handicap D4 f6 D6
#? []
18 list_stones black
#? [D6 F6 D4]
19 showboard
#? [.*white to move]
set_free_handicap E5 E6
#! [board not empty]
clear_board
set_free_handicap E5
#! [bad vertex list]
set_free_handicap E5 E5
#! [bad vertex list]
set_free_handicap E5 Z9
#! [bad vertex list]
set_free_handicap E5 pass
#! [bad vertex list]
20 list_stones black
#? []
