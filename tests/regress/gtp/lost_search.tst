# options: --search mcts --playouts 300
# lost.tst with the search player: behind in a settled position after the opponent's pass, it
# passes without searching (without --no-resign it resigns), and its cleanup still captures.

boardsize 9
clear_board
loadsgf lost_by_far.sgf
play w pass
1 kosumi-chosen_move b
#? [TEXT pass: opponent passed and the count loses by 34\.5, more than the margin of doubt .*]
2 genmove b
#? [pass]
play w pass
3 genmove b
#? [pass]

# The winner's cleanup still captures Black's dead A5.
loadsgf lost_by_far.sgf
4 kgs-genmove_cleanup w
#? [B5]
5 final_score
#? [W\+34\.5]
