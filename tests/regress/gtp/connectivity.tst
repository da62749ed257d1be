# options: --evaluator net --weights ../../../weights/softseg_9x9.npz
# The soft-segmentation net's connectivity map (NeuroGo 3's Figure 6) as GoGui draws it: the
# shipped net, averaged over the board's 8 symmetries; a stone's own colour unless one is given.

boardsize 9
clear_board
komi 7
play b C5
play b D5
play b E5
play b F5
play b G5
play w D3
1 gogui-analyze_commands
#? [.*^gfx/Kosumi Connectivity/kosumi-connectivity %p$.*]
2 kosumi-connectivity C5
#? [INFLUENCE( [A-HJ][1-9] [01]\.\d\d)+\nLABEL( [A-HJ][1-9] \d+)+\nMARK C5\nTEXT Black's connection values from C5 in percent; points reached: \d+, at 50 or more: \d+]
3 kosumi-connectivity C5
#? [.* G5 (0\.9\d|1\.00) .*]
4 kosumi-connectivity C5 white
#? [(INFLUENCE( [A-HJ][1-9] -0\.0\d)+\nLABEL( [A-HJ][1-9] \d)+\n)?MARK C5\nTEXT White's .*]
5 kosumi-connectivity D3
#? [(?=.* D3 -1\.00 )INFLUENCE( [A-HJ][1-9] -[01]\.\d\d)+\nLABEL .*\nMARK D3\nTEXT White's .*]
6 kosumi-connectivity J9 b
#? [.*\nMARK J9\nTEXT Black's .*]
7 kosumi-connectivity pass
#! [syntax error: pass is not a board vertex here]
8 kosumi-connectivity K5
#! [syntax error: invalid vertex 'K5']
9 kosumi-connectivity C5 red
#! [syntax error: invalid colour 'red']
