# loadsgf (sgfmill) and printsgf. Paths are relative to tests/regress/gtp.

boardsize 19
clear_board
komi 6.5
1 loadsgf handicap.sgf
#? []
2 list_stones black
#? [C7 E7 G7 C3]
3 list_stones white
#? [E5 G5]
4 showboard
#? [\s*A B C D E F G H J\s+9 .*komi 0\.5; black to move]
5 printsgf
#? [\(;.*AB\[cg\]\[gc\].*HA\[2\].*SZ\[9\];\s*W\[ee\];\s*B\[cc\];\s*W\[ge\];\s*B\[ec\];\s*W\[(tt)?\]\)]

# A move number stops before that move: 3 = after W[ee] and B[cc], White to play W[ge].
6 loadsgf handicap.sgf 3
#? []
7 list_stones black
#? [C7 G7 C3]
8 showboard
#? [.*white to move]
9 loadsgf handicap.sgf 1
#? []
10 list_stones white
#? []
# undo takes back one handicap stone (GameState keeps them as history entries).
11 undo
#? []
12 list_stones black
#? [G7|C3]

# Setup stones of both colours and PL.
13 loadsgf setup_stones.sgf
#? []
14 list_stones black
#? [C5 D4 F2]
15 list_stones white
#? [B6 E3]
16 printsgf
#? [\(;.*AB\[cc\]\[dd\].*AW\[ee\].*SZ\[7\];\s*W\[bb\];\s*B\[ff\]\)]

# Missing, truncated, oversized or illegal files are refused and change nothing.
loadsgf no_such_file.sgf
#! [cannot load file.*]
loadsgf truncated.sgf
#! [cannot load file.*]
loadsgf size30.sgf
#! [cannot load file.*]
loadsgf illegal.sgf
#! [cannot load file.*]
loadsgf handicap.sgf 0
#! [syntax error.*]
loadsgf
#! [syntax error.*]
17 list_stones white
#? [B6 E3]
18 showboard
#? [\s*A B C D E F G\s+7 .*komi 3.*]
