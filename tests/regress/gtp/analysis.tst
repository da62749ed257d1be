# Analysis for GoGui (gfx, pspairs, string, plist) and Sabaki/Lizzie (KataGo and Leela Zero
# streamed formats). Here the input has ended, so a stream closes right after its lines.

boardsize 9
clear_board
komi 7
play b E5
1 gogui-analyze_commands
#? [(?=.*^gfx/[^/\n]+/kosumi-ownership$)(?=.*^gfx/[^/\n]+/kosumi-move_values %m$)(?=.*^pspairs/[^/\n]+/kosumi-move_values_list %m$)(?=.*^gfx/[^/\n]+/kosumi-chosen_move %m$)(?=.*^string/[^/\n]+/kosumi-score_estimate$).*]
2 kosumi-ownership
#? [INFLUENCE( [A-HJ][1-9] -?[01]\.\d\d){81}\nTEXT .*]
3 kosumi-move_values white
#? [LABEL( [A-HJ][1-9] -?\d+\.\d){80}\nSQUARE [A-HJ][1-9]\nTEXT best [A-HJ][1-9] .*]
4 kosumi-move_values_list w
#? [[A-HJ][1-9] -?\d+\.\d\d( [A-HJ][1-9] -?\d+\.\d\d){79}]
5 kosumi-chosen_move w
#? [VAR w [A-HJ][1-9]\nTEXT [A-HJ][1-9]: .*probability [01]\.\d{3}, value .*]
6 kosumi-score_estimate
#? [expected [BW]\+\d+\.\d, counted now B\+74\.0 with 0 dead stones]
7 list_stones white
#? []

# KataGo format: winrate in [0, 1] with a decimal point, scoreLead in points; visits shared out
# by selection probability (the uniform evaluator has no network: no scoreStdev).
8 kata-analyze W 50
#? [(info move ([A-HJ][1-9]|pass) visits [1-9]\d* winrate [01]\.\d+ scoreMean -?\d+\.\d+ scoreLead -?\d+\.\d+ prior [01]\.\d+ lcb [01]\.\d+ order \d+ pv ([A-HJ][1-9]|pass) ?)+]
9 kata-analyze 10 maxmoves 2 ownership true
#? [info move \S+ .* order 0 pv \S+ info move \S+ .* order 1 pv \S+ ownership( -?[01]\.\d{4}){81}]
10 kata-analyze interval 50 minmoves 3
#? [info move .*]
# Leela Zero format: winrate and prior in ten-thousandths (integers).
11 lz-analyze w 50 maxmoves 2
#? [info move [A-HJ][1-9] visits \d+ winrate \d+ prior \d+ lcb \d+ order 0 pv [A-HJ][1-9] info move [A-HJ][1-9] visits \d+ winrate \d+ prior \d+ lcb \d+ order 1 pv [A-HJ][1-9]]
12 lz-analyze
#? [info move .*]
kata-analyze b 50 foo 3
#! [syntax error.*]
kata-analyze b 50 maxmoves
#! [syntax error.*]
kata-analyze b 50 maxmoves many
#! [syntax error.*]
lz-analyze b 50 ownership true
#! [syntax error.*]
# avoid/allow: colour, comma-separated vertices, until-depth (Lizzie sends the lz form).
20 lz-analyze 10 avoid w A9,B9,C9,pass 30
#? [(?!.*move (A9|B9|C9|pass) )info move .*]
21 kata-analyze w 10 allow w D4,F6 1
#? [info move (D4|F6) [^\n]* order 0 pv (D4|F6)( info move (D4|F6) [^\n]* order 1 pv (D4|F6))?]
kata-analyze w allow w D4 1 avoid w F6 1
#! [syntax error: kata-analyze takes either avoid or one allow per colour]
lz-analyze w avoid w Z9 1
#! [syntax error.*]
lz-analyze w avoid w D4 0
#! [syntax error.*]
lz-analyze w avoid w D4
#! [syntax error.*]
13 list_stones white
#? []

# genmove_analyze: info lines, then the move, which is played.
14 kata-genmove_analyze w 50
#? [info move .*\nplay [A-HJ][1-9]]
15 list_stones w
#? [[A-HJ][1-9]]
16 lz-genmove_analyze b 50 allow b A1,J1 1
#? [info move .*\nplay (A1|J1)]
17 list_stones b
#? [(?=.*(A1|J1))[A-HJ][1-9]( [A-HJ][1-9])?]
kata-genmove_analyze purple
#! [syntax error.*]

# The uniform evaluator (like an ISN) has no connectivity layer: no menu entry, a clear error.
22 gogui-analyze_commands
#? [(?!.*kosumi-connectivity).*]
23 kosumi-connectivity E5
#! [the connectivity map needs a soft-segmentation net \(--weights\)]

# The policy net's heat map and list: beside the 1-ply player, the search's prior.
24 gogui-analyze_commands
#? [(?=.*^gfx/[^/\n]+/kosumi-policy %m$)(?=.*^pspairs/[^/\n]+/kosumi-policy_list %m$).*]
25 kosumi-policy b
#? [(COLOR #[0-9a-f]{6}( [A-HJ][1-9])+\n)+LABEL( [A-HJ][1-9] \d+)+\nSQUARE [A-HJ][1-9]\nTEXT Black's moves by the policy net \(.*, 1 symmetry\): best [A-HJ][1-9] .*]
26 kosumi-policy_list w
#? [[A-HJ][1-9] \d+\.\d( [A-HJ][1-9] \d+\.\d)*]
kosumi-policy
#! [syntax error.*]
