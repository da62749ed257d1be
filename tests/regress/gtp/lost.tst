# Behind in a settled position after the opponent's pass (issue 44): kosumi passes (without
# --no-resign it resigns) instead of throwing stones into the opponent's area, however often the
# opponent passes; kgs-genmove_cleanup still takes the dead stones off. The position:
# lost_by_far.sgf, Black lost by 34.5. The rule: docs/PLAYING.md, "Passing and resigning".

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
