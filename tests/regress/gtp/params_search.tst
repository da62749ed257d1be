# options: --search mcts --playouts 100 --policy none
# The parameters of the search player (--search mcts): resign_threshold is the search's win rate,
# changes reach the next move's search, and kosumi-search is the player's own search.

boardsize 9
clear_board
komi 7
# --no-resign (the scripts' engine) is the search's resign_threshold off
1 kosumi-get-param resign_threshold
#? [off]
kosumi-set-param resign_threshold 0.3
kosumi-set-param resign_threshold 1.5
#! [resign threshold must be a number > 0 and <= 1, or off, not '1\.5']
7 kosumi-get-param resign_threshold
#? [0\.3]
2 kosumi-get-param playouts
#? [100]
kosumi-set-param playouts 30
4 kosumi-search b
#? [.*\nTEXT ([1-9]|[12]\d|30) visits: best .*]
3 kata-genmove_analyze b 50 maxmoves 1
#? [info move \S+ visits \d+ .*\nplay [A-HJ][1-9]]
kosumi-set-param threads 2
kosumi-set-param max_nodes 5000
5 genmove w
#? [[A-HJ][1-9]]
kosumi-set-param resign_threshold off
6 kosumi-list-params
#? [.*^resign_threshold off$.*^threads 2$.*]
