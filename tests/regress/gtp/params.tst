# options: --playouts 50 --threads 2 --playout-tactics fuego
# The players' settings at run time: kosumi-list-params, kosumi-get-param, kosumi-set-param (after
# KataGo's kata-*-param) and kosumi-param, GoGui's `param` analyze command (after Fuego's
# uct_param_search). Here the 1-ply player; its kosumi-search takes the engine's search settings.

boardsize 9
clear_board
komi 7

# Every setting, `name value`, the player's first; the command line's values.
1 kosumi-list-params
#? [beta 20\nseed 1\nresign_threshold off\ncapture_all_dead false\n.*^playouts 50$.*^threads 2$.*^playout_tactics fuego$.*^max_nodes 1000000$.*^ponder false]
2 kosumi-get-param policy_prior
#? [on]

# kosumi-search in 1-ply mode searches with --playouts, --threads and --playout-tactics (it
# searched 3,000 simulations with the defaults before): at most 50 visits.
3 kosumi-search b
#? [LABEL( [A-HJ][1-9] \d+)+\nVAR b .*\nTEXT ([1-9]|[1-4]\d|50) visits: best .*]

# A change counts from the next search: 20 simulations now (on a new board: no tree to keep).
kosumi-set-param playouts 20
clear_board
4 kosumi-get-param playouts
#? [20]
5 kosumi-search b
#? [.*\nTEXT ([1-9]|1\d|20) visits: best .*]
kosumi-set-param playouts auto
6 kosumi-get-param playouts
#? [auto]

# Values are checked against the setting's range; a failed change changes nothing.
kosumi-set-param playouts 0
#! [playouts must be an integer >= 1, or auto, not '0']
kosumi-set-param threads 65
#! [threads must be an integer 1\.\.64, not '65']
kosumi-set-param value_weight 1.5
#! [value weight must be a number 0\.\.1, not '1\.5']
kosumi-set-param playout_tactics pachi
#! [playout tactics must be one of mogo, fuego, fuego-ladders, not 'pachi']
kosumi-set-param last_good_reply maybe
#! [last good reply must be true or false \(1 or 0\), not 'maybe']
kosumi-set-param beta -1
#! [beta must be a number >= 0 \(or inf\), not '-1']
kosumi-set-param frobnicate 1
#! [unknown parameter 'frobnicate'; kosumi-list-params lists them]
kosumi-set-param seed 3
#! [seed is fixed when the engine starts \(command line --seed\)]
kosumi-set-param playouts
#! [syntax error.*]
kosumi-get-param
#! [syntax error.*]
7 kosumi-get-param threads
#? [2]
kosumi-set-param beta inf
8 kosumi-get-param beta
#? [inf]
kosumi-set-param resign_threshold 0.25
9 kosumi-get-param resign_threshold
#? [0\.25]

# GoGui's parameter dialog: `[type] name value` (no setting fixed at start), then NAME VALUE.
10 kosumi-param
#? [\[string\] beta inf\n\[string\] resign_threshold 0\.25\n\[bool\] capture_all_dead 0\n(?!.*seed).*^\[list/auto/net/none\] search_prior auto$.*^\[list/mogo/fuego/fuego-ladders\] playout_tactics fuego$.*^\[bool\] last_good_reply 0$.*]
kosumi-param last_good_reply 1
kosumi-param search_prior net
11 kosumi-param
#? [.*^\[list/auto/net/none\] search_prior net$.*^\[bool\] last_good_reply 1$.*]
12 kosumi-get-param last_good_reply
#? [true]
kosumi-param last_good_reply
#! [syntax error: kosumi-param takes no arguments \(the list\) or NAME VALUE]
kosumi-param threads 0
#! [threads must be an integer 1\.\.64, not '0']

# The dialog is in GoGui's analyze menu.
13 gogui-analyze_commands
#? [.*^param/Kosumi Parameters/kosumi-param$.*]
